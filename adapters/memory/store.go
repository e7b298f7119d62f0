package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.Pinger = (*Store)(nil)

// Store keeps transactions, withdrawals, the outbox of their events and the ledger in memory.
// One read-write mutex guards all of it, so a status change, its events and its ledger entries
// are always written together, and a checked posting (a withdrawal, a refund) is checked
// against the balance and stored under the same lock: nothing can interleave. The ports are
// reached through Transactions, Withdrawals, Outbox and Ledger (one type cannot implement both
// repositories: their Get and Update differ).
//
// Aggregates are kept as domain records, never as the caller's pointers. A transaction is kept
// once: the sorted per-account list and the lookups by id, idempotency key and status point at
// the same record, and the snapshots in its events share its order and QR code, which never
// change once set (domain/clone.go). A list scans the account's sorted list (see txRow). A transaction with a 1 KB QR code takes about 2.5 KiB; each event it raises
// about 1 KiB more (BenchmarkStoredTransaction measures it).
//
// fn of Update runs under the lock: it must not call the store.
type Store struct {
	mu sync.RWMutex

	txByID map[string]*domain.TransactionRecord
	// txByToken finds a transaction by its payment page token in O(1); a token never changes.
	txByToken  map[string]*domain.TransactionRecord
	txByStatus map[domain.TransactionStatus]map[string]*domain.TransactionRecord
	wdByID     map[string]*domain.WithdrawalRecord
	// wdPayoutDue holds the withdrawals whose payout is not done (PayoutDue set): the payout
	// outbox's look-up reads them only.
	wdPayoutDue map[string]*domain.WithdrawalRecord
	accounts    map[string]*accountData // by account id
	events      eventQueue
	// payments are the claimed end-to-end ids; posted, the ids of postings stored through
	// Ledger.Post (the only ones that may arrive twice: a status change happens once).
	payments map[string]*ports.PaymentClaim
	posted   map[string]struct{}
	// pixLocations finds dynamic charges by location id and cob txid (transactions_pix.go).
	pixLocations pixLocationIndex

	transactions Transactions
	withdrawals  Withdrawals
	outbox       Outbox
	ledger       Ledger
}

// accountData is what the store keeps of one account (and, under the empty account id, of the
// service's own ledger).
type accountData struct {
	// txs holds the account's transactions sorted by createdAt, then id: lists scan it from
	// the end, and date filters cut it by binary search. Transactions arrive almost always in
	// createdAt order, so an insert is nearly always an append.
	txs     []txRow
	txByKey map[string]*domain.TransactionRecord // by non-empty idempotency key
	wdByKey map[string]*domain.WithdrawalRecord  // by non-empty idempotency key
	wds     []*domain.WithdrawalRecord           // in creation order

	// entries is the account's ledger, oldest first: entry n is entries.at(n-1). Its last
	// entry holds the balance.
	entries entryLog
	// pending sums the amounts of the account's charges awaiting payment.
	pending domain.Cents
}

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{
		txByID:      make(map[string]*domain.TransactionRecord),
		txByToken:   make(map[string]*domain.TransactionRecord),
		txByStatus:  make(map[domain.TransactionStatus]map[string]*domain.TransactionRecord),
		wdByID:      make(map[string]*domain.WithdrawalRecord),
		wdPayoutDue: make(map[string]*domain.WithdrawalRecord),
		accounts:    make(map[string]*accountData),
		events:      newEventQueue(),
		payments:    make(map[string]*ports.PaymentClaim),
		posted:      make(map[string]struct{}),
	}
	s.pixLocations = newPixLocationIndex()
	s.ledger.store = s
	s.transactions.store = s
	s.withdrawals.store = s
	s.outbox.store = s
	return s
}

// Transactions is the store's ports.TransactionRepository.
func (s *Store) Transactions() *Transactions { return &s.transactions }

// Withdrawals is the store's ports.WithdrawalRepository.
func (s *Store) Withdrawals() *Withdrawals { return &s.withdrawals }

// Outbox is the store's ports.Outbox.
func (s *Store) Outbox() *Outbox { return &s.outbox }

// Ledger is the store's ports.Ledger.
func (s *Store) Ledger() *Ledger { return &s.ledger }

// Ping implements ports.Pinger: memory always answers.
func (s *Store) Ping(context.Context) error { return nil }

// accountOf returns the account's data, creating it when create is set; otherwise nil for an
// account the store has never seen.
func (s *Store) accountOf(accountID string, create bool) *accountData {
	l := s.accounts[accountID]
	if l == nil && create {
		l = &accountData{}
		s.accounts[accountID] = l
	}
	return l
}

// compareTransactions orders records by createdAt, then id: the reverse of the list order.
func compareTransactions(a, b *domain.TransactionRecord) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// txRow is one transaction of an account's sorted list, with the fields that filters test
// most copied beside the pointer to its record: the one index the list needs. A list scans
// the whole account for every page (to count the matches), and reaching a field through the
// record costs a cache miss or three per row. BenchmarkList over 100,000 transactions, a 1%
// filter, on the shared 2-core machine (2026-11-24): customerEmail 10 to 12 ms through the
// record, 1.7 ms with these copies; status 2 to 3 ms against 0.5 ms; customerName 17 to 19 ms
// against 7 ms; p99s through the record reached 40 to 60 ms, past the 50 ms the list promises
// (docs/PERFORMANCE.md). Hashes and character masks beside the copies saved about another
// millisecond per page, which that promise does not need, so they went.
type txRow struct {
	rec    *domain.TransactionRecord
	amount domain.Cents
	status domain.TransactionStatus
	email  string // the customer's, empty without one
	name   string
}

func rowOf(r *domain.TransactionRecord) txRow {
	row := txRow{rec: r, amount: r.Order.Amount, status: r.Status}
	if c := r.Order.Customer; c != nil {
		row.email, row.name = c.Email, c.Name
	}
	return row
}

// insert puts r at its place in the sorted list, by binary search unless it goes last.
func (l *accountData) insert(r *domain.TransactionRecord) {
	if n := len(l.txs); n == 0 || compareTransactions(l.txs[n-1].rec, r) < 0 {
		l.txs = append(l.txs, rowOf(r))
		return
	}
	i, _ := slices.BinarySearchFunc(l.txs, r, compareRow)
	l.txs = slices.Insert(l.txs, i, rowOf(r))
}

// refresh copies again the fields of r, a stored record that an update changed.
func (l *accountData) refresh(r *domain.TransactionRecord) {
	if i, ok := slices.BinarySearchFunc(l.txs, r, compareRow); ok {
		l.txs[i] = rowOf(r)
	}
}

func compareRow(row txRow, r *domain.TransactionRecord) int { return compareTransactions(row.rec, r) }

// countPending keeps the account's pending sum as a transaction moves from status from (empty
// for a new one) to status to.
func (l *accountData) countPending(amount domain.Cents, from, to domain.TransactionStatus) {
	if from == domain.TxPixQRCodeGenerated {
		l.pending -= amount
	}
	if to == domain.TxPixQRCodeGenerated {
		l.pending += amount
	}
}

// indexStatus moves id from the set of status from (when not empty) to the set of status to.
func indexStatus[S comparable, R any](index map[S]map[string]*R, id string, from, to S, r *R) {
	var zero S
	if from != zero {
		delete(index[from], id)
	}
	set := index[to]
	if set == nil {
		set = make(map[string]*R)
		index[to] = set
	}
	set[id] = r
}

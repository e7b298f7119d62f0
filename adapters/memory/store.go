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

// Store keeps transactions, withdrawals and the outbox of their events in memory. One
// read-write mutex guards all of it, so a status change, its events and the account's balance
// totals are always written together, and CreateReserving checks the balance and inserts under
// the same lock. The ports are reached through Transactions, Withdrawals and Outbox (one type
// cannot implement both repositories: their Get and Update differ).
//
// Aggregates are kept as domain records, never as the caller's pointers. A transaction is kept
// once: the sorted per-account list and the lookups by id, idempotency key and status point at
// the same record, and the snapshots in its events share its order and QR code, which never
// change once set. A transaction with a 1 KB QR code takes about 2.5 KiB; each event it raises
// about 1 KiB more (BenchmarkStoredTransaction measures it).
//
// fn of Update and check of CreateReserving run under the lock: they must not call the store.
type Store struct {
	mu sync.RWMutex

	txByID     map[string]*domain.TransactionRecord
	txByStatus map[domain.TransactionStatus]map[string]*domain.TransactionRecord
	wdByID     map[string]*domain.WithdrawalRecord
	wdByStatus map[domain.WithdrawalStatus]map[string]*domain.WithdrawalRecord
	ledgers    map[string]*ledger // by account id
	events     eventQueue

	transactions Transactions
	withdrawals  Withdrawals
	outbox       Outbox
}

// ledger is what the store keeps of one account.
type ledger struct {
	// txs holds the account's transactions sorted by createdAt, then id: lists scan it from
	// the end, and date filters cut it by binary search. Transactions arrive almost always in
	// createdAt order, so an insert is nearly always an append.
	txs     []txRow
	txByKey map[string]*domain.TransactionRecord // by non-empty idempotency key
	wdByKey map[string]*domain.WithdrawalRecord  // by non-empty idempotency key

	// totals are the per-status sums of every transaction and withdrawal of the account, kept
	// up to date on every write (they always equal a recomputation); balances derive from them.
	totals domain.BalanceTotals
}

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{
		txByID:     make(map[string]*domain.TransactionRecord),
		txByStatus: make(map[domain.TransactionStatus]map[string]*domain.TransactionRecord),
		wdByID:     make(map[string]*domain.WithdrawalRecord),
		wdByStatus: make(map[domain.WithdrawalStatus]map[string]*domain.WithdrawalRecord),
		ledgers:    make(map[string]*ledger),
		events:     newEventQueue(),
	}
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

// Ping implements ports.Pinger: memory always answers.
func (s *Store) Ping(context.Context) error { return nil }

// ledgerOf returns the account's ledger, creating it when create is set; otherwise nil for an
// account the store has never seen.
func (s *Store) ledgerOf(accountID string, create bool) *ledger {
	l := s.ledgers[accountID]
	if l == nil && create {
		l = &ledger{}
		s.ledgers[accountID] = l
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

// txRow is one transaction of an account's sorted list, with copies of the small fields that
// filters test most. A list scans up to a million rows for one page, and reading these in
// sequence costs far less than following a pointer to each record: the record is read only
// for the rows these fields let through.
type txRow struct {
	rec    *domain.TransactionRecord
	amount domain.Cents
	status domain.TransactionStatus
	method domain.PaymentMethod
	email  uint32 // foldHash of the customer's e-mail
	doc    uint32 // foldHash of the customer's document
	name   uint64 // gramMask of the customer's name
	codes  uint64 // codeMask of the phones, external code and end-to-end ids
}

func rowOf(r *domain.TransactionRecord) txRow {
	row := txRow{rec: r, amount: r.Order.Amount, status: r.Status, method: r.Order.PaymentMethod,
		codes: codeMask(r.Order.ExternalCode, r.EndToEnd, r.EndToEndRefund)}
	if c := r.Order.Customer; c != nil {
		row.email, row.doc, row.name = foldHash(c.Email), foldHash(c.Document.Value()), gramMask(c.Name)
		row.codes |= codeMask(c.MobilePhone, c.Landline)
	}
	return row
}

// insert puts r at its place in the sorted list, by binary search unless it goes last.
func (l *ledger) insert(r *domain.TransactionRecord) {
	if n := len(l.txs); n == 0 || compareTransactions(l.txs[n-1].rec, r) < 0 {
		l.txs = append(l.txs, rowOf(r))
		return
	}
	i, _ := slices.BinarySearchFunc(l.txs, r, compareRow)
	l.txs = slices.Insert(l.txs, i, rowOf(r))
}

// refresh rebuilds the row of r, a stored record that an update changed.
func (l *ledger) refresh(r *domain.TransactionRecord) {
	if i, ok := slices.BinarySearchFunc(l.txs, r, compareRow); ok {
		l.txs[i] = rowOf(r)
	}
}

func compareRow(row txRow, r *domain.TransactionRecord) int { return compareTransactions(row.rec, r) }

// countTransaction adds r to the totals (sign 1) or takes it out (sign -1). The sums of one
// transaction come from domain.BalanceTotals itself, so the store never restates which fields
// count.
func (l *ledger) countTransaction(r *domain.TransactionRecord, sign domain.Cents) {
	var one domain.BalanceTotals
	one.AddTransaction(domain.UnmarshalTransactionFromDatabase(*r))
	if l.totals.Transactions == nil {
		l.totals.Transactions = make(map[domain.TransactionStatus]domain.TransactionTotals)
	}
	for status, v := range one.Transactions {
		cur := l.totals.Transactions[status]
		cur.Amount += sign * v.Amount
		cur.Paid += sign * v.Paid
		cur.Fee += sign * v.Fee
		if cur == (domain.TransactionTotals{}) {
			delete(l.totals.Transactions, status)
		} else {
			l.totals.Transactions[status] = cur
		}
	}
}

// countWithdrawal is countTransaction for withdrawals.
func (l *ledger) countWithdrawal(r *domain.WithdrawalRecord, sign domain.Cents) {
	var one domain.BalanceTotals
	one.AddWithdrawal(domain.UnmarshalWithdrawalFromDatabase(*r))
	if l.totals.Withdrawals == nil {
		l.totals.Withdrawals = make(map[domain.WithdrawalStatus]domain.WithdrawalTotals)
	}
	for status, v := range one.Withdrawals {
		cur := l.totals.Withdrawals[status]
		cur.Amount += sign * v.Amount
		cur.Fee += sign * v.Fee
		if cur == (domain.WithdrawalTotals{}) {
			delete(l.totals.Withdrawals, status)
		} else {
			l.totals.Withdrawals[status] = cur
		}
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

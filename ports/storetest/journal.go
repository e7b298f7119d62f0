package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The postings of one status change reach the ledger in one step: a payment and its fee are
// one journal entry, and no debit, and no reader, ever finds the payment without its fee. A
// store that posts them one by one leaves a gap in which a withdrawal sees the payment, takes
// everything, and the fee then overdraws the account with no dispute behind it.
//
// raceFeesAndWithdrawals opens that gap as wide as it can: payers pay charges with fees while
// withdrawers read the balance and at once withdraw all of it, or all of it and the payment
// that may be in flight (which only a withdrawal landing between a payment and its fee can
// get). insts are the ports of one store as one or several instances hold them; the payers
// and withdrawers take turns among them. Afterwards the ledger must show
//
//   - no line with negative available: no dispute is opened, so only a split journal could
//     take available below zero (a checked debit never does);
//   - each fee right after its payment, and every balance read during the run equal to the
//     balance after some whole journal (or zero): no reader ever saw a payment without its
//     fee;
//   - numbers dense, balances chained, exactly the entries the histories imply, and every
//     ledger account summing to zero (AssertLedgerMatchesHistories, assertLedgersBalance).
//
// The run is bounded in count (charges, withdrawal rounds) and in time; its seed is logged.
func raceFeesAndWithdrawals(t *testing.T, insts []Stores) {
	t.Helper()
	const (
		charges     = 24
		payers      = 3
		withdrawers = 4
		rounds      = 400 // per withdrawer, at most
		amount      = domain.Cents(1000)
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	account := domain.NewID()
	queue, fees := chargesToPay(t, insts[0], account, amount, charges, seed)

	var race raceLog
	paid := make(chan struct{})
	var pay, withdraw sync.WaitGroup
	for i := range payers {
		s := insts[i%len(insts)]
		pay.Go(func() { payCharges(ctx, s, account, amount, minutes(60+i), queue, fees, &race) })
	}
	go func() {
		pay.Wait()
		close(paid)
	}()
	for i := range withdrawers {
		s := insts[(i+1)%len(insts)]
		rng := rand.New(rand.NewPCG(seed, uint64(1+i)))
		withdraw.Go(func() { withdrawEverything(ctx, s, account, amount, rounds, rng, paid, &race) })
	}
	pay.Wait()
	withdraw.Wait()
	for _, err := range race.fails {
		t.Errorf("seed %d: %v", seed, err)
	}

	var entries []domain.Entry
	if err := insts[0].Ledger.Scan(context.Background(), account, func(e domain.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	assertWholeJournals(t, seed, entries, race.reads)
	t.Logf("seed %d: %d entries, %d balance reads", seed, len(entries), len(race.reads))
	assertLedgersBalance(t, insts[0], []string{account}, nil)
}

// chargesToPay creates n charges of amount for account and queues their IDs, each with a fee
// drawn from seed. Every charge is of one amount, which a withdrawer adds to what it reads;
// fees vary, so that the balances a reader may see are told apart.
func chargesToPay(t *testing.T, s Stores, account string, amount domain.Cents, n int, seed uint64) (<-chan string, map[string]domain.Cents) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	queue := make(chan string, n)
	fees := map[string]domain.Cents{}
	for i := range n {
		id := createTransaction(t, s, txSpec{account: account, amount: amount, createdAt: minutes(i)}).ID()
		fees[id] = 1 + domain.Cents(rng.IntN(99))
		queue <- id
	}
	close(queue)
	return queue, fees
}

// raceLog collects, from the goroutines of raceFeesAndWithdrawals, the balances the
// withdrawers read and what failed.
type raceLog struct {
	mu    sync.Mutex
	reads []domain.LedgerBalance
	fails []error
}

func (r *raceLog) read(b domain.LedgerBalance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, b)
}

func (r *raceLog) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails = append(r.fails, err)
}

// payCharges pays, through s, the charges it takes from queue until it is empty, each with its
// fee, at the time at.
func payCharges(ctx context.Context, s Stores, account string, amount domain.Cents, at time.Time, queue <-chan string, fees map[string]domain.Cents, race *raceLog) {
	for id := range queue {
		fee := fees[id]
		_, err := s.Transactions.Update(ctx, account, id, func(tx *domain.Transaction) error {
			return tx.Pay(domain.Payment{AmountPaid: amount, Fee: fee, PaidAt: at,
				EndToEnd: "E" + strings.ReplaceAll(id, "-", "")[:31]}, at)
		})
		if err != nil {
			race.failed(fmt.Errorf("paying %s: %w", id, err))
		}
	}
}

// withdrawEverything, for up to rounds rounds or until paid is closed, reads the balance
// through s and at once withdraws all of it, or (at random, and always when nothing is
// available) all of it and amount, the payment that may be on its way without its fee. A
// refusal for want of balance or a conflict is the race lost; anything else fails it.
func withdrawEverything(ctx context.Context, s Stores, account string, amount domain.Cents, rounds int, rng *rand.Rand, paid <-chan struct{}, race *raceLog) {
	for range rounds {
		select {
		case <-paid:
			return
		default:
		}
		b, err := s.Ledger.Balance(ctx, account)
		if err != nil {
			race.failed(fmt.Errorf("reading the balance: %w", err))
			return
		}
		race.read(domain.LedgerBalance{Available: b.Available, Blocked: b.Blocked})
		ask := b.Available // everything there is
		if ask <= 0 || rng.IntN(2) == 0 {
			ask += amount // and the payment that may be on its way, without its fee
		}
		w, err := newWithdrawal(account, ask, minutes(120))
		if err != nil {
			race.failed(err)
			return
		}
		switch err := s.Withdrawals.Create(ctx, w); {
		case err == nil, errors.Is(err, domain.ErrInsufficientBalance), errors.Is(err, ports.ErrVersionConflict):
		default:
			race.failed(fmt.Errorf("withdrawing %d: %w", ask, err))
			return
		}
	}
}

// assertWholeJournals checks the ledger lines of the race, entries, and the balances the
// withdrawers read: no line with negative available, each fee right after its payment, and
// every read equal to the balance after some whole journal (or zero). It tells the first few
// failures of each kind in full, then counts them all.
func assertWholeJournals(t *testing.T, seed uint64, entries []domain.Entry, reads []domain.LedgerBalance) {
	t.Helper()
	const report = 5 // failures of each kind told in full
	var negative, split, unexplained int
	whole := map[domain.LedgerBalance]bool{{}: true} // the balances after whole journals
	for i, e := range entries {
		if e.BalanceAfter.Available < 0 {
			if negative++; negative <= report {
				t.Errorf("seed %d: entry %d, a %s of %s, leaves %d available with no dispute; the lines around it: %s",
					seed, e.Seq, e.Type, e.ResourceID, e.BalanceAfter.Available, around(entries, i))
			}
		}
		if e.Type == domain.MoveFee && (i == 0 || entries[i-1].Type != domain.MovePayment || entries[i-1].ResourceID != e.ResourceID) {
			if split++; split <= report {
				t.Errorf("seed %d: entry %d, the fee of %s, does not follow its payment: %s", seed, e.Seq, e.ResourceID, around(entries, i))
			}
		}
		if i+1 < len(entries) && e.Type == domain.MovePayment && entries[i+1].Type == domain.MoveFee && entries[i+1].ResourceID == e.ResourceID {
			continue // inside the payment's journal
		}
		whole[e.BalanceAfter] = true
	}
	for _, r := range reads {
		if !whole[r] {
			if unexplained++; unexplained <= report {
				t.Errorf("seed %d: a reader saw available %d, blocked %d, the balance after no whole journal of the ledger", seed, r.Available, r.Blocked)
			}
		}
	}
	if negative+split+unexplained > 0 {
		t.Errorf("seed %d: %d lines with negative available, %d fees apart from their payments, %d balance reads no whole journal explains",
			seed, negative, split, unexplained)
	}
}

// around names the types and numbers of the lines next to entries[i], for a failure message.
func around(entries []domain.Entry, i int) string {
	var parts []string
	for j := max(0, i-3); j < min(len(entries), i+2); j++ {
		e := entries[j]
		parts = append(parts, fmt.Sprintf("%d %s %d→%d", e.Seq, e.Type, e.Amount, e.BalanceAfter.Available))
	}
	return strings.Join(parts, ", ")
}

// newWithdrawal is a PENDING withdrawal of amount and no fee, built where t.Fatal may not be
// called (a goroutine of a race).
func newWithdrawal(account string, amount domain.Cents, at time.Time) (*domain.Withdrawal, error) {
	key, err := domain.NewPixKey(domain.PixKeyEVP, domain.NewID())
	if err != nil {
		return nil, err
	}
	return domain.NewWithdrawal(domain.NewID(), account, "SANDBOX", domain.Payout{Amount: amount, PixKey: key}, domain.Idempotency{}, at)
}

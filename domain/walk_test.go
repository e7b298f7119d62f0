package domain_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// Randomized walks: random triggers on both aggregates under a clock that sometimes steps
// back, with the invariants of the state table and of the balance checked after every step.
// Each subtest has its own fixed seed, so a failure replays exactly.

const (
	walks    = 2000
	maxSteps = 30
)

// walkClock moves forward by up to two minutes per step and, one step in eight, back by up to
// 90 s, as a clock corrected by NTP may. Steps carry nanoseconds, which the domain truncates.
type walkClock struct {
	now time.Time
	rng *rand.Rand
}

func (c *walkClock) step() time.Time {
	if c.rng.IntN(8) == 0 {
		c.now = c.now.Add(-time.Duration(c.rng.Int64N(int64(90 * time.Second))))
	} else {
		c.now = c.now.Add(time.Duration(c.rng.Int64N(int64(2 * time.Minute))))
	}
	return c.now
}

// walkOrder expires its QR code after 60 s, so that Expire both fails and succeeds in walks.
func walkOrder(rng *rand.Rand) domain.Order {
	o := validOrder()
	o.Amount = domain.Cents(1 + rng.Int64N(int64(domain.MaxAmount)))
	o.Items = nil
	o.ExpirationSeconds = domain.MinExpirationSeconds
	if rng.IntN(4) == 0 {
		o.WebhookURL = ""
	}
	return o
}

// fireTx applies the named trigger at now. Pay gets a random payment, invalid one time in
// ten; badInput reports that the input itself was refusable.
func fireTx(rng *rand.Rand, tx *domain.Transaction, name string, now time.Time) (err error, badInput bool) {
	switch name {
	case "AttachPix":
		return tx.AttachPix(pixFor(tx, now), now), false
	case "Pay":
		p := paymentAt(now)
		p.AmountPaid = domain.Cents(1 + rng.Int64N(int64(tx.Amount())*2))
		p.Fee = domain.Cents(rng.Int64N(int64(p.AmountPaid) + 1))
		if rng.IntN(10) == 0 {
			p.Fee = p.AmountPaid + 1 + domain.Cents(rng.IntN(100))
			badInput = true
		}
		return tx.Pay(p, now), badInput
	case "Expire":
		return tx.Expire(now), false
	}
	return txTriggerNamed(name).fire(tx, now), false
}

func TestRandomTransactionWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261122, 1))
	reached := map[domain.TransactionStatus]int{}
	for walk := range walks {
		transactionWalk(t, rng, walk, reached)
	}
	for _, s := range domain.TransactionStatuses() {
		if reached[s] == 0 { // the walks would prove little about a status they never reach
			t.Errorf("no walk reached %s: %v", s, reached)
		}
	}
}

func transactionWalk(t *testing.T, rng *rand.Rand, walk int, reached map[domain.TransactionStatus]int) {
	clock := &walkClock{now: base.Add(time.Duration(rng.Int64N(int64(time.Hour)))), rng: rng}
	order := walkOrder(rng)
	tx, err := domain.NewTransaction(newID(), newToken(), accountID, acquirer, order, validIdempotency(), clock.now)
	if err != nil {
		t.Fatalf("walk %d: NewTransaction: %v", walk, err)
	}
	var trace []string
	defer func() {
		if t.Failed() {
			t.Logf("walk %d: %v", walk, trace)
		}
	}()
	successes := 0
	var paid, fee *domain.Cents // as set by Pay
	for range rng.IntN(maxSteps + 1) {
		tr := txTriggers[rng.IntN(len(txTriggers))]
		from, before := tx.Status(), txStateOf(tx)
		now := clock.step()
		err, badInput := fireTx(rng, tx, tr.name, now)
		trace = append(trace, tr.name+"@"+now.Format("15:04:05.000000")+"→"+string(tx.Status()))

		if err != nil {
			switch {
			case errors.Is(err, domain.ErrInvalidTransition):
				checkInvalidTransition(t, err, "transaction", string(from), string(tr.to))
				if tr.from == from {
					t.Fatalf("%s refused from %s, which the table allows: %v", tr.name, from, err)
				}
			case errors.Is(err, domain.ErrNotExpired):
				if tr.name != "Expire" || from != domain.TxPixQRCodeGenerated || tx.Expired(now) {
					t.Fatalf("%s from %s answered %v", tr.name, from, err)
				}
			case errors.Is(err, domain.ErrInvalidOrder):
				if !badInput {
					t.Fatalf("%s from %s refused a valid input: %v", tr.name, from, err)
				}
			default:
				t.Fatalf("%s from %s: unexpected error %v", tr.name, from, err)
			}
			if after := txStateOf(tx); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused %s changed the transaction:\n got %+v\nwant %+v", tr.name, after.rec, before.rec)
			}
		} else {
			if from.Final() || tr.from != from || badInput || tx.Status() != tr.to {
				t.Fatalf("%s moved %s to %s (bad input %v)", tr.name, from, tx.Status(), badInput)
			}
			successes++
			if tr.name == "Pay" {
				paid, fee = clonePtr(tx.AmountPaid()), clonePtr(tx.FeeAmount())
			}
			if tx.Status().Final() {
				checkTxRefusesEverything(t, tx, now)
			}
		}
		checkTxInvariants(t, tx, successes, paid, fee, order.WebhookURL != "")
		reached[tx.Status()]++
	}
}

// checkTxRefusesEverything proves a final transaction refuses every trigger and stays as it is.
func checkTxRefusesEverything(t *testing.T, tx *domain.Transaction, now time.Time) {
	t.Helper()
	before := txStateOf(tx)
	for _, tr := range txTriggers {
		if err := tr.fire(tx, now.Add(time.Hour)); !errors.Is(err, domain.ErrInvalidTransition) {
			t.Fatalf("final %s accepted %s: %v", tx.Status(), tr.name, err)
		}
	}
	if !reflect.DeepEqual(txStateOf(tx), before) {
		t.Fatalf("refused triggers changed a final %s transaction", tx.Status())
	}
}

func checkTxInvariants(t *testing.T, tx *domain.Transaction, successes int, paid, fee *domain.Cents, webhook bool) {
	t.Helper()
	h := tx.History()
	checkHistory(t, h, tx.CreatedAt(), tx.UpdatedAt(), tx.Status(), 1+successes)
	everPaid := false
	for i := 1; i < len(h); i++ {
		if !domain.TransactionCanMove(h[i-1].Status, h[i].Status) {
			t.Fatalf("history moves %s → %s, which the table refuses", h[i-1].Status, h[i].Status)
		}
		everPaid = everPaid || h[i].Status == domain.TxPaid
	}
	if everPaid != (tx.AmountPaid() != nil) || everPaid != (tx.FeeAmount() != nil) || everPaid != (tx.PaymentDate() != nil) {
		t.Fatalf("paid %v but amountPaid %v fee %v paymentDate %v", everPaid, tx.AmountPaid(), tx.FeeAmount(), tx.PaymentDate())
	}
	if everPaid && (*tx.AmountPaid() != *paid || *tx.FeeAmount() != *fee) {
		t.Fatalf("amountPaid %d and fee %d changed after PAID from %d and %d", *tx.AmountPaid(), *tx.FeeAmount(), *paid, *fee)
	}
	events := tx.Events()
	if !webhook {
		if len(events) != 0 {
			t.Fatalf("%d events without a webhook URL", len(events))
		}
		return
	}
	if len(events) != successes {
		t.Fatalf("%d events for %d transitions", len(events), successes)
	}
	for i, ev := range events {
		if ev.Type != domain.EventType(domain.ResourceTransaction, string(h[i+1].Status)) ||
			ev.Transaction.Status() != h[i+1].Status || !ev.CreatedAt.Equal(h[i+1].Date) {
			t.Fatalf("event %d (%s at %v) does not match history entry %+v", i, ev.Type, ev.CreatedAt, h[i+1])
		}
	}
}

func TestRandomWithdrawalWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261122, 2))
	reached := map[domain.WithdrawalStatus]int{}
	for walk := range walks {
		withdrawalWalk(t, rng, walk, reached)
	}
	for _, s := range domain.WithdrawalStatuses() {
		if reached[s] == 0 {
			t.Errorf("no walk reached %s: %v", s, reached)
		}
	}
}

func withdrawalWalk(t *testing.T, rng *rand.Rand, walk int, reached map[domain.WithdrawalStatus]int) {
	clock := &walkClock{now: base.Add(time.Duration(rng.Int64N(int64(time.Hour)))), rng: rng}
	p := validPayout()
	if rng.IntN(4) == 0 {
		p.WebhookURL = ""
	}
	w, err := domain.NewWithdrawal(newID(), accountID, acquirer, p, validIdempotency(), clock.now)
	if err != nil {
		t.Fatalf("walk %d: NewWithdrawal: %v", walk, err)
	}
	var trace []string
	defer func() {
		if t.Failed() {
			t.Logf("walk %d: %v", walk, trace)
		}
	}()
	successes := 0
	for range rng.IntN(maxSteps + 1) {
		tr := wdTriggers[rng.IntN(len(wdTriggers))]
		from, before := w.Status(), wdStateOf(w)
		now := clock.step()
		err := tr.fire(w, now)
		trace = append(trace, tr.name+"@"+now.Format("15:04:05.000000")+"→"+string(w.Status()))
		if err != nil {
			checkInvalidTransition(t, err, "withdrawal", string(from), string(tr.to))
			if tr.from == from {
				t.Fatalf("%s refused from %s, which the table allows", tr.name, from)
			}
			if after := wdStateOf(w); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused %s changed the withdrawal:\n got %+v\nwant %+v", tr.name, after.rec, before.rec)
			}
		} else {
			if from.Final() || tr.from != from || w.Status() != tr.to {
				t.Fatalf("%s moved %s to %s", tr.name, from, w.Status())
			}
			successes++
			if w.Status().Final() {
				before := wdStateOf(w)
				for _, other := range wdTriggers {
					if err := other.fire(w, now.Add(time.Hour)); !errors.Is(err, domain.ErrInvalidTransition) {
						t.Fatalf("final %s accepted %s: %v", w.Status(), other.name, err)
					}
				}
				if !reflect.DeepEqual(wdStateOf(w), before) {
					t.Fatalf("refused triggers changed a final %s withdrawal", w.Status())
				}
			}
		}
		h := w.History()
		checkHistory(t, h, w.CreatedAt(), w.UpdatedAt(), w.Status(), 1+successes)
		for i := 1; i < len(h); i++ {
			if !domain.WithdrawalCanMove(h[i-1].Status, h[i].Status) {
				t.Fatalf("history moves %s → %s, which the table refuses", h[i-1].Status, h[i].Status)
			}
		}
		if n, want := len(w.Events()), successes; p.WebhookURL == "" && n != 0 || p.WebhookURL != "" && n != want {
			t.Fatalf("%d events for %d transitions (webhook %q)", n, want, p.WebhookURL)
		}
		if w.Total() != p.Amount+p.Fee {
			t.Fatalf("Total() = %d, want %d", w.Total(), p.Amount+p.Fee)
		}
		reached[w.Status()]++
	}
}

// TestRandomWalksPostWhatTheirHistoriesImply runs random triggers (partial refunds among them)
// over the transactions and withdrawals of one account and checks, after every step, that the
// postings the transitions raised are exactly what the audit recomputes from the stored
// histories alone (two implementations of the movement table that must agree); that every
// posting is double entry; and that amountPaid and the fee never change once paid.
func TestRandomWalksPostWhatTheirHistoriesImply(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261122, 3))
	var flows [3]int // steps where money entered, left, stayed
	for walk := range walks {
		moneyWalk(t, rng, walk, &flows)
	}
	if flows[0] == 0 || flows[1] == 0 {
		t.Errorf("the walks never moved money in or out: %v", flows)
	}
}

func moneyWalk(t *testing.T, rng *rand.Rand, walk int, flows *[3]int) {
	clock := &walkClock{now: base, rng: rng}
	var txs []*domain.Transaction
	var wds []*domain.Withdrawal
	raised := map[string][]domain.Posting{}
	for range 1 + rng.IntN(4) {
		txs = append(txs, newTx(t, walkOrder(rng), clock.step()))
	}
	for range rng.IntN(4) {
		p := validPayout()
		p.Amount = domain.Cents(1 + rng.Int64N(100_000))
		p.Fee = domain.Cents(rng.Int64N(500))
		w := newWd(t, p, clock.step())
		raised[w.ID()] = w.Postings()
		wds = append(wds, w)
	}
	var trace []string
	defer func() {
		if t.Failed() {
			t.Logf("walk %d: %v", walk, trace)
		}
	}()
	paidAt := map[*domain.Transaction][2]domain.Cents{}
	var held domain.Cents // available plus blocked, by the postings
	for _, ps := range raised {
		for _, p := range ps {
			d := p.Delta()
			held += d.Available + d.Blocked
		}
	}
	for range rng.IntN(maxSteps + 1) {
		now := clock.step()
		var step []domain.Posting
		if k := rng.IntN(len(txs) + len(wds)); k < len(txs) {
			tx := txs[k]
			tr := txTriggers[rng.IntN(len(txTriggers))]
			from := tx.Status()
			if tr.name == "RequestRefund" && rng.IntN(2) == 0 && tx.Refundable() > 1 {
				req := nextRefund(tx)
				req.Amount = 1 + domain.Cents(rng.Int64N(int64(tx.Refundable())))
				_ = tx.RequestRefund(req, now)
			} else {
				_, _ = fireTx(rng, tx, tr.name, now)
			}
			trace = append(trace, "tx"+itoa(int64(k))+"."+tr.name+"→"+string(tx.Status()))
			if from == domain.TxPixQRCodeGenerated && tx.Status() == domain.TxPaid {
				paidAt[tx] = [2]domain.Cents{*tx.AmountPaid(), *tx.FeeAmount()}
			}
			step = tx.Postings()
			tx.MarkStored(tx.Version() + 1)
			raised[tx.ID()] = append(raised[tx.ID()], step...)
			checkPostings(t, raised[tx.ID()], domain.ImpliedTransactionPostings(tx.Record()))
		} else {
			k -= len(txs)
			w := wds[k]
			tr := wdTriggers[rng.IntN(len(wdTriggers))]
			from := w.Status()
			err := tr.fire(w, now)
			trace = append(trace, "wd"+itoa(int64(k))+"."+tr.name+"→"+string(w.Status()))
			if err != nil && w.Status() != from {
				t.Fatalf("a refused %s moved the withdrawal from %s to %s", tr.name, from, w.Status())
			}
			step = w.Postings()[len(raised[w.ID()]):]
			raised[w.ID()] = w.Postings()
			checkPostings(t, raised[w.ID()], domain.ImpliedWithdrawalPostings(w.Record()))
		}
		var flow domain.Cents
		for _, p := range step {
			if p.Debit == p.Credit || p.Amount <= 0 {
				t.Fatalf("posting %s is not double entry: %+v", p.ID, p)
			}
			d := p.Delta()
			flow += d.Available + d.Blocked
		}
		held += flow
		switch {
		case flow > 0:
			flows[0]++
		case flow < 0:
			flows[1]++
		default:
			flows[2]++
		}
		for tx, pf := range paidAt {
			if *tx.AmountPaid() != pf[0] || *tx.FeeAmount() != pf[1] {
				t.Fatalf("amountPaid/fee changed after PAID: %d/%d, was %d/%d", *tx.AmountPaid(), *tx.FeeAmount(), pf[0], pf[1])
			}
			if tx.AmountRefunded() > *tx.AmountPaid() || tx.Refundable() < 0 {
				t.Fatalf("refunded %d of %d paid (refundable %d)", tx.AmountRefunded(), *tx.AmountPaid(), tx.Refundable())
			}
		}
	}
	var want domain.Cents // what the resources hold by their statuses and refunds
	for _, tx := range txs {
		if tx.AmountPaid() != nil {
			want += *tx.AmountPaid() - *tx.FeeAmount() - tx.AmountRefunded()
			if tx.Status() == domain.TxInfraction {
				want -= tx.Disputed()
			}
		}
	}
	for _, w := range wds {
		if w.Status().HoldsMoney() {
			want -= w.Total()
		}
	}
	if held != want {
		t.Fatalf("the postings hold %d, the statuses and refunds %d", held, want)
	}
}

// checkPostings compares what transitions raised with what the audit implies, in order.
func checkPostings(t *testing.T, raised, implied []domain.Posting) {
	t.Helper()
	if len(raised) != len(implied) {
		t.Fatalf("%d postings raised, %d implied:\nraised  %+v\nimplied %+v", len(raised), len(implied), raised, implied)
	}
	for i := range raised {
		if same, why := domain.SamePosting(raised[i], implied[i]); !same {
			t.Fatalf("posting %d (%s): %s", i, raised[i].ID, why)
		}
	}
}

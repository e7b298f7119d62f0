package domain_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// paidTx is a transaction paid 100.00 with a fee of 1.99, and the instant after its payment.
func paidTx(t *testing.T) (*domain.Transaction, time.Time) {
	t.Helper()
	tx, now := txAt(t, validOrder(), txPaths[2])
	tx.MarkStored(tx.Version() + 1)
	return tx, now
}

func postingTypes(ps []domain.Posting) []domain.MovementType {
	var out []domain.MovementType
	for _, p := range ps {
		out = append(out, p.Type)
	}
	return out
}

func TestPartialRefunds(t *testing.T) {
	t.Run("two partial refunds and the rest: PAID between them, REFUNDED at the end", func(t *testing.T) {
		tx, now := paidTx(t)
		steps := []struct {
			id     string
			amount domain.Cents
			after  domain.TransactionStatus
		}{{"R1", 3000, domain.TxPaid}, {"R2", 2500, domain.TxPaid}, {"R3", 0, domain.TxRefunded}}
		for _, s := range steps {
			now = now.Add(time.Minute)
			if err := tx.RequestRefund(domain.RefundRequest{ID: s.id, Amount: s.amount, Reason: "devolução"}, now); err != nil {
				t.Fatalf("RequestRefund(%s): %v", s.id, err)
			}
			if tx.Status() != domain.TxProcessingRefund {
				t.Fatalf("after requesting %s: %s", s.id, tx.Status())
			}
			if err := tx.ConfirmRefund(s.id, "D"+s.id, now.Add(time.Second)); err != nil {
				t.Fatalf("ConfirmRefund(%s): %v", s.id, err)
			}
			if tx.Status() != s.after {
				t.Fatalf("after %s: %s, want %s", s.id, tx.Status(), s.after)
			}
		}
		rs := tx.Refunds()
		if len(rs) != 3 || rs[2].Amount != 4500 || tx.AmountRefunded() != 10_000 || tx.Refundable() != 0 {
			t.Fatalf("refunds %+v, refunded %d, refundable %d; want the rest (4500) last, all of it refunded", rs, tx.AmountRefunded(), tx.Refundable())
		}
		for _, r := range rs {
			if r.Status != domain.RefundRefunded || r.CompletedAt == nil || r.EndToEndRefund != "D"+r.ID || r.Reason != "devolução" {
				t.Errorf("refund %+v, want REFUNDED with its completion and end-to-end id", r)
			}
		}
		if tx.EndToEndRefund() != "DR3" {
			t.Errorf("endToEndRefund = %q, want the last refund's", tx.EndToEndRefund())
		}
		want := []domain.MovementType{domain.MoveRefundHold, domain.MoveRefund, domain.MoveRefundHold, domain.MoveRefund, domain.MoveRefundHold, domain.MoveRefund}
		if got := postingTypes(tx.Postings()); !slices.Equal(got, want) {
			t.Errorf("postings %v, want %v", got, want)
		}
		for _, p := range tx.Postings() {
			if p.Type == domain.MoveRefundHold && !p.Checked || p.Type == domain.MoveRefund && p.Checked {
				t.Errorf("%s checked = %v: only the hold, which the merchant asks for, is checked", p.Type, p.Checked)
			}
		}
	})

	t.Run("a failed refund frees its amount for the next one", func(t *testing.T) {
		tx, now := paidTx(t)
		if err := tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 9000}, now); err != nil {
			t.Fatal(err)
		}
		if tx.Refundable() != 1000 {
			t.Fatalf("refundable while R1 is processing = %d, want 1000", tx.Refundable())
		}
		if err := tx.FailRefund("R1", "the payer's account is closed", now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if tx.Status() != domain.TxPaid || tx.ErrorMessage() != "the payer's account is closed" || tx.Refundable() != 10_000 || tx.AmountRefunded() != 0 {
			t.Fatalf("after the failure: %s %q refundable %d refunded %d", tx.Status(), tx.ErrorMessage(), tx.Refundable(), tx.AmountRefunded())
		}
		if r := tx.Refunds()[0]; r.Status != domain.RefundFailed || r.ErrorMessage != "the payer's account is closed" || r.CompletedAt == nil {
			t.Fatalf("refund %+v, want FAILED with its message", r)
		}
		if got := postingTypes(tx.Postings()); !slices.Equal(got, []domain.MovementType{domain.MoveRefundHold, domain.MoveRefundRelease}) {
			t.Fatalf("postings %v", got)
		}
	})

	t.Run("amounts above what is refundable, and below one cent, are refused", func(t *testing.T) {
		tx, now := paidTx(t)
		_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 6000}, now)
		_ = tx.ConfirmRefund("R1", "D1", now)
		for _, amount := range []domain.Cents{4001, 10_000, -5} {
			err := tx.RequestRefund(domain.RefundRequest{ID: "R2", Amount: amount}, now)
			var e *domain.RefundAmountError
			if !errors.As(err, &e) || e.Refundable != 4000 {
				t.Errorf("a refund of %d: %v, want a RefundAmountError naming 4000 refundable", amount, err)
			}
		}
		if tx.Status() != domain.TxPaid || len(tx.Refunds()) != 1 {
			t.Fatalf("a refused refund changed the transaction: %s, %d refunds", tx.Status(), len(tx.Refunds()))
		}
	})

	t.Run("a refund while another is processing is an invalid transition", func(t *testing.T) {
		tx, now := paidTx(t)
		_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, now)
		if err := tx.RequestRefund(domain.RefundRequest{ID: "R2", Amount: 100}, now); !errors.Is(err, domain.ErrInvalidTransition) {
			t.Fatalf("a second refund in progress: %v, want ErrInvalidTransition", err)
		}
	})

	t.Run("a refund id is used once", func(t *testing.T) {
		tx, now := paidTx(t)
		_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, now)
		_ = tx.FailRefund("R1", "no", now)
		if err := tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, now); !errors.Is(err, domain.ErrInvalidOrder) {
			t.Fatalf("a refund id used again: %v, want ErrInvalidOrder", err)
		}
	})

	t.Run("a payment older than 90 days is not refunded", func(t *testing.T) {
		tx, _ := paidTx(t)
		paid := *tx.PaymentDate()
		if err := tx.RequestRefund(domain.RefundRequest{ID: "R1"}, paid.Add(domain.RefundWindow+time.Millisecond)); !errors.Is(err, domain.ErrRefundNotAllowed) {
			t.Fatalf("a refund on day 90 and a millisecond: %v, want ErrRefundNotAllowed", err)
		}
		if err := tx.RequestRefund(domain.RefundRequest{ID: "R1"}, paid.Add(domain.RefundWindow)); err != nil {
			t.Fatalf("a refund on day 90: %v", err)
		}
	})

	t.Run("confirming or failing a refund that is not processing is refused", func(t *testing.T) {
		tx, now := paidTx(t)
		_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, now)
		for name, err := range map[string]error{
			"confirm another id": tx.ConfirmRefund("R9", "D", now),
			"fail another id":    tx.FailRefund("R9", "no", now),
		} {
			if !errors.Is(err, domain.ErrInvalidTransition) {
				t.Errorf("%s: %v, want ErrInvalidTransition", name, err)
			}
		}
		_ = tx.ConfirmRefund("R1", "D1", now)
		if err := tx.ConfirmRefund("R1", "D1", now); !errors.Is(err, domain.ErrInvalidTransition) {
			t.Errorf("confirming a completed refund again: %v", err)
		}
	})
}

func TestDisputeAfterAPartialRefundHoldsWhatIsLeft(t *testing.T) {
	tx, now := paidTx(t)
	_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 3000}, now)
	_ = tx.ConfirmRefund("R1", "D1", now)
	tx.MarkStored(tx.Version() + 1)
	if err := tx.OpenDispute(now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	ps := tx.Postings()
	if len(ps) != 1 || ps[0].Type != domain.MoveDisputeHold || ps[0].Amount != 7000 || ps[0].Checked {
		t.Fatalf("postings %+v, want an unchecked hold of the 7000 not refunded", ps)
	}
	_ = tx.AcceptDispute(now.Add(2 * time.Second))
	_ = tx.CompleteInfraction("DMED", now.Add(3*time.Second))
	if ps := tx.Postings(); ps[len(ps)-1].Type != domain.MoveDisputeDebit || ps[len(ps)-1].Amount != 7000 {
		t.Fatalf("postings %+v, want the MED debit of 7000 last", ps)
	}
}

func TestAsRefundRequestedShowsTheTransactionAsTheRequestLeftIt(t *testing.T) {
	tx, now := paidTx(t)
	_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 1000}, now)
	_ = tx.ConfirmRefund("R1", "D1", now.Add(time.Second))
	_ = tx.RequestRefund(domain.RefundRequest{ID: "R2", Amount: 2000}, now.Add(2*time.Second))
	then := domain.UnmarshalTransactionFromDatabase(tx.Record())
	_ = tx.FailRefund("R2", "no", now.Add(3*time.Second))
	_ = tx.OpenDispute(now.Add(4 * time.Second))

	got, ok := tx.AsRefundRequested("R2")
	if !ok {
		t.Fatal("AsRefundRequested(R2) found nothing")
	}
	assertSameRecord(t, got.Record(), then.Record())
	if _, ok := tx.AsRefundRequested("R9"); ok {
		t.Fatal("AsRefundRequested found a refund that does not exist")
	}
}

func assertSameRecord(t *testing.T, got, want domain.TransactionRecord) {
	t.Helper()
	got.Version, want.Version = 0, 0
	if got.Status != want.Status || len(got.History) != len(want.History) || got.ErrorMessage != want.ErrorMessage ||
		got.EndToEndRefund != want.EndToEndRefund || (got.InfractionDate == nil) != (want.InfractionDate == nil) ||
		!reflect.DeepEqual(got.Refunds, want.Refunds) {
		t.Fatalf("rebuilt %+v\nwant    %+v", got, want)
	}
}

func TestOnlyMerchantDebitsAreChecked(t *testing.T) {
	from := domain.LedgerBalance{Available: 500}
	checked := domain.Posting{ID: "w", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 501, Checked: true}
	if _, err := from.Apply(checked); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("a checked debit past zero: %v, want ErrInsufficientBalance", err)
	}
	checked.Amount = 500
	if got, err := from.Apply(checked); err != nil || got != (domain.LedgerBalance{}) {
		t.Fatalf("a checked debit to zero: %+v, %v", got, err)
	}
	hold := domain.Posting{ID: "d", Debit: domain.LedgerAvailable, Credit: domain.LedgerBlocked, Amount: 800}
	after, err := from.Apply(hold)
	if err != nil || after != (domain.LedgerBalance{Available: -300, Blocked: 800}) {
		t.Fatalf("a MED hold past zero: %+v, %v; want it taken in full", after, err)
	}
	checked.Amount = 1
	if _, err := after.Apply(checked); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("a checked debit while available is negative: %v", err)
	}
	if _, err := from.Apply(domain.Posting{ID: "z", Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable}); !errors.Is(err, domain.ErrInvalidPosting) {
		t.Fatalf("a posting of nothing: %v, want ErrInvalidPosting", err)
	}
}

func TestNextEntryNumbersAndNeverGoesBackInTime(t *testing.T) {
	p := domain.Posting{ID: "p1", AccountID: "acc", Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable, Amount: 100}
	first, err := domain.NextEntry(nil, p, base)
	if err != nil || first.Seq != 1 || first.BalanceAfter != (domain.LedgerBalance{Available: 100}) || !first.CreatedAt.Equal(ms(base)) {
		t.Fatalf("first entry %+v, %v", first, err)
	}
	p.ID = "p2"
	second, err := domain.NextEntry(&first, p, base.Add(-time.Hour)) // another instance's clock is behind
	if err != nil || second.Seq != 2 || second.BalanceAfter.Available != 200 || !second.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("second entry %+v, %v; want number 2 dated no earlier than the first", second, err)
	}
	arrive, leave := domain.LatePaymentPostings("E1", "tx", 300)
	e, err := domain.NextEntry(nil, arrive, base)
	if err != nil || e.BalanceAfter != (domain.LedgerBalance{}) || arrive.Delta() != (domain.LedgerBalance{}) {
		t.Fatalf("a late payment touches no merchant: %+v, %v", e, err)
	}
	if arrive.Credit != domain.LedgerSuspense || leave.Debit != domain.LedgerSuspense || arrive.ID == leave.ID {
		t.Fatalf("late payment postings %+v %+v", arrive, leave)
	}
}

func TestOpeningBalancePostingsReachTheBalanceWanted(t *testing.T) {
	have := domain.LedgerBalance{Available: 1000, Blocked: 500}
	want := domain.LedgerBalance{Available: 700, Blocked: 900}
	b := have
	for _, p := range domain.OpeningBalancePostings("acc", have, want) {
		var err error
		if b, err = b.Apply(p); err != nil || p.Type != domain.MoveOpeningBalance || p.Amount <= 0 {
			t.Fatalf("posting %+v: %v", p, err)
		}
	}
	if b != want {
		t.Fatalf("reached %+v, want %+v", b, want)
	}
	if ps := domain.OpeningBalancePostings("acc", want, want); len(ps) != 0 {
		t.Fatalf("postings for a balance already right: %+v", ps)
	}
}

func TestVoidGivesACheckedPostingBack(t *testing.T) {
	hold := domain.Posting{ID: "tx/refund/R1/refund_hold", Type: domain.MoveRefundHold, AccountID: "acc",
		Debit: domain.LedgerAvailable, Credit: domain.LedgerBlocked, Amount: 100, Checked: true}
	v := hold.Void()
	if v.ID != domain.VoidPostingID(hold.ID) || v.Type != domain.MoveRefundRelease || v.Checked ||
		v.Debit != hold.Credit || v.Credit != hold.Debit || v.Amount != hold.Amount {
		t.Fatalf("Void() = %+v", v)
	}
	d, dv := hold.Delta(), v.Delta()
	if d.Available+dv.Available != 0 || d.Blocked+dv.Blocked != 0 {
		t.Fatalf("a posting and its void move %+v and %+v", d, dv)
	}
}

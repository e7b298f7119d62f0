package domain_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestANewWithdrawalsPayoutIsDueAtOnceAndUnclaimed(t *testing.T) {
	w := newWd(t, validPayout(), base)
	if d := w.PayoutDue(); d == nil || !d.Equal(w.CreatedAt()) || w.PayoutClaims() != 0 {
		t.Fatalf("due %v with %d claims, want due at the creation %v, unclaimed", d, w.PayoutClaims(), w.CreatedAt())
	}
}

func TestClaimPayout(t *testing.T) {
	lease := 45 * time.Second
	t.Run("the first claim sends, and holds the payout until the claim's end", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		now := base.Add(time.Second)
		step, err := w.ClaimPayout(now, now.Add(lease))
		if err != nil || step != domain.PayoutSend {
			t.Fatalf("ClaimPayout = %q, %v; want send", step, err)
		}
		if d := w.PayoutDue(); d == nil || !d.Equal(ms(now.Add(lease))) || w.PayoutClaims() != 1 {
			t.Fatalf("due %v, %d claims; want due at %v, 1 claim", d, w.PayoutClaims(), now.Add(lease))
		}
	})
	t.Run("a payout held by a claim is not due to anyone else and is left as it is", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if _, err := w.ClaimPayout(base, base.Add(lease)); err != nil {
			t.Fatal(err)
		}
		before := wdStateOf(w)
		if _, err := w.ClaimPayout(base.Add(lease-time.Millisecond), base.Add(2*lease)); !errors.Is(err, domain.ErrPayoutNotDue) {
			t.Fatalf("err %v, want ErrPayoutNotDue", err)
		}
		if !reflect.DeepEqual(wdStateOf(w), before) {
			t.Fatal("a refused claim changed the withdrawal")
		}
	})
	t.Run("a pending payout claimed again once the claim ended is read back", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if _, err := w.ClaimPayout(base, base.Add(lease)); err != nil {
			t.Fatal(err)
		}
		step, err := w.ClaimPayout(base.Add(lease), base.Add(2*lease))
		if err != nil || step != domain.PayoutReadBack || w.PayoutClaims() != 2 {
			t.Fatalf("ClaimPayout = %q, %v with %d claims; want read_back, 2 claims", step, err, w.PayoutClaims())
		}
	})
	t.Run("a processing payout is checked", func(t *testing.T) {
		w, now := wdAt(t, validPayout(), wdPaths[1])
		w.SchedulePayout(now)
		step, err := w.ClaimPayout(now, now.Add(lease))
		if err != nil || step != domain.PayoutCheck {
			t.Fatalf("ClaimPayout = %q, %v; want check", step, err)
		}
	})
	t.Run("a payout that is done is never due, and cannot be scheduled again", func(t *testing.T) {
		for _, path := range wdPaths {
			if path.want == domain.WdPending || path.want == domain.WdProcessing {
				continue
			}
			w, now := wdAt(t, validPayout(), path)
			if w.PayoutDue() != nil {
				t.Fatalf("%s: due %v, want nothing left to do", path.name, w.PayoutDue())
			}
			w.SchedulePayout(now)
			if _, err := w.ClaimPayout(now.Add(time.Hour), now.Add(2*time.Hour)); !errors.Is(err, domain.ErrPayoutNotDue) || w.PayoutDue() != nil {
				t.Fatalf("%s: ClaimPayout after SchedulePayout: %v, due %v", path.name, err, w.PayoutDue())
			}
		}
	})
	t.Run("the claim's end is kept to the millisecond, in UTC", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		until := base.Add(lease + 987654*time.Nanosecond).In(saoPaulo)
		if _, err := w.ClaimPayout(base, until); err != nil {
			t.Fatal(err)
		}
		if d := w.PayoutDue(); !d.Equal(ms(until)) || d.Location() != time.UTC {
			t.Fatalf("due %v, want %v in UTC", d, ms(until))
		}
	})
}

func TestCancelWithdrawalAndItsPayout(t *testing.T) {
	t.Run("a withdrawal whose payout was never claimed is canceled", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if err := w.Cancel(base.Add(time.Second)); err != nil || w.Status() != domain.WdCanceled || w.PayoutDue() != nil {
			t.Fatalf("Cancel: %v, status %s, due %v", err, w.Status(), w.PayoutDue())
		}
	})
	t.Run("a withdrawal whose payout was claimed refuses a cancel and says why", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if _, err := w.ClaimPayout(base, base.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		before := wdStateOf(w)
		err := w.Cancel(base.Add(time.Second))
		var ite *domain.InvalidTransitionError
		if !errors.As(err, &ite) || ite.From != "PENDING" || ite.To != "CANCELED" || ite.Reason == "" {
			t.Fatalf("err %v, want an InvalidTransitionError from PENDING to CANCELED with a reason", err)
		}
		if !reflect.DeepEqual(wdStateOf(w), before) {
			t.Fatal("a refused cancel changed the withdrawal")
		}
	})
	t.Run("a withdrawal whose payout was refused gets its errorMessage and its money back", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if _, err := w.ClaimPayout(base, base.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		w.MarkStored(2)
		if err := w.RefusePayout("saldo_insuficiente: Saldo insuficiente", base.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		ps := w.Postings()
		if w.Status() != domain.WdFailed || w.ErrorMessage() != "saldo_insuficiente: Saldo insuficiente" || w.PayoutDue() != nil ||
			len(ps) != 1 || ps[0].Type != domain.MoveWithdrawalReversal || ps[0].Amount != w.Total() {
			t.Fatalf("status %s, message %q, due %v, postings %+v", w.Status(), w.ErrorMessage(), w.PayoutDue(), ps)
		}
	})
}

func TestPayoutTakenAtOnce(t *testing.T) {
	w := newWd(t, validPayout(), base)
	check := base.Add(2 * time.Second)
	if err := w.PayoutTakenAtOnce(base, check); err != nil {
		t.Fatal(err)
	}
	h := w.History()
	if w.Status() != domain.WdProcessing || len(h) != 2 || !h[1].Date.Equal(w.CreatedAt()) ||
		w.PayoutClaims() != 1 || w.PayoutDue() == nil || !w.PayoutDue().Equal(ms(check)) {
		t.Fatalf("status %s, history %v, claims %d, due %v", w.Status(), h, w.PayoutClaims(), w.PayoutDue())
	}
	if err := w.Cancel(base); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("Cancel: %v, want ErrInvalidTransition", err)
	}
}

func TestPayoutID(t *testing.T) {
	id := "3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d"
	if got := domain.PayoutID(id); got != "3f0c9a528d1e4b7a9c2f5e6d7a8b9c0d" {
		t.Fatalf("PayoutID = %q", got)
	}
	for range 100 {
		id := domain.NewID()
		if back := domain.WithdrawalIDOfPayout(domain.PayoutID(id)); back != id {
			t.Fatalf("WithdrawalIDOfPayout(PayoutID(%s)) = %q", id, back)
		}
	}
	for _, foreign := range []string{"", "123ABC", "3F0C9A528D1E4B7A9C2F5E6D7A8B9C0D", "3f0c9a528d1e4b7a9c2f5e6d7a8b9c0", "3f0c9a528d1e4b7a9c2f5e6d7a8b9c0dz"} {
		if got := domain.WithdrawalIDOfPayout(foreign); got != "" {
			t.Errorf("WithdrawalIDOfPayout(%q) = %q, want none", foreign, got)
		}
	}
}

func TestWithdrawalRecordKeepsThePayoutDispatch(t *testing.T) {
	w := newWd(t, validPayout(), base)
	if _, err := w.ClaimPayout(base, base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	back := domain.UnmarshalWithdrawalFromDatabase(w.Record())
	if back.PayoutClaims() != 1 || !back.PayoutDue().Equal(ms(base.Add(time.Minute))) {
		t.Fatalf("rebuilt with %d claims due %v", back.PayoutClaims(), back.PayoutDue())
	}
	if err := back.Cancel(base); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("a rebuilt claimed withdrawal was canceled: %v", err)
	}
}

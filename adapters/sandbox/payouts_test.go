package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// sandboxWithdrawal stores a withdrawal as the sandbox creates it: PROCESSING at once.
func sandboxWithdrawal(t *testing.T, s *memory.Store, created time.Time) *domain.Withdrawal {
	t.Helper()
	account := domain.NewID()
	if _, err := s.Ledger().Post(context.Background(),
		domain.OpeningBalancePostings(account, domain.LedgerBalance{}, domain.LedgerBalance{Available: 10_000})...); err != nil {
		t.Fatal(err)
	}
	w, err := domain.NewWithdrawal(domain.NewID(), account, "SANDBOX", domain.Payout{Amount: 1_000,
		PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}}, domain.Idempotency{}, created)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PayoutTakenAtOnce(created, created.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Withdrawals().Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestTheSandboxMakesAPayoutOnceTheSettleDelayHasPassed(t *testing.T) {
	s := memory.NewStore()
	w := sandboxWithdrawal(t, s, at)
	id := domain.PayoutID(w.ID())
	for _, c := range []struct {
		now  time.Time
		want ports.PayoutStatus
	}{
		{at, ports.PayoutInProgress},
		{at.Add(1999 * time.Millisecond), ports.PayoutInProgress},
		{at.Add(2 * time.Second), ports.PayoutDone},
	} {
		res, err := sandbox.NewPayouts(s.Withdrawals(), fixedClock{c.now}, 2*time.Second, domain.SandboxISPB).Status(context.Background(), id)
		if err != nil || res.Status != c.want {
			t.Fatalf("at %v: %+v, %v; want %s", c.now, res, err, c.want)
		}
		if c.want == ports.PayoutDone && (len(res.EndToEndID) != 32 || res.EndToEndID[:9] != "E"+domain.SandboxISPB) {
			t.Fatalf("endToEnd %q is not an E id of the sandbox ISPB", res.EndToEndID)
		}
	}
}

func TestTheSandboxReadsAPayoutBackFromItsWithdrawal(t *testing.T) {
	s := memory.NewStore()
	p := sandbox.NewPayouts(s.Withdrawals(), fixedClock{at}, 0, domain.SandboxISPB)
	w := sandboxWithdrawal(t, s, at)
	steer := sandbox.NewWithdrawalSteering(s.Withdrawals(), fixedClock{at})
	if _, err := steer.FailWithdrawal.Execute(context.Background(), domain.Principal{AccountID: w.AccountID()}, w.ID(), struct{}{}); err != nil {
		t.Fatal(err)
	}
	res, err := p.Status(context.Background(), domain.PayoutID(w.ID()))
	if err != nil || res.Status != ports.PayoutNotDone || res.Reason != sandbox.WithdrawalFailedMessage {
		t.Fatalf("a steered failure reads back %+v, %v; want NAO_REALIZADO with its message", res, err)
	}
	for _, id := range []string{domain.PayoutID(domain.NewID()), "123ABC"} {
		if _, err := p.Status(context.Background(), id); !errors.Is(err, ports.ErrPayoutNotFound) {
			t.Fatalf("Status(%s) = %v, want ErrPayoutNotFound", id, err)
		}
	}
	res, err = p.Send(context.Background(), ports.PayoutOrder{ID: domain.PayoutID(domain.NewID()), Amount: 100,
		Key: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}})
	if err != nil || res.Status != ports.PayoutInProgress {
		t.Fatalf("Send = %+v, %v; want the payout taken", res, err)
	}
}

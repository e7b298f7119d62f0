package application_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

func newWdClock() *fakeClock {
	return newFakeClock(time.Date(2026, 11, 22, 11, 19, 32, 123_000_000, time.UTC))
}

// wdFixture is the withdrawal use cases over an adapters/memory store, for one funded account.
type wdFixture struct {
	ledger  *memory.Ledger
	repo    *wdStore
	clock   *fakeClock
	create  *application.CreateWithdrawal
	caller  domain.Principal
	another domain.Principal
}

var wdGateway = domain.AccountHolder{
	Type: domain.HolderPJ, Name: "PIXGATE SANDBOX", Document: domain.MustParseDocument("11222333000181"),
	BankAccount: domain.BankAccount{Type: "CACC", Digit: "1", ISPB: domain.SandboxISPB},
	Pix:         domain.PixKey{Type: domain.PixKeyEmail, Key: "pix@pixgate.example"},
}

func newWdFixture(t *testing.T, startAtOnce bool, fee domain.Cents, funds domain.Cents) *wdFixture {
	t.Helper()
	clock := newWdClock()
	store := memory.NewStore()
	ledger, repo := store.Ledger(), newWdStore(store)
	f := &wdFixture{
		ledger: ledger, repo: repo, clock: clock,
		create: application.NewCreateWithdrawal(repo, &fakeIDs{}, clock, application.WithdrawalSettings{
			Acquirer: "SANDBOX", Fee: fee, Payer: &wdGateway, Directory: sandbox.Directory{},
			StartAtOnce: startAtOnce,
		}),
		caller:  domain.Principal{AccountID: "acc-1"},
		another: domain.Principal{AccountID: "acc-2"},
	}
	fund(t, ledger, "acc-1", funds)
	return f
}

func wdInput(amount domain.Cents) application.CreateWithdrawalInput {
	return application.CreateWithdrawalInput{
		Amount: amount, PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"},
		ExternalCode: "payout-0001", WebhookURL: "https://merchant.example.com/hooks", Fingerprint: fmt.Sprint("fp-", amount),
	}
}

func (f *wdFixture) mustCreate(t *testing.T, in application.CreateWithdrawalInput) *domain.Withdrawal {
	t.Helper()
	res, err := f.create.Execute(context.Background(), f.caller, in)
	if err != nil {
		t.Fatalf("creating withdrawal: %v", err)
	}
	return res.Withdrawal
}

func (f *wdFixture) available(t *testing.T) domain.Cents {
	t.Helper()
	b, err := application.NewGetBalance(f.ledger).Execute(context.Background(), f.caller)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available
}

func statuses(w *domain.Withdrawal) []domain.WithdrawalStatus {
	var out []domain.WithdrawalStatus
	for _, e := range w.History() {
		out = append(out, e.Status)
	}
	return out
}

func TestCreateWithdrawalInTheSandboxStoresItProcessingWithItsPartiesAndFee(t *testing.T) {
	f := newWdFixture(t, true, 150, 10_000)
	w := f.mustCreate(t, wdInput(5_000))

	stored, err := application.NewGetWithdrawal(f.repo).Execute(context.Background(), f.caller, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	h := stored.History()
	if stored.Status() != domain.WdProcessing || !slices.Equal(statuses(stored), []domain.WithdrawalStatus{domain.WdPending, domain.WdProcessing}) {
		t.Fatalf("stored %s with history %v, want PROCESSING after PENDING", stored.Status(), statuses(stored))
	}
	if !h[0].Date.Equal(stored.CreatedAt()) || !h[1].Date.Equal(stored.CreatedAt()) {
		t.Errorf("history dates %v and %v, want both the creation %v", h[0].Date, h[1].Date, stored.CreatedAt())
	}
	p := stored.Payout()
	switch {
	case stored.Acquirer() != "SANDBOX":
		t.Errorf("acquirer %q", stored.Acquirer())
	case p.Fee != 150 || stored.Total() != 5_150:
		t.Errorf("fee %d, total %d; want 150 and 5150", p.Fee, stored.Total())
	case p.Payer == nil || p.Payer.Document.Value() != "11222333000181":
		t.Errorf("payer %+v, want the gateway's account", p.Payer)
	case p.Receiver == nil || p.Receiver.Name != sandbox.PayoutReceiver || p.Receiver.Pix != p.PixKey:
		t.Errorf("receiver %+v, want the sandbox receiver of the key", p.Receiver)
	}
	if got := f.available(t); got != 10_000-5_150 {
		t.Errorf("available %d, want %d", got, 10_000-5_150)
	}
	if got := f.repo.eventTypes(w.ID()); !slices.Equal(got, []string{"withdrawal.processing"}) {
		t.Errorf("events %v, want the PROCESSING notification only", got)
	}
}

func TestCreateWithdrawalRefusesWhatTheBalanceDoesNotCover(t *testing.T) {
	cases := []struct {
		name   string
		funds  domain.Cents
		amount domain.Cents
		ok     bool
	}{
		{"amount and fee equal to the balance pass", 1_100, 1_000, true},
		{"one cent over the balance is refused", 1_099, 1_000, false},
		{"an empty account is refused", 0, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWdFixture(t, true, 100, c.funds)
			_, err := f.create.Execute(context.Background(), f.caller, wdInput(c.amount))
			if c.ok {
				if err != nil || f.available(t) != 0 {
					t.Fatalf("err %v, available %d; want nil and 0", err, f.available(t))
				}
				return
			}
			if !errors.Is(err, domain.ErrInsufficientBalance) {
				t.Fatalf("err %v, want ErrInsufficientBalance", err)
			}
			if f.repo.stored() != 0 || f.available(t) != c.funds {
				t.Fatalf("stored %d, available %d; want nothing stored and %d", f.repo.stored(), f.available(t), c.funds)
			}
		})
	}
}

func TestCreateWithdrawalIsIdempotent(t *testing.T) {
	t.Run("the same key and request replay the stored withdrawal", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		in := wdInput(1_000)
		in.IdempotencyKey = "payout-key-1"
		first := f.mustCreate(t, in)
		res, err := f.create.Execute(context.Background(), f.caller, in)
		if err != nil || !res.Replayed || res.Withdrawal.ID() != first.ID() {
			t.Fatalf("replay = %+v, %v; want the first withdrawal, replayed", res, err)
		}
		if f.repo.stored() != 1 || f.available(t) != 9_000 {
			t.Fatalf("stored %d, available %d; want 1 and 9000", f.repo.stored(), f.available(t))
		}
	})
	t.Run("the same key with another request is refused", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		in := wdInput(1_000)
		in.IdempotencyKey = "payout-key-1"
		f.mustCreate(t, in)
		in.Amount, in.Fingerprint = 2_000, "another request"
		if _, err := f.create.Execute(context.Background(), f.caller, in); !errors.Is(err, application.ErrIdempotencyKeyReused) {
			t.Fatalf("err %v, want ErrIdempotencyKeyReused", err)
		}
	})
	t.Run("another account may use the same key", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		fund(t, f.ledger, f.another.AccountID, 10_000)
		in := wdInput(1_000)
		in.IdempotencyKey = "payout-key-1"
		a := f.mustCreate(t, in)
		res, err := f.create.Execute(context.Background(), f.another, in)
		if err != nil || res.Replayed || res.Withdrawal.ID() == a.ID() {
			t.Fatalf("other account = %+v, %v; want a new withdrawal", res, err)
		}
	})
	t.Run("concurrent requests with one key create one withdrawal", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		in := wdInput(4_000)
		in.IdempotencyKey = "payout-key-race"
		ids := make(chan string, 10)
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				res, err := f.create.Execute(context.Background(), f.caller, in)
				if err != nil {
					t.Errorf("concurrent request: %v", err)
					return
				}
				ids <- res.Withdrawal.ID()
			})
		}
		wg.Wait()
		close(ids)
		var seen []string
		for id := range ids {
			seen = append(seen, id)
		}
		if len(seen) != 10 || len(slices.Compact(slices.Sorted(slices.Values(seen)))) != 1 {
			t.Fatalf("ids %v, want one", seen)
		}
		if f.repo.stored() != 1 || f.available(t) != 6_000 {
			t.Fatalf("stored %d, available %d; want 1 and 6000", f.repo.stored(), f.available(t))
		}
	})
	for _, balanceFirst := range []bool{false, true} {
		name := "a request that loses the race to its own key answers the winner"
		if balanceFirst {
			name += ", also from a store that finds the balance spent first"
		}
		t.Run(name, func(t *testing.T) {
			f := newWdFixture(t, true, 0, 5_000)
			in := wdInput(5_000)
			in.IdempotencyKey = "payout-key-late"
			var winnerID string
			// The winner's own call (the second) goes straight through.
			f.repo.Before("Create", 1, func() {
				res, err := f.create.Execute(context.Background(), f.caller, in)
				if err != nil {
					t.Errorf("winner: %v", err)
					return
				}
				winnerID = res.Withdrawal.ID()
			})
			if balanceFirst {
				// A store that checks the balance before the key refuses the loser so.
				f.repo.Fail("Create", 1, fmt.Errorf("%w: 0 cents available, 5000 asked", domain.ErrInsufficientBalance))
			}
			res, err := f.create.Execute(context.Background(), f.caller, in)
			if err != nil || !res.Replayed || res.Withdrawal.ID() != winnerID {
				t.Fatalf("loser = %+v, %v; want the winner %s replayed", res, err, winnerID)
			}
			if f.repo.stored() != 1 || f.available(t) != 0 {
				t.Fatalf("stored %d, available %d; want 1 and 0", f.repo.stored(), f.available(t))
			}
		})
	}
}

func TestConcurrentWithdrawalsNeverOverdraw(t *testing.T) {
	const funds, fee = 9_000, 50
	f := newWdFixture(t, true, fee, funds)
	amount := domain.Cents(funds / 3)
	var wg sync.WaitGroup
	var mu sync.Mutex
	okCount, refused := 0, 0
	for i := range 20 {
		wg.Go(func() {
			in := wdInput(amount)
			in.IdempotencyKey = fmt.Sprintf("race-key-%04d", i)
			_, err := f.create.Execute(context.Background(), f.caller, in)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				okCount++
			case errors.Is(err, domain.ErrInsufficientBalance):
				refused++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	affordable := int(funds / (amount + fee)) // 2: the fee makes the third one short
	if okCount != affordable || refused != 20-affordable {
		t.Fatalf("%d created, %d refused; want %d and %d", okCount, refused, affordable, 20-affordable)
	}
	if got := f.available(t); got != funds-domain.Cents(affordable)*(amount+fee) || got < 0 {
		t.Fatalf("available %d", got)
	}
}

func TestCreateWithdrawalFailsWhenTheKeyCannotBeResolved(t *testing.T) {
	clock := newWdClock()
	store := memory.NewStore()
	repo := newWdStore(store)
	fund(t, store.Ledger(), "acc-1", 10_000)
	lookupDown := errors.New("PIX directory unreachable")
	uc := application.NewCreateWithdrawal(repo, &fakeIDs{}, clock, application.WithdrawalSettings{
		Acquirer: "SANDBOX", Payer: &wdGateway, StartAtOnce: true, Directory: fakeDirectory{lookupDown},
	})
	_, err := uc.Execute(context.Background(), domain.Principal{AccountID: "acc-1"}, wdInput(1_000))
	if !errors.Is(err, lookupDown) || repo.stored() != 0 {
		t.Fatalf("err %v, stored %d; want the look-up's error and nothing stored", err, repo.stored())
	}
}

func TestCancelWithdrawal(t *testing.T) {
	t.Run("a pending withdrawal is canceled and gives its money back", func(t *testing.T) {
		f := newWdFixture(t, false, 100, 10_000)
		w := f.mustCreate(t, wdInput(3_000))
		if w.Status() != domain.WdPending || f.available(t) != 6_900 {
			t.Fatalf("created %s with %d available; want PENDING and 6900", w.Status(), f.available(t))
		}
		got, err := application.NewCancelWithdrawal(f.repo, f.clock).Execute(context.Background(), f.caller, w.ID(), application.NoInput{})
		if err != nil || got.Status() != domain.WdCanceled {
			t.Fatalf("cancel = %v, %v; want CANCELED", got, err)
		}
		if f.available(t) != 10_000 {
			t.Fatalf("available %d after the cancel, want 10000", f.available(t))
		}
		if ev := f.repo.eventTypes(w.ID()); !slices.Equal(ev, []string{"withdrawal.canceled"}) {
			t.Fatalf("events %v, want withdrawal.canceled", ev)
		}
	})
	t.Run("a processing withdrawal cannot be canceled", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		w := f.mustCreate(t, wdInput(3_000))
		_, err := application.NewCancelWithdrawal(f.repo, f.clock).Execute(context.Background(), f.caller, w.ID(), application.NoInput{})
		if !errors.Is(err, domain.ErrInvalidTransition) || f.available(t) != 7_000 {
			t.Fatalf("err %v, available %d; want ErrInvalidTransition and 7000", err, f.available(t))
		}
	})
	t.Run("another account's withdrawal is not found", func(t *testing.T) {
		f := newWdFixture(t, false, 0, 10_000)
		w := f.mustCreate(t, wdInput(3_000))
		_, err := application.NewCancelWithdrawal(f.repo, f.clock).Execute(context.Background(), f.another, w.ID(), application.NoInput{})
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err %v, want ErrNotFound", err)
		}
	})
}

func TestSandboxSteeringOfWithdrawals(t *testing.T) {
	type step func(f *wdFixture, id string) (*domain.Withdrawal, error)
	fail := func(f *wdFixture, id string) (*domain.Withdrawal, error) {
		return sandbox.NewWithdrawalSteering(f.repo, f.clock).FailWithdrawal.Execute(context.Background(), f.caller, id, application.NoInput{})
	}
	reject := func(f *wdFixture, id string) (*domain.Withdrawal, error) {
		return sandbox.NewWithdrawalSteering(f.repo, f.clock).RejectWithdrawal.Execute(context.Background(), f.caller, id, application.NoInput{})
	}
	refund := func(f *wdFixture, id string) (*domain.Withdrawal, error) {
		return sandbox.NewWithdrawalSteering(f.repo, f.clock).RefundWithdrawal.Execute(context.Background(), f.caller, id, application.NoInput{})
	}
	settle := func(f *wdFixture, _ string) (*domain.Withdrawal, error) {
		_, err := sandboxPayouts(t, f, 0).RunOnce(context.Background())
		return nil, err
	}
	cases := []struct {
		name      string
		before    []step
		act       step
		want      domain.WithdrawalStatus
		message   string
		available domain.Cents
	}{
		{"a processing withdrawal fails and gives the money back", nil, fail, domain.WdFailed, sandbox.WithdrawalFailedMessage, 10_000},
		{"a processing withdrawal is rejected and gives the money back", nil, reject, domain.WdRejected, sandbox.WithdrawalRejectedMessage, 10_000},
		{"a processed withdrawal is refunded and gives the money back", []step{settle}, refund, domain.WdRefunded, "", 10_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWdFixture(t, true, 100, 10_000)
			w := f.mustCreate(t, wdInput(2_000))
			for _, s := range c.before {
				if _, err := s(f, w.ID()); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.act(f, w.ID())
			if err != nil || got.Status() != c.want || got.ErrorMessage() != c.message {
				t.Fatalf("got %v, %v; want %s with %q", got, err, c.want, c.message)
			}
			if f.available(t) != c.available {
				t.Fatalf("available %d, want %d", f.available(t), c.available)
			}
		})
	}
	refused := []struct {
		name string
		act  step
	}{
		{"a processing withdrawal cannot be refunded", refund},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			f := newWdFixture(t, true, 0, 10_000)
			w := f.mustCreate(t, wdInput(2_000))
			if _, err := c.act(f, w.ID()); !errors.Is(err, domain.ErrInvalidTransition) {
				t.Fatalf("err %v, want ErrInvalidTransition", err)
			}
		})
	}
	t.Run("a processed withdrawal can no longer fail or be rejected", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		w := f.mustCreate(t, wdInput(2_000))
		if _, err := settle(f, ""); err != nil {
			t.Fatal(err)
		}
		for _, act := range []step{fail, reject} {
			if _, err := act(f, w.ID()); !errors.Is(err, domain.ErrInvalidTransition) {
				t.Fatalf("err %v, want ErrInvalidTransition", err)
			}
		}
	})
	t.Run("another account's withdrawal is not found", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		w := f.mustCreate(t, wdInput(2_000))
		f.caller, f.another = f.another, f.caller
		for _, act := range []step{fail, reject, refund} {
			if _, err := act(f, w.ID()); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("err %v, want ErrNotFound", err)
			}
		}
	})
}

// sandboxPayouts is the payout outbox over the sandbox's payout API, with the settle delay,
// as the server wires it; anything it reports fails the test (the sandbox never refuses).
func sandboxPayouts(t *testing.T, f *wdFixture, delay time.Duration) *application.PayOutWithdrawals {
	return application.NewPayOutWithdrawals(f.repo, sandbox.NewPayouts(f.repo, f.clock, delay, domain.SandboxISPB), f.clock,
		application.PayoutSettings{CheckEvery: 500 * time.Millisecond, Claim: application.ClaimMargin + 10*time.Second},
		func(r application.PayoutReport) { t.Errorf("the sandbox's payouts reported %+v", r) })
}

func TestSandboxPayouts(t *testing.T) {
	t.Run("only withdrawals processing for the delay are processed", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		old := f.mustCreate(t, wdInput(1_000))
		f.clock.Advance(1500 * time.Millisecond)
		young := f.mustCreate(t, wdInput(1_000))
		f.clock.Advance(600 * time.Millisecond)

		outbox := sandboxPayouts(t, f, 2*time.Second)
		if _, err := outbox.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, _ := f.repo.Get(context.Background(), "acc-1", old.ID())
		if got.Status() != domain.WdProcessed || got.AmountWithdrawn() == nil || *got.AmountWithdrawn() != 1_000 ||
			got.ProcessedDate() == nil || !got.ProcessedDate().Equal(f.clock.Now()) {
			t.Fatalf("old withdrawal %s, withdrawn %v at %v", got.Status(), got.AmountWithdrawn(), got.ProcessedDate())
		}
		e2e := got.EndToEnd()
		if len(e2e) != 32 || !strings.HasPrefix(e2e, "E"+domain.SandboxISPB+f.clock.Now().Format("200601021504")) {
			t.Fatalf("endToEnd %q is not an E-format id of the sandbox ISPB", e2e)
		}
		if still, _ := f.repo.Get(context.Background(), "acc-1", young.ID()); still.Status() != domain.WdProcessing {
			t.Fatalf("young withdrawal %s, want still PROCESSING", still.Status())
		}
		if ev := f.repo.eventTypes(old.ID()); !slices.Equal(ev, []string{"withdrawal.processing", "withdrawal.processed"}) {
			t.Fatalf("events %v", ev)
		}
		if _, err := outbox.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ev := f.repo.eventTypes(old.ID()); len(ev) != 2 {
			t.Fatalf("a second run moved the processed withdrawal again: %v", ev)
		}
		if f.available(t) != 8_000 {
			t.Fatalf("available %d, want 8000: a processed withdrawal keeps its money out", f.available(t))
		}
		f.clock.Advance(2 * time.Second)
		if _, err := outbox.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.repo.Get(context.Background(), "acc-1", young.ID()); got.Status() != domain.WdProcessed {
			t.Fatalf("young withdrawal %s once its delay passed, want PROCESSED", got.Status())
		}
	})
	t.Run("several outboxes running at once make one transition each", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 100_000)
		var ids []string
		for range 20 {
			ids = append(ids, f.mustCreate(t, wdInput(1_000)).ID())
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 4 {
			wg.Go(func() {
				n, err := sandboxPayouts(t, f, 0).RunOnce(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != len(ids) {
			t.Fatalf("%d steps in all, want %d", total, len(ids))
		}
		for _, id := range ids {
			if ev := f.repo.eventTypes(id); len(ev) != 2 {
				t.Fatalf("withdrawal %s has events %v, want one per status", id, ev)
			}
		}
	})
	t.Run("a failed or rejected withdrawal is left alone", func(t *testing.T) {
		f := newWdFixture(t, true, 0, 10_000)
		w := f.mustCreate(t, wdInput(1_000))
		if _, err := sandbox.NewWithdrawalSteering(f.repo, f.clock).RejectWithdrawal.Execute(context.Background(), f.caller, w.ID(), application.NoInput{}); err != nil {
			t.Fatal(err)
		}
		if moved, err := sandboxPayouts(t, f, 0).RunOnce(context.Background()); err != nil || moved != 0 {
			t.Fatalf("moved %d, %v; want 0", moved, err)
		}
	})
}

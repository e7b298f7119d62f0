package application_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// fakePSP is a PSP's payout API behind ports.Payouts: one payout per id, kept; the outcome of
// each steered by its key; faults on demand. Safe for concurrent use.
type fakePSP struct {
	mu       sync.Mutex
	payouts  map[string]*ports.PayoutResult
	keys     map[string]string // payout id → key
	outcomes map[string]fakeOutcome
	faults   []fakeFault
	sends    int // Send calls
	statuses int // Status calls
	// onSend, when set, runs inside Send before it answers (to stage races); it runs once.
	onSend func()
}

type fakeOutcome struct {
	refuse string             // a refusal's reason
	status ports.PayoutStatus // the status a payout answers (EM_PROCESSAMENTO when empty)
}

// fakeFault makes the next call of op ("send", "status") fail with an unknown outcome; when
// applied, the call is carried out first (the answer is lost).
type fakeFault struct {
	op      string
	applied bool
}

var errPSPDown = errors.New("the PSP did not answer in time")

func newFakePSP() *fakePSP {
	return &fakePSP{payouts: map[string]*ports.PayoutResult{}, keys: map[string]string{}, outcomes: map[string]fakeOutcome{}}
}

func (p *fakePSP) steer(key string, o fakeOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outcomes[key] = o
}

func (p *fakePSP) fail(op string, applied bool, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range times {
		p.faults = append(p.faults, fakeFault{op: op, applied: applied})
	}
}

// fault takes the next fault of op.
func (p *fakePSP) fault(op string) (fakeFault, bool) {
	for i, f := range p.faults {
		if f.op == op {
			p.faults = slices.Delete(p.faults, i, i+1)
			return f, true
		}
	}
	return fakeFault{}, false
}

// settle gives the payout id its end, as the PSP would.
func (p *fakePSP) settle(id string, res ports.PayoutResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payouts[id] = &res
}

func (p *fakePSP) Send(_ context.Context, o ports.PayoutOrder) (ports.PayoutResult, error) {
	p.mu.Lock()
	hook := p.onSend
	p.onSend = nil
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends++
	f, faulty := p.fault("send")
	if faulty && !f.applied {
		return ports.PayoutResult{}, errPSPDown
	}
	if _, taken := p.payouts[o.ID]; taken {
		return ports.PayoutResult{}, fmt.Errorf("send %s: %w", o.ID, ports.ErrPayoutIDTaken)
	}
	out := p.outcomes[o.Key.Key]
	if out.refuse != "" {
		return ports.PayoutResult{}, &ports.PayoutRefusedError{Reason: out.refuse}
	}
	res := ports.PayoutResult{Status: ports.PayoutInProgress, EndToEndID: "E12345678202611221119" + o.ID[:11]}
	if out.status != "" {
		res.Status = out.status
	}
	p.payouts[o.ID], p.keys[o.ID] = &res, o.Key.Key
	if faulty {
		return ports.PayoutResult{}, errPSPDown
	}
	return res, nil
}

func (p *fakePSP) Status(_ context.Context, id string) (ports.PayoutResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statuses++
	if _, faulty := p.fault("status"); faulty {
		return ports.PayoutResult{}, errPSPDown
	}
	res, ok := p.payouts[id]
	if !ok {
		return ports.PayoutResult{}, fmt.Errorf("payout %s: %w", id, ports.ErrPayoutNotFound)
	}
	return *res, nil
}

// made is how many payouts the PSP holds.
func (p *fakePSP) made() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.payouts)
}

func (p *fakePSP) calls() (sends, statuses int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends, p.statuses
}

// poFixture is the payout outbox on the memory store, over the fake PSP, with a funded account.
type poFixture struct {
	store    *memory.Store
	accounts *memory.Accounts
	psp      *fakePSP
	clock    *fakeClock
	create   *application.CreateWithdrawal
	cancel   *application.CancelWithdrawal
	outbox   *application.PayOutWithdrawals
	caller   domain.Principal

	mu      sync.Mutex
	reports []application.PayoutReport
}

const (
	poCheckEvery = 30 * time.Second
	poClaim      = time.Minute
)

func newPoFixture(t *testing.T, funds domain.Cents) *poFixture {
	t.Helper()
	f := &poFixture{store: memory.NewStore(), accounts: memory.NewAccounts(), psp: newFakePSP(), clock: newWdClock(),
		caller: domain.Principal{AccountID: domain.NewID()}}
	repo := f.store.Withdrawals()
	f.create = application.NewCreateWithdrawal(repo, &fakeIDs{}, f.clock, application.WithdrawalSettings{Acquirer: "EFI", Fee: 150})
	f.cancel = application.NewCancelWithdrawal(repo, f.clock)
	f.outbox = f.newOutbox()
	if _, err := f.store.Ledger().Post(context.Background(),
		domain.OpeningBalancePostings(f.caller.AccountID, domain.LedgerBalance{}, domain.LedgerBalance{Available: funds})...); err != nil {
		t.Fatal(err)
	}
	return f
}

// newOutbox is another outbox on the same store and PSP: another instance.
func (f *poFixture) newOutbox() *application.PayOutWithdrawals {
	return application.NewPayOutWithdrawals(f.store.Withdrawals(), f.psp, f.clock,
		application.PayoutSettings{CheckEvery: poCheckEvery, Claim: poClaim}, func(r application.PayoutReport) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reports = append(f.reports, r)
		})
}

func (f *poFixture) withdraw(t *testing.T, amount domain.Cents, key string) *domain.Withdrawal {
	t.Helper()
	res, err := f.create.Execute(context.Background(), f.caller, application.CreateWithdrawalInput{
		Amount: amount, PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: key},
		WebhookURL: "https://merchant.example.com/hooks", Fingerprint: domain.NewID(),
	})
	if err != nil {
		t.Fatalf("creating the withdrawal: %v", err)
	}
	return res.Withdrawal
}

func (f *poFixture) run(t *testing.T, o *application.PayOutWithdrawals) int {
	t.Helper()
	n, err := o.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return n
}

func (f *poFixture) get(t *testing.T, id string) *domain.Withdrawal {
	t.Helper()
	w, err := f.store.Withdrawals().Get(context.Background(), f.caller.AccountID, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (f *poFixture) available(t *testing.T) domain.Cents {
	t.Helper()
	b, err := f.store.Ledger().Balance(context.Background(), f.caller.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available
}

// events are the types of the withdrawal's events, oldest first.
func (f *poFixture) events(t *testing.T, id string) []string {
	t.Helper()
	ds, err := f.store.Outbox().Deliveries(context.Background(), f.caller.AccountID, domain.ResourceWithdrawal, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.Type)
	}
	return out
}

// statement are the types of the account's entries of the withdrawal, oldest first.
func (f *poFixture) statement(t *testing.T, id string) []domain.MovementType {
	t.Helper()
	entries, err := f.store.Ledger().Entries(context.Background(), ports.EntryFilter{AccountID: f.caller.AccountID}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.MovementType
	for _, e := range slices.Backward(entries) {
		if e.ResourceID == id {
			out = append(out, e.Type)
		}
	}
	return out
}

// verify is `pixgate ledger verify` on the fixture's store: it must find nothing wrong.
func (f *poFixture) verify(t *testing.T) {
	t.Helper()
	rep, err := application.NewVerifyLedger(f.store.Ledger(), f.store.Transactions(), f.store.Withdrawals(), f.accounts).Execute(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("ledger verify: %v", rep.Disagreements)
	}
}

func (f *poFixture) reported() []application.PayoutReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reports)
}

func statusesOf(w *domain.Withdrawal) []domain.WithdrawalStatus {
	var out []domain.WithdrawalStatus
	for _, h := range w.History() {
		out = append(out, h.Status)
	}
	return out
}

func TestAPayoutThePSPMakesEndsProcessed(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	if got := f.get(t, w.ID()); got.Status() != domain.WdPending || got.PayoutDue() == nil {
		t.Fatalf("stored %s due %v, want PENDING and due", got.Status(), got.PayoutDue())
	}
	if n := f.run(t, f.outbox); n != 1 {
		t.Fatalf("%d steps, want 1", n)
	}
	got := f.get(t, w.ID())
	if got.Status() != domain.WdProcessing || f.psp.made() != 1 {
		t.Fatalf("after the send: %s with %d payouts at the PSP, want PROCESSING and 1", got.Status(), f.psp.made())
	}
	if due := got.PayoutDue(); due == nil || !due.Equal(f.clock.Now().Add(poCheckEvery)) {
		t.Fatalf("next look at %v, want %v", due, f.clock.Now().Add(poCheckEvery))
	}
	// Nothing is due before the check.
	if n := f.run(t, f.outbox); n != 0 {
		t.Fatalf("%d steps before the check is due", n)
	}
	id := domain.PayoutID(w.ID())
	f.psp.settle(id, ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: "E09089356202611221130APIabcdef12"})
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	got = f.get(t, w.ID())
	if got.Status() != domain.WdProcessed || got.EndToEnd() != "E09089356202611221130APIabcdef12" ||
		got.AmountWithdrawn() == nil || *got.AmountWithdrawn() != 2_000 || got.ProcessedDate() == nil ||
		!got.ProcessedDate().Equal(f.clock.Now()) || got.PayoutDue() != nil {
		t.Fatalf("stored %s, endToEnd %q, withdrawn %v at %v, due %v", got.Status(), got.EndToEnd(), got.AmountWithdrawn(), got.ProcessedDate(), got.PayoutDue())
	}
	if ev := f.events(t, w.ID()); !slices.Equal(ev, []string{"withdrawal.processing", "withdrawal.processed"}) {
		t.Fatalf("events %v", ev)
	}
	if got := f.available(t); got != 10_000-2_150 {
		t.Fatalf("available %d, want %d", got, 10_000-2_150)
	}
	if sends, _ := f.psp.calls(); sends != 1 {
		t.Fatalf("%d sends, want 1", sends)
	}
	f.verify(t)
}

func TestAPayoutThePSPRefusesFailsAndGivesTheMoneyBackExactly(t *testing.T) {
	f := newPoFixture(t, 10_000)
	f.psp.steer("ghost@example.com", fakeOutcome{refuse: "A chave do favorecido não existe (chave_invalida)"})
	before := f.available(t)
	w := f.withdraw(t, 2_000, "ghost@example.com")
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	if got.Status() != domain.WdFailed || got.ErrorMessage() != "A chave do favorecido não existe (chave_invalida)" ||
		!slices.Equal(statusesOf(got), []domain.WithdrawalStatus{domain.WdPending, domain.WdFailed}) || got.PayoutDue() != nil {
		t.Fatalf("stored %s %v with %q, due %v; want PENDING → FAILED with the PSP's reason", got.Status(), statusesOf(got), got.ErrorMessage(), got.PayoutDue())
	}
	if got := f.available(t); got != before {
		t.Fatalf("available %d, want %d: the money comes back exactly", got, before)
	}
	if st := f.statement(t, w.ID()); !slices.Equal(st, []domain.MovementType{domain.MoveWithdrawal, domain.MoveWithdrawalReversal}) {
		t.Fatalf("statement %v, want the withdrawal and its reversal", st)
	}
	if ev := f.events(t, w.ID()); !slices.Equal(ev, []string{"withdrawal.failed"}) {
		t.Fatalf("events %v", ev)
	}
	if f.psp.made() != 0 || f.run(t, f.outbox) != 0 {
		t.Fatal("a refused payout was made, or is still due")
	}
	f.verify(t)
}

func TestAPayoutThePSPCouldNotMakeFailsWithItsReason(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.run(t, f.outbox)
	f.psp.settle(domain.PayoutID(w.ID()), ports.PayoutResult{Status: ports.PayoutNotDone, Reason: "Conta encerrada (AC14)"})
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	if got.Status() != domain.WdFailed || got.ErrorMessage() != "Conta encerrada (AC14)" ||
		!slices.Equal(statusesOf(got), []domain.WithdrawalStatus{domain.WdPending, domain.WdProcessing, domain.WdFailed}) {
		t.Fatalf("stored %s %v with %q", got.Status(), statusesOf(got), got.ErrorMessage())
	}
	if f.available(t) != 10_000 {
		t.Fatalf("available %d, want 10000", f.available(t))
	}
	f.verify(t)
}

func TestAPSPDownThenBackGetsThePayoutOnce(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.psp.fail("send", false, 1)
	f.psp.fail("status", false, 2)
	f.run(t, f.outbox)
	if got := f.get(t, w.ID()); got.Status() != domain.WdPending || got.PayoutClaims() != 1 {
		t.Fatalf("after an unknown outcome: %s with %d claims, want PENDING, claimed", got.Status(), got.PayoutClaims())
	}
	// Still down: the read back fails, twice, each time a little later.
	for range 2 {
		f.clock.Advance(poCheckEvery)
		f.run(t, f.outbox)
		if got := f.get(t, w.ID()); got.Status() != domain.WdPending {
			t.Fatalf("%s while the PSP is down", got.Status())
		}
	}
	if _, err := f.cancel.Execute(context.Background(), f.caller, w.ID(), application.NoInput{}); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("a cancel of a payout that may have been sent: %v, want refused", err)
	}
	// Back: the read back finds nothing, and the one payout is sent.
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	if got := f.get(t, w.ID()); got.Status() != domain.WdProcessing || f.psp.made() != 1 {
		t.Fatalf("once back: %s with %d payouts, want PROCESSING and 1", got.Status(), f.psp.made())
	}
	reports := f.reported()
	if len(reports) != 3 || reports[0].Level != application.PayoutWarn || !errors.Is(reports[0].Err, errPSPDown) {
		t.Fatalf("reports %+v, want the three unknown outcomes", reports)
	}
	f.verify(t)
}

func TestAnUnknownOutcomeIsReadBackNeverSentAgainNorTakenForARefusal(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.psp.fail("send", true, 1) // the PSP made it; its answer was lost
	f.run(t, f.outbox)
	if got := f.get(t, w.ID()); got.Status() != domain.WdPending {
		t.Fatalf("%s after a lost answer, want PENDING", got.Status())
	}
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	sends, statuses := f.psp.calls()
	if got.Status() != domain.WdProcessing || sends != 1 || statuses != 1 || f.psp.made() != 1 {
		t.Fatalf("read back: %s after %d sends and %d reads, %d payouts; want PROCESSING after 1 send and 1 read",
			got.Status(), sends, statuses, f.psp.made())
	}
	f.verify(t)
}

func TestAResendThePSPAnswersTakenIsReadBackNotRefused(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.psp.fail("send", true, 1) // made, answer lost
	f.run(t, f.outbox)
	// The read back fails, so the next step's send meets the id taken.
	f.psp.fail("status", false, 1)
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	f.clock.Advance(poCheckEvery)
	// A PSP whose read lags: the payout is not found yet, and the resend is answered "taken".
	f.psp.mu.Lock()
	res := *f.psp.payouts[domain.PayoutID(w.ID())]
	delete(f.psp.payouts, domain.PayoutID(w.ID()))
	f.psp.onSend = func() {
		f.psp.mu.Lock()
		f.psp.payouts[domain.PayoutID(w.ID())] = &res
		f.psp.mu.Unlock()
	}
	f.psp.mu.Unlock()
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	if got.Status() != domain.WdProcessing || f.psp.made() != 1 {
		t.Fatalf("%s with %d payouts, want PROCESSING with the one payout", got.Status(), f.psp.made())
	}
	f.verify(t)
}

func TestAStatusThePSPDoesNotDefineIsLoggedAndReadBackLater(t *testing.T) {
	f := newPoFixture(t, 10_000)
	f.psp.steer("maria@example.com", fakeOutcome{status: "EM_ANALISE"})
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	if got.Status() != domain.WdPending || got.PayoutDue() == nil || !got.PayoutDue().Equal(f.clock.Now().Add(poCheckEvery)) {
		t.Fatalf("stored %s due %v; want PENDING, read back %v later", got.Status(), got.PayoutDue(), poCheckEvery)
	}
	if r := f.reported(); len(r) != 1 || r[0].Level != application.PayoutWarn {
		t.Fatalf("reports %+v, want one warning", r)
	}
	f.psp.settle(domain.PayoutID(w.ID()), ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: "E09089356202611221130APIabcdef12"})
	f.clock.Advance(poCheckEvery)
	f.run(t, f.outbox)
	if got := f.get(t, w.ID()); got.Status() != domain.WdProcessed || f.psp.made() != 1 {
		t.Fatalf("stored %s with %d payouts, want PROCESSED with 1", got.Status(), f.psp.made())
	}
	f.verify(t)
}

func TestTwoOutboxesSendEachPayoutOnce(t *testing.T) {
	f := newPoFixture(t, 1_000_000)
	var ids []string
	for i := range 30 {
		ids = append(ids, f.withdraw(t, domain.Cents(100+i), fmt.Sprintf("r%d@example.com", i)).ID())
	}
	outboxes := []*application.PayOutWithdrawals{f.outbox, f.newOutbox(), f.newOutbox()}
	var wg sync.WaitGroup
	for _, o := range outboxes {
		wg.Go(func() {
			if _, err := o.RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if sends, _ := f.psp.calls(); sends != len(ids) || f.psp.made() != len(ids) {
		t.Fatalf("%d sends, %d payouts; want %d each", sends, f.psp.made(), len(ids))
	}
	for _, id := range ids {
		if got := f.get(t, id); got.Status() != domain.WdProcessing || got.PayoutClaims() != 1 {
			t.Fatalf("%s: %s with %d claims", id, got.Status(), got.PayoutClaims())
		}
	}
}

// TestACancelRacingTheSendNeverMakesTwoOutcomes races a merchant's cancel against the outbox's
// send, many times: either the cancel wins (CANCELED, the money back, nothing at the PSP) or
// the send does (the cancel refused, one payout) — never a payout for a canceled withdrawal.
func TestACancelRacingTheSendNeverMakesTwoOutcomes(t *testing.T) {
	f := newPoFixture(t, 100_000_000)
	const rounds = 300
	canceled, sent := 0, 0
	for round := range rounds {
		w := f.withdraw(t, 100, fmt.Sprintf("race%d@example.com", round))
		var cancelErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			_, cancelErr = f.cancel.Execute(context.Background(), f.caller, w.ID(), application.NoInput{})
		})
		wg.Go(func() {
			if _, err := f.outbox.RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		got := f.get(t, w.ID())
		f.psp.mu.Lock()
		_, paid := f.psp.payouts[domain.PayoutID(w.ID())]
		f.psp.mu.Unlock()
		switch {
		case cancelErr == nil:
			canceled++
			if got.Status() != domain.WdCanceled || paid {
				t.Fatalf("round %d: canceled, yet stored %s with a payout at the PSP: %v", round, got.Status(), paid)
			}
		case errors.Is(cancelErr, domain.ErrInvalidTransition):
			sent++
			if got.Status() != domain.WdProcessing || !paid {
				t.Fatalf("round %d: the cancel was refused, yet stored %s, payout made: %v", round, got.Status(), paid)
			}
		default:
			t.Fatalf("round %d: cancel: %v", round, cancelErr)
		}
	}
	if sends, _ := f.psp.calls(); sends != sent || f.psp.made() != sent {
		t.Fatalf("%d sends and %d payouts for %d withdrawals sent", sends, f.psp.made(), sent)
	}
	t.Logf("%d canceled first, %d sent first", canceled, sent)
	f.verify(t)
}

func TestAStepWhoseClaimWasTakenOverLeavesItsRefusalToTheNewHolder(t *testing.T) {
	f := newPoFixture(t, 10_000)
	f.psp.steer("late@example.com", fakeOutcome{refuse: "saldo insuficiente"})
	w := f.withdraw(t, 2_000, "late@example.com")
	other := f.newOutbox()
	// While the first step's send is in flight, its claim runs out and another instance takes
	// the payout over; by then the PSP would take it.
	f.psp.onSend = func() {
		f.psp.steer("late@example.com", fakeOutcome{})
		f.clock.Advance(poClaim)
		if _, err := other.RunOnce(context.Background()); err != nil {
			t.Error(err)
		}
		f.psp.steer("late@example.com", fakeOutcome{refuse: "saldo insuficiente"})
	}
	f.run(t, f.outbox)
	got := f.get(t, w.ID())
	if got.Status() != domain.WdProcessing || f.psp.made() != 1 || got.PayoutClaims() != 2 {
		t.Fatalf("stored %s with %d claims, %d payouts; want PROCESSING with the payout the new holder made",
			got.Status(), got.PayoutClaims(), f.psp.made())
	}
	f.verify(t)
}

func TestANoticeReadsThePayoutBack(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.run(t, f.outbox)
	id := domain.PayoutID(w.ID())

	n, err := f.outbox.Notice(context.Background(), id)
	if err != nil || n.Outcome != application.NoticeUnchanged || n.Status != domain.WdProcessing {
		t.Fatalf("a notice while in progress: %+v, %v", n, err)
	}
	f.psp.settle(id, ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: "E09089356202611221130APIabcdef12"})
	n, err = f.outbox.Notice(context.Background(), id)
	if err != nil || n.Outcome != application.NoticeApplied || n.Status != domain.WdProcessed || n.WithdrawalID != w.ID() {
		t.Fatalf("a notice of the end: %+v, %v; want applied, PROCESSED", n, err)
	}
	if n, err = f.outbox.Notice(context.Background(), id); err != nil || n.Outcome != application.NoticeUnchanged {
		t.Fatalf("the notice again: %+v, %v; want unchanged", n, err)
	}
	for _, foreign := range []string{"123ABC", domain.PayoutID(domain.NewID())} {
		if n, err := f.outbox.Notice(context.Background(), foreign); err != nil || n.Outcome != application.NoticeUnknownPayout {
			t.Fatalf("a notice of %s: %+v, %v; want unknown_payout", foreign, n, err)
		}
	}
	if ev := f.events(t, w.ID()); !slices.Equal(ev, []string{"withdrawal.processing", "withdrawal.processed"}) {
		t.Fatalf("events %v", ev)
	}
	f.verify(t)
}

func TestANoticeThePSPCannotConfirmIsLeftToTheOutbox(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.run(t, f.outbox)
	f.psp.fail("status", false, 1)
	n, err := f.outbox.Notice(context.Background(), domain.PayoutID(w.ID()))
	if err != nil || n.Outcome != application.NoticeDeferred || f.get(t, w.ID()).Status() != domain.WdProcessing {
		t.Fatalf("notice %+v, %v; want deferred, still PROCESSING", n, err)
	}
}

func TestAnAnswerThatContradictsTheWithdrawalIsReportedAndChangesNothing(t *testing.T) {
	f := newPoFixture(t, 10_000)
	w := f.withdraw(t, 2_000, "maria@example.com")
	f.run(t, f.outbox)
	id := domain.PayoutID(w.ID())
	f.psp.settle(id, ports.PayoutResult{Status: ports.PayoutNotDone, Reason: "recusado"})
	if _, err := f.outbox.Notice(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	// The PSP now says the payout was made after all.
	f.psp.settle(id, ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: "E09089356202611221130APIabcdef12"})
	if n, err := f.outbox.Notice(context.Background(), id); err != nil || n.Outcome != application.NoticeUnchanged || n.Status != domain.WdFailed {
		t.Fatalf("notice %+v, %v; want unchanged FAILED", n, err)
	}
	if r := f.reported(); len(r) != 1 || r[0].Level != application.PayoutError {
		t.Fatalf("reports %+v, want one error for operations", r)
	}
	f.verify(t)
}

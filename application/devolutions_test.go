package application_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// fakeDevolutionPSP is an acquirer that keeps devolutions as API Pix does: one per payment and id, a
// reused id refused, read back by id. Its faults are set per call.
type fakeDevolutionPSP struct {
	mu   sync.Mutex
	made map[string]ports.DevolutionResult // by endToEndID/id
	puts []ports.Devolution
	gets int
	// lose makes the next PUTs fail with an unknown outcome: after recording the devolution
	// (a timeout whose request was carried out) when true, before it when false.
	lose []bool
	// getDown makes reads back fail with an unknown outcome while set.
	getDown bool
	// refuse refuses every new devolution with this reason, when set.
	refuse string
}

var errLost = errors.New("timeout awaiting the acquirer's answer")

func newFakeDevolutionPSP() *fakeDevolutionPSP {
	return &fakeDevolutionPSP{made: map[string]ports.DevolutionResult{}}
}

func (p *fakeDevolutionPSP) RequestDevolution(_ context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.puts = append(p.puts, d)
	key := d.EndToEndID + "/" + d.ID
	if _, ok := p.made[key]; ok {
		return ports.DevolutionResult{}, &ports.DevolutionRefusedError{Reason: "PixDevolucaoInvalida: id already used"}
	}
	if p.refuse != "" {
		return ports.DevolutionResult{}, &ports.DevolutionRefusedError{Reason: p.refuse}
	}
	if len(p.lose) > 0 {
		record := p.lose[0]
		p.lose = p.lose[1:]
		if record {
			p.made[key] = ports.DevolutionResult{Status: ports.DevolutionInProgress}
		}
		return ports.DevolutionResult{}, errLost
	}
	p.made[key] = ports.DevolutionResult{Status: ports.DevolutionInProgress}
	return p.made[key], nil
}

func (p *fakeDevolutionPSP) Devolution(_ context.Context, e2e, id string) (ports.DevolutionResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets++
	if p.getDown {
		return ports.DevolutionResult{}, errLost
	}
	res, ok := p.made[e2e+"/"+id]
	if !ok {
		return ports.DevolutionResult{}, ports.ErrDevolutionNotFound
	}
	return res, nil
}

// settle makes the devolution id final at the acquirer.
func (p *fakeDevolutionPSP) settle(e2e, id string, res ports.DevolutionResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.made[e2e+"/"+id] = res
}

// count tells how many devolutions the acquirer made, and how many PUTs it was sent.
func (p *fakeDevolutionPSP) count() (made, puts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.made), len(p.puts)
}

// withPSP points w's devolutions (the outbox, the refunds, the callback's late payments) at
// a fakeDevolutionPSP.
func withPSP(t *testing.T, w *lcWorld) *fakeDevolutionPSP {
	t.Helper()
	psp := newFakeDevolutionPSP()
	w.devolutions = application.NewSendDevolutions(w.repo, w.ledger, psp, w.clock,
		application.DevolutionSettings{CheckEvery: lcDevolutionCheck, Claim: lcDevolutionClaim},
		func(r application.DevolutionReport) {
			w.reportsMu.Lock()
			w.reports = append(w.reports, r)
			w.reportsMu.Unlock()
		})
	w.refund = application.NewRefundTransaction(w.repo, w.devolutions, &fakeIDs{}, w.clock, func(err error) { t.Errorf("refund: %v", err) })
	return psp
}

// runOutbox runs the outbox once, after the clock moved on by d.
func (w *lcWorld) runOutbox(t *testing.T, d time.Duration) int {
	t.Helper()
	w.clock.Advance(d)
	n, err := w.devolutions.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return n
}

// refunding reaches a refund in progress and answers the transaction id and the refund.
func (w *lcWorld) refunding(t *testing.T) (string, domain.Refund) {
	t.Helper()
	id := w.reach(t, domain.TxProcessingRefund)
	r, ok := w.repo.stored(id).RefundInProgress()
	if !ok {
		t.Fatal("no refund in progress")
	}
	return id, r
}

func TestDevolutionOfARefundIsRecordedBeforeItIsSentAndSentAtOnce(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	id, r := w.refunding(t)
	if made, puts := psp.count(); made != 1 || puts != 1 || psp.puts[0].ID != r.ID || psp.puts[0].Kind != ports.DevolutionRefund {
		t.Fatalf("made %d devolutions in %d PUTs (%+v); want the refund's, once, within the request", made, puts, psp.puts)
	}
	if r.Dispatch.Claims != 1 || r.Dispatch.Due == nil || !r.Dispatch.Due.Equal(w.clock.Now().Add(lcDevolutionCheck).Truncate(time.Millisecond)) {
		t.Fatalf("the devolution stands %+v; want one claim and a read back %v later", r.Dispatch, lcDevolutionCheck)
	}
	if n := w.runOutbox(t, time.Second); n != 0 {
		t.Fatalf("the outbox took %d steps before the read back was due", n)
	}
	_ = id
}

func TestDevolutionWhoseFirstPutFailedIsSentOnceAndCompletedByCallback(t *testing.T) {
	for name, recorded := range map[string]bool{"the acquirer made it": true, "the acquirer never got it": false} {
		t.Run(name, func(t *testing.T) {
			w := newLcWorld(t)
			psp := withPSP(t, w)
			psp.lose = []bool{recorded}
			id, r := w.refunding(t)
			if got := w.repo.stored(id).Status(); got != domain.TxProcessingRefund {
				t.Fatalf("after an unknown outcome the transaction is %s", got)
			}
			// The outbox reads it back a second later: found, or never made and sent again.
			if n := w.runOutbox(t, 2*time.Second); n != 1 {
				t.Fatalf("the outbox took %d steps; want the read back", n)
			}
			if made, _ := psp.count(); made != 1 {
				t.Fatalf("the acquirer made %d devolutions; want 1", made)
			}
			// Nothing more until the next read back is due, however often the outbox runs.
			for range 3 {
				if n := w.runOutbox(t, time.Second); n != 0 {
					t.Fatalf("the outbox took %d steps while the acquirer was making it", n)
				}
			}
			res := w.notify(t, w.naming(id, lcRefundNote(id, application.PixRefundReturned, 12345)))[0]
			if res.Refunds[0].Outcome != application.OutcomeApplied || res.Status != domain.TxRefunded {
				t.Fatalf("the callback: %+v", res)
			}
			// The read back after the callback finds nothing due: the refund is done.
			if n := w.runOutbox(t, lcDevolutionCheck); n != 0 {
				t.Fatalf("the outbox took %d steps of a completed refund", n)
			}
			if made, puts := psp.count(); made != 1 || (recorded && puts != 1) || (!recorded && puts != 2) {
				t.Fatalf("made %d in %d PUTs; want 1 devolution", made, puts)
			}
			stored := w.repo.stored(id)
			if rf := stored.Refunds()[0]; rf.ID != r.ID || rf.Status != domain.RefundRefunded || rf.EndToEndRefund != lcRtrID || rf.Dispatch.Due != nil {
				t.Fatalf("the refund is %+v", rf)
			}
		})
	}
}

func TestDevolutionInProgressIsReadBackUntilFinal(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	id, r := w.refunding(t)
	e2e := w.repo.stored(id).EndToEnd()
	for range 2 {
		if n := w.runOutbox(t, lcDevolutionCheck); n != 1 {
			t.Fatalf("the outbox took %d steps; want the read back of a devolution in progress", n)
		}
	}
	psp.settle(e2e, r.ID, ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: lcRtrID})
	if n := w.runOutbox(t, lcDevolutionCheck); n != 1 {
		t.Fatalf("the outbox took %d steps", n)
	}
	stored := w.repo.stored(id)
	if stored.Status() != domain.TxRefunded || stored.EndToEndRefund() != lcRtrID || stored.DevolutionDue() != nil {
		t.Fatalf("read back DEVOLVIDO: %s, endToEndRefund %q, due %v", stored.Status(), stored.EndToEndRefund(), stored.DevolutionDue())
	}
	// The callback that comes after applies nothing more.
	res := w.notify(t, w.naming(id, lcRefundNote(id, application.PixRefundReturned, 12345)))[0]
	if res.Refunds[0].Outcome != application.OutcomeAlreadyApplied {
		t.Fatalf("the late callback: %+v", res)
	}
	if made, puts := psp.count(); made != 1 || puts != 1 || psp.gets != 3 {
		t.Fatalf("made %d in %d PUTs and %d GETs; want 1 PUT, 3 GETs", made, puts, psp.gets)
	}
}

func TestDevolutionNotMadeFailsTheRefundAndGivesTheMoneyBack(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	id, r := w.refunding(t)
	psp.settle(w.repo.stored(id).EndToEnd(), r.ID, ports.DevolutionResult{Status: ports.DevolutionNotDone, Reason: "conta encerrada"})
	w.runOutbox(t, lcDevolutionCheck)
	stored := w.repo.stored(id)
	if rf := stored.Refunds()[0]; stored.Status() != domain.TxPaid || rf.Status != domain.RefundFailed || rf.ErrorMessage != "the acquirer could not refund the payment: conta encerrada" {
		t.Fatalf("read back NAO_REALIZADO: %s, refund %+v", stored.Status(), rf)
	}
}

func TestDevolutionRefusedAndNotFoundFailsTheRefund(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	psp.refuse = "PixDevolucaoInvalida: the devolution exceeds the payment"
	id := w.reach(t, domain.TxPaid)
	if _, err := w.refund.Execute(context.Background(), w.merchant, id, application.RefundInput{}); err != nil {
		t.Fatal(err)
	}
	stored := w.repo.stored(id)
	if rf := stored.Refunds()[0]; stored.Status() != domain.TxPaid || rf.Status != domain.RefundFailed ||
		rf.ErrorMessage != "the acquirer could not refund the payment: PixDevolucaoInvalida: the devolution exceeds the payment" {
		t.Fatalf("a refused devolution: %s, refund %+v", stored.Status(), rf)
	}
	if psp.gets != 1 || len(w.reports) != 1 || w.reports[0].Level != application.DevolutionInfo {
		t.Fatalf("%d reads back, reports %+v; want the refusal read back once, and told", psp.gets, w.reports)
	}
}

func TestDevolutionWithAReusedIDIsReadBackNotFailed(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	psp.lose = []bool{true} // the first PUT is made, its answer lost
	psp.getDown = true      // and the read back that follows cannot tell
	id, r := w.refunding(t)
	w.runOutbox(t, 2*time.Second)
	if got := w.repo.stored(id).Status(); got != domain.TxProcessingRefund {
		t.Fatalf("the transaction is %s while the acquirer cannot be read", got)
	}
	psp.getDown = false
	// The next step reads back; make the acquirer's answer to a resend the 400 of a reused id.
	psp.settle(w.repo.stored(id).EndToEnd(), r.ID, ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: lcRtrID})
	w.runOutbox(t, 10*time.Second)
	if stored := w.repo.stored(id); stored.Status() != domain.TxRefunded {
		t.Fatalf("the transaction is %s; want REFUNDED from the read back", stored.Status())
	}
	if made, _ := psp.count(); made != 1 {
		t.Fatalf("made %d devolutions", made)
	}
}

func TestDevolutionSentByTwoOutboxesAtOnceIsSentOnce(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	psp.lose = []bool{false}
	id, _ := w.refunding(t)
	other := application.NewSendDevolutions(w.repo, w.ledger, psp, w.clock,
		application.DevolutionSettings{CheckEvery: lcDevolutionCheck, Claim: lcDevolutionClaim}, func(application.DevolutionReport) {})
	w.clock.Advance(2 * time.Second)
	var wg sync.WaitGroup
	for _, o := range []*application.SendDevolutions{w.devolutions, other, w.devolutions, other} {
		wg.Go(func() {
			if _, err := o.RunOnce(context.Background()); err != nil {
				t.Errorf("RunOnce: %v", err)
			}
		})
	}
	wg.Wait()
	if made, puts := psp.count(); made != 1 || puts != 2 {
		t.Fatalf("made %d in %d PUTs; want the lost one and one more", made, puts)
	}
	if r, _ := w.repo.stored(id).RefundInProgress(); r.Dispatch.Claims != 2 {
		t.Fatalf("the devolution was claimed %d times; want 2 (the request, one outbox)", r.Dispatch.Claims)
	}
}

func TestDevolutionOfALatePaymentIsDurable(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	psp.lose = []bool{false} // the callback's first attempt never reaches the acquirer
	id := w.reach(t, domain.TxFailed)
	if res := w.notify(t, lcPayment(id))[0]; res.Outcome != application.OutcomeLatePaymentRefunded {
		t.Fatalf("payment of an expired charge: %+v", res)
	}
	if len(w.late) != 1 || !errors.Is(w.late[0].Err, errLost) {
		t.Fatalf("operators were told %+v; want the late payment with its unknown outcome", w.late)
	}
	if w.suspense(t) != 12345 {
		t.Fatalf("suspense %d; want the payment", w.suspense(t))
	}
	// A retry of the callback asks nothing; the outbox sends it, once.
	w.notify(t, lcPayment(id))
	w.runOutbox(t, 2*time.Second)
	if made, puts := psp.count(); made != 1 || puts != 2 || psp.puts[1].ID != application.LateDevolutionID(lcE2E) || psp.puts[1].Amount != 12345 {
		t.Fatalf("made %d in %d PUTs (%+v); want the whole payment back, once", made, puts, psp.puts)
	}
	psp.settle(lcE2E, application.LateDevolutionID(lcE2E), ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: lcRtrID})
	w.runOutbox(t, lcDevolutionCheck)
	if got := postingTypes(t, w.ledger); !slices.Equal(got, []domain.MovementType{domain.MoveLatePayment, domain.MoveLatePaymentReturn}) {
		t.Fatalf("postings %v, want the arrival and the return", got)
	}
	// The callback that reports it, and later runs, change nothing.
	back := lcPayment(id)
	back.Refunds = []application.PixRefund{{ID: application.LateDevolutionID(lcE2E), ReturnID: lcRtrID, Amount: 12345, Status: application.PixRefundReturned}}
	if res := w.notify(t, back)[0]; res.Refunds[0].Outcome != application.OutcomeAlreadyApplied {
		t.Fatalf("the callback after the read back: %+v", res.Refunds)
	}
	if n := w.runOutbox(t, lcDevolutionCheck); n != 0 || w.suspense(t) != 0 {
		t.Fatalf("after the return the outbox took %d steps, suspense %d", n, w.suspense(t))
	}
}

func TestDevolutionOfALatePaymentNotMadeStaysInSuspenseForOperations(t *testing.T) {
	w := newLcWorld(t)
	psp := withPSP(t, w)
	psp.refuse = "PixDevolucaoInvalida: too old"
	id := w.reach(t, domain.TxFailed)
	w.notify(t, lcPayment(id))
	if w.suspense(t) != 12345 || len(w.reports) != 1 || w.reports[0].Level != application.DevolutionError {
		t.Fatalf("suspense %d, reports %+v; want the money in suspense and an error told", w.suspense(t), w.reports)
	}
	if n := w.runOutbox(t, lcDevolutionCheck); n != 0 {
		t.Fatalf("the outbox took %d steps of a refused devolution", n)
	}
}

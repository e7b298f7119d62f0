package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/application"
)

// Durable devolutions against the fake PSP over mutual TLS: each devolution is recorded with
// its refund (or late payment) before it is sent, and the devolution outbox sends it until
// the PSP answers, reading it back whenever an outcome is unknown. The tests run the outbox's
// job by hand, on a clock they move. Helpers here start with "dd".

// ddEnv is pixgate in front of the fake PSP p, on a clock the test moves.
func ddEnv(t *testing.T, p *psptest.PSP, vars map[string]string) (*env, *fakeClock) {
	t.Helper()
	clock := &fakeClock{}
	all := map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret}
	for k, v := range dvPSPVars(p) {
		all[k] = v
	}
	for k, v := range vars {
		all[k] = v
	}
	return newEnv(t, all, func(a *app) { a.clock = clock }), clock
}

// ddRun runs the devolution outbox's job once, after moving the clock on by d, and tells how
// many steps it took.
func (e *env) ddRun(clock *fakeClock, d time.Duration) int {
	e.t.Helper()
	clock.Advance(d)
	for _, j := range e.app.jobs {
		if j.name == devolutionJobName {
			n, err := j.run(context.Background())
			if err != nil {
				e.t.Fatalf("the devolution job: %v", err)
			}
			return n
		}
	}
	e.t.Fatalf("no job %q", devolutionJobName)
	return 0
}

// ddCallback delivers the PSP's callback for the PIX e2e of the charge txid, as the PSP holds
// it now (with its devolutions), and answers the results.
func (e *env) ddCallback(p *psptest.PSP, txid, e2e string) []acqResult {
	e.t.Helper()
	px, ok := p.Pix(e2e)
	if !ok {
		e.t.Fatalf("the PSP has no PIX %s", e2e)
	}
	raw, err := json.Marshal(px)
	if err != nil {
		e.t.Fatal(err)
	}
	var entry map[string]any
	if err := json.Unmarshal(raw, &entry); err != nil {
		e.t.Fatal(err)
	}
	entry["txid"] = txid
	return acqResults(e.t, e.acqNotify(map[string]any{"pix": []any{entry}}))
}

// ddRefund starts a refund of amount cents of transaction id and checks that the merchant sees
// what it always saw: 202, PROCESSING_REFUND, the refund PROCESSING.
func (e *env) ddRefund(tok, id string, amount int64) string {
	e.t.Helper()
	refundID := e.acqRefund(tok, id, amount)
	if got := e.lcGet(tok, id).json(e.t)["status"]; got != "PROCESSING_REFUND" {
		e.t.Fatalf("after the refund's request: %v, want PROCESSING_REFUND", got)
	}
	return refundID
}

func TestADevolutionWhoseFirstPutFailedIsSentOnceAndCompletedByCallback(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e, clock := ddEnv(t, p, nil)
	_, tok := e.account()
	id, txid, e2e := e.dvPaidAt(tok, p)
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut), 1)
	refundID := e.ddRefund(tok, id, 500)
	if _, ok := p.Devolution(e2e, refundID); ok {
		t.Fatal("the PSP made a devolution it answered 503 to")
	}
	if line := dvLogLine(t, e.log.String(), "the devolution's outcome is unknown"); line["devolutionId"] != refundID || line["level"] != "WARN" {
		t.Fatalf("the unknown outcome is logged as %v", line)
	}
	// The outbox reads it back (404: never made) and sends the same PUT again.
	if n := e.ddRun(clock, 2*time.Second); n != 1 {
		t.Fatalf("the outbox took %d steps, want 1", n)
	}
	d, ok := p.Devolution(e2e, refundID)
	if !ok || d.Status != psptest.DevolutionInProgress || d.Valor != "5.00" {
		t.Fatalf("the PSP holds %+v (%v); want the devolution of 5.00 in progress", d, ok)
	}
	if err := p.SettleDevolution(e2e, refundID, psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	res := e.ddCallback(p, txid, e2e)
	if len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "applied" {
		t.Fatalf("the callback: %+v", res)
	}
	d, _ = p.Devolution(e2e, refundID)
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "PAID" || tx["amountRefunded"] != float64(500) || tx["endToEndRefund"] != d.RtrID {
		t.Fatalf("after DEVOLVIDO: %v, amountRefunded %v, endToEndRefund %v (rtrId %s)", tx["status"], tx["amountRefunded"], tx["endToEndRefund"], d.RtrID)
	}
	// Nothing is due any more: no more calls, however long the outbox runs.
	before := p.Requests(psptest.OpDevolutionGet)
	if n := e.ddRun(clock, time.Hour); n != 0 || p.Requests(psptest.OpDevolutionGet) != before {
		t.Fatalf("the outbox took %d steps of a completed refund", n)
	}
	if puts := p.Requests(psptest.OpDevolutionPut); puts != 2 {
		t.Fatalf("%d PUTs; want the failed one and one more", puts)
	}
	e.dvVerify()
}

func TestADevolutionWhoseAnswerWasLostIsCompletedByReadingItBack(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e, clock := ddEnv(t, p, nil)
	_, tok := e.account()
	e.dvPaid(tok) // funds: a refund of everything needs more than the payment less its fee
	id, _, e2e := e.dvPaidAt(tok, p)
	p.Inject(psptest.HangUp().On(psptest.OpDevolutionPut).AfterApplying(), 1)
	refundID := e.ddRefund(tok, id, 0)
	if err := p.SettleDevolution(e2e, refundID, psptest.DevolutionReturned, ""); err != nil {
		t.Fatalf("the PSP did not make the devolution whose answer was lost: %v", err)
	}
	// No callback comes: the outbox reads the devolution back and completes the refund.
	if n := e.ddRun(clock, 2*time.Second); n != 1 {
		t.Fatalf("the outbox took %d steps, want 1", n)
	}
	d, _ := p.Devolution(e2e, refundID)
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "REFUNDED" || tx["endToEndRefund"] != d.RtrID {
		t.Fatalf("after the read back: %v, endToEndRefund %v (rtrId %s)", tx["status"], tx["endToEndRefund"], d.RtrID)
	}
	if puts, gets := p.Requests(psptest.OpDevolutionPut), p.Requests(psptest.OpDevolutionGet); puts != 1 || gets != 1 {
		t.Fatalf("%d PUTs and %d GETs; want one of each", puts, gets)
	}
	if report := e.dvVerify(); !strings.Contains(report, "suspense 0.00") {
		t.Fatalf("ledger verify:\n%s", report)
	}
}

func TestADevolutionResentUnderAnIDThePSPAlreadyHasIsReadBack(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e, clock := ddEnv(t, p, nil)
	_, tok := e.account()
	id, _, e2e := e.dvPaidAt(tok, p)
	// The PSP takes the first PUT but its answer is lost, and its first read back answers 404
	// (a replica behind): the outbox sends the PUT again, the PSP answers 400 (the id is used),
	// and the read back that follows finds it.
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut).AfterApplying(), 1)
	p.Inject(psptest.Answer(http.StatusNotFound).On(psptest.OpDevolutionGet), 1)
	refundID := e.ddRefund(tok, id, 300)
	if n := e.ddRun(clock, 2*time.Second); n != 1 {
		t.Fatalf("the outbox took %d steps, want 1", n)
	}
	if got := p.Answered(psptest.OpDevolutionPut, http.StatusBadRequest); got != 1 {
		t.Fatalf("the PSP answered 400 to %d PUTs; want the resend", got)
	}
	tx := e.lcGet(tok, id).json(t)
	refund := tx["refunds"].([]any)[0].(map[string]any)
	if tx["status"] != "PROCESSING_REFUND" || refund["status"] != "PROCESSING" || refund["id"] != refundID {
		t.Fatalf("after the 400 and the read back: %v, refund %v; want it still in progress, not failed", tx["status"], refund)
	}
	if err := p.SettleDevolution(e2e, refundID, psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	if n := e.ddRun(clock, 301*time.Second); n != 1 {
		t.Fatalf("the outbox took %d steps, want the read back after PIXGATE_ACQUIRER_DEVOLUTION_CHECK_SECONDS", n)
	}
	if got := e.lcGet(tok, id).json(t)["status"]; got != "PAID" {
		t.Fatalf("after DEVOLVIDO: %v, want PAID (a partial refund)", got)
	}
	e.dvVerify()
}

func TestADevolutionInProgressIsReadBackUntilItIsFinal(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e, clock := ddEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_DEVOLUTION_CHECK_SECONDS": "60"})
	_, tok := e.account()
	e.dvPaid(tok)
	id, _, e2e := e.dvPaidAt(tok, p)
	refundID := e.ddRefund(tok, id, 0)
	if n := e.ddRun(clock, 59*time.Second); n != 0 {
		t.Fatalf("the outbox took %d steps before the check was due", n)
	}
	for range 2 {
		if n := e.ddRun(clock, 2*time.Second+58*time.Second); n != 1 {
			t.Fatalf("the outbox took %d steps; want the read back every 60 s", n)
		}
	}
	if err := p.SettleDevolution(e2e, refundID, psptest.DevolutionNotDone, "Conta destino encerrada"); err != nil {
		t.Fatal(err)
	}
	e.ddRun(clock, 61*time.Second)
	tx := e.lcGet(tok, id).json(t)
	refund := tx["refunds"].([]any)[0].(map[string]any)
	if tx["status"] != "PAID" || refund["status"] != "FAILED" || !strings.Contains(refund["errorMessage"].(string), "Conta destino encerrada") {
		t.Fatalf("after NAO_REALIZADO: %v, refund %v", tx["status"], refund)
	}
	if puts, gets := p.Requests(psptest.OpDevolutionPut), p.Requests(psptest.OpDevolutionGet); puts != 1 || gets != 3 {
		t.Fatalf("%d PUTs and %d GETs; want 1 and 3", puts, gets)
	}
	e.dvVerify()
}

func TestALatePaymentsReturnIsDurable(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e, clock := ddEnv(t, p, nil)
	_, tok := e.account()
	_, txid, _ := e.dvPaidAt(tok, p)
	again, err := p.Pay("", psptest.Payment{Valor: "10.00"})
	if err != nil {
		t.Fatal(err)
	}
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut), 1)
	if res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, again.EndToEndID)}})); res[0].Outcome != "late_payment_refunded" {
		t.Fatalf("the second payment: %+v", res)
	}
	if report := e.dvVerify(); !strings.Contains(report, "suspense 10.00") {
		t.Fatalf("the late payment is not in suspense:\n%s", report)
	}
	if err := p.SetDevolutionAnswer(psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	if n := e.ddRun(clock, 2*time.Second); n != 1 {
		t.Fatalf("the outbox took %d steps, want 1", n)
	}
	d, ok := p.Devolution(again.EndToEndID, application.LateDevolutionID(again.EndToEndID))
	if !ok || d.Status != psptest.DevolutionReturned || d.Valor != "10.00" {
		t.Fatalf("the PSP holds %+v (%v); want the whole payment returned", d, ok)
	}
	if report := e.dvVerify(); !strings.Contains(report, "suspense 0.00") {
		t.Fatalf("the late payment is still in suspense:\n%s", report)
	}
	if n := e.ddRun(clock, time.Hour); n != 0 || p.Requests(psptest.OpDevolutionPut) != 2 {
		t.Fatalf("after the return the outbox took %d steps, %d PUTs in all", n, p.Requests(psptest.OpDevolutionPut))
	}
}

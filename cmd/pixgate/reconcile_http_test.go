package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// Reconciliation with the fake PSP: payments whose callback was lost are listed by GET /pix
// and applied exactly as the callback would have. Helpers here start with "rc".

// rcEnv is pixgate in production mode against p, whose callbacks are dropped (only the
// listing tells of the PIX); options may hand in shared stores.
func rcEnv(t *testing.T, p *psptest.PSP, options ...func(*app)) *env {
	t.Helper()
	p.SetCallbacks(psptest.Callbacks{Drop: true})
	e := newEnv(t, mergeVars(map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret}, dvPSPVars(p)), options...)
	if e.app.reconcile == nil {
		t.Fatal("no reconciliation job in production mode with an API Pix")
	}
	return e
}

func mergeVars(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// rcPaid creates a charge of 10.00 at the PSP and has the payer pay its cob; the callback is
// lost. It returns the transaction id and the PIX.
func (e *env) rcPaid(tok string, p *psptest.PSP) (string, psptest.Pix) {
	e.t.Helper()
	id := e.lcCreate(tok)
	paid, err := p.Pay(e.pspTxID(id), psptest.Payment{})
	if err != nil {
		e.t.Fatal(err)
	}
	return id, paid
}

func (e *env) rcPass() int {
	e.t.Helper()
	n, err := e.app.reconcile.RunOnce(context.Background())
	if err != nil {
		e.t.Fatalf("reconciliation: %v", err)
	}
	return n
}

func TestAMissedCallbackIsPaidByReconciliationExactlyOnce(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := rcEnv(t, p)
	_, tok := e.account()
	id, paid := e.rcPaid(tok, p)
	if d := p.Deliveries(); len(d) != 0 && !d[0].Dropped {
		t.Fatalf("the callback was delivered: %+v", d)
	}
	if got := e.lcGet(tok, id).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
		t.Fatalf("before reconciling: %v", got)
	}
	if n := e.rcPass(); n != 1 {
		t.Fatalf("the first pass applied %d, want the one payment", n)
	}
	for range 2 {
		if n := e.rcPass(); n != 0 {
			t.Fatalf("a later pass applied %d again", n)
		}
	}
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "PAID" || tx["endToEnd"] != paid.EndToEndID || tx["amountPaid"] != float64(1000) {
		t.Fatalf("transaction %v, want PAID by %s", tx, paid.EndToEndID)
	}
	if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events", len(got))
	}
	if m := e.dvMetrics(); !strings.Contains(m, `pixgate_acquirer_reconciled_total{outcome="applied"} 1`) {
		t.Fatalf("metrics lack the reconciled payment:\n%s", grepLines(m, "reconciled"))
	}
	line := dvLogLine(t, e.log.String(), "reconciliation applied a payment")
	if line["level"] != "WARN" || line["endToEndId"] != paid.EndToEndID {
		t.Fatalf("log line %v", line)
	}
	if n := p.Requests(psptest.OpPixList); n < 3 {
		t.Fatalf("%d GET /pix for three passes", n)
	}
	e.dvVerify()
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestACallbackAndReconciliationRacingApplyOnce delivers each payment's callback while a pass
// lists it: whichever comes first applies it, the other finds it applied.
func TestACallbackAndReconciliationRacingApplyOnce(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := rcEnv(t, p)
	_, tok := e.account()
	const charges = 12
	ids := make([]string, charges)
	bodies := make([]any, charges)
	for i := range charges {
		var paid psptest.Pix
		ids[i], paid = e.rcPaid(tok, p)
		raw, _ := json.Marshal(map[string]any{"pix": []any{paid}})
		bodies[i] = string(raw)
	}
	var wg sync.WaitGroup
	answers := make([]response, charges)
	var passErr error
	wg.Go(func() { _, passErr = e.app.reconcile.RunOnce(context.Background()) })
	for i := range charges {
		wg.Go(func() { answers[i] = e.acqNotify(bodies[i]) })
	}
	wg.Wait()
	if passErr != nil {
		t.Fatal(passErr)
	}
	e.rcPass()
	for i, id := range ids {
		if res := acqResults(t, answers[i]); res[0].Outcome != "applied" && res[0].Outcome != "already_applied" {
			t.Errorf("callback %d: %s", i, res[0].Outcome)
		}
		if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
			t.Errorf("%s: %d transaction.paid events", id, len(got))
		}
		if got := e.lcGet(tok, id).json(t)["status"]; got != "PAID" {
			t.Errorf("%s: %v", id, got)
		}
	}
	e.dvVerify()
}

// TestTheTimeReachedSurvivesARestart: a new instance on the same store starts from where the
// last one reached (less the overlap), and what both list applies once.
func TestTheTimeReachedSurvivesARestart(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	cfg, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	shared, err := openStores(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	share := func(a *app) { a.stores = shared }
	first := rcEnv(t, p, share)
	_, tok := first.account()
	id, _ := first.rcPaid(tok, p)
	first.rcPass()
	reached, err := shared.reconciliations.ReconciliationState(context.Background())
	if err != nil || reached.Reached.IsZero() {
		t.Fatalf("after a pass: %+v, %v", reached, err)
	}
	// The restart: a new process on the same store.
	second := rcEnv(t, p, share)
	if st, _ := shared.reconciliations.ReconciliationState(context.Background()); !st.Reached.Equal(reached.Reached) {
		t.Fatalf("the new instance reads %v, want %v", st.Reached, reached.Reached)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !time.Now().After(reached.Reached) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the clock moves past the time reached
	}
	if n := second.rcPass(); n != 0 {
		t.Fatalf("the new instance applied %d again", n)
	}
	after, _ := shared.reconciliations.ReconciliationState(context.Background())
	if !after.Reached.After(reached.Reached) {
		t.Fatalf("reached %v after the second pass, want later than %v", after.Reached, reached.Reached)
	}
	if got := second.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events", len(got))
	}
}

func TestReconciliationIsOffWhenToldAndInTheSandbox(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	off := newEnv(t, mergeVars(dvPSPVars(p), map[string]string{"PIXGATE_ACQUIRER_RECONCILE_SECONDS": "0"}))
	if off.app.reconcile != nil {
		t.Fatal("PIXGATE_ACQUIRER_RECONCILE_SECONDS=0 still reconciles")
	}
	for _, j := range off.app.jobs {
		if j.name == reconcileJobName {
			t.Fatal("the job is scheduled")
		}
	}
	if sandbox := newEnv(t, nil); sandbox.app.reconcile != nil {
		t.Fatal("the sandbox reconciles")
	}
	if r := off.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}); r.status != http.StatusNotFound {
		t.Fatalf("without a secret the route answers %d", r.status)
	}
}

// TestExpiryWaitsForReconciliationToCoverACharge: the PSP accepted a payment before the
// charge's expiry and its callback was lost; pixgate's clock passes the expiry before any
// pass ran. The charge is not failed (which would make the payment a late one to send back):
// the pass that covers the expiry pays it.
func TestExpiryWaitsForReconciliationToCoverACharge(t *testing.T) {
	t.Parallel()
	// The PSP dates its cobs by pixgate's clock: the charge's expiry is the PSP's criacao plus
	// its seconds, and the test moves both together.
	clock := &fakeClock{}
	p := psptest.New(t, psptest.Config{Clock: clock.Now})
	e := rcEnv(t, p, func(a *app) { a.clock = clock })
	_, tok := e.account()
	body := minimalTransaction()
	body["pix"] = map[string]any{"expirationSeconds": 60}
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("creating: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	paid, err := p.Pay(e.pspTxID(id), psptest.Payment{Horario: clock.Now().Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if moved, err := e.app.expirer.RunOnce(context.Background()); err != nil || moved != 0 {
		t.Fatalf("before any pass the sweeper moved %d (%v), want none", moved, err)
	}
	if n := e.rcPass(); n != 1 {
		t.Fatalf("the pass applied %d", n)
	}
	if moved, _ := e.app.expirer.RunOnce(context.Background()); moved != 0 {
		t.Fatalf("the sweeper moved %d after the pass", moved)
	}
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "PAID" || tx["endToEnd"] != paid.EndToEndID {
		t.Fatalf("transaction %v, want PAID in time by %s", tx["status"], paid.EndToEndID)
	}
	// An unpaid charge fails once a pass covered its expiry.
	r = e.do("POST", "/transaction", tok, body)
	unpaid := r.json(t)["id"].(string)
	clock.Advance(2 * time.Minute)
	if moved, _ := e.app.expirer.RunOnce(context.Background()); moved != 0 {
		t.Fatal("failed before a pass covered its expiry")
	}
	e.rcPass()
	if moved, err := e.app.expirer.RunOnce(context.Background()); err != nil || moved != 1 {
		t.Fatalf("after the pass the sweeper moved %d (%v), want the unpaid charge", moved, err)
	}
	if got := e.lcGet(tok, unpaid).json(t)["status"]; got != "FAILED" {
		t.Fatalf("the unpaid charge is %v", got)
	}
	e.dvVerify()
}

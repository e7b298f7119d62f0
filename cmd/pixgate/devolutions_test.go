package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// Who returns money to payers, as `serve` wires it: the sandbox's acquirer, the acquirer's
// API Pix, or none. Helpers here start with "dv".

// dvPaid creates a charge of 10.00 and pays it through the acquirer's callback; it returns the
// transaction id, its txid and the payment's end-to-end id.
func (e *env) dvPaid(tok string) (id, txid, e2e string) {
	e.t.Helper()
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	id = r.json(e.t)["id"].(string)
	txid, e2e = acqTxID(e.t, id), acqNewE2E()
	if res := acqResults(e.t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, e2e)}})); res[0].Outcome != "applied" {
		e.t.Fatalf("payment: %+v", res)
	}
	return id, txid, e2e
}

// dvLate pays the charge txid a second time, under another end-to-end id: a late payment.
func (e *env) dvLate(txid string) string {
	e.t.Helper()
	e2e := acqNewE2E()
	if res := acqResults(e.t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, e2e)}})); res[0].Outcome != "late_payment_refunded" {
		e.t.Fatalf("late payment: %+v", res)
	}
	return e2e
}

func (e *env) dvMetrics() string {
	rec := httptest.NewRecorder()
	e.app.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func (e *env) dvVerify() string {
	e.t.Helper()
	var out bytes.Buffer
	if err := verifyLedger(context.Background(), e.app.stores, "", &out); err != nil {
		e.t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

func TestWithoutAnAcquirerAPIRefundsWaitForTheCallbackAndLatePaymentsStayInSuspense(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	_, tok := e.account()
	id, txid, _ := e.dvPaid(tok)

	refundID := e.acqRefund(tok, id, 500)
	if got := e.lcGet(tok, id).json(t)["status"]; got != "PROCESSING_REFUND" {
		t.Fatalf("status %v, want PROCESSING_REFUND until the acquirer's callback", got)
	}
	if log := e.log.String(); !strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, "no acquirer API is configured (PIXGATE_ACQUIRER_API_URL)") ||
		!strings.Contains(log, refundID) {
		t.Fatalf("the refund left for the callback is not logged:\n%s", log)
	}

	e2e := e.dvLate(txid)
	if !strings.Contains(e.dvMetrics(), `pixgate_late_payments_total{outcome="error"} 1`) {
		t.Fatal("the late payment is not counted")
	}
	line := dvLogLine(t, e.log.String(), "late payment")
	if line["endToEndId"] != e2e || line["transactionId"] != id || line["amount"] != "10.00" || line["devolutionId"] == "" ||
		!strings.Contains(line["error"].(string), "PIXGATE_ACQUIRER_API_URL") {
		t.Fatalf("late payment log line %v", line)
	}
	if report := e.dvVerify(); !strings.Contains(report, "suspense 10.00") {
		t.Fatalf("the late payment is not in suspense:\n%s", report)
	}
}

func TestTheSandboxReturnsALatePaymentAtOnce(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	_, txid, _ := e.dvPaid(tok)
	e.dvLate(txid)
	if !strings.Contains(e.dvMetrics(), `pixgate_late_payments_total{outcome="returned"} 1`) {
		t.Fatal("the late payment is not counted as returned")
	}
	line := dvLogLine(t, e.log.String(), "late payment")
	if line["result"] != "DEVOLVIDO" || !lcRefundE2E.MatchString(line["rtrId"].(string)) {
		t.Fatalf("late payment log line %v", line)
	}
	if report := e.dvVerify(); !strings.Contains(report, "suspense 0.00") {
		t.Fatalf("the late payment is still in suspense:\n%s", report)
	}
}

func TestTheRecoverJobRunsWithTheOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, j := range e.app.jobs {
		if j.name == recoverJobName {
			if n, err := j.run(context.Background()); n != 0 || err != nil {
				t.Fatalf("recovering an intact memory store: %d, %v", n, err)
			}
			return
		}
	}
	t.Fatalf("no job %q", recoverJobName)
}

// dvPSPVars are the settings that point pixgate at the fake PSP p: its API Pix over mutual
// TLS with the fake's client certificate, trusting the fake's CA.
func dvPSPVars(p *psptest.PSP) map[string]string {
	return map[string]string{"PIXGATE_SANDBOX": "false", "PIXGATE_PIX_KEY": p.Chave,
		"PIXGATE_ACQUIRER_API_URL": p.APIURL, "PIXGATE_ACQUIRER_CLIENT_ID": p.ClientID,
		"PIXGATE_ACQUIRER_CLIENT_SECRET": p.ClientSecret, "PIXGATE_ACQUIRER_CERT_FILE": p.Client.CertFile,
		"PIXGATE_ACQUIRER_KEY_FILE": p.Client.KeyFile, "PIXGATE_ACQUIRER_API_CA_FILE": p.CA.CertFile}
}

func TestWithAnAcquirerAPIARefundIsAskedForAndSettledByItsAnswer(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	if err := p.SetDevolutionAnswer(psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	e := acqEnv(t, dvPSPVars(p))
	_, tok := e.account()
	id, _, e2e := e.dvPaidAt(tok, p)
	refundID := e.acqRefund(tok, id, 500)
	d, ok := p.Devolution(e2e, refundID)
	if !ok || d.Valor != "5.00" || d.Natureza != "ORIGINAL" || p.Requests(psptest.OpDevolutionPut) != 1 {
		t.Fatalf("the PSP holds the devolution %+v (%v) after %d PUTs; want one of 5.00", d, ok, p.Requests(psptest.OpDevolutionPut))
	}
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "PAID" || tx["amountRefunded"] != float64(500) || tx["endToEndRefund"] != d.RtrID {
		t.Fatalf("after DEVOLVIDO: status %v, amountRefunded %v, endToEndRefund %v", tx["status"], tx["amountRefunded"], tx["endToEndRefund"])
	}
	if log := e.log.String(); strings.Contains(log, p.ClientSecret) {
		t.Fatal("the PSP's client secret reached the logs")
	}
	e.dvVerify()
}

// dvPaidAt creates a charge of 10.00 at the PSP p and pays it with a PIX the PSP settled,
// through the acquirer's callback; it returns the transaction id, its txid and the payment's end-to-end id.
func (e *env) dvPaidAt(tok string, p *psptest.PSP) (id, txid, e2e string) {
	e.t.Helper()
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	id = r.json(e.t)["id"].(string)
	paid, outcome := e.pspPay(p, id)
	if outcome != "applied" {
		e.t.Fatalf("payment: %s", outcome)
	}
	return id, paid.TxID, paid.EndToEndID
}

// dvLogLine returns the last JSON log line whose message starts with msg.
func dvLogLine(t *testing.T, log, msg string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, l := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.HasPrefix(m["msg"].(string), msg) {
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no log line %q in\n%s", msg, log)
	}
	return found
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
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

// dvPSP is an acquirer's API Pix over real TLS that answers every devolution with one status
// (DEVOLVIDO: returned at once) and records what it was asked.
type dvPSP struct {
	mu    sync.Mutex
	paths []string
	auth  []string
	valor []string
}

// dvPSPToken is the bearer token pixgate sends the dvPSP.
const dvPSPToken = "psp-token-0123456789abcdef"

// dvStartPSP starts a dvPSP answering status and returns the settings that point pixgate at it.
func dvStartPSP(t *testing.T, status string) (*dvPSP, map[string]string) {
	t.Helper()
	psp := &dvPSP{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Valor string }
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		psp.mu.Lock()
		psp.paths, psp.auth, psp.valor = append(psp.paths, r.Method+" "+r.URL.Path), append(psp.auth, r.Header.Get("Authorization")), append(psp.valor, body.Valor)
		psp.mu.Unlock()
		id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "rtrId": domain.NewEndToEndID('D', "12345678", time.Now()),
			"valor": body.Valor, "status": status})
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "psp-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return psp, map[string]string{"PIXGATE_SANDBOX": "false", "PIXGATE_ACQUIRER_API_URL": srv.URL + "/api/v2",
		"PIXGATE_ACQUIRER_API_TOKEN": dvPSPToken, "PIXGATE_ACQUIRER_API_CA_FILE": ca}
}

// asked lists the requests the PSP received, as "METHOD path".
func (p *dvPSP) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.paths)
}

func TestWithAnAcquirerAPIARefundIsAskedForAndSettledByItsAnswer(t *testing.T) {
	psp, settings := dvStartPSP(t, "DEVOLVIDO")
	const token = dvPSPToken
	e := acqEnv(t, settings)
	_, tok := e.account()
	id, _, e2e := e.dvPaid(tok)
	refundID := e.acqRefund(tok, id, 500)
	psp.mu.Lock()
	asked := strings.Join(psp.paths, ", ")
	psp.mu.Unlock()
	if asked != "PUT /api/v2/pix/"+e2e+"/devolucao/"+refundID || psp.auth[0] != "Bearer "+token || psp.valor[0] != "5.00" {
		t.Fatalf("the acquirer was asked %s (%v, %v)", asked, psp.auth, psp.valor)
	}
	tx := e.lcGet(tok, id).json(t)
	if tx["status"] != "PAID" || tx["amountRefunded"] != float64(500) {
		t.Fatalf("after DEVOLVIDO: status %v, amountRefunded %v", tx["status"], tx["amountRefunded"])
	}
	if strings.Contains(e.log.String(), token) {
		t.Fatal("the acquirer's token reached the logs")
	}
	e.dvVerify()
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

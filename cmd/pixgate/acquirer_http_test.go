package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// POST /acquirer/pix over HTTP with Banco Central's callback bodies. The route's behaviour (the
// secret, each outcome, concurrent deliveries, the body's tolerance) is tested in
// adapters/httpapi (acquirer_http_test.go, acquirer_tolerance_http_test.go). What stays here:
// the "acq" helpers the other tests of serve's wiring use (devolutions, reconciliation, the PSP,
// the callback listener, payouts), and the two tests that need a PSP fake behind the route: the
// acquirer's API Pix (psptest) with the late-payment metric and `ledger verify`, and Efí's
// payout notices (efitest) read back by the payout outbox as serve wires it.

const acqSecret = apitest.AcquirerSecret

func acqEnv(t *testing.T, vars map[string]string) *env {
	return acqEnvWith(t, vars)
}

// acqEnvWith is acqEnv with options for the app, as newEnv takes them.
func acqEnvWith(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	base := map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret, "PIXGATE_SANDBOX_SETTLE_SECONDS": "0"}
	for k, v := range vars {
		base[k] = v
	}
	return newEnv(t, base, options...)
}

func acqTxID(t *testing.T, id string) string {
	t.Helper()
	txid, err := pix.TxIDFromTransactionID(id)
	if err != nil {
		t.Fatal(err)
	}
	return txid
}

// acqPix is one `pix` entry paying 10.00, the amount of minimalTransaction, now (a horario
// must lie between the charge's creation and now plus 5 minutes).
func acqPix(txid, e2e string) map[string]any {
	return apitest.PixPayment(txid, e2e, acqHorario(time.Now()))
}

// acqHorario writes t as acquirers do: Brasília's offset, milliseconds.
func acqHorario(t time.Time) string { return apitest.AcquirerHorario(t) }

// acqDevolucao is a `devolucoes` entry returning 10.00 in status.
func acqDevolucao(status string) map[string]any {
	return apitest.Devolucao(map[string]any{"status": status})
}

func (e *env) acqNotify(body any) response {
	e.t.Helper()
	return e.do("POST", "/acquirer/pix", "", body, "Authorization", "Bearer "+acqSecret)
}

type acqResult = apitest.AcquirerResult

// acqResults wants a 200 answer holding nothing but its results, and returns them.
func acqResults(t *testing.T, r response) []acqResult {
	t.Helper()
	return apitest.AcquirerResults(t, r.api())
}

const acqE2E = apitest.AcquirerE2E

// acqE2ECounter numbers the end-to-end ids of one test binary: an end-to-end id identifies one
// payment, once, so each payment of a test needs its own.
var acqE2ECounter atomic.Int64

// acqNewE2E is a fresh end-to-end id: E, an ISPB, yyyyMMddHHmm and 11 alphanumerics.
func acqNewE2E() string {
	return fmt.Sprintf("E00360305202611221419%011d", acqE2ECounter.Add(1))
}

// acqRefund asks for a refund of amount cents (0: all) and returns the refund's id, the
// devolution id callbacks name.
func (e *env) acqRefund(tok, id string, amount int64) string {
	e.t.Helper()
	var body any
	if amount > 0 {
		body = map[string]any{"amount": amount}
	}
	r := e.do("POST", "/transaction/"+id+"/refund", tok, body)
	if r.status != http.StatusAccepted {
		e.t.Fatalf("refund: %d %s", r.status, r.body)
	}
	refunds := r.json(e.t)["refunds"].([]any)
	return refunds[len(refunds)-1].(map[string]any)["id"].(string)
}

// acqDevolucaoOf is a devolution of refund id for amount (reais) with status.
func acqDevolucaoOf(id, valor, status string) map[string]any {
	d := acqDevolucao(status)
	d["id"], d["valor"] = id, valor
	return d
}

// TestAPaymentOfAnotherAmountIsSentBackOnce: the payer's money reached pixgate's key, so a
// payment whose valor differs from its charge's amount is handled as a late payment's, once,
// whatever the acquirer's retries: into suspense, its devolution asked for at once (the
// acquirer's API answers EM_PROCESSAMENTO), counted and logged; the later callback that
// reports the devolution made takes it out of suspense.
func TestAPaymentOfAnotherAmountIsSentBackOnce(t *testing.T) {
	t.Parallel()
	psp := psptest.New(t, psptest.Config{})
	e := acqEnv(t, dvPSPVars(psp))
	_, tok := e.account()
	id := e.lcCreate(tok) // 10.00
	before, balance := e.lcGet(tok, id), string(e.do("GET", "/balance", tok, nil).body)
	unchanged := func(t *testing.T) {
		t.Helper()
		if after := e.lcGet(tok, id); !bytes.Equal(after.body, before.body) {
			t.Fatalf("the charge changed:\n%s\n%s", before.body, after.body)
		}
		if got := string(e.do("GET", "/balance", tok, nil).body); got != balance {
			t.Fatalf("the merchant's balance moved: %s -> %s", balance, got)
		}
	}
	paid, err := psp.Pay("", psptest.Payment{Valor: "10.01"})
	if err != nil {
		t.Fatal(err)
	}
	e2e := paid.EndToEndID
	devolution := application.LateDevolutionID(e2e)
	entry := acqPix(e.pspTxID(id), e2e)
	entry["valor"] = "10.01"
	counted := func(t *testing.T) {
		t.Helper()
		var lines []string
		for _, l := range strings.Split(e.dvMetrics(), "\n") {
			if strings.HasPrefix(l, "pixgate_late_payments_total{") {
				lines = append(lines, l)
			}
		}
		if want := []string{`pixgate_late_payments_total{outcome="in_progress"} 1`}; !slices.Equal(lines, want) {
			t.Fatalf("metric %q, want %q", lines, want)
		}
		if d, ok := psp.Devolution(e2e, devolution); !ok || d.Valor != "10.01" || psp.Requests(psptest.OpDevolutionPut) != 1 {
			t.Fatalf("the acquirer holds the devolution %+v (%v) after %d PUTs, want one of all of the 10.01", d, ok, psp.Requests(psptest.OpDevolutionPut))
		}
	}

	for i := range 2 { // the callback, then the acquirer's retry of it
		res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{entry}}))
		if res[0].Outcome != "amount_mismatch" || res[0].Status != "PIX_QRCODE_GENERATED" ||
			!strings.Contains(res[0].Detail, "10.01") || !strings.Contains(res[0].Detail, devolution) {
			t.Fatalf("delivery %d: %+v", i+1, res)
		}
		unchanged(t)
		counted(t)
		if report := e.dvVerify(); !strings.Contains(report, "suspense 10.01") {
			t.Fatalf("delivery %d: the 10.01 is not in suspense:\n%s", i+1, report)
		}
	}
	line := dvLogLine(t, e.log.String(), "late payment")
	if line["endToEndId"] != e2e || line["transactionId"] != id || line["amount"] != "10.01" || line["outcome"] != "amount_mismatch" ||
		line["devolutionId"] != devolution || line["result"] != "EM_PROCESSAMENTO" {
		t.Fatalf("log line %v", line)
	}

	// The acquirer reports the devolution made, with the payment, as API Pix does; and sends
	// that again.
	back := acqPix(e.pspTxID(id), e2e)
	back["valor"] = "10.01"
	back["devolucoes"] = []any{acqDevolucaoOf(devolution, "10.01", "DEVOLVIDO")}
	for i, want := range []string{"applied", "already_applied"} {
		res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{back}}))
		if res[0].Outcome != "amount_mismatch" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != want {
			t.Fatalf("devolution callback %d: %+v, want amount_mismatch and the devolution %s", i+1, res, want)
		}
		unchanged(t)
		counted(t)
		if report := e.dvVerify(); !strings.Contains(report, "suspense 0.00") {
			t.Fatalf("devolution callback %d: suspense is not back to zero:\n%s", i+1, report)
		}
	}
}

// TestEfiPayoutNoticeOnTheAcquirerWebhookMovesTheWithdrawal posts Efí's own notice of a payout
// (as efitest writes it: no txid, gnExtras.idEnvio) to POST /acquirer/pix: the payout outbox
// reads the payout back and the withdrawal is PROCESSED without waiting for its next check.
func TestEfiPayoutNoticeOnTheAcquirerWebhookMovesTheWithdrawal(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	var mu sync.Mutex
	var notices [][]byte
	catch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
			mu.Lock()
			notices = append(notices, body)
			mu.Unlock()
		}
	}))
	t.Cleanup(catch.Close)
	psp.NotifyTo(catch.URL)
	psp.Steer("maria@example.com", efitest.StaysProcessing)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	e.poRunUntil(tok, id, "PROCESSING")
	idEnvio := domain.PayoutID(id)
	if err := psp.Settle(idEnvio, efitest.Done, ""); err != nil {
		t.Fatal(err)
	}
	var notice []byte
	deadline := time.Now().Add(10 * time.Second)
	for notice == nil {
		mu.Lock()
		if len(notices) > 0 {
			notice = notices[len(notices)-1]
		}
		mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("Efí sent no notice within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := acqResults(t, e.acqNotify(string(notice)))
	if len(res) != 1 || res[0].IDEnvio != idEnvio || res[0].Outcome != "applied" || res[0].Status != "PROCESSED" || res[0].TxID != "" {
		t.Fatalf("results %+v for Efí's notice %s, want the payout applied", res, notice)
	}
	if w := e.poGet(tok, id); w["status"] != "PROCESSED" {
		t.Fatalf("withdrawal %v after the notice", w["status"])
	}
	if res := acqResults(t, e.acqNotify(string(notice))); res[0].Outcome != "unchanged" {
		t.Fatalf("the notice again: %+v", res)
	}
	other := strings.Replace(string(notice), idEnvio, strings.Repeat("0", 32), 1)
	if res := acqResults(t, e.acqNotify(other)); res[0].Outcome != "unknown_payout" {
		t.Fatalf("a notice of a payout pixgate never made: %+v", res)
	}
	e.dvVerify()
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/application"
)

// POST /acquirer/pix over HTTP with Banco Central's callback bodies. Helpers here start with
// "acq".

const acqSecret = "acquirer-shared-secret-of-at-least-32-characters"

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
	return map[string]any{
		"endToEndId": e2e, "txid": txid, "valor": "10.00", "chave": "pix@pixgate.example",
		"horario": acqHorario(time.Now()), "infoPagador": "pedido 123",
	}
}

// acqHorario writes t as acquirers do: Brasília's offset, milliseconds.
func acqHorario(t time.Time) string {
	return t.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02T15:04:05.000-07:00")
}

func acqDevolucao(status string) map[string]any {
	return map[string]any{
		"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "10.00", "status": status,
		"natureza": "ORIGINAL", "horario": map[string]any{"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"},
	}
}

func (e *env) acqNotify(body any) response {
	e.t.Helper()
	return e.do("POST", "/acquirer/pix", "", body, "Authorization", "Bearer "+acqSecret)
}

type acqResult struct {
	EndToEndID string `json:"endToEndId"`
	TxID       string `json:"txid"`
	IDEnvio    string `json:"idEnvio"`
	Outcome    string `json:"outcome"`
	Status     string `json:"status"`
	Detail     string `json:"detail"`
	Devolucoes []struct {
		ID      string `json:"id"`
		RtrID   string `json:"rtrId"`
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
	} `json:"devolucoes"`
}

// acqResults wants a 200 answer and returns its results.
func acqResults(t *testing.T, r response) []acqResult {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200\n%s", r.status, r.body)
	}
	var out struct {
		Results []acqResult `json:"results"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	return out.Results
}

const (
	acqE2E      = "E00360305202611221419aBcDeFgHiJk"
	acqOtherE2E = "E00360305202611221420zYxWvUtSrQp"
)

func TestAcquirerRouteExistsOnlyWithASecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	problemOf(t, e.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}, "Authorization", "Bearer "+acqSecret),
		http.StatusNotFound, "not_found")
}

func TestAcquirerAuthentication401(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, merchantToken := e.account()
	body := map[string]any{"pix": []any{}}
	for _, c := range []struct{ name, header string }{
		{"no Authorization header", ""},
		{"a wrong secret", "Bearer " + strings.Repeat("x", len(acqSecret))},
		{"the secret with one more character", "Bearer " + acqSecret + "x"},
		{"a prefix of the secret", "Bearer " + acqSecret[:31]},
		{"the secret in Basic", "Basic " + acqSecret},
		{"Bearer without a secret", "Bearer "},
		{"a merchant's own token", "Bearer " + merchantToken},
	} {
		t.Run(c.name+" answers 401", func(t *testing.T) {
			var r response
			if c.header == "" {
				r = e.do("POST", "/acquirer/pix", "", body)
			} else {
				r = e.do("POST", "/acquirer/pix", "", body, "Authorization", c.header)
			}
			problemOf(t, r, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("the secret answers 200", func(t *testing.T) {
		if res := acqResults(t, e.acqNotify(body)); len(res) != 0 {
			t.Fatalf("results = %v", res)
		}
	})
}

func TestAcquirerPaymentPaysTheTransaction(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	id := e.lcCreate(tok)
	entry := acqPix(acqTxID(t, id), acqE2E)
	res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{entry}}))
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].EndToEndID != acqE2E || res[0].TxID != acqTxID(t, id) {
		t.Fatalf("results = %+v", res)
	}
	horario, err := time.Parse(time.RFC3339Nano, entry["horario"].(string))
	if err != nil {
		t.Fatal(err)
	}
	got := e.lcGet(tok, id).json(t)
	lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	checks := []struct {
		what      string
		got, want any
	}{
		{"amountPaid is valor in cents", got["amountPaid"], float64(1000)},
		{"paymentDate is horario in UTC", got["paymentDate"], horario.UTC().Format("2006-01-02T15:04:05.000Z")},
		{"endToEnd is endToEndId", got["endToEnd"], acqE2E},
		{"feeAmount", got["feeAmount"], float64(10)},
		{"no payer: the callback names none", got["payer"], nil},
		{"the receiving account (sandbox)", got["receiver"].(map[string]any)["pix"], map[string]any{"key": "pix@pixgate.example", "type": "EMAIL"}},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events", len(got))
	}
}

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

func TestAcquirerOutcomesOverHTTP(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	e.lcFund(tok) // refunds need an available balance that covers them
	notify := func(t *testing.T, entries ...any) []acqResult {
		t.Helper()
		return acqResults(t, e.acqNotify(map[string]any{"pix": entries}))
	}
	paid := func(t *testing.T) (id, txid, e2e string) {
		t.Helper()
		id = e.lcCreate(tok)
		txid, e2e = acqTxID(t, id), acqNewE2E()
		if res := notify(t, acqPix(txid, e2e)); res[0].Outcome != "applied" {
			t.Fatalf("paying: %+v", res)
		}
		return id, txid, e2e
	}
	unchanged := func(t *testing.T, id string, before response) {
		t.Helper()
		if after := e.lcGet(tok, id); !bytes.Equal(after.body, before.body) {
			t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
		}
	}
	balance := func() string { return string(e.do("GET", "/balance", tok, nil).body) }

	t.Run("a repeated payment is already_applied and changes nothing", func(t *testing.T) {
		id, txid, e2e := paid(t)
		before, money := e.lcGet(tok, id), balance()
		res := notify(t, acqPix(txid, e2e))
		if res[0].Outcome != "already_applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if n := len(e.lcDeliveries(id, "transaction.paid")); n != 1 {
			t.Fatalf("%d paid events", n)
		}
		if got := balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
	})
	t.Run("an unknown txid is unknown_txid", func(t *testing.T) {
		missing := acqTxID(t, "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f")
		res := notify(t, acqPix(missing, acqNewE2E()), acqPix("txidOfSomeOtherGateway0001", acqNewE2E()))
		for _, r := range res {
			if r.Outcome != "unknown_txid" || r.Status != "" || r.Detail == "" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("another amount is amount_mismatch and does not pay", func(t *testing.T) {
		id := e.lcCreate(tok)
		before := e.lcGet(tok, id)
		entry := acqPix(acqTxID(t, id), acqNewE2E())
		entry["valor"] = "10.01"
		res := notify(t, entry)
		if res[0].Outcome != "amount_mismatch" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "10.01") {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if !strings.Contains(e.log.String(), `"outcome":"amount_mismatch"`) {
			t.Fatal("the mismatch was not logged for operations")
		}
	})
	t.Run("an endToEndId already applied to another charge is duplicate_end_to_end", func(t *testing.T) {
		_, _, e2e := paid(t)
		other := e.lcCreate(tok)
		before, money := e.lcGet(tok, other), balance()
		res := notify(t, acqPix(acqTxID(t, other), e2e))
		if res[0].Outcome != "duplicate_end_to_end" || res[0].Status != "PIX_QRCODE_GENERATED" || res[0].Detail == "" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, other, before)
		if got := balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
		if !strings.Contains(e.log.String(), `"outcome":"duplicate_end_to_end"`) {
			t.Fatal("the duplicate was not logged for operations")
		}
	})
	t.Run("a payment of an expired charge is late_payment_refunded and the charge stays FAILED", func(t *testing.T) {
		body := minimalTransaction()
		body["pix"] = map[string]any{"expirationSeconds": 60}
		id := e.do("POST", "/transaction", tok, body).json(t)["id"].(string)
		e.lcExpire(time.Now().Add(2 * time.Minute))
		before, money := e.lcGet(tok, id), balance()
		entry := acqPix(acqTxID(t, id), acqNewE2E())
		res := notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "FAILED" || !strings.Contains(res[0].Detail, "FAILED") {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if got := balance(); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %s -> %s", money, got)
		}
		t.Run("the acquirer's retry changes nothing more", func(t *testing.T) {
			if again := notify(t, entry); again[0].Outcome != "late_payment_refunded" {
				t.Fatalf("%+v", again)
			}
			unchanged(t, id, before)
		})
		t.Run("its devolution is matched by the id pixgate asked it under", func(t *testing.T) {
			back := acqPix(acqTxID(t, id), entry["endToEndId"].(string))
			back["devolucoes"] = []any{
				acqDevolucaoOf(application.LateDevolutionID(entry["endToEndId"].(string)), "10.00", "DEVOLVIDO"),
				acqDevolucaoOf("NotOurs0001", "10.00", "DEVOLVIDO"),
			}
			res := notify(t, back)
			if got := res[0].Devolucoes; len(got) != 2 || (got[0].Outcome != "applied" && got[0].Outcome != "already_applied") ||
				got[1].Outcome != "unknown_refund" {
				t.Fatalf("%+v", res)
			}
			unchanged(t, id, before)
		})
	})
	t.Run("a payment dated after the expiry, before the sweeper ran, is late_payment_refunded and the charge fails as expired", func(t *testing.T) {
		body := minimalTransaction()
		body["pix"] = map[string]any{"expirationSeconds": 60}
		id := e.do("POST", "/transaction", tok, body).json(t)["id"].(string)
		before, money := e.lcGet(tok, id), balance()
		entry := acqPix(acqTxID(t, id), acqNewE2E())
		entry["horario"] = acqHorario(time.Now().Add(2 * time.Minute)) // paid past expirationDate
		res := notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "expirationDate") {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if got := balance(); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %s -> %s", money, got)
		}
		e.lcExpire(time.Now().Add(2 * time.Minute))
		if got := e.do("GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "FAILED" {
			t.Fatalf("after the sweep the charge is %v, want FAILED", got)
		}
		available := func() any { return e.do("GET", "/balance", tok, nil).json(t)["available"] }
		moneyAfterSweep := available()
		if again := notify(t, entry); again[0].Outcome != "late_payment_refunded" || again[0].Status != "FAILED" {
			t.Fatalf("the acquirer's retry: %+v", again)
		}
		if got := available(); got != moneyAfterSweep {
			t.Fatalf("the retry moved the available balance: %v -> %v", moneyAfterSweep, got)
		}
	})
	t.Run("a second payment of a paid charge with another endToEndId is late_payment_refunded", func(t *testing.T) {
		id, txid, e2e := paid(t)
		before, money := e.lcGet(tok, id), balance()
		res := notify(t, acqPix(txid, acqNewE2E()))
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if got := balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
		if before.json(t)["endToEnd"] != e2e {
			t.Fatalf("endToEnd = %v", before.json(t)["endToEnd"])
		}
	})
	t.Run("DEVOLVIDO settles the refund it names, with endToEndRefund = rtrId, once", func(t *testing.T) {
		id, txid, e2e := paid(t)
		refund := e.acqRefund(tok, id, 0)
		entry := acqPix(txid, e2e)
		entry["devolucoes"] = []any{acqDevolucaoOf(refund, "10.00", "DEVOLVIDO")}
		res := notify(t, entry)
		if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "applied" ||
			res[0].Devolucoes[0].ID != refund || res[0].Status != "REFUNDED" {
			t.Fatalf("%+v", res)
		}
		got := e.lcGet(tok, id)
		m := got.json(t)
		lcHistory(t, m, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
		if m["endToEndRefund"] != "D00360305202611221430aBcDeFgHiJk" || m["amountRefunded"] != float64(1000) {
			t.Fatalf("endToEndRefund = %v, amountRefunded = %v", m["endToEndRefund"], m["amountRefunded"])
		}
		if r := m["refunds"].([]any)[0].(map[string]any); r["status"] != "REFUNDED" || r["endToEndRefund"] != "D00360305202611221430aBcDeFgHiJk" {
			t.Fatalf("refund %v", r)
		}
		if again := notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		unchanged(t, id, got)
	})
	t.Run("devolutions are matched by refund id: partial refunds, unknown ids, amounts", func(t *testing.T) {
		id, txid, e2e := paid(t)
		first := e.acqRefund(tok, id, 400)
		entry := acqPix(txid, e2e)
		inProgress := acqDevolucaoOf(first, "4.00", "EM_PROCESSAMENTO")
		delete(inProgress["horario"].(map[string]any), "liquidacao")
		entry["devolucoes"] = []any{
			acqDevolucaoOf("D0001", "4.00", "DEVOLVIDO"),
			inProgress,
			acqDevolucaoOf(first, "4.01", "DEVOLVIDO"),
			acqDevolucaoOf(first, "4.00", "DEVOLVIDO"),
		}
		res := notify(t, entry)
		var outcomes []string
		for _, d := range res[0].Devolucoes {
			outcomes = append(outcomes, d.Outcome)
		}
		if want := []string{"unknown_refund", "in_progress", "amount_mismatch", "applied"}; !slices.Equal(outcomes, want) {
			t.Fatalf("outcomes %v, want %v (%+v)", outcomes, want, res)
		}
		if res[0].Status != "PAID" {
			t.Fatalf("a partial refund completed leaves the transaction PAID, not %s", res[0].Status)
		}
		got := e.lcGet(tok, id).json(t)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
		if got["amountRefunded"] != float64(400) {
			t.Fatalf("amountRefunded = %v", got["amountRefunded"])
		}

		second := e.acqRefund(tok, id, 600)
		failed := acqDevolucaoOf(second, "6.00", "NAO_REALIZADO")
		failed["motivo"] = "Conta do pagador encerrada"
		entry["devolucoes"] = []any{failed}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		after := e.lcGet(tok, id)
		m := after.json(t)
		if msg, _ := m["errorMessage"].(string); !strings.Contains(msg, "Conta do pagador encerrada") {
			t.Fatalf("errorMessage = %q", msg)
		}
		refunds := m["refunds"].([]any)
		if len(refunds) != 2 || refunds[0].(map[string]any)["status"] != "REFUNDED" || refunds[1].(map[string]any)["status"] != "FAILED" {
			t.Fatalf("refunds %v", refunds)
		}
		if again := notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		entry["devolucoes"] = []any{acqDevolucaoOf(second, "6.00", "DEVOLVIDO")}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "invalid_transition" {
			t.Fatalf("a failed refund reported returned: %+v", res)
		}
		unchanged(t, id, after)
	})
	t.Run("DEVOLVIDO completes an accepted MED dispute into INFRACTION", func(t *testing.T) {
		id, txid, e2e := paid(t)
		e.lcStep(tok, id, "med/open", http.StatusOK)
		e.lcStep(tok, id, "med/accept", http.StatusOK)
		entry := acqPix(txid, e2e)
		dev := acqDevolucao("DEVOLVIDO")
		dev["natureza"] = "MED_FRAUDE"
		entry["devolucoes"] = []any{dev}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "INFRACTION" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("EM_PROCESSAMENTO is in_progress and changes nothing", func(t *testing.T) {
		id, txid, e2e := paid(t)
		refund := e.acqRefund(tok, id, 0)
		before := e.lcGet(tok, id)
		entry := acqPix(txid, e2e)
		dev := acqDevolucaoOf(refund, "10.00", "EM_PROCESSAMENTO")
		delete(dev["horario"].(map[string]any), "liquidacao")
		entry["devolucoes"] = []any{dev}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "in_progress" || res[0].Status != "PROCESSING_REFUND" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("a devolution of no refund is unknown_refund", func(t *testing.T) {
		id, txid, e2e := paid(t)
		before := e.lcGet(tok, id)
		entry := acqPix(txid, e2e)
		entry["devolucoes"] = []any{acqDevolucao("DEVOLVIDO")}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "unknown_refund" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("the entries of one callback get one result each, in order", func(t *testing.T) {
		a, b := e.lcCreate(tok), e.lcCreate(tok)
		ea, eb := acqNewE2E(), acqNewE2E()
		res := notify(t, acqPix(acqTxID(t, a), ea), acqPix("unknown", acqNewE2E()), acqPix(acqTxID(t, b), eb), acqPix(acqTxID(t, a), ea),
			acqPix(acqTxID(t, b), ea))
		var got []string
		for _, r := range res {
			got = append(got, r.Outcome)
			if r.Outcome != "late_payment_refunded" && len(r.Devolucoes) != 0 {
				t.Errorf("devolucoes %v for an entry that had none", r.Devolucoes)
			}
		}
		if want := []string{"applied", "unknown_txid", "applied", "already_applied", "duplicate_end_to_end"}; !slices.Equal(got, want) {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	})
	t.Run("payments through the callback follow the ledger: available is the amount paid less the fee", func(t *testing.T) {
		_, other := e.account()
		id := e.lcCreate(other)
		notify(t, acqPix(acqTxID(t, id), acqNewE2E()))
		if got := e.do("GET", "/balance", other, nil).json(t); got["available"] != float64(990) || got["blocked"] != float64(0) {
			t.Fatalf("balance %v, want 1000 less the fee of 10 available", got)
		}
	})
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

func acqTransactionID(t *testing.T, txid string) string {
	t.Helper()
	id, err := pix.TransactionIDFromTxID(txid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestAcquirerConcurrentDeliveriesOfOnePaymentPayOnce(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	id := e.lcCreate(tok)
	body, _ := json.Marshal(map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}})
	const senders = 50
	type answer struct {
		status  int
		outcome string
		err     error
	}
	answers := make([]answer, senders)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", e.srv.URL+"/acquirer/pix", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+acqSecret)
			req.Header.Set("Content-Type", "application/json")
			res, err := e.srv.Client().Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var out struct{ Results []acqResult }
			answers[i].status = res.StatusCode
			answers[i].err = json.Unmarshal(raw, &out)
			if len(out.Results) == 1 {
				answers[i].outcome = out.Results[0].Outcome
			}
		})
	}
	close(start)
	wg.Wait()
	applied := 0
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("delivery %d: status %d, %v", i, a.status, a.err)
		}
		switch a.outcome {
		case "applied":
			applied++
		case "already_applied":
		default:
			t.Fatalf("delivery %d: outcome %q", i, a.outcome)
		}
	}
	if applied != 1 {
		t.Fatalf("%d deliveries applied the payment, want exactly 1", applied)
	}
	lcHistory(t, e.lcGet(tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events, want 1", len(got))
	}
}

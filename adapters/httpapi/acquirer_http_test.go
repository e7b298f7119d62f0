package httpapi_test

// POST /acquirer/pix over HTTP with Banco Central's callback bodies (docs/API.md, Acquirer
// notifications): the shared secret, and what each outcome does to the charge, its refunds,
// its events and the merchant's balance. Every API here runs on a stopped clock that a test
// moves itself, and its sandbox settles at once. Helpers here start with "acq"; the body's
// tolerance is in acquirer_tolerance_http_test.go.

import (
	"bytes"
	"context"
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
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// acqSecret is the acquirer's shared secret of the APIs here.
const acqSecret = "acquirer-shared-secret-of-at-least-32-characters"

// acqE2E is an end-to-end id: E, an ISPB, yyyyMMddHHmm and 11 alphanumerics.
const acqE2E = "E00360305202611221419aBcDeFgHiJk"

// acqAPI is an API with the acquirer's callback on, a sandbox that settles at once (serve
// with PIXGATE_SANDBOX_SETTLE_SECONDS 0) and a clock stopped at 2026-11-22 14:19 UTC, which
// it returns.
func acqAPI(t *testing.T) (*api, *fakeClock) {
	t.Helper()
	c := newFakeClock(time.Date(2026, 11, 22, 14, 19, 32, 0, time.UTC))
	return newAPI(t, apiSettings{AcquirerSecret: acqSecret, SettleNow: true, Clock: c}), c
}

// acqTxID is the PIX txid of the transaction id.
func acqTxID(t *testing.T, id string) string {
	t.Helper()
	txid, err := pix.TxIDFromTransactionID(id)
	must(t, err)
	return txid
}

// acqPix is one `pix` entry paying 10.00, the amount of acqCreate's charge, at the API's now
// (a horario must lie between the charge's creation and now plus 5 minutes).
func (a *api) acqPix(txid, e2e string) map[string]any {
	return map[string]any{
		"endToEndId": e2e, "txid": txid, "valor": "10.00", "chave": "pix@pixgate.example",
		"horario": acqHorario(a.clock.Now()), "infoPagador": "pedido 123",
	}
}

// acqHorario writes t as acquirers do: Brasília's offset, milliseconds.
func acqHorario(t time.Time) string {
	return t.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02T15:04:05.000-07:00")
}

// acqDevolucao is a `devolucoes` entry returning 10.00 with status.
func acqDevolucao(status string) map[string]any {
	return map[string]any{
		"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "10.00", "status": status,
		"natureza": "ORIGINAL", "horario": map[string]any{"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"},
	}
}

// acqDevolucaoOf is a devolution of refund id for amount (reais) with status.
func acqDevolucaoOf(id, valor, status string) map[string]any {
	d := acqDevolucao(status)
	d["id"], d["valor"] = id, valor
	return d
}

// acqNotify posts body to POST /acquirer/pix with the acquirer's secret and returns the answer,
// whatever it is.
func (a *api) acqNotify(body any) response {
	a.t.Helper()
	return a.do("POST", "/acquirer/pix", "", body, "Authorization", "Bearer "+acqSecret)
}

// acqResult is one result of the callback's answer.
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

// acqResults wants a 200 answer holding nothing but its results, and returns them.
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

// acqE2ECounter numbers the end-to-end ids of one test binary: an end-to-end id identifies one
// payment, once, so each payment of a test needs its own.
var acqE2ECounter atomic.Int64

// acqNewE2E is a fresh end-to-end id.
func acqNewE2E() string {
	return fmt.Sprintf("E00360305202611221419%011d", acqE2ECounter.Add(1))
}

// acqProblem checks that r is a problem+json answer with status and code, and returns its
// field errors as "field code" strings.
func acqProblem(t *testing.T, r response, status int, code string) []string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d\n%s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.json(t)
	if p["code"] != code || p["status"] != float64(status) || p["type"] != "about:blank" || p["requestId"] == "" {
		t.Fatalf("problem = %v, want code %q status %d", p, code, status)
	}
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		out = append(out, fmt.Sprint(m["field"], " ", m["code"]))
	}
	return out
}

// acqCreate creates a charge of 10.00 with a webhook and returns its id.
func (a *api) acqCreate(t *testing.T, tok string) string {
	t.Helper()
	body := minimalTransaction()
	body["webhookUrl"] = "https://merchant.example.com/hooks"
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("creating: %d %s", r.status, r.body)
	}
	return r.json(t)["id"].(string)
}

// acqCreateExpiring creates a charge of 10.00 that expires after 60 s and returns its id.
func (a *api) acqCreateExpiring(t *testing.T, tok string) string {
	t.Helper()
	body := minimalTransaction()
	body["pix"] = map[string]any{"expirationSeconds": 60}
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("creating: %d %s", r.status, r.body)
	}
	return r.json(t)["id"].(string)
}

// acqSandbox posts POST /sandbox/transaction/{id}/<step> and wants 200.
func (a *api) acqSandbox(t *testing.T, tok, id, step string) {
	t.Helper()
	if r := a.do("POST", "/sandbox/transaction/"+id+"/"+step, tok, nil); r.status != http.StatusOK {
		t.Fatalf("POST /sandbox/transaction/%s/%s: %d, want 200\n%s", id, step, r.status, r.body)
	}
}

// acqFund pays a charge of 1000.00 for the account, so that refunds find an available balance
// to hold (a refund of a charge's whole amount needs more than the charge left after its fee).
func (a *api) acqFund(t *testing.T, tok string) {
	t.Helper()
	body := minimalTransaction()
	body["amount"] = 100_000
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("creating: %d %s", r.status, r.body)
	}
	a.acqSandbox(t, tok, r.json(t)["id"].(string), "pay")
}

// acqGet is GET /transaction/{id}, which must answer 200.
func (a *api) acqGet(t *testing.T, tok, id string) response {
	t.Helper()
	r := a.do("GET", "/transaction/"+id, tok, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	return r
}

// acqBalance is GET /balance's body.
func (a *api) acqBalance(tok string) string {
	a.t.Helper()
	return string(a.do("GET", "/balance", tok, nil).body)
}

// acqRefund asks for a refund of amount cents (0: all) and returns the refund's id, the
// devolution id callbacks name.
func (a *api) acqRefund(t *testing.T, tok, id string, amount int64) string {
	t.Helper()
	var body any
	if amount > 0 {
		body = map[string]any{"amount": amount}
	}
	r := a.do("POST", "/transaction/"+id+"/refund", tok, body)
	if r.status != http.StatusAccepted {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	refunds := r.json(t)["refunds"].([]any)
	return refunds[len(refunds)-1].(map[string]any)["id"].(string)
}

// acqHistory checks the statusHistory of a transaction body: its statuses are want, each
// duration is the next entry's date minus its own, the last is null, updatedAt is the last
// date.
func acqHistory(t *testing.T, got map[string]any, want ...string) {
	t.Helper()
	const layout = "2006-01-02T15:04:05.000Z"
	entries := got["statusHistory"].([]any)
	var statuses []string
	var dates []time.Time
	for _, raw := range entries {
		e := raw.(map[string]any)
		statuses = append(statuses, e["status"].(string))
		d, err := time.Parse(layout, e["date"].(string))
		if err != nil {
			t.Fatalf("history date %v: %v", e["date"], err)
		}
		dates = append(dates, d)
	}
	if !slices.Equal(statuses, want) {
		t.Fatalf("statusHistory %v, want %v", statuses, want)
	}
	for i, raw := range entries {
		d := raw.(map[string]any)["durationInMilliseconds"]
		if i == len(entries)-1 {
			if d != nil {
				t.Fatalf("the current status has duration %v, want null", d)
			}
			break
		}
		ms, ok := d.(float64)
		if want := dates[i+1].Sub(dates[i]).Milliseconds(); !ok || int64(ms) != want || ms < 0 {
			t.Fatalf("%s lasted %v ms, want %d (next date minus its own)", statuses[i], d, want)
		}
	}
	if got["updatedAt"] != entries[len(entries)-1].(map[string]any)["date"] || got["status"] != want[len(want)-1] {
		t.Fatalf("status %v updatedAt %v do not match the last history entry", got["status"], got["updatedAt"])
	}
}

// acqDeliveries lists the stored events of a transaction of type typ.
func (a *api) acqDeliveries(t *testing.T, id, typ string) []string {
	t.Helper()
	tx, err := a.store.Transactions().Find(context.Background(), id)
	must(t, err)
	ds, err := a.store.Outbox().Deliveries(context.Background(), tx.AccountID(), domain.ResourceTransaction, id)
	must(t, err)
	var out []string
	for _, d := range ds {
		if d.Event.Type == typ {
			out = append(out, d.Event.Type)
		}
	}
	return out
}

func TestAcquirerRouteExistsOnlyWithASecret(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{SettleNow: true})
	acqProblem(t, a.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}, "Authorization", "Bearer "+acqSecret),
		http.StatusNotFound, "not_found")
}

func TestAcquirerAuthentication401(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, merchantToken := a.account()
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
			t.Parallel()
			var r response
			if c.header == "" {
				r = a.do("POST", "/acquirer/pix", "", body)
			} else {
				r = a.do("POST", "/acquirer/pix", "", body, "Authorization", c.header)
			}
			acqProblem(t, r, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("the secret answers 200", func(t *testing.T) {
		t.Parallel()
		if res := acqResults(t, a.acqNotify(body)); len(res) != 0 {
			t.Fatalf("results = %v", res)
		}
	})
}

func TestAcquirerPaymentPaysTheTransaction(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	id := a.acqCreate(t, tok)
	entry := a.acqPix(acqTxID(t, id), acqE2E)
	res := acqResults(t, a.acqNotify(map[string]any{"pix": []any{entry}}))
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].EndToEndID != acqE2E || res[0].TxID != acqTxID(t, id) {
		t.Fatalf("results = %+v", res)
	}
	horario, err := time.Parse(time.RFC3339Nano, entry["horario"].(string))
	must(t, err)
	got := a.acqGet(t, tok, id).json(t)
	acqHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
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
	if got := a.acqDeliveries(t, id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events", len(got))
	}
}

// acqMerchant is a merchant of its own API, funded so that refunds find a balance to hold,
// and what the outcome tests do as it.
type acqMerchant struct {
	a     *api
	clock *fakeClock
	tok   string
}

func newAcqMerchant(t *testing.T) acqMerchant {
	t.Helper()
	a, c := acqAPI(t)
	_, tok := a.account()
	a.acqFund(t, tok)
	return acqMerchant{a: a, clock: c, tok: tok}
}

// notify posts a callback of entries and wants 200.
func (m acqMerchant) notify(t *testing.T, entries ...any) []acqResult {
	t.Helper()
	return acqResults(t, m.a.acqNotify(map[string]any{"pix": entries}))
}

// paid creates a charge and pays it through the callback.
func (m acqMerchant) paid(t *testing.T) (id, txid, e2e string) {
	t.Helper()
	id = m.a.acqCreate(t, m.tok)
	txid, e2e = acqTxID(t, id), acqNewE2E()
	if res := m.notify(t, m.a.acqPix(txid, e2e)); res[0].Outcome != "applied" {
		t.Fatalf("paying: %+v", res)
	}
	return id, txid, e2e
}

// unchanged wants the transaction id as before shows it.
func (m acqMerchant) unchanged(t *testing.T, id string, before response) {
	t.Helper()
	if after := m.a.acqGet(t, m.tok, id); !bytes.Equal(after.body, before.body) {
		t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
	}
}

func (m acqMerchant) balance() string { return m.a.acqBalance(m.tok) }

func TestAcquirerOutcomesOverHTTP(t *testing.T) {
	t.Parallel()
	t.Run("a repeated payment is already_applied and changes nothing", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		before, money := m.a.acqGet(t, m.tok, id), m.balance()
		res := m.notify(t, m.a.acqPix(txid, e2e))
		if res[0].Outcome != "already_applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if n := len(m.a.acqDeliveries(t, id, "transaction.paid")); n != 1 {
			t.Fatalf("%d paid events", n)
		}
		if got := m.balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
	})
	t.Run("an unknown txid is unknown_txid", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		missing := acqTxID(t, "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f")
		res := m.notify(t, m.a.acqPix(missing, acqNewE2E()), m.a.acqPix("txidOfSomeOtherGateway0001", acqNewE2E()))
		for _, r := range res {
			if r.Outcome != "unknown_txid" || r.Status != "" || r.Detail == "" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("another amount is amount_mismatch and does not pay", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id := m.a.acqCreate(t, m.tok)
		before := m.a.acqGet(t, m.tok, id)
		entry := m.a.acqPix(acqTxID(t, id), acqNewE2E())
		entry["valor"] = "10.01"
		res := m.notify(t, entry)
		if res[0].Outcome != "amount_mismatch" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "10.01") {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if !strings.Contains(m.a.log.String(), `"outcome":"amount_mismatch"`) {
			t.Fatal("the mismatch was not logged for operations")
		}
	})
	t.Run("an endToEndId already applied to another charge is duplicate_end_to_end", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		_, _, e2e := m.paid(t)
		other := m.a.acqCreate(t, m.tok)
		before, money := m.a.acqGet(t, m.tok, other), m.balance()
		res := m.notify(t, m.a.acqPix(acqTxID(t, other), e2e))
		if res[0].Outcome != "duplicate_end_to_end" || res[0].Status != "PIX_QRCODE_GENERATED" || res[0].Detail == "" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, other, before)
		if got := m.balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
		if !strings.Contains(m.a.log.String(), `"outcome":"duplicate_end_to_end"`) {
			t.Fatal("the duplicate was not logged for operations")
		}
	})
	t.Run("a payment of an expired charge is late_payment_refunded and the charge stays FAILED", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id := m.a.acqCreateExpiring(t, m.tok)
		entry := m.a.acqPix(acqTxID(t, id), acqNewE2E()) // paid in time; reported after the sweep
		m.clock.Advance(2 * time.Minute)
		if n := m.a.expire(); n != 1 {
			t.Fatalf("the sweeper failed %d charges, want this one", n)
		}
		before, money := m.a.acqGet(t, m.tok, id), m.balance()
		res := m.notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "FAILED" || !strings.Contains(res[0].Detail, "FAILED") {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %s -> %s", money, got)
		}
		// The two steps below are the acquirer's, in this order.
		t.Run("the acquirer's retry changes nothing more", func(t *testing.T) {
			if again := m.notify(t, entry); again[0].Outcome != "late_payment_refunded" {
				t.Fatalf("%+v", again)
			}
			m.unchanged(t, id, before)
		})
		t.Run("its devolution is matched by the id pixgate asked it under", func(t *testing.T) {
			back := m.a.acqPix(acqTxID(t, id), entry["endToEndId"].(string))
			back["devolucoes"] = []any{
				acqDevolucaoOf(application.LateDevolutionID(entry["endToEndId"].(string)), "10.00", "DEVOLVIDO"),
				acqDevolucaoOf("NotOurs0001", "10.00", "DEVOLVIDO"),
			}
			res := m.notify(t, back)
			if got := res[0].Devolucoes; len(got) != 2 || (got[0].Outcome != "applied" && got[0].Outcome != "already_applied") ||
				got[1].Outcome != "unknown_refund" {
				t.Fatalf("%+v", res)
			}
			m.unchanged(t, id, before)
		})
	})
	t.Run("a payment dated after the expiry, before the sweeper ran, is late_payment_refunded and the charge fails as expired", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id := m.a.acqCreateExpiring(t, m.tok)
		before, money := m.a.acqGet(t, m.tok, id), m.balance()
		entry := m.a.acqPix(acqTxID(t, id), acqNewE2E())
		entry["horario"] = acqHorario(m.clock.Now().Add(2 * time.Minute)) // paid past expirationDate
		res := m.notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "expirationDate") {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %s -> %s", money, got)
		}
		m.clock.Advance(2 * time.Minute)
		m.a.expire()
		if got := m.a.do("GET", "/transaction/"+id, m.tok, nil).json(t)["status"]; got != "FAILED" {
			t.Fatalf("after the sweep the charge is %v, want FAILED", got)
		}
		available := func() any { return m.a.do("GET", "/balance", m.tok, nil).json(t)["available"] }
		moneyAfterSweep := available()
		if again := m.notify(t, entry); again[0].Outcome != "late_payment_refunded" || again[0].Status != "FAILED" {
			t.Fatalf("the acquirer's retry: %+v", again)
		}
		if got := available(); got != moneyAfterSweep {
			t.Fatalf("the retry moved the available balance: %v -> %v", moneyAfterSweep, got)
		}
	})
	t.Run("a second payment of a paid charge with another endToEndId is late_payment_refunded", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		before, money := m.a.acqGet(t, m.tok, id), m.balance()
		res := m.notify(t, m.a.acqPix(txid, acqNewE2E()))
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(); got != money {
			t.Fatalf("the balance moved: %s -> %s", money, got)
		}
		if before.json(t)["endToEnd"] != e2e {
			t.Fatalf("endToEnd = %v", before.json(t)["endToEnd"])
		}
	})
	t.Run("DEVOLVIDO settles the refund it names, with endToEndRefund = rtrId, once", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		refund := m.a.acqRefund(t, m.tok, id, 0)
		entry := m.a.acqPix(txid, e2e)
		entry["devolucoes"] = []any{acqDevolucaoOf(refund, "10.00", "DEVOLVIDO")}
		res := m.notify(t, entry)
		if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "applied" ||
			res[0].Devolucoes[0].ID != refund || res[0].Status != "REFUNDED" {
			t.Fatalf("%+v", res)
		}
		got := m.a.acqGet(t, m.tok, id)
		tx := got.json(t)
		acqHistory(t, tx, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
		if tx["endToEndRefund"] != "D00360305202611221430aBcDeFgHiJk" || tx["amountRefunded"] != float64(1000) {
			t.Fatalf("endToEndRefund = %v, amountRefunded = %v", tx["endToEndRefund"], tx["amountRefunded"])
		}
		if r := tx["refunds"].([]any)[0].(map[string]any); r["status"] != "REFUNDED" || r["endToEndRefund"] != "D00360305202611221430aBcDeFgHiJk" {
			t.Fatalf("refund %v", r)
		}
		if again := m.notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		m.unchanged(t, id, got)
	})
	t.Run("devolutions are matched by refund id: partial refunds, unknown ids, amounts", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		first := m.a.acqRefund(t, m.tok, id, 400)
		entry := m.a.acqPix(txid, e2e)
		inProgress := acqDevolucaoOf(first, "4.00", "EM_PROCESSAMENTO")
		delete(inProgress["horario"].(map[string]any), "liquidacao")
		entry["devolucoes"] = []any{
			acqDevolucaoOf("D0001", "4.00", "DEVOLVIDO"),
			inProgress,
			acqDevolucaoOf(first, "4.01", "DEVOLVIDO"),
			acqDevolucaoOf(first, "4.00", "DEVOLVIDO"),
		}
		res := m.notify(t, entry)
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
		got := m.a.acqGet(t, m.tok, id).json(t)
		acqHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
		if got["amountRefunded"] != float64(400) {
			t.Fatalf("amountRefunded = %v", got["amountRefunded"])
		}

		second := m.a.acqRefund(t, m.tok, id, 600)
		failed := acqDevolucaoOf(second, "6.00", "NAO_REALIZADO")
		failed["motivo"] = "Conta do pagador encerrada"
		entry["devolucoes"] = []any{failed}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		after := m.a.acqGet(t, m.tok, id)
		tx := after.json(t)
		if msg, _ := tx["errorMessage"].(string); !strings.Contains(msg, "Conta do pagador encerrada") {
			t.Fatalf("errorMessage = %q", msg)
		}
		refunds := tx["refunds"].([]any)
		if len(refunds) != 2 || refunds[0].(map[string]any)["status"] != "REFUNDED" || refunds[1].(map[string]any)["status"] != "FAILED" {
			t.Fatalf("refunds %v", refunds)
		}
		if again := m.notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		entry["devolucoes"] = []any{acqDevolucaoOf(second, "6.00", "DEVOLVIDO")}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "invalid_transition" {
			t.Fatalf("a failed refund reported returned: %+v", res)
		}
		m.unchanged(t, id, after)
	})
	t.Run("DEVOLVIDO completes an accepted MED dispute into INFRACTION", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		m.a.acqSandbox(t, m.tok, id, "med/open")
		m.a.acqSandbox(t, m.tok, id, "med/accept")
		entry := m.a.acqPix(txid, e2e)
		dev := acqDevolucao("DEVOLVIDO")
		dev["natureza"] = "MED_FRAUDE"
		entry["devolucoes"] = []any{dev}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "INFRACTION" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("EM_PROCESSAMENTO is in_progress and changes nothing", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		refund := m.a.acqRefund(t, m.tok, id, 0)
		before := m.a.acqGet(t, m.tok, id)
		entry := m.a.acqPix(txid, e2e)
		dev := acqDevolucaoOf(refund, "10.00", "EM_PROCESSAMENTO")
		delete(dev["horario"].(map[string]any), "liquidacao")
		entry["devolucoes"] = []any{dev}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "in_progress" || res[0].Status != "PROCESSING_REFUND" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
	})
	t.Run("a devolution of no refund is unknown_refund", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		before := m.a.acqGet(t, m.tok, id)
		entry := m.a.acqPix(txid, e2e)
		entry["devolucoes"] = []any{acqDevolucao("DEVOLVIDO")}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "unknown_refund" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
	})
	t.Run("the entries of one callback get one result each, in order", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		a, b := m.a.acqCreate(t, m.tok), m.a.acqCreate(t, m.tok)
		ea, eb := acqNewE2E(), acqNewE2E()
		res := m.notify(t, m.a.acqPix(acqTxID(t, a), ea), m.a.acqPix("unknown", acqNewE2E()), m.a.acqPix(acqTxID(t, b), eb),
			m.a.acqPix(acqTxID(t, a), ea), m.a.acqPix(acqTxID(t, b), ea))
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
		t.Parallel()
		m := newAcqMerchant(t)
		_, other := m.a.account()
		id := m.a.acqCreate(t, other)
		m.notify(t, m.a.acqPix(acqTxID(t, id), acqNewE2E()))
		if got := m.a.do("GET", "/balance", other, nil).json(t); got["available"] != float64(990) || got["blocked"] != float64(0) {
			t.Fatalf("balance %v, want 1000 less the fee of 10 available", got)
		}
	})
}

func TestAcquirerConcurrentDeliveriesOfOnePaymentPayOnce(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	id := a.acqCreate(t, tok)
	body, err := json.Marshal(map[string]any{"pix": []any{a.acqPix(acqTxID(t, id), acqE2E)}})
	must(t, err)
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
			req, err := http.NewRequest("POST", a.srv.URL+"/acquirer/pix", bytes.NewReader(body))
			if err != nil {
				answers[i].err = err
				return
			}
			req.Header.Set("Authorization", "Bearer "+acqSecret)
			req.Header.Set("Content-Type", "application/json")
			res, err := a.srv.Client().Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer res.Body.Close()
			raw, err := io.ReadAll(res.Body)
			if err != nil {
				answers[i].err = err
				return
			}
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
	for i, r := range answers {
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("delivery %d: status %d, %v", i, r.status, r.err)
		}
		switch r.outcome {
		case "applied":
			applied++
		case "already_applied":
		default:
			t.Fatalf("delivery %d: outcome %q", i, r.outcome)
		}
	}
	if applied != 1 {
		t.Fatalf("%d deliveries applied the payment, want exactly 1", applied)
	}
	acqHistory(t, a.acqGet(t, tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	if got := a.acqDeliveries(t, id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events, want 1", len(got))
	}
}

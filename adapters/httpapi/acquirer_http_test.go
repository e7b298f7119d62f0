package httpapi_test

// POST /acquirer/pix over HTTP with Banco Central's callback bodies (docs/API.md, Acquirer
// notifications): the shared secret, and what each outcome does to the charge, its refunds,
// its events and the merchant's balance. Every API here runs on a stopped clock that a test
// moves itself, and its sandbox settles at once. The callback's helpers are the shared ones
// (api_helpers_test.go); those only these tests need start with "acq". The body's tolerance
// is in acquirer_tolerance_http_test.go.

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

	"github.com/pixgate/pixgate/application"
)

// acqAPI is an API with the acquirer's callback on, a sandbox that settles at once (serve
// with PIXGATE_SANDBOX_SETTLE_SECONDS 0) and a clock stopped at 2026-11-22 14:19 UTC, which
// it returns.
func acqAPI(t *testing.T) (*api, *fakeClock) {
	t.Helper()
	c := newFakeClock(time.Date(2026, 11, 22, 14, 19, 32, 0, time.UTC))
	return newAPI(t, apiSettings{AcquirerSecret: acquirerSecret, SettleNow: true, Clock: c}), c
}

// acqDevolucaoOf is a devolution of refund id for amount (reais) with status.
func acqDevolucaoOf(id, valor, status string) map[string]any {
	return devolucao(map[string]any{"id": id, "valor": valor, "status": status})
}

// acqE2ECounter numbers the end-to-end ids of one test binary: an end-to-end id identifies one
// payment, once, so each payment of a test needs its own.
var acqE2ECounter atomic.Int64

// acqNewE2E is a fresh end-to-end id.
func acqNewE2E() string {
	return fmt.Sprintf("E00360305202611221419%011d", acqE2ECounter.Add(1))
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

// acqRefund asks for a refund of amount cents (0: all), as refundAccepted, and returns the
// refund's id, the devolution id callbacks name.
func (a *api) acqRefund(t *testing.T, tok, id string, amount int64) string {
	t.Helper()
	var body any
	if amount > 0 {
		body = map[string]any{"amount": amount}
	}
	refunds := a.refundAccepted(t, tok, id, body)["refunds"].([]any)
	return refunds[len(refunds)-1].(map[string]any)["id"].(string)
}

func TestAcquirerRouteExistsOnlyWithASecret(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{SettleNow: true})
	problem(t, a.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}, "Authorization", "Bearer "+acquirerSecret),
		http.StatusNotFound, "not_found")
}

func TestAcquirerAuthentication401(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, merchantToken := a.account()
	body := map[string]any{"pix": []any{}}
	for _, c := range []struct{ name, header string }{
		{"no Authorization header", ""},
		{"a wrong secret", "Bearer " + strings.Repeat("x", len(acquirerSecret))},
		{"the secret with one more character", "Bearer " + acquirerSecret + "x"},
		{"a prefix of the secret", "Bearer " + acquirerSecret[:31]},
		{"the secret in Basic", "Basic " + acquirerSecret},
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
			problem(t, r, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("the secret answers 200", func(t *testing.T) {
		t.Parallel()
		if res := a.acquirerNotify(t, body); len(res) != 0 {
			t.Fatalf("results = %v", res)
		}
	})
}

func TestAcquirerPaymentPaysTheTransaction(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	id := a.webhookCharge(t, tok)
	entry := a.pixPayment(pixTxID(t, id), acquirerE2E)
	res := a.acquirerNotify(t, map[string]any{"pix": []any{entry}})
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].EndToEndID != acquirerE2E || res[0].TxID != pixTxID(t, id) {
		t.Fatalf("results = %+v", res)
	}
	horario, err := time.Parse(time.RFC3339Nano, entry["horario"].(string))
	must(t, err)
	got := a.getTransaction(t, tok, id).json(t)
	statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	checks := []struct {
		what      string
		got, want any
	}{
		{"amountPaid is valor in cents", got["amountPaid"], float64(1000)},
		{"paymentDate is horario in UTC", got["paymentDate"], horario.UTC().Format("2006-01-02T15:04:05.000Z")},
		{"endToEnd is endToEndId", got["endToEnd"], acquirerE2E},
		{"feeAmount", got["feeAmount"], float64(10)},
		{"no payer: the callback names none", got["payer"], nil},
		{"the receiving account (sandbox)", got["receiver"].(map[string]any)["pix"], map[string]any{"key": "pix@pixgate.example", "type": "EMAIL"}},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if got := a.eventTypes(t, id, "transaction.paid"); len(got) != 1 {
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
	a.paidCharge(t, tok, 100_000) // refunds of a charge's whole amount need more than it left after its fee
	return acqMerchant{a: a, clock: c, tok: tok}
}

// notify posts a callback of entries and wants 200.
func (m acqMerchant) notify(t *testing.T, entries ...any) []acquirerResult {
	t.Helper()
	return m.a.acquirerNotify(t, map[string]any{"pix": entries})
}

// paid creates a charge and pays it through the callback.
func (m acqMerchant) paid(t *testing.T) (id, txid, e2e string) {
	t.Helper()
	id = m.a.webhookCharge(t, m.tok)
	txid, e2e = pixTxID(t, id), acqNewE2E()
	if res := m.notify(t, m.a.pixPayment(txid, e2e)); res[0].Outcome != "applied" {
		t.Fatalf("paying: %+v", res)
	}
	return id, txid, e2e
}

// unchanged wants the transaction id as before shows it.
func (m acqMerchant) unchanged(t *testing.T, id string, before response) {
	t.Helper()
	if after := m.a.getTransaction(t, m.tok, id); !bytes.Equal(after.body, before.body) {
		t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
	}
}

// balance is the merchant's [available, blocked, pending].
func (m acqMerchant) balance(t *testing.T) [3]int64 { return m.a.balance(t, m.tok) }

func TestAcquirerOutcomesOverHTTP(t *testing.T) {
	t.Parallel()
	t.Run("a repeated payment is already_applied and changes nothing", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id, txid, e2e := m.paid(t)
		before, money := m.a.getTransaction(t, m.tok, id), m.balance(t)
		res := m.notify(t, m.a.pixPayment(txid, e2e))
		if res[0].Outcome != "already_applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if n := len(m.a.eventTypes(t, id, "transaction.paid")); n != 1 {
			t.Fatalf("%d paid events", n)
		}
		if got := m.balance(t); got != money {
			t.Fatalf("the balance moved: %v -> %v", money, got)
		}
	})
	t.Run("an unknown txid is unknown_txid", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		missing := pixTxID(t, "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f")
		res := m.notify(t, m.a.pixPayment(missing, acqNewE2E()), m.a.pixPayment("txidOfSomeOtherGateway0001", acqNewE2E()))
		for _, r := range res {
			if r.Outcome != "unknown_txid" || r.Status != "" || r.Detail == "" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("another amount is amount_mismatch and does not pay", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id := m.a.webhookCharge(t, m.tok)
		before := m.a.getTransaction(t, m.tok, id)
		entry := m.a.pixPayment(pixTxID(t, id), acqNewE2E())
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
		other := m.a.webhookCharge(t, m.tok)
		before, money := m.a.getTransaction(t, m.tok, other), m.balance(t)
		res := m.notify(t, m.a.pixPayment(pixTxID(t, other), e2e))
		if res[0].Outcome != "duplicate_end_to_end" || res[0].Status != "PIX_QRCODE_GENERATED" || res[0].Detail == "" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, other, before)
		if got := m.balance(t); got != money {
			t.Fatalf("the balance moved: %v -> %v", money, got)
		}
		if !strings.Contains(m.a.log.String(), `"outcome":"duplicate_end_to_end"`) {
			t.Fatal("the duplicate was not logged for operations")
		}
	})
	t.Run("a payment of an expired charge is late_payment_refunded and the charge stays FAILED", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		id := m.a.acqCreateExpiring(t, m.tok)
		entry := m.a.pixPayment(pixTxID(t, id), acqNewE2E()) // paid in time; reported after the sweep
		m.clock.Advance(2 * time.Minute)
		if n := m.a.expire(); n != 1 {
			t.Fatalf("the sweeper failed %d charges, want this one", n)
		}
		before, money := m.a.getTransaction(t, m.tok, id), m.balance(t)
		res := m.notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "FAILED" || !strings.Contains(res[0].Detail, "FAILED") {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(t); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %v -> %v", money, got)
		}
		// The two steps below are the acquirer's, in this order.
		t.Run("the acquirer's retry changes nothing more", func(t *testing.T) {
			if again := m.notify(t, entry); again[0].Outcome != "late_payment_refunded" {
				t.Fatalf("%+v", again)
			}
			m.unchanged(t, id, before)
		})
		t.Run("its devolution is matched by the id pixgate asked it under", func(t *testing.T) {
			back := m.a.pixPayment(pixTxID(t, id), entry["endToEndId"].(string))
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
		before, money := m.a.getTransaction(t, m.tok, id), m.balance(t)
		entry := m.a.pixPayment(pixTxID(t, id), acqNewE2E())
		entry["horario"] = acquirerHorario(m.clock.Now().Add(2 * time.Minute)) // paid past expirationDate
		res := m.notify(t, entry)
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "expirationDate") {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(t); got != money {
			t.Fatalf("the money of a late payment is not the merchant's, yet the balance moved: %v -> %v", money, got)
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
		before, money := m.a.getTransaction(t, m.tok, id), m.balance(t)
		res := m.notify(t, m.a.pixPayment(txid, acqNewE2E()))
		if res[0].Outcome != "late_payment_refunded" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
		if got := m.balance(t); got != money {
			t.Fatalf("the balance moved: %v -> %v", money, got)
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
		entry := m.a.pixPayment(txid, e2e)
		entry["devolucoes"] = []any{acqDevolucaoOf(refund, "10.00", "DEVOLVIDO")}
		res := m.notify(t, entry)
		if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "applied" ||
			res[0].Devolucoes[0].ID != refund || res[0].Status != "REFUNDED" {
			t.Fatalf("%+v", res)
		}
		got := m.a.getTransaction(t, m.tok, id)
		tx := got.json(t)
		statusHistory(t, tx, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
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
		entry := m.a.pixPayment(txid, e2e)
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
		got := m.a.getTransaction(t, m.tok, id).json(t)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
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
		after := m.a.getTransaction(t, m.tok, id)
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
		m.a.sandboxStep(t, m.tok, id, "med/open")
		m.a.sandboxStep(t, m.tok, id, "med/accept")
		entry := m.a.pixPayment(txid, e2e)
		dev := devolucao(nil)
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
		before := m.a.getTransaction(t, m.tok, id)
		entry := m.a.pixPayment(txid, e2e)
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
		before := m.a.getTransaction(t, m.tok, id)
		entry := m.a.pixPayment(txid, e2e)
		entry["devolucoes"] = []any{devolucao(nil)}
		if res := m.notify(t, entry); res[0].Devolucoes[0].Outcome != "unknown_refund" {
			t.Fatalf("%+v", res)
		}
		m.unchanged(t, id, before)
	})
	t.Run("the entries of one callback get one result each, in order", func(t *testing.T) {
		t.Parallel()
		m := newAcqMerchant(t)
		a, b := m.a.webhookCharge(t, m.tok), m.a.webhookCharge(t, m.tok)
		ea, eb := acqNewE2E(), acqNewE2E()
		res := m.notify(t, m.a.pixPayment(pixTxID(t, a), ea), m.a.pixPayment("unknown", acqNewE2E()), m.a.pixPayment(pixTxID(t, b), eb),
			m.a.pixPayment(pixTxID(t, a), ea), m.a.pixPayment(pixTxID(t, b), ea))
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
		id := m.a.webhookCharge(t, other)
		m.notify(t, m.a.pixPayment(pixTxID(t, id), acqNewE2E()))
		if got := m.a.do("GET", "/balance", other, nil).json(t); got["available"] != float64(990) || got["blocked"] != float64(0) {
			t.Fatalf("balance %v, want 1000 less the fee of 10 available", got)
		}
	})
}

func TestAcquirerConcurrentDeliveriesOfOnePaymentPayOnce(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	id := a.webhookCharge(t, tok)
	body, err := json.Marshal(map[string]any{"pix": []any{a.pixPayment(pixTxID(t, id), acquirerE2E)}})
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
			req.Header.Set("Authorization", "Bearer "+acquirerSecret)
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
			var out struct{ Results []acquirerResult }
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
	statusHistory(t, a.getTransaction(t, tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	if got := a.eventTypes(t, id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events, want 1", len(got))
	}
}

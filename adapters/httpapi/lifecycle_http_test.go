package httpapi_test

// The lifecycle over HTTP: the sandbox walks transactions through every path of the state
// table (docs/API.md, States and transitions), and every illegal step answers 409 and changes
// nothing. Helpers here start with "lc".

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

var (
	lcPaymentE2E = regexp.MustCompile(`^E99999999\d{12}[A-Za-z0-9]{11}$`)
	lcRefundE2E  = regexp.MustCompile(`^D99999999\d{12}[A-Za-z0-9]{11}$`)
)

// lcStep posts a sandbox (or refund) route of a transaction and wants status.
func (a *api) lcStep(tok, id, route string, want int) response {
	a.t.Helper()
	path := "/sandbox/transaction/" + id + "/" + route
	if route == "refund" {
		path = "/transaction/" + id + "/refund"
	}
	r := a.do("POST", path, tok, nil)
	if r.status != want {
		a.t.Fatalf("POST %s: %d, want %d\n%s", path, r.status, want, r.body)
	}
	return r
}

// lcWalker is a funded account on an API whose sandbox settles at once, and the steps of a
// walk through the state table.
type lcWalker struct {
	a   *api
	tok string
}

func newLCWalker(t *testing.T, s apiSettings) lcWalker {
	t.Helper()
	s.SettleNow = true
	a := newAPI(t, s)
	_, tok := a.account()
	// 1000.00 paid, so that refunds find an available balance to hold (a refund of a charge's
	// whole amount needs more than the charge left after its fee).
	a.paidCharge(t, tok, 100_000)
	return lcWalker{a: a, tok: tok}
}

// step checks that the answer of a step is the transaction exactly as its GET shows it.
func (w lcWalker) step(t *testing.T, id, route string, want int) map[string]any {
	t.Helper()
	r := w.a.lcStep(w.tok, id, route, want)
	if g := w.a.getTransaction(t, w.tok, id); !bytes.Equal(r.body, g.body) {
		t.Fatalf("the %s answer differs from the GET after it:\n%s\n%s", route, r.body, g.body)
	}
	return r.json(t)
}

// settle runs the settle job, which must move the transaction, and returns it.
func (w lcWalker) settle(t *testing.T, id string) map[string]any {
	t.Helper()
	if n := w.a.settle(); n < 1 {
		t.Fatalf("the settle job moved %d transactions, want at least this one", n)
	}
	return w.a.getTransaction(t, w.tok, id).json(t)
}

func TestSandboxWalksEveryPathOfTheStateTable(t *testing.T) {
	t.Parallel()
	t.Run("PAID: the payment sets every field docs/API.md, States and transitions lists", func(t *testing.T) {
		t.Parallel()
		w := newLCWalker(t, apiSettings{})
		id := w.a.webhookCharge(t, w.tok)
		before := time.Now().UTC().Truncate(time.Millisecond)
		got := w.step(t, id, "pay", http.StatusOK)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
		paid, err := time.Parse(time.RFC3339, got["paymentDate"].(string))
		if err != nil || paid.Before(before) || paid.After(time.Now()) {
			t.Errorf("paymentDate = %v", got["paymentDate"])
		}
		e2e, _ := got["endToEnd"].(string)
		if !lcPaymentE2E.MatchString(e2e) {
			t.Errorf("endToEnd %q is not E + ISPB + yyyyMMddHHmm + 11 alphanumerics", e2e)
		}
		checks := []struct {
			what      string
			got, want any
		}{
			{"amountPaid", got["amountPaid"], float64(1000)},
			{"feeAmount (0.99% of 10.00)", got["feeAmount"], float64(10)},
			{"payer", got["payer"], map[string]any{"type": "PF", "name": "Pagador Sandbox", "document": "***.654.321-**",
				"bankAccount": map[string]any{"type": "TRAN", "digit": "0", "ispb": "99999999"},
				"pix":         map[string]any{"key": "***.654.321-**", "type": "CPF"}}},
			{"receiver", got["receiver"], map[string]any{"type": "PJ", "name": "PIXGATE SANDBOX", "document": "99.999.999/0001-91",
				"bankAccount": map[string]any{"type": "CACC", "digit": "1", "ispb": "99999999"},
				"pix":         map[string]any{"key": "pix@pixgate.example", "type": "EMAIL"}}},
			{"errorMessage", got["errorMessage"], nil},
			{"infractionDate", got["infractionDate"], nil},
		}
		for _, c := range checks {
			if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
				t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
			}
		}
		if _, ok := got["endToEndRefund"]; ok {
			t.Error("endToEndRefund must be left out before a refund")
		}
	})

	t.Run("REFUNDED: a refund settles by itself", func(t *testing.T) {
		t.Parallel()
		w := newLCWalker(t, apiSettings{})
		id := w.a.webhookCharge(t, w.tok)
		w.step(t, id, "pay", http.StatusOK)
		r := w.a.lcStep(w.tok, id, "refund", http.StatusAccepted)
		if r.json(t)["status"] != "PROCESSING_REFUND" {
			t.Fatalf("refund answered %s", r.body)
		}
		got := w.settle(t, id)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
		if e2e, _ := got["endToEndRefund"].(string); !lcRefundE2E.MatchString(e2e) {
			t.Errorf("endToEndRefund %q is not D + ISPB + yyyyMMddHHmm + 11 alphanumerics", e2e)
		}
		refunds, _ := got["refunds"].([]any)
		if len(refunds) != 1 || got["amountRefunded"] != float64(1000) {
			t.Fatalf("amountRefunded %v, refunds %v: want the one refund of the whole 1000", got["amountRefunded"], got["refunds"])
		}
		if r := refunds[0].(map[string]any); r["status"] != "REFUNDED" || r["amount"] != float64(1000) || r["endToEndRefund"] != got["endToEndRefund"] {
			t.Errorf("the refund %v", r)
		}
	})

	t.Run("PAID again: a refund that fails goes back to PAID with an errorMessage", func(t *testing.T) {
		t.Parallel()
		w := newLCWalker(t, apiSettings{})
		id := w.a.webhookCharge(t, w.tok)
		w.step(t, id, "pay", http.StatusOK)
		w.a.lcStep(w.tok, id, "refund", http.StatusAccepted)
		got := w.step(t, id, "refund/fail", http.StatusOK)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
		if msg, _ := got["errorMessage"].(string); msg == "" {
			t.Error("errorMessage is empty")
		}
		if r := got["refunds"].([]any)[0].(map[string]any); r["status"] != "FAILED" || r["errorMessage"] != got["errorMessage"] ||
			r["completedAt"] == nil || got["amountRefunded"] != float64(0) {
			t.Errorf("the failed refund %v, amountRefunded %v", r, got["amountRefunded"])
		}
		t.Run("and the refund can be asked again, which clears it", func(t *testing.T) {
			t.Parallel()
			r := w.a.lcStep(w.tok, id, "refund", http.StatusAccepted).json(t)
			if r["errorMessage"] != nil || r["status"] != "PROCESSING_REFUND" {
				t.Fatalf("status %v errorMessage %v", r["status"], r["errorMessage"])
			}
		})
	})

	t.Run("BLOCKED then PAID: a rejected dispute releases the funds", func(t *testing.T) {
		t.Parallel()
		w := newLCWalker(t, apiSettings{})
		id := w.a.webhookCharge(t, w.tok)
		w.step(t, id, "pay", http.StatusOK)
		blocked := w.step(t, id, "med/open", http.StatusOK)
		statusHistory(t, blocked, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED")
		if blocked["infractionDate"] != blocked["updatedAt"] {
			t.Errorf("infractionDate %v is not the time the dispute opened (%v)", blocked["infractionDate"], blocked["updatedAt"])
		}
		got := w.step(t, id, "med/reject", http.StatusOK)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PAID")
		if got["infractionDate"] != blocked["infractionDate"] {
			t.Errorf("infractionDate changed to %v", got["infractionDate"])
		}
	})

	t.Run("INFRACTION: an accepted dispute settles by itself", func(t *testing.T) {
		t.Parallel()
		w := newLCWalker(t, apiSettings{})
		id := w.a.webhookCharge(t, w.tok)
		w.step(t, id, "pay", http.StatusOK)
		w.step(t, id, "med/open", http.StatusOK)
		accepted := w.step(t, id, "med/accept", http.StatusOK)
		statusHistory(t, accepted, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PROCESSING_INFRACTION")
		got := w.settle(t, id)
		statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PROCESSING_INFRACTION", "INFRACTION")
		if e2e, _ := got["endToEndRefund"].(string); !lcRefundE2E.MatchString(e2e) {
			t.Errorf("endToEndRefund = %q", e2e)
		}
	})

	t.Run("FAILED: an unpaid charge expires", func(t *testing.T) {
		t.Parallel()
		clock := stoppedClock()
		w := newLCWalker(t, apiSettings{Clock: clock})
		body := minimalTransaction()
		body["pix"] = map[string]any{"expirationSeconds": 60}
		id := w.a.do("POST", "/transaction", w.tok, body).json(t)["id"].(string)
		clock.Advance(59 * time.Second)
		if n := w.a.expire(); n != 0 {
			t.Fatalf("expired %d transactions before their time", n)
		}
		clock.Advance(2 * time.Second)
		if n := w.a.expire(); n != 1 {
			t.Fatalf("expired %d transactions, want 1", n)
		}
		got := w.a.getTransaction(t, w.tok, id).json(t)
		durations := statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "FAILED")
		if durations[1] < 60_000 {
			t.Errorf("PIX_QRCODE_GENERATED lasted %d ms, want at least the 60 s of its QR code", durations[1])
		}
		if got["errorMessage"] != "PIX QR code expired" {
			t.Errorf("errorMessage = %v", got["errorMessage"])
		}
		w.a.lcStep(w.tok, id, "pay", http.StatusConflict)
	})
}

func TestSandboxRefundSettlesByItselfAfterTheDelay(t *testing.T) {
	t.Parallel()
	clock := stoppedClock()
	a := newAPI(t, apiSettings{Settle: time.Second, Clock: clock})
	_, tok := a.account()
	// 1000.00 paid, so that refunds find an available balance to hold (a refund of a charge's
	// whole amount needs more than the charge left after its fee).
	a.paidCharge(t, tok, 100_000)
	id := a.webhookCharge(t, tok)
	a.lcStep(tok, id, "pay", http.StatusOK)
	a.lcStep(tok, id, "refund", http.StatusAccepted)
	if n := a.settle(); n != 0 {
		t.Fatalf("the refund settled at once (%d), before its delay", n)
	}
	clock.Advance(999 * time.Millisecond)
	if n := a.settle(); n != 0 {
		t.Fatalf("the refund settled (%d) 1 ms before its delay", n)
	}
	clock.Advance(time.Millisecond)
	if n := a.settle(); n != 1 {
		t.Fatalf("the settle job moved %d transactions once the delay passed, want 1", n)
	}
	got := a.getTransaction(t, tok, id).json(t)
	durations := statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
	if durations[3] < 1000 {
		t.Fatalf("PROCESSING_REFUND lasted %d ms, want at least the settle delay", durations[3])
	}
}

func TestEveryIllegalTransitionAnswers409AndChangesNothing(t *testing.T) {
	t.Parallel()
	// The routes that move a transaction, and the one status each leaves.
	routes := map[string]string{
		"pay":         "PIX_QRCODE_GENERATED",
		"med/open":    "PAID",
		"med/accept":  "BLOCKED",
		"med/reject":  "BLOCKED",
		"refund/fail": "PROCESSING_REFUND",
		"refund":      "PAID",
	}
	reach := map[string][]string{
		"PIX_QRCODE_GENERATED":  nil,
		"PAID":                  {"pay"},
		"PROCESSING_REFUND":     {"pay", "refund"},
		"REFUNDED":              {"pay", "refund", "settle"},
		"BLOCKED":               {"pay", "med/open"},
		"PROCESSING_INFRACTION": {"pay", "med/open", "med/accept"},
		"INFRACTION":            {"pay", "med/open", "med/accept", "settle"},
		"FAILED":                {"expire"},
	}
	statuses := make([]string, 0, len(reach))
	for s := range reach {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	names := make([]string, 0, len(routes))
	for r := range routes {
		names = append(names, r)
	}
	slices.Sort(names)
	for _, status := range statuses {
		t.Run("from "+status, func(t *testing.T) {
			t.Parallel()
			clock := stoppedClock()
			w := newLCWalker(t, apiSettings{Clock: clock})
			a, tok := w.a, w.tok
			id := a.webhookCharge(t, tok)
			for _, s := range reach[status] {
				switch s {
				case "settle":
					a.settle()
				case "expire":
					clock.Advance(31 * time.Minute) // past the charge's 30 minutes, within its token's hour
					a.expire()
				case "refund":
					a.lcStep(tok, id, s, http.StatusAccepted)
				default:
					a.lcStep(tok, id, s, http.StatusOK)
				}
			}
			before := a.getTransaction(t, tok, id)
			if got := before.json(t)["status"]; got != status {
				t.Fatalf("reached %v, want %s", got, status)
			}
			t.Run("every other step", func(t *testing.T) {
				for _, route := range names {
					if routes[route] == status {
						continue
					}
					t.Run(route+" answers 409", func(t *testing.T) {
						t.Parallel()
						r := a.lcStep(tok, id, route, http.StatusConflict)
						problem(t, r, http.StatusConflict, "invalid_transition")
						if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, status) {
							t.Errorf("detail %q does not name the current status", d)
						}
						if after := a.getTransaction(t, tok, id); !bytes.Equal(after.body, before.body) {
							t.Fatalf("the refused step changed the transaction:\n%s\n%s", before.body, after.body)
						}
					})
				}
			})
			if n := len(a.eventTypes(t, id, "")); n != len(before.json(t)["statusHistory"].([]any))-1 {
				t.Errorf("%d events for %d statuses entered after PENDING", n, len(before.json(t)["statusHistory"].([]any))-1)
			}
		})
	}
}

func TestSandboxTransactionRoutesAnswer404422403And401(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	_, otherTok := a.account()
	_, readOnly := a.account(domain.ScopeTransactionRead)
	id := a.webhookCharge(t, tok)
	t.Run("every route", func(t *testing.T) {
		for _, route := range []string{"pay", "med/open", "med/accept", "med/reject", "refund/fail"} {
			t.Run(route, func(t *testing.T) {
				t.Parallel()
				path := func(id string) string { return "/sandbox/transaction/" + id + "/" + route }
				problem(t, a.do("POST", path(unknownID), tok, nil), http.StatusNotFound, "not_found")
				theirs := a.do("POST", path(id), otherTok, nil)
				problem(t, theirs, http.StatusNotFound, "not_found")
				missing := a.do("POST", path(unknownID), otherTok, nil)
				if x, y := problemBody(t, theirs), problemBody(t, missing); x != y {
					t.Fatalf("another account's id answers differently from an unknown one:\n%s\n%s", x, y)
				}
				if fields := problem(t, a.do("POST", path("not-a-uuid"), tok, nil), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"id invalid_format"}) {
					t.Fatal(fields)
				}
				problem(t, a.do("POST", path(id), readOnly, nil), http.StatusForbidden, "insufficient_scope")
				problem(t, a.do("POST", path(id), "", nil), http.StatusUnauthorized, "unauthorized")
				if fields := problem(t, a.do("POST", path(id), tok, `{"reason": "x"}`), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"reason unknown_field"}) {
					t.Fatal(fields)
				}
				problem(t, a.do("POST", path(id), tok, `[1]`), http.StatusUnprocessableEntity, "malformed_json")
			})
		}
	})
	if got := a.getTransaction(t, tok, id).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
		t.Fatalf("the refused requests moved the transaction to %v", got)
	}
}

func TestSandboxTransactionRoutesAnswer404OutsideTheSandbox(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{NoSandbox: true})
	_, tok := a.account()
	id := a.webhookCharge(t, tok)
	for _, route := range []string{"pay", "med/open", "med/accept", "med/reject", "refund/fail"} {
		t.Run(route, func(t *testing.T) {
			t.Parallel()
			problem(t, a.do("POST", "/sandbox/transaction/"+id+"/"+route, tok, nil), http.StatusNotFound, "not_found")
		})
	}
}

func lcPayer() map[string]any {
	return map[string]any{
		"type": "PF", "name": "Maria da Silva", "document": "529.982.247-25",
		"bankAccount": map[string]any{"type": "CACC", "digit": "7", "ispb": "00360305"},
		"pix":         map[string]any{"key": "maria@example.com.br", "type": "EMAIL"},
	}
}

func TestSandboxPayWithAPayer(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	pay := func(body any) response {
		return a.do("POST", "/sandbox/transaction/"+a.webhookCharge(t, tok)+"/pay", tok, body)
	}
	t.Run("200 recording a valid payer, shown masked", func(t *testing.T) {
		t.Parallel()
		r := pay(map[string]any{"payer": lcPayer()})
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		want := map[string]any{"type": "PF", "name": "Maria da Silva", "document": "***.982.247-**",
			"bankAccount": map[string]any{"type": "CACC", "digit": "7", "ispb": "00360305"},
			"pix":         map[string]any{"key": "maria@example.com.br", "type": "EMAIL"}}
		if got := r.json(t)["payer"]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("payer = %v", got)
		}
	})
	t.Run("200 paying with the sandbox payer for an empty object", func(t *testing.T) {
		t.Parallel()
		r := pay(map[string]any{})
		if r.status != http.StatusOK || r.json(t)["payer"].(map[string]any)["name"] != "Pagador Sandbox" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	with := func(mut func(p map[string]any)) map[string]any {
		p := lcPayer()
		mut(p)
		return map[string]any{"payer": p}
	}
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"a payer of unknown type", with(func(p map[string]any) { p["type"] = "PX" }), []string{"payer.type invalid_enum"}},
		{"an individual with a CNPJ", with(func(p map[string]any) { p["document"] = validCNPJ }), []string{"payer.document invalid_document"}},
		{"a legal entity with a CPF", with(func(p map[string]any) { p["type"] = "PJ" }), []string{"payer.document invalid_document"}},
		{"a document with bad check digits", with(func(p map[string]any) { p["document"] = "529.982.247-26" }), []string{"payer.document invalid_document"}},
		{"a name with markup", with(func(p map[string]any) { p["name"] = "<b>" }), []string{"payer.name invalid_format"}},
		{"an ISPB of 7 digits", with(func(p map[string]any) { p["bankAccount"].(map[string]any)["ispb"] = "0036030" }), []string{"payer.bankAccount.ispb invalid_format"}},
		{"an unknown account type", with(func(p map[string]any) { p["bankAccount"].(map[string]any)["type"] = "GOLD" }), []string{"payer.bankAccount.type invalid_enum"}},
		{"a digit that is a letter", with(func(p map[string]any) { p["bankAccount"].(map[string]any)["digit"] = "A" }), []string{"payer.bankAccount.digit invalid_format"}},
		{"a key that does not match its type", with(func(p map[string]any) { p["pix"].(map[string]any)["type"] = "CPF" }), []string{"payer.pix.key invalid_format"}},
		{"a key of unknown type", with(func(p map[string]any) { p["pix"].(map[string]any)["type"] = "IBAN" }), []string{"payer.pix.type invalid_enum"}},
		{"everything missing at once", map[string]any{"payer": map[string]any{}},
			[]string{"payer.bankAccount required", "payer.document required", "payer.name required", "payer.pix required", "payer.type required"}},
		{"an unknown field", with(func(p map[string]any) { p["cpf"] = "x" }), []string{"payer.cpf unknown_field"}},
		{"an unknown top-level field", map[string]any{"payer": lcPayer(), "amount": 1}, []string{"amount unknown_field"}},
		{"a payer that is a string", map[string]any{"payer": "Maria"}, []string{"payer invalid_type"}},
		{"an ISPB that is a number", with(func(p map[string]any) { p["bankAccount"].(map[string]any)["ispb"] = 360305 }), []string{"payer.bankAccount.ispb invalid_type"}},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422", func(t *testing.T) {
			t.Parallel()
			fields := problem(t, pay(c.body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, c.want) {
				t.Fatalf("errors = %v, want %v", fields, c.want)
			}
		})
	}
	t.Run("a body that is not JSON answers 422 malformed_json", func(t *testing.T) {
		t.Parallel()
		problem(t, pay(`{"payer": `), http.StatusUnprocessableEntity, "malformed_json")
	})
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The lifecycle over HTTP: the sandbox walks transactions through every path of the state
// table (docs/API.md, States and transitions), and every illegal step answers 409 and changes nothing. Helpers
// here start with "lc".

var (
	lcPaymentE2E = regexp.MustCompile(`^E99999999\d{12}[A-Za-z0-9]{11}$`)
	lcRefundE2E  = regexp.MustCompile(`^D99999999\d{12}[A-Za-z0-9]{11}$`)
)

// lcSettle runs the sandbox's settle job once, as `serve` runs it every 500 ms.
func (e *env) lcSettle() int {
	e.t.Helper()
	for _, j := range e.app.jobs {
		if j.name == sandboxRefundSettleJob {
			n, err := j.run(context.Background())
			if err != nil {
				e.t.Fatalf("settle job: %v", err)
			}
			return n
		}
	}
	e.t.Fatal("the sandbox settle job is not wired")
	return 0
}

// lcExpire runs the expiry sweeper as if it were at.
func (e *env) lcExpire(at time.Time) int {
	e.t.Helper()
	n, err := application.NewExpireTransactions(e.app.stores.transactions, &fakeClock{at: at}).RunOnce(context.Background())
	if err != nil {
		e.t.Fatalf("expiry sweeper: %v", err)
	}
	return n
}

// lcCreate creates a charge of 10.00 with a webhook and returns its id.
func (e *env) lcCreate(tok string) string {
	e.t.Helper()
	body := minimalTransaction()
	body["webhookUrl"] = "https://merchant.example.com/hooks"
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// lcFund pays a charge of 1000.00 for the account, so that refunds find an available balance
// to hold (a refund of a charge's whole amount needs more than the charge left after its fee).
func (e *env) lcFund(tok string) {
	e.t.Helper()
	body := minimalTransaction()
	body["amount"] = 100_000
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	e.lcStep(tok, r.json(e.t)["id"].(string), "pay", http.StatusOK)
}

// lcStep posts a sandbox (or refund) route of a transaction and wants status.
func (e *env) lcStep(tok, id, route string, want int) response {
	e.t.Helper()
	path := "/sandbox/transaction/" + id + "/" + route
	if route == "refund" {
		path = "/transaction/" + id + "/refund"
	}
	r := e.do("POST", path, tok, nil)
	if r.status != want {
		e.t.Fatalf("POST %s: %d, want %d\n%s", path, r.status, want, r.body)
	}
	return r
}

func (e *env) lcGet(tok, id string) response {
	e.t.Helper()
	r := e.do("GET", "/transaction/"+id, tok, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET: %d %s", r.status, r.body)
	}
	return r
}

// lcHistory checks the statusHistory of a transaction body: its statuses are want, each
// duration is the next entry's date minus its own, the last is null, updatedAt is the last
// date. It returns the durations in milliseconds.
func lcHistory(t *testing.T, got map[string]any, want ...string) []int64 {
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
	var durations []int64
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
		durations = append(durations, int64(ms))
	}
	if got["updatedAt"] != entries[len(entries)-1].(map[string]any)["date"] || got["status"] != want[len(want)-1] {
		t.Fatalf("status %v updatedAt %v do not match the last history entry", got["status"], got["updatedAt"])
	}
	return durations
}

func TestSandboxWalksEveryPathOfTheStateTable(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_SANDBOX_SETTLE_SECONDS": "0"})
	_, tok := e.account()
	e.lcFund(tok)

	// step checks that the 200 answer of a step is the transaction exactly as its GET shows it.
	step := func(t *testing.T, id, route string, want int) map[string]any {
		t.Helper()
		r := e.lcStep(tok, id, route, want)
		if g := e.lcGet(tok, id); !bytes.Equal(r.body, g.body) {
			t.Fatalf("the %s answer differs from the GET after it:\n%s\n%s", route, r.body, g.body)
		}
		return r.json(t)
	}
	settle := func(t *testing.T, id string) map[string]any {
		t.Helper()
		if n := e.lcSettle(); n < 1 {
			t.Fatalf("the settle job moved %d transactions, want at least this one", n)
		}
		return e.lcGet(tok, id).json(t)
	}

	t.Run("PAID: the payment sets every field docs/API.md, States and transitions lists", func(t *testing.T) {
		id := e.lcCreate(tok)
		before := time.Now().UTC().Truncate(time.Millisecond)
		got := step(t, id, "pay", http.StatusOK)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
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
		id := e.lcCreate(tok)
		step(t, id, "pay", http.StatusOK)
		r := e.lcStep(tok, id, "refund", http.StatusAccepted)
		if r.json(t)["status"] != "PROCESSING_REFUND" {
			t.Fatalf("refund answered %s", r.body)
		}
		got := settle(t, id)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
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
		id := e.lcCreate(tok)
		step(t, id, "pay", http.StatusOK)
		e.lcStep(tok, id, "refund", http.StatusAccepted)
		got := step(t, id, "refund/fail", http.StatusOK)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
		if msg, _ := got["errorMessage"].(string); msg == "" {
			t.Error("errorMessage is empty")
		}
		if r := got["refunds"].([]any)[0].(map[string]any); r["status"] != "FAILED" || r["errorMessage"] != got["errorMessage"] ||
			r["completedAt"] == nil || got["amountRefunded"] != float64(0) {
			t.Errorf("the failed refund %v, amountRefunded %v", r, got["amountRefunded"])
		}
		t.Run("and the refund can be asked again, which clears it", func(t *testing.T) {
			r := e.lcStep(tok, id, "refund", http.StatusAccepted).json(t)
			if r["errorMessage"] != nil || r["status"] != "PROCESSING_REFUND" {
				t.Fatalf("status %v errorMessage %v", r["status"], r["errorMessage"])
			}
		})
	})

	t.Run("BLOCKED then PAID: a rejected dispute releases the funds", func(t *testing.T) {
		id := e.lcCreate(tok)
		step(t, id, "pay", http.StatusOK)
		blocked := step(t, id, "med/open", http.StatusOK)
		lcHistory(t, blocked, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED")
		if blocked["infractionDate"] != blocked["updatedAt"] {
			t.Errorf("infractionDate %v is not the time the dispute opened (%v)", blocked["infractionDate"], blocked["updatedAt"])
		}
		got := step(t, id, "med/reject", http.StatusOK)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PAID")
		if got["infractionDate"] != blocked["infractionDate"] {
			t.Errorf("infractionDate changed to %v", got["infractionDate"])
		}
	})

	t.Run("INFRACTION: an accepted dispute settles by itself", func(t *testing.T) {
		id := e.lcCreate(tok)
		step(t, id, "pay", http.StatusOK)
		step(t, id, "med/open", http.StatusOK)
		accepted := step(t, id, "med/accept", http.StatusOK)
		lcHistory(t, accepted, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PROCESSING_INFRACTION")
		got := settle(t, id)
		lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PROCESSING_INFRACTION", "INFRACTION")
		if e2e, _ := got["endToEndRefund"].(string); !lcRefundE2E.MatchString(e2e) {
			t.Errorf("endToEndRefund = %q", e2e)
		}
	})

	t.Run("FAILED: an unpaid charge expires", func(t *testing.T) {
		body := minimalTransaction()
		body["pix"] = map[string]any{"expirationSeconds": 60}
		id := e.do("POST", "/transaction", tok, body).json(t)["id"].(string)
		if n := e.lcExpire(time.Now().Add(59 * time.Second)); n != 0 {
			t.Fatalf("expired %d transactions before their time", n)
		}
		if n := e.lcExpire(time.Now().Add(61 * time.Second)); n != 1 {
			t.Fatalf("expired %d transactions, want 1", n)
		}
		got := e.lcGet(tok, id).json(t)
		durations := lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "FAILED")
		if durations[1] < 60_000 {
			t.Errorf("PIX_QRCODE_GENERATED lasted %d ms, want at least the 60 s of its QR code", durations[1])
		}
		if got["errorMessage"] != "PIX QR code expired" {
			t.Errorf("errorMessage = %v", got["errorMessage"])
		}
		e.lcStep(tok, id, "pay", http.StatusConflict)
	})
}

func TestSandboxRefundSettlesByItselfAfterTheDelay(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_SANDBOX_SETTLE_SECONDS": "1"})
	_, tok := e.account()
	e.lcFund(tok)
	id := e.lcCreate(tok)
	e.lcStep(tok, id, "pay", http.StatusOK)
	e.lcStep(tok, id, "refund", http.StatusAccepted)
	if n := e.lcSettle(); n != 0 {
		t.Fatalf("the refund settled at once (%d), before its delay", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.lcSettle() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the refund did not settle within 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := e.lcGet(tok, id).json(t)
	durations := lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
	if durations[3] < 1000 {
		t.Fatalf("PROCESSING_REFUND lasted %d ms, want at least the settle delay", durations[3])
	}
}

func TestEveryIllegalTransitionAnswers409AndChangesNothing(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_SANDBOX_SETTLE_SECONDS": "0"})
	_, tok := e.account()
	e.lcFund(tok)
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
	for _, status := range statuses {
		t.Run("from "+status, func(t *testing.T) {
			id := e.lcCreate(tok)
			for _, s := range reach[status] {
				switch s {
				case "settle":
					e.lcSettle()
				case "expire":
					e.lcExpire(time.Now().Add(time.Hour))
				case "refund":
					e.lcStep(tok, id, s, http.StatusAccepted)
				default:
					e.lcStep(tok, id, s, http.StatusOK)
				}
			}
			before := e.lcGet(tok, id)
			if got := before.json(t)["status"]; got != status {
				t.Fatalf("reached %v, want %s", got, status)
			}
			names := make([]string, 0, len(routes))
			for r := range routes {
				names = append(names, r)
			}
			slices.Sort(names)
			for _, route := range names {
				if routes[route] == status {
					continue
				}
				t.Run(route+" answers 409", func(t *testing.T) {
					r := e.lcStep(tok, id, route, http.StatusConflict)
					problemOf(t, r, http.StatusConflict, "invalid_transition")
					if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, status) {
						t.Errorf("detail %q does not name the current status", d)
					}
					if after := e.lcGet(tok, id); !bytes.Equal(after.body, before.body) {
						t.Fatalf("the refused step changed the transaction:\n%s\n%s", before.body, after.body)
					}
				})
			}
			if n := len(e.lcDeliveries(id, "")); n != len(before.json(t)["statusHistory"].([]any))-1 {
				t.Errorf("%d events for %d statuses entered after PENDING", n, len(before.json(t)["statusHistory"].([]any))-1)
			}
		})
	}
}

// lcDeliveries lists the stored events of a transaction, of type typ ("" for all).
func (e *env) lcDeliveries(id, typ string) []string {
	e.t.Helper()
	tx, err := e.app.stores.transactions.Find(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	ds, err := e.app.stores.outbox.Deliveries(context.Background(), tx.AccountID(), domain.ResourceTransaction, id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		if typ == "" || d.Event.Type == typ {
			out = append(out, d.Event.Type)
		}
	}
	return out
}

func TestSandboxRoutesAnswer404422403And401(t *testing.T) {
	e := newEnv(t, nil)
	_, tok := e.account()
	_, otherTok := e.account()
	_, readOnly := e.account(domain.ScopeTransactionRead)
	id := e.lcCreate(tok)
	const unknown = "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f"
	for _, route := range []string{"pay", "med/open", "med/accept", "med/reject", "refund/fail"} {
		t.Run(route, func(t *testing.T) {
			path := func(id string) string { return "/sandbox/transaction/" + id + "/" + route }
			problemOf(t, e.do("POST", path(unknown), tok, nil), http.StatusNotFound, "not_found")
			theirs := e.do("POST", path(id), otherTok, nil)
			problemOf(t, theirs, http.StatusNotFound, "not_found")
			missing := e.do("POST", path(unknown), otherTok, nil)
			a, b := theirs.json(t), missing.json(t)
			for _, m := range []map[string]any{a, b} {
				delete(m, "requestId")
				delete(m, "instance")
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("another account's id answers differently from an unknown one:\n%v\n%v", a, b)
			}
			if fields := problemOf(t, e.do("POST", path("not-a-uuid"), tok, nil), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"id invalid_format"}) {
				t.Fatal(fields)
			}
			problemOf(t, e.do("POST", path(id), readOnly, nil), http.StatusForbidden, "insufficient_scope")
			problemOf(t, e.do("POST", path(id), "", nil), http.StatusUnauthorized, "unauthorized")
			if fields := problemOf(t, e.do("POST", path(id), tok, `{"reason": "x"}`), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"reason unknown_field"}) {
				t.Fatal(fields)
			}
			problemOf(t, e.do("POST", path(id), tok, `[1]`), http.StatusUnprocessableEntity, "malformed_json")
		})
	}
	if got := e.lcGet(tok, id).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
		t.Fatalf("the refused requests moved the transaction to %v", got)
	}
}

func TestSandboxRoutesDoNotExistOutsideTheSandbox(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	_, tok := e.account()
	id := e.lcCreate(tok)
	for _, route := range []string{"pay", "med/open", "med/accept", "med/reject", "refund/fail"} {
		problemOf(t, e.do("POST", "/sandbox/transaction/"+id+"/"+route, tok, nil), http.StatusNotFound, "not_found")
	}
	for _, j := range e.app.jobs {
		if j.name == sandboxRefundSettleJob {
			t.Fatal("the settle job runs outside the sandbox")
		}
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
	e := newEnv(t, nil)
	_, tok := e.account()
	pay := func(body any) response {
		return e.do("POST", "/sandbox/transaction/"+e.lcCreate(tok)+"/pay", tok, body)
	}
	t.Run("a valid payer is recorded and shown masked", func(t *testing.T) {
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
	t.Run("an empty object pays with the sandbox payer", func(t *testing.T) {
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
			fields := problemOf(t, pay(c.body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, c.want) {
				t.Fatalf("errors = %v, want %v", fields, c.want)
			}
		})
	}
	t.Run("a body that is not JSON answers 422 malformed_json", func(t *testing.T) {
		problemOf(t, pay(`{"payer": `), http.StatusUnprocessableEntity, "malformed_json")
	})
}

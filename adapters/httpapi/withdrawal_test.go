package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// Withdrawals and the balance over HTTP. The money of most tests here is feeSettings'
// (api_helpers_test.go): each paid charge costs chargeFee, each withdrawal withdrawalFee, and the
// sandbox settles payouts as soon as its job runs.

func TestMoneyWalksThroughTheBalance(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.wantBalance(t, "a new account", tok, 0, 0, 0)

	ta, tb, tc, td := a.charge(t, tok, 10_000), a.charge(t, tok, 20_000), a.charge(t, tok, 30_000), a.charge(t, tok, 5_000)
	a.wantBalance(t, "four charges, none paid", tok, 0, 0, 65_000)

	for _, id := range []string{ta, tb, tc} {
		a.sandboxStep(t, tok, id, "pay")
	}
	// Paid: 10000+20000+30000 less a fee of 100 each.
	a.wantBalance(t, "three paid", tok, 59_700, 0, 5_000)

	// The hold is the amount paid (30000), fee or no fee.
	a.sandboxStep(t, tok, tc, "med/open")
	a.wantBalance(t, "a MED dispute holds the amount paid", tok, 29_700, 30_000, 5_000)

	// Available 29700: a withdrawal of 29551 would take 29701 with its fee.
	problem(t, a.withdraw(tok, 29_700-withdrawalFee+1), http.StatusUnprocessableEntity, "insufficient_balance")
	problem(t, a.withdraw(tok, 29_700), http.StatusUnprocessableEntity, "insufficient_balance")
	a.wantBalance(t, "refused withdrawals change nothing", tok, 29_700, 30_000, 5_000)

	w1 := a.mustWithdraw(t, tok, 10_000)
	if w1["status"] != "PROCESSING" || w1["feeAmount"] != float64(withdrawalFee) {
		t.Fatalf("withdrawal %v, want PROCESSING with a fee of %d", w1, withdrawalFee)
	}
	a.wantBalance(t, "a withdrawal in progress holds its amount and fee", tok, 19_550, 30_000, 5_000)

	if n := a.payOut(); n != 1 {
		t.Fatalf("settled %d, want 1", n)
	}
	id1 := w1["id"].(string)
	got := a.do("GET", "/withdrawal/"+id1, tok, nil).json(t)
	if got["status"] != "PROCESSED" || got["amountWithdrawn"] != float64(10_000) {
		t.Fatalf("after settling: %v", got)
	}
	a.wantBalance(t, "a processed withdrawal keeps its money out", tok, 19_550, 30_000, 5_000)

	r := a.do("POST", "/sandbox/withdrawal/"+id1+"/refund", tok, nil)
	if r.status != http.StatusOK || r.json(t)["status"] != "REFUNDED" {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	a.wantBalance(t, "a refunded withdrawal gives its money back", tok, 29_700, 30_000, 5_000)

	w2 := a.mustWithdraw(t, tok, 29_700-withdrawalFee)
	a.wantBalance(t, "the whole available balance withdrawn", tok, 0, 30_000, 5_000)
	problem(t, a.withdraw(tok, 1), http.StatusUnprocessableEntity, "insufficient_balance")
	a.wantBalance(t, "one cent more is refused", tok, 0, 30_000, 5_000)

	a.sandboxStep(t, tok, tc, "med/reject")
	a.wantBalance(t, "a rejected dispute releases the money", tok, 30_000, 0, 5_000)

	r = a.do("POST", "/sandbox/withdrawal/"+w2["id"].(string)+"/fail", tok, nil)
	if r.status != http.StatusOK || r.json(t)["status"] != "FAILED" {
		t.Fatalf("fail: %d %s", r.status, r.body)
	}
	a.wantBalance(t, "a failed withdrawal gives its money back", tok, 59_700, 0, 5_000)

	w3 := a.mustWithdraw(t, tok, 700)
	r = a.do("POST", "/sandbox/withdrawal/"+w3["id"].(string)+"/reject", tok, nil)
	if r.status != http.StatusOK || r.json(t)["status"] != "REJECTED" {
		t.Fatalf("reject: %d %s", r.status, r.body)
	}
	a.wantBalance(t, "a rejected withdrawal gives its money back", tok, 59_700, 0, 5_000)

	a.sandboxStep(t, tok, td, "pay")
	a.wantBalance(t, "the last charge paid", tok, 64_600, 0, 0)
	a.sandboxStep(t, tok, tc, "med/open")
	a.sandboxStep(t, tok, tc, "med/accept")
	a.wantBalance(t, "an accepted dispute keeps the money blocked", tok, 34_600, 30_000, 0)
	if r := a.do("POST", "/transaction/"+tb+"/refund", tok, nil); r.status != http.StatusAccepted {
		t.Fatalf("refund of a paid transaction: %d %s", r.status, r.body)
	}
	a.wantBalance(t, "a refund in progress holds its amount (the amount paid)", tok, 14_600, 50_000, 0)
}

func TestCreateWithdrawal201ShowsTheWithdrawalAsItsGetDoes(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 50_000)

	body := map[string]any{
		"amount":       12_345,
		"pixKey":       map[string]any{"key": validCPF, "type": "CPF"},
		"externalCode": "payout-000123",
		"webhookUrl":   "https://merchant.example.com/hooks/payouts",
	}
	before := time.Now().UTC().Truncate(time.Millisecond)
	r := a.do("POST", "/withdrawal", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	created := r.json(t)
	id, _ := created["id"].(string)
	if !domain.IsUUIDv4(id) || strings.ToLower(id) != id || r.header.Get("Location") != "/withdrawal/"+id {
		t.Fatalf("id %q, Location %q", id, r.header.Get("Location"))
	}
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("a first creation is no replay")
	}
	want := []string{"acquirer", "amount", "createdAt", "errorMessage", "externalCode", "feeAmount", "id", "method",
		"payer", "pixKey", "receiver", "status", "statusHistory", "updatedAt", "webhookUrl"}
	if got := sortedKeys(created); !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	get := a.do("GET", "/withdrawal/"+id, tok, nil)
	if get.status != http.StatusOK || !bytes.Equal(get.body, r.body) {
		t.Fatalf("GET answers\n%s\nwhere POST answered\n%s", get.body, r.body)
	}

	history := created["statusHistory"].([]any)
	first, second := history[0].(map[string]any), history[1].(map[string]any)
	receiver := created["receiver"].(map[string]any)
	payer := created["payer"].(map[string]any)
	checks := []struct {
		what      string
		got, want any
	}{
		{"acquirer", created["acquirer"], "SANDBOX"},
		{"method", created["method"], "PIX"},
		{"amount", created["amount"], float64(12_345)},
		{"feeAmount", created["feeAmount"], float64(withdrawalFee)},
		{"status", created["status"], "PROCESSING"},
		{"errorMessage is null", created["errorMessage"], nil},
		{"the CPF key is masked", created["pixKey"], map[string]any{"key": "***.982.247-**", "type": "CPF"}},
		{"history length", len(history), 2},
		{"history starts PENDING", first["status"], "PENDING"},
		{"PENDING lasted no time", first["durationInMilliseconds"], float64(0)},
		{"then PROCESSING", second["status"], "PROCESSING"},
		{"the current status has a null duration", second["durationInMilliseconds"], nil},
		{"updatedAt is the last entry's date", created["updatedAt"], second["date"]},
		{"createdAt is the first entry's date", created["createdAt"], first["date"]},
		{"the receiver owns the CPF key", receiver["name"], "Sandbox Receiver"},
		{"the receiver is an individual", receiver["type"], "PF"},
		{"the receiver's CPF is masked", receiver["document"], "***.982.247-**"},
		{"the receiver's key is masked too", receiver["pix"], map[string]any{"key": "***.982.247-**", "type": "CPF"}},
		{"the payer is the gateway, a company", payer["type"], "PJ"},
		{"the payer's bank is the sandbox's", payer["bankAccount"].(map[string]any)["ispb"], domain.SandboxISPB},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if doc, _ := payer["document"].(string); !strings.Contains(doc, "/") {
		t.Errorf("payer document %q, want a full punctuated CNPJ", doc)
	}
	createdAt, err := time.Parse("2006-01-02T15:04:05.000Z", created["createdAt"].(string))
	if err != nil || createdAt.Before(before) || createdAt.After(time.Now()) {
		t.Errorf("createdAt %v (%v) is not now in RFC 3339 UTC with milliseconds", created["createdAt"], err)
	}

	a.payOut()
	done := a.do("GET", "/withdrawal/"+id, tok, nil).json(t)
	want = append(want, "amountWithdrawn", "endToEnd", "processedDate")
	slices.Sort(want)
	if got := sortedKeys(done); !slices.Equal(got, want) {
		t.Fatalf("processed fields %v, want %v", got, want)
	}
	e2e := done["endToEnd"].(string)
	if done["status"] != "PROCESSED" || done["amountWithdrawn"] != float64(12_345) || len(e2e) != 32 ||
		!strings.HasPrefix(e2e, "E"+domain.SandboxISPB) || done["processedDate"] != done["updatedAt"] {
		t.Fatalf("processed withdrawal %v", done)
	}
	if h := done["statusHistory"].([]any); len(h) != 3 || h[2].(map[string]any)["status"] != "PROCESSED" {
		t.Fatalf("history %v", h)
	}
}

func TestCreateWithdrawalWithEachKeyType(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 100_000)
	cases := []struct {
		name, typ, key string
		shown          string // the key as the response shows it
		receiverType   string
		receiverDoc    string
	}{
		{"a CPF key with punctuation is stored plain and shown masked", "CPF", validCPF, "***.982.247-**", "PF", "***.982.247-**"},
		{"a CNPJ key belongs to a company", "CNPJ", validCNPJ, "11222333000181", "PJ", "11.222.333/0001-81"},
		{"an e-mail key is lower-cased", "EMAIL", "Maria@Example.com", "maria@example.com", "PF", "***.982.247-**"},
		{"a phone key is +55 and 11 digits", "PHONE", "+5511987654321", "+5511987654321", "PF", "***.982.247-**"},
		{"a phone key is +55 and 10 digits", "PHONE", "+551134567890", "+551134567890", "PF", "***.982.247-**"},
		{"a random key is a lowercase UUID", "EVP", "123E4567-E89B-42D3-A456-426614174000", "123e4567-e89b-42d3-a456-426614174000", "PF", "***.982.247-**"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := a.do("POST", "/withdrawal", tok, map[string]any{"amount": 100, "pixKey": map[string]any{"key": c.key, "type": c.typ}})
			if r.status != http.StatusCreated {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			got := r.json(t)
			receiver := got["receiver"].(map[string]any)
			if fmt.Sprint(got["pixKey"]) != fmt.Sprint(map[string]any{"key": c.shown, "type": c.typ}) ||
				receiver["type"] != c.receiverType || receiver["document"] != c.receiverDoc {
				t.Fatalf("pixKey %v, receiver %v", got["pixKey"], receiver)
			}
		})
	}
}

func TestCreateWithdrawal422ChangesNothing(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 10_000)
	const available = 10_000 - chargeFee
	with := func(mut func(m map[string]any)) map[string]any {
		m := withdrawalRequest(1_000)
		m["externalCode"], m["webhookUrl"], m["idempotencyKey"] = "payout-0001", "https://merchant.example.com/hooks", "key-0000001"
		mut(m)
		return m
	}
	set := func(k string, v any) map[string]any { return with(func(m map[string]any) { m[k] = v }) }
	del := func(k string) map[string]any { return with(func(m map[string]any) { delete(m, k) }) }
	key := func(typ, key string) map[string]any {
		return set("pixKey", map[string]any{"key": key, "type": typ})
	}
	cases := []struct {
		name    string
		body    any
		headers []string
		want    []string
	}{
		{"a zero amount is out of range", set("amount", 0), nil, []string{"amount out_of_range"}},
		{"a negative amount is out of range", set("amount", -500), nil, []string{"amount out_of_range"}},
		{"an amount above the maximum is out of range", set("amount", 10_000_001), nil, []string{"amount out_of_range"}},
		{"a decimal amount is not an integer", set("amount", 10.5), nil, []string{"amount invalid_type"}},
		{"an amount as a string is the wrong type", set("amount", "1000"), nil, []string{"amount invalid_type"}},
		{"a missing amount is required", del("amount"), nil, []string{"amount required"}},
		{"a missing PIX key is required", del("pixKey"), nil, []string{"pixKey required"}},
		{"a PIX key that is no object is the wrong type", set("pixKey", "maria@example.com"), nil, []string{"pixKey invalid_type"}},
		{"a PIX key without its parts", set("pixKey", map[string]any{}), nil, []string{"pixKey.key required", "pixKey.type required"}},
		{"an unknown key type", key("RANDOM", "maria@example.com"), nil, []string{"pixKey.type invalid_enum"}},
		{"a lowercase key type", key("email", "maria@example.com"), nil, []string{"pixKey.type invalid_enum"}},
		{"a CPF key that is an e-mail", key("CPF", "maria@example.com"), nil, []string{"pixKey.key invalid_format"}},
		{"a CPF key with wrong check digits", key("CPF", "529.982.247-24"), nil, []string{"pixKey.key invalid_format"}},
		{"a CPF key that is a CNPJ", key("CPF", validCNPJ), nil, []string{"pixKey.key invalid_format"}},
		{"a CNPJ key that is a CPF", key("CNPJ", validCPF), nil, []string{"pixKey.key invalid_format"}},
		{"an e-mail key that is a CPF", key("EMAIL", "52998224725"), nil, []string{"pixKey.key invalid_format"}},
		{"a phone key without +55", key("PHONE", "11987654321"), nil, []string{"pixKey.key invalid_format"}},
		{"a phone key with punctuation", key("PHONE", "+55 (11) 98765-4321"), nil, []string{"pixKey.key invalid_format"}},
		{"a phone key with 9 digits", key("PHONE", "+55119876543"), nil, []string{"pixKey.key invalid_format"}},
		{"a random key that is no UUID", key("EVP", "not-a-uuid"), nil, []string{"pixKey.key invalid_format"}},
		{"an unknown field inside the key", set("pixKey", map[string]any{"key": "maria@example.com", "type": "EMAIL", "bank": "x"}), nil, []string{"pixKey.bank unknown_field"}},
		{"a short external code", set("externalCode", "abc"), nil, []string{"externalCode too_short"}},
		{"a long external code", set("externalCode", strings.Repeat("ã", 256)), nil, []string{"externalCode too_long"}},
		{"a plain-http webhook", set("webhookUrl", "http://merchant.example.com/hooks"), nil, []string{"webhookUrl invalid_format"}},
		{"a webhook on an IP address", set("webhookUrl", "https://203.0.113.7/hooks"), nil, []string{"webhookUrl invalid_format"}},
		{"a short idempotency key", set("idempotencyKey", "short"), nil, []string{"idempotencyKey too_short"}},
		{"an unknown field", set("paymentMethod", "PIX"), nil, []string{"paymentMethod unknown_field"}},
		{"keys in the body and the header that differ", with(func(map[string]any) {}), []string{"Idempotency-Key", "another-key-01"}, []string{"idempotencyKey invalid_format"}},
		{"a short key in the header", del("idempotencyKey"), []string{"Idempotency-Key", "short"}, []string{"Idempotency-Key too_short"}},
		{"every broken rule at once", map[string]any{"amount": 0, "pixKey": map[string]any{"key": "x", "type": "CPF"}, "externalCode": "a"},
			nil, []string{"amount out_of_range", "externalCode too_short", "pixKey.key invalid_format"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := problem(t, a.do("POST", "/withdrawal", tok, c.body, c.headers...), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(got, c.want) {
				t.Fatalf("errors %v, want %v", got, c.want)
			}
			a.wantBalance(t, c.name, tok, available, 0, 0)
		})
	}
	t.Run("a body that is not a JSON object is malformed", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"amount": 1000`, `[]`, `"x"`, ``} {
			problem(t, a.do("POST", "/withdrawal", tok, body), http.StatusUnprocessableEntity, "malformed_json")
		}
		a.wantBalance(t, "malformed bodies", tok, available, 0, 0)
	})
	t.Run("a body over 1 MiB is too large", func(t *testing.T) {
		t.Parallel()
		big := `{"externalCode": "` + strings.Repeat("a", 1<<20) + `"}`
		problem(t, a.do("POST", "/withdrawal", tok, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	})
}

func TestCreateWithdrawalIsIdempotent(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 50_000)
	const funds = 50_000 - chargeFee

	body := withdrawalRequest(1_000)
	body["idempotencyKey"] = "payout-key-0001"
	first := a.do("POST", "/withdrawal", tok, body)
	if first.status != http.StatusCreated {
		t.Fatalf("status %d: %s", first.status, first.body)
	}
	id := first.json(t)["id"].(string)
	a.payOut() // the withdrawal moves on; the replay still shows it as created
	if got := a.do("GET", "/withdrawal/"+id, tok, nil).json(t)["status"]; got != "PROCESSED" {
		t.Fatalf("the withdrawal is %v, want PROCESSED", got)
	}

	replays := []struct {
		name    string
		body    any
		headers []string
	}{
		{"the same body", body, nil},
		{"the same values in another key order and spacing", `{ "pixKey": {"type": "EMAIL", "key": "maria@example.com"},
			"idempotencyKey": "payout-key-0001", "amount": 1000 }`, nil},
		{"the key in the header instead", withdrawalRequest(1_000), []string{"Idempotency-Key", "payout-key-0001"}},
		{"the key in both places", body, []string{"Idempotency-Key", "payout-key-0001"}},
	}
	// The group ends when its parallel subtests do, before the balance is checked.
	t.Run("after the first request", func(t *testing.T) {
		for _, c := range replays {
			t.Run(c.name+" replays the original answer", func(t *testing.T) {
				t.Parallel()
				r := a.do("POST", "/withdrawal", tok, c.body, c.headers...)
				if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("status %d, Idempotent-Replayed %q: %s", r.status, r.header.Get("Idempotent-Replayed"), r.body)
				}
				if !bytes.Equal(r.body, first.body) || r.header.Get("Location") != "/withdrawal/"+id {
					t.Fatalf("replay\n%s\ndiffers from the original\n%s", r.body, first.body)
				}
			})
		}
		t.Run("the same key with another request is refused", func(t *testing.T) {
			t.Parallel()
			other := withdrawalRequest(2_000)
			other["idempotencyKey"] = "payout-key-0001"
			problem(t, a.do("POST", "/withdrawal", tok, other), http.StatusUnprocessableEntity, "idempotency_key_reused")
			problem(t, a.do("POST", "/withdrawal", tok, withdrawalRequest(2_000), "Idempotency-Key", "payout-key-0001"),
				http.StatusUnprocessableEntity, "idempotency_key_reused")
		})
		t.Run("a transaction's key is no withdrawal's", func(t *testing.T) {
			t.Parallel()
			tx := minimalTransaction()
			tx["idempotencyKey"] = "shared-key-0001"
			if r := a.do("POST", "/transaction", tok, tx); r.status != http.StatusCreated {
				t.Fatalf("transaction: %d %s", r.status, r.body)
			}
			w := withdrawalRequest(500)
			w["idempotencyKey"] = "shared-key-0001"
			if r := a.do("POST", "/withdrawal", tok, w); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("withdrawal: %d %s", r.status, r.body)
			}
		})
	})
	a.wantBalance(t, "one withdrawal of 1000 and one of 500", tok, funds-1_000-500-2*withdrawalFee, 0, 1_000)

	t.Run("concurrent requests with one key create one withdrawal", func(t *testing.T) {
		t.Parallel()
		race := withdrawalRequest(3_000)
		race["idempotencyKey"] = "payout-key-race"
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bodies [][]byte
		for range 10 {
			wg.Go(func() {
				r := a.do("POST", "/withdrawal", tok, race)
				mu.Lock()
				defer mu.Unlock()
				if r.status != http.StatusCreated {
					t.Errorf("status %d: %s", r.status, r.body)
				}
				bodies = append(bodies, r.body)
			})
		}
		wg.Wait()
		for _, b := range bodies[1:] {
			if !bytes.Equal(b, bodies[0]) {
				t.Fatalf("answers differ:\n%s\n%s", b, bodies[0])
			}
		}
		a.wantBalance(t, "one more withdrawal of 3000", tok, funds-1_000-500-3_000-3*withdrawalFee, 0, 1_000)
	})
}

func TestWithdrawalsOfAnotherAccountAreNotFound(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, owner := a.account()
	_, stranger := a.account()
	a.paidCharge(t, owner, 10_000)
	a.paidCharge(t, stranger, 10_000)
	id := a.mustWithdraw(t, owner, 1_000)["id"].(string)
	// The group ends when its parallel subtests do, before the owner's withdrawal is checked.
	t.Run("the stranger", func(t *testing.T) {
		for _, route := range []struct{ method, path string }{
			{"GET", "/withdrawal/%s"},
			{"POST", "/withdrawal/%s/cancel"},
			{"POST", "/sandbox/withdrawal/%s/fail"},
			{"POST", "/sandbox/withdrawal/%s/reject"},
			{"POST", "/sandbox/withdrawal/%s/refund"},
		} {
			t.Run(route.method+" "+route.path+" answers 404 like an unknown id", func(t *testing.T) {
				t.Parallel()
				theirs := a.do(route.method, fmt.Sprintf(route.path, id), stranger, nil)
				problem(t, theirs, http.StatusNotFound, "not_found")
				none := a.do(route.method, fmt.Sprintf(route.path, unknownID), stranger, nil)
				if problemBody(t, theirs) != problemBody(t, none) {
					t.Fatalf("another account's id answers\n%s\nan unknown id\n%s", theirs.body, none.body)
				}
			})
		}
	})
	if got := a.do("GET", "/withdrawal/"+id, owner, nil).json(t)["status"]; got != "PROCESSING" {
		t.Fatalf("the owner's withdrawal is %v, want untouched PROCESSING", got)
	}
	a.wantBalance(t, "the owner", owner, 10_000-chargeFee-1_000-withdrawalFee, 0, 0)
	a.wantBalance(t, "the stranger", stranger, 10_000-chargeFee, 0, 0)

	t.Run("a malformed id answers 422", func(t *testing.T) {
		t.Parallel()
		for _, rt := range []struct{ method, path string }{
			{"GET", "/withdrawal/not-a-uuid"},
			{"POST", "/withdrawal/not-a-uuid/cancel"},
			{"POST", "/sandbox/withdrawal/123/fail"},
		} {
			got := problem(t, a.do(rt.method, rt.path, owner, nil), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(got, []string{"id invalid_format"}) {
				t.Fatalf("%s %s: errors %v", rt.method, rt.path, got)
			}
		}
	})
	t.Run("an uppercase id names the same withdrawal", func(t *testing.T) {
		t.Parallel()
		if r := a.do("GET", "/withdrawal/"+strings.ToUpper(id), owner, nil); r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

func TestWithdrawalTransitionsRefusedAnswer409(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 100_000)
	processed := a.mustWithdraw(t, tok, 1_000)["id"].(string)
	a.payOut()
	// Created after the settle run, so they stay PROCESSING.
	failed := a.mustWithdraw(t, tok, 1_000)["id"].(string)
	processing2 := a.mustWithdraw(t, tok, 1_000)["id"].(string)
	if r := a.do("POST", "/sandbox/withdrawal/"+failed+"/fail", tok, nil); r.status != http.StatusOK {
		t.Fatalf("fail: %d %s", r.status, r.body)
	}
	before := a.balance(t, tok)

	cases := []struct {
		name, path string
	}{
		{"cancel of a processing withdrawal (the sandbox processes at once)", "/withdrawal/" + processing2 + "/cancel"},
		{"cancel of a processed withdrawal", "/withdrawal/" + processed + "/cancel"},
		{"refund of a processing withdrawal", "/sandbox/withdrawal/" + processing2 + "/refund"},
		{"fail of a processed withdrawal", "/sandbox/withdrawal/" + processed + "/fail"},
		{"reject of a processed withdrawal", "/sandbox/withdrawal/" + processed + "/reject"},
		{"fail of a failed withdrawal", "/sandbox/withdrawal/" + failed + "/fail"},
		{"refund of a failed withdrawal", "/sandbox/withdrawal/" + failed + "/refund"},
	}
	// The group ends when its parallel subtests do, before the balance is checked.
	t.Run("refused", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name+" answers 409", func(t *testing.T) {
				t.Parallel()
				problem(t, a.do("POST", c.path, tok, nil), http.StatusConflict, "invalid_transition")
			})
		}
	})
	if after := a.balance(t, tok); after != before {
		t.Fatalf("balance %v after refused transitions, was %v", after, before)
	}
	t.Run("an action takes no body", func(t *testing.T) {
		t.Parallel()
		got := problem(t, a.do("POST", "/sandbox/withdrawal/"+processing2+"/reject", tok, map[string]any{"reason": "x"}),
			http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(got, []string{"reason unknown_field"}) {
			t.Fatalf("errors %v", got)
		}
		r := a.do("POST", "/sandbox/withdrawal/"+processing2+"/reject", tok, map[string]any{})
		if r.status != http.StatusOK {
			t.Fatalf("an empty object: %d %s", r.status, r.body)
		}
		got2 := r.json(t)
		if got2["status"] != "REJECTED" || got2["errorMessage"] == nil {
			t.Fatalf("rejected withdrawal %v", got2)
		}
		if !bytes.Equal(a.do("GET", "/withdrawal/"+processing2, tok, nil).body, r.body) {
			t.Fatalf("the answer is not the withdrawal as its GET shows it")
		}
	})
}

func TestCancelWithdrawalOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{NoSandbox: true}))
	accountID, tok := a.account()
	// Without the sandbox, pay through the store as an acquirer's notification would.
	id := a.charge(t, tok, 10_000)
	_, err := a.store.Transactions().Update(context.Background(), accountID, id, func(t *domain.Transaction) error {
		now := time.Now()
		return t.Pay(domain.Payment{AmountPaid: t.Amount(), PaidAt: now, EndToEnd: domain.NewEndToEndID('E', domain.SandboxISPB, now), Fee: chargeFee}, now)
	})
	must(t, err)
	a.wantBalance(t, "one paid", tok, 10_000-chargeFee, 0, 0)

	w := a.mustWithdraw(t, tok, 2_000)
	wid := w["id"].(string)
	if w["status"] != "PENDING" || len(w["statusHistory"].([]any)) != 1 {
		t.Fatalf("withdrawal %v, want PENDING awaiting an acquirer", w)
	}
	if _, ok := w["payer"]; ok {
		t.Errorf("payer %v: without the sandbox no party of the payout is known yet", w["payer"])
	}
	if _, ok := w["receiver"]; ok {
		t.Errorf("receiver %v: without the sandbox no PIX directory resolves the key", w["receiver"])
	}
	a.wantBalance(t, "a pending withdrawal holds its money", tok, 10_000-chargeFee-2_000-withdrawalFee, 0, 0)

	r := a.do("POST", "/withdrawal/"+wid+"/cancel", tok, nil)
	if r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	got := r.json(t)
	if got["status"] != "CANCELED" || len(got["statusHistory"].([]any)) != 2 || !bytes.Equal(a.do("GET", "/withdrawal/"+wid, tok, nil).body, r.body) {
		t.Fatalf("canceled withdrawal %s", r.body)
	}
	a.wantBalance(t, "a canceled withdrawal gives its money back", tok, 10_000-chargeFee, 0, 0)
	problem(t, a.do("POST", "/withdrawal/"+wid+"/cancel", tok, nil), http.StatusConflict, "invalid_transition")

	// That no payout job runs without the sandbox is serve's wiring: cmd/pixgate checks it
	// (TestNoPayoutProviderLeavesWithdrawalsPendingAndCancelable).
	t.Run("the sandbox routes do not exist", func(t *testing.T) {
		t.Parallel()
		for _, step := range []string{"fail", "reject", "refund"} {
			problem(t, a.do("POST", "/sandbox/withdrawal/"+wid+"/"+step, tok, nil), http.StatusNotFound, "not_found")
		}
	})
}

func TestAuthenticationAndScopesOfWithdrawalRoutes(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, all := a.account()
	a.paidCharge(t, all, 10_000)
	id := a.mustWithdraw(t, all, 100)["id"].(string)
	_, readTx := a.account(domain.ScopeTransactionRead)
	_, readWd := a.account(domain.ScopeWithdrawalRead)
	_, writeWd := a.account(domain.ScopeWithdrawalWrite)
	_, readBalance := a.account(domain.ScopeBalanceRead)

	routes := []struct {
		method, path string
		body         any
		scope        string
		granted      string
	}{
		{"POST", "/withdrawal", withdrawalRequest(100), "withdrawal:write", writeWd},
		{"GET", "/withdrawal/" + id, nil, "withdrawal:read", readWd},
		{"POST", "/withdrawal/" + id + "/cancel", nil, "withdrawal:write", writeWd},
		{"GET", "/balance", nil, "balance:read", readBalance},
		{"GET", "/balance/entries", nil, "balance:read", readBalance},
		{"POST", "/sandbox/withdrawal/" + id + "/fail", nil, "withdrawal:write", writeWd},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			t.Parallel()
			r := a.do(rt.method, rt.path, "", rt.body)
			problem(t, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			problem(t, a.do(rt.method, rt.path, "not-a-token", rt.body), http.StatusUnauthorized, "unauthorized")
			for _, tok := range []string{readTx, readWd, writeWd, readBalance} {
				if tok == rt.granted {
					continue
				}
				problem(t, a.do(rt.method, rt.path, tok, rt.body), http.StatusForbidden, "insufficient_scope")
			}
			// With the scope, the route is reached (another account's id: 404; no money: 422).
			if r := a.do(rt.method, rt.path, rt.granted, rt.body); r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
				t.Fatalf("with %s: %d %s", rt.scope, r.status, r.body)
			}
		})
	}
	t.Run("GET /balance takes no parameters", func(t *testing.T) {
		t.Parallel()
		got := problem(t, a.do("GET", "/balance?account=x", all, nil), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(got, []string{"account unknown_field"}) {
			t.Fatalf("errors %v", got)
		}
	})
}

func TestConcurrentWithdrawalsNeverOverdrawTheBalance(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	for range 3 {
		a.paidCharge(t, tok, 30_100)
	}
	const funds = 3 * 30_000
	a.wantBalance(t, "funded", tok, funds, 0, 0)

	third := int64(funds / 3)
	affordable := funds / (third + withdrawalFee) // 2: with the fee, a third of the balance fits twice
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	stop := make(chan struct{})
	watcher := make(chan error, 1)
	go func() {
		// Meanwhile the balance never goes below zero.
		defer close(watcher)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := a.do("GET", "/balance", tok, nil)
			if r.status != http.StatusOK {
				watcher <- fmt.Errorf("GET /balance: %d", r.status)
				return
			}
			if a := r.json(t)["available"].(float64); a < 0 {
				watcher <- fmt.Errorf("available went to %v", a)
				return
			}
		}
	}()
	for range 20 {
		wg.Go(func() {
			r := a.withdraw(tok, third)
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case http.StatusCreated:
				created++
			case http.StatusUnprocessableEntity:
				if !strings.Contains(string(r.body), `"insufficient_balance"`) {
					t.Errorf("422 %s", r.body)
				}
				refused++
			default:
				t.Errorf("status %d: %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-watcher; err != nil {
		t.Fatal(err)
	}
	if created != int(affordable) || refused != 20-int(affordable) {
		t.Fatalf("%d created and %d refused, want %d and %d", created, refused, affordable, 20-affordable)
	}
	a.wantBalance(t, "after the race", tok, funds-affordable*(third+withdrawalFee), 0, 0)
}

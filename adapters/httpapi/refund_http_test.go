package httpapi_test

// POST /transaction/{id}/refund over HTTP: full and partial refunds, their validation, the
// balance they need and their idempotency. The money is feeSettings' (api_helpers_test.go): a
// payment costs a fee of 100 cents, a withdrawal 150, and the sandbox settles refunds when its
// job runs. Helpers here start with "rf".

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

var rfRefundID = regexp.MustCompile(`^[A-Za-z0-9]{1,35}$`)

// rfRefunds reads the refunds of a transaction body.
func rfRefunds(t *testing.T, tx map[string]any) []map[string]any {
	t.Helper()
	list, ok := tx["refunds"].([]any)
	if !ok {
		t.Fatalf("refunds %v is not a list", tx["refunds"])
	}
	out := make([]map[string]any, len(list))
	for i, r := range list {
		out[i] = r.(map[string]any)
	}
	return out
}

func TestPartialRefundsThenAFullRefund(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 10_000) // the other sale's money covers the fee this one cost
	id := a.paidCharge(t, tok, 10_000)
	a.wantBalance(t, "two sales", tok, 19_800, 0, 0)

	before := time.Now().UTC().Truncate(time.Millisecond)
	got := a.refundAccepted(t, tok, id, map[string]any{"amount": 2_500, "reason": "one item returned"})
	statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND")
	refunds := rfRefunds(t, got)
	if len(refunds) != 1 || got["amountRefunded"] != float64(0) {
		t.Fatalf("refunds %v amountRefunded %v", refunds, got["amountRefunded"])
	}
	r := refunds[0]
	if !rfRefundID.MatchString(fmt.Sprint(r["id"])) {
		t.Errorf("refund id %v is not 1 to 35 letters and digits", r["id"])
	}
	for k, want := range map[string]any{"amount": float64(2_500), "reason": "one item returned", "status": "PROCESSING",
		"endToEndRefund": nil, "errorMessage": nil, "completedAt": nil} {
		if v, present := r[k]; !present || v != want {
			t.Errorf("refund %s = %v (present %v), want %v", k, v, present, want)
		}
	}
	if at, err := time.Parse("2006-01-02T15:04:05.000Z", fmt.Sprint(r["createdAt"])); err != nil || at.Before(before) {
		t.Errorf("refund createdAt = %v", r["createdAt"])
	}
	if want := []string{"amount", "completedAt", "createdAt", "endToEndRefund", "errorMessage", "id", "reason", "status"}; !slices.Equal(sortedKeys(r), want) {
		t.Errorf("refund fields %v, want %v", sortedKeys(r), want)
	}
	a.wantBalance(t, "a refund in progress holds its amount", tok, 17_300, 2_500, 0)

	// Not parallel: it asks while this refund is in progress.
	t.Run("409 for a second refund while one is in progress", func(t *testing.T) {
		problem(t, a.refund(tok, id, map[string]any{"amount": 100}), http.StatusConflict, "invalid_transition")
	})

	a.settle()
	got = a.getTransaction(t, tok, id).json(t)
	statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID")
	r = rfRefunds(t, got)[0]
	if r["status"] != "REFUNDED" || !lcRefundE2E.MatchString(fmt.Sprint(r["endToEndRefund"])) || r["completedAt"] == nil ||
		got["amountRefunded"] != float64(2_500) || got["endToEndRefund"] != r["endToEndRefund"] {
		t.Fatalf("after the first refund completed: amountRefunded %v endToEndRefund %v refund %v", got["amountRefunded"], got["endToEndRefund"], r)
	}
	a.wantBalance(t, "the first refund left", tok, 17_300, 0, 0)

	got = a.refundAccepted(t, tok, id, map[string]any{"amount": 3_000})
	if refunds := rfRefunds(t, got); len(refunds) != 2 || refunds[1]["reason"] != nil || refunds[1]["amount"] != float64(3_000) {
		t.Fatalf("refunds %v", refunds)
	}
	a.settle()
	a.wantBalance(t, "the second refund left", tok, 14_300, 0, 0)

	// Not parallel: it asks before the last refund.
	t.Run("422 naming amount and what is left for more than what is left to refund", func(t *testing.T) {
		r := a.refund(tok, id, map[string]any{"amount": 4_501})
		if fields := problem(t, r, http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"amount out_of_range"}) {
			t.Fatalf("errors %v", fields)
		}
		if !strings.Contains(string(r.body), "4500") {
			t.Fatalf("the message does not name the 4500 still refundable: %s", r.body)
		}
	})

	got = a.refundAccepted(t, tok, id, nil)
	if refunds := rfRefunds(t, got); len(refunds) != 3 || refunds[2]["amount"] != float64(4_500) {
		t.Fatalf("no body refunds what is left (4500): %v", refunds)
	}
	a.settle()
	got = a.getTransaction(t, tok, id).json(t)
	statusHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID", "PROCESSING_REFUND", "PAID",
		"PROCESSING_REFUND", "REFUNDED")
	if got["amountRefunded"] != float64(10_000) {
		t.Fatalf("amountRefunded = %v", got["amountRefunded"])
	}
	var amounts []any
	for _, r := range rfRefunds(t, got) {
		amounts = append(amounts, r["amount"], r["status"])
	}
	if want := []any{float64(2_500), "REFUNDED", float64(3_000), "REFUNDED", float64(4_500), "REFUNDED"}; fmt.Sprint(amounts) != fmt.Sprint(want) {
		t.Fatalf("refunds, oldest first: %v, want %v", amounts, want)
	}
	a.wantBalance(t, "everything refunded", tok, 9_800, 0, 0)
	problem(t, a.refund(tok, id, nil), http.StatusConflict, "invalid_transition")

	t.Run("the list shows the refunds as the lookup does", func(t *testing.T) {
		t.Parallel()
		list := a.do("GET", "/transaction?id="+id, tok, nil).json(t)["data"].([]any)
		if fmt.Sprint(list[0].(map[string]any)["refunds"]) != fmt.Sprint(got["refunds"]) {
			t.Fatalf("list %v\nlookup %v", list[0].(map[string]any)["refunds"], got["refunds"])
		}
	})
}

func TestRefundAmountsOfEveryWrongKindAnswer422NamingAmount(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 50_000)
	id := a.paidCharge(t, tok, 10_000)
	before, money := a.getTransaction(t, tok, id), a.balance(t, tok)
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"an amount of 0", `{"amount": 0}`, []string{"amount out_of_range"}},
		{"a negative amount", `{"amount": -1}`, []string{"amount out_of_range"}},
		{"a decimal amount", `{"amount": 1.5}`, []string{"amount invalid_type"}},
		{"an amount of 100.0", `{"amount": 100.0}`, []string{"amount invalid_type"}},
		{"an amount in exponent form", `{"amount": 1e3}`, []string{"amount invalid_type"}},
		{"an amount as a string", `{"amount": "100"}`, []string{"amount invalid_type"}},
		{"an amount that is a boolean", `{"amount": true}`, []string{"amount invalid_type"}},
		{"an amount above 10000000", `{"amount": 10000001}`, []string{"amount out_of_range"}},
		{"an amount above what was paid", `{"amount": 10001}`, []string{"amount out_of_range"}},
		{"an empty reason", `{"reason": ""}`, []string{"reason too_short"}},
		{"a reason of 141 characters", `{"reason": "` + strings.Repeat("é", 141) + `"}`, []string{"reason too_long"}},
		{"a reason that is a number", `{"reason": 1}`, []string{"reason invalid_type"}},
		{"an idempotency key of 7 characters", `{"idempotencyKey": "1234567"}`, []string{"idempotencyKey too_short"}},
		{"an unknown field", `{"amount": 100, "status": "REFUNDED"}`, []string{"status unknown_field"}},
		{"every broken field at once", `{"amount": 0, "reason": "", "endToEnd": "x"}`,
			[]string{"amount out_of_range", "endToEnd unknown_field", "reason too_short"}},
	}
	t.Run("refused", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name+" answers 422", func(t *testing.T) {
				t.Parallel()
				fields := problem(t, a.refund(tok, id, c.body), http.StatusUnprocessableEntity, "validation_failed")
				if !slices.Equal(fields, c.want) {
					t.Fatalf("errors %v, want %v", fields, c.want)
				}
			})
		}
		for _, body := range []string{`[1]`, `{"amount": 100,`, `"x"`, `{"amount": 100} {}`} {
			t.Run(fmt.Sprintf("%q answers 422 malformed_json", body), func(t *testing.T) {
				t.Parallel()
				problem(t, a.refund(tok, id, body), http.StatusUnprocessableEntity, "malformed_json")
			})
		}
	})
	t.Run("202 for a reason of 140 characters and an amount of all that was paid", func(t *testing.T) {
		got := a.refundAccepted(t, tok, id, map[string]any{"amount": 10_000, "reason": strings.Repeat("é", 140)})
		if r := rfRefunds(t, got)[0]; r["amount"] != float64(10_000) {
			t.Fatalf("refund %v", r)
		}
	})
	t.Run("the refused requests changed nothing", func(t *testing.T) {
		t.Parallel()
		after := a.getTransaction(t, tok, id).json(t)
		if n := len(rfRefunds(t, after)); n != 1 {
			t.Fatalf("%d refunds recorded, want only the accepted one", n)
		}
		if money != [3]int64{59_800, 0, 0} || len(before.json(t)["refunds"].([]any)) != 0 {
			t.Fatalf("the balance before was %v", money)
		}
		a.wantBalance(t, "one refund of 10000 held", tok, 49_800, 10_000, 0)
	})
}

func TestRefund404ForAnotherAccountsOrAnUnknownTransaction(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, owner := a.account()
	_, stranger := a.account()
	a.paidCharge(t, stranger, 100_000)
	id := a.paidCharge(t, owner, 10_000)
	before := a.getTransaction(t, owner, id)
	theirs := a.refund(stranger, id, map[string]any{"amount": 100})
	problem(t, theirs, http.StatusNotFound, "not_found")
	unknown := a.refund(stranger, unknownID, map[string]any{"amount": 100})
	problem(t, unknown, http.StatusNotFound, "not_found")
	if x, y := problemBody(t, theirs), problemBody(t, unknown); x != y {
		t.Fatalf("another account's id answers\n%s\nan unknown one\n%s", x, y)
	}
	// Not parallel: the transaction is compared after it.
	t.Run("even with an idempotency key", func(t *testing.T) {
		problem(t, a.refund(stranger, id, nil, "Idempotency-Key", "stranger-key-01"), http.StatusNotFound, "not_found")
	})
	if fields := problem(t, a.refund(owner, "not-a-uuid", nil), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, []string{"id invalid_format"}) {
		t.Fatalf("errors %v", fields)
	}
	_, readOnly := a.account(domain.ScopeTransactionRead, domain.ScopeBalanceRead)
	problem(t, a.refund(readOnly, id, nil), http.StatusForbidden, "insufficient_scope")
	problem(t, a.refund("", id, nil), http.StatusUnauthorized, "unauthorized")
	if after := a.getTransaction(t, owner, id); !bytes.Equal(after.body, before.body) {
		t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
	}
}

func TestRefundWithoutTheBalanceAnswers422AndChangesNothing(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	id := a.paidCharge(t, tok, 10_000)
	a.mustWithdraw(t, tok, 5_000)
	a.wantBalance(t, "a sale less a withdrawal", tok, 4_750, 0, 0)

	before := a.getTransaction(t, tok, id)
	statement := a.do("GET", "/balance/entries", tok, nil)
	for _, body := range []any{nil, map[string]any{"amount": 4_751}} {
		r := a.refund(tok, id, body)
		problem(t, r, http.StatusUnprocessableEntity, "insufficient_balance")
		if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, "refund") {
			t.Errorf("the detail speaks of withdrawals only: %q", d)
		}
	}
	a.wantBalance(t, "refused refunds", tok, 4_750, 0, 0)
	if after := a.getTransaction(t, tok, id); !bytes.Equal(after.body, before.body) {
		t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
	}
	if after := a.do("GET", "/balance/entries", tok, nil); !bytes.Equal(after.body, statement.body) {
		t.Fatalf("the statement changed:\n%s\n%s", statement.body, after.body)
	}

	t.Run("202 for a refund of exactly the available balance", func(t *testing.T) {
		t.Parallel()
		a.refundAccepted(t, tok, id, map[string]any{"amount": 4_750})
		a.wantBalance(t, "all available held", tok, 0, 4_750, 0)
		a.sandboxStep(t, tok, id, "refund/fail")
		a.wantBalance(t, "a failed refund gives the money back", tok, 4_750, 0, 0)
	})
}

func TestWhileAMEDHoldMakesTheBalanceNegativeRefundsAndWithdrawalsAnswer422(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	x, y := a.paidCharge(t, tok, 10_000), a.paidCharge(t, tok, 10_000)
	a.mustWithdraw(t, tok, 19_000)
	a.wantBalance(t, "two sales, almost all withdrawn", tok, 650, 0, 0)

	a.sandboxStep(t, tok, x, "med/open")
	a.wantBalance(t, "the dispute's hold is taken in full", tok, -9_350, 10_000, 0)
	before := a.getTransaction(t, tok, y)
	problem(t, a.refund(tok, y, map[string]any{"amount": 1}), http.StatusUnprocessableEntity, "insufficient_balance")
	problem(t, a.withdraw(tok, 1), http.StatusUnprocessableEntity, "insufficient_balance")
	a.wantBalance(t, "nothing moved", tok, -9_350, 10_000, 0)
	if after := a.getTransaction(t, tok, y); !bytes.Equal(after.body, before.body) {
		t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
	}

	a.sandboxStep(t, tok, x, "med/reject")
	a.wantBalance(t, "the dispute released", tok, 650, 0, 0)
	a.refundAccepted(t, tok, y, map[string]any{"amount": 500})
	a.wantBalance(t, "a refund the balance covers", tok, 150, 500, 0)
}

func TestRefundIdempotency(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	a.paidCharge(t, tok, 100_000)
	id := a.paidCharge(t, tok, 10_000)
	body := map[string]any{"amount": 1_000, "reason": "damaged"}

	first := a.refund(tok, id, body, "Idempotency-Key", "refund-key-0001")
	if first.status != http.StatusAccepted || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("%d %v %s", first.status, first.header, first.body)
	}
	replay := func(t *testing.T, what string, r response) {
		t.Helper()
		if r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: %d %v %s", what, r.status, r.header, r.body)
		}
		if !bytes.Equal(r.body, first.body) {
			t.Fatalf("%s answered another body:\n%s\n%s", what, r.body, first.body)
		}
	}
	replay(t, "the same request", a.refund(tok, id, body, "Idempotency-Key", "refund-key-0001"))
	inBody := map[string]any{"reason": "damaged", "idempotencyKey": "refund-key-0001", "amount": 1_000}
	replay(t, "the key in the body", a.refund(tok, id, inBody))

	a.settle()
	if got := a.getTransaction(t, tok, id).json(t); got["status"] != "PAID" || got["amountRefunded"] != float64(1_000) {
		t.Fatalf("the refund did not complete: %v %v", got["status"], got["amountRefunded"])
	}
	replay(t, "the same request after the refund completed", a.refund(tok, id, body, "Idempotency-Key", "refund-key-0001"))

	t.Run("422 idempotency_key_reused for the key with another body", func(t *testing.T) {
		t.Parallel()
		for _, other := range []any{map[string]any{"amount": 2_000, "reason": "damaged"}, map[string]any{"amount": 1_000}, nil} {
			problem(t, a.refund(tok, id, other, "Idempotency-Key", "refund-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
		}
	})
	t.Run("202 for another key: another refund", func(t *testing.T) {
		t.Parallel()
		got := a.refundAccepted(t, tok, id, body, "Idempotency-Key", "refund-key-0002")
		if n := len(rfRefunds(t, got)); n != 2 {
			t.Fatalf("%d refunds", n)
		}
		a.settle()
		replay(t, "the first key after a second refund", a.refund(tok, id, body, "Idempotency-Key", "refund-key-0001"))
	})
	t.Run("422 naming the header for a key of 7 characters in the header", func(t *testing.T) {
		t.Parallel()
		fields := problem(t, a.refund(tok, id, body, "Idempotency-Key", "1234567"), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{"Idempotency-Key too_short"}) {
			t.Fatalf("errors %v", fields)
		}
	})
	t.Run("concurrent requests with one key make one refund and answer one body", func(t *testing.T) {
		t.Parallel()
		other := a.paidCharge(t, tok, 10_000)
		const n = 20
		answers := make([]response, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				answers[i] = a.refund(tok, other, map[string]any{"amount": 700}, "Idempotency-Key", "racing-key-0001")
			})
		}
		close(start)
		wg.Wait()
		for i, r := range answers {
			if r.status != http.StatusAccepted || !bytes.Equal(r.body, answers[0].body) {
				t.Fatalf("request %d: %d %s\nwant the body\n%s", i, r.status, r.body, answers[0].body)
			}
		}
		if got := rfRefunds(t, a.getTransaction(t, tok, other).json(t)); len(got) != 1 {
			t.Fatalf("%d refunds for one key", len(got))
		}
	})
}

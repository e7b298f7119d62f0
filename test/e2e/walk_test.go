package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestMerchantWalksThePublicAPIOnMongoDB drives pixgate's public API over HTTP, pixgate in its
// container and its store on the database container: a token, charges, payments through the
// sandbox, the list with filters, lookups, a refund settled by the sandbox, a MED dispute, and
// the money walk of issue 9 (the available balance withdrawn exactly, one cent more refused, a
// processed withdrawal refunded gives the money back), with the balance checked at each step.
func TestMerchantWalksThePublicAPIOnMongoDB(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)
	code := func(name string) string { return fmt.Sprintf("walk-%s-%s", runTag, name) }

	p.wantBalance("a new account", 0, 0, 0)
	a := p.charge(10_000, code("a"))
	b := p.charge(20_000, code("b"))
	c := p.charge(30_000, code("c"))
	d := p.charge(5_000, code("d"))
	ids := map[string]string{"a": a["id"].(string), "b": b["id"].(string), "c": c["id"].(string), "d": d["id"].(string)}
	p.wantBalance("four charges, none paid", 0, 0, 65_000)

	got := p.want(http.StatusOK, "GET", "/transaction/"+ids["a"], nil).object(t)
	if got["status"] != "PIX_QRCODE_GENERATED" || got["externalCode"] != code("a") || cents(got["amount"]) != 10_000 {
		t.Fatalf("lookup of a: %v", got)
	}
	if cust, _ := got["customer"].(map[string]any); cust == nil || fmt.Sprint(cust["document"]) != "map[type:CPF value:***.982.247-**]" {
		t.Fatalf("lookup of a shows the customer %v, want the CPF masked", got["customer"])
	}

	for _, name := range []string{"a", "b", "c"} {
		if paid := p.sandbox("transaction", ids[name], "pay"); paid["status"] != "PAID" || cents(paid["amountPaid"]) == 0 || paid["endToEnd"] == nil {
			t.Fatalf("pay %s: %v", name, paid)
		}
	}
	p.wantBalance("three paid, less a fee of 100 each", 59_700, 0, 5_000)

	t.Run("the list filters on MongoDB", func(t *testing.T) {
		p := p.on(t)
		if total, found := list(p, url.Values{"externalCode": {code("b")}}); total != 1 || len(found) != 1 || found[0] != ids["b"] {
			t.Errorf("externalCode filter: %d %v, want b only", total, found)
		}
		if total, found := list(p, url.Values{"status": {"PAID"}, "customerDocument": {"52998224725"}, "perPage": {"2"}}); total != 3 || len(found) != 2 {
			t.Errorf("PAID by document, 2 a page: total %d, page %v; want 3 and 2", total, found)
		}
		// Newest first: c was created after b and a.
		if _, found := list(p, url.Values{"status": {"PAID"}}); len(found) != 3 || found[0] != ids["c"] || found[2] != ids["a"] {
			t.Errorf("PAID in order %v, want c, b, a", found)
		}
		if total, found := list(p, url.Values{"minAmount": {"20000"}, "maxAmount": {"30000"}}); total != 2 {
			t.Errorf("amounts 20000 to 30000: %d %v, want b and c", total, found)
		}
		if total, _ := list(p, url.Values{"status": {"PIX_QRCODE_GENERATED"}}); total != 1 {
			t.Errorf("awaiting payment: %d, want d only", total)
		}
	})

	refunding := p.want(http.StatusAccepted, "POST", "/transaction/"+ids["b"]+"/refund", nil).object(t)
	if refunding["status"] != "PROCESSING_REFUND" {
		t.Fatalf("refund of b: %v", refunding)
	}
	p.wantBalance("a refund in progress blocks its amount", 39_700, 20_000, 5_000)
	refunded := p.waitStatus("/transaction/"+ids["b"], "REFUNDED", 30*time.Second)
	if refunded["endToEndRefund"] == nil {
		t.Fatalf("refunded b without endToEndRefund: %v", refunded)
	}
	p.waitBalance("a refund completed takes its amount; the fee stays charged", 39_700, 0, 5_000, 5*time.Second)
	if total, found := list(p, url.Values{"status": {"REFUNDED"}}); total != 1 || found[0] != ids["b"] {
		t.Fatalf("REFUNDED: %d %v, want b", total, found)
	}

	if blocked := p.sandbox("transaction", ids["c"], "med/open"); blocked["status"] != "BLOCKED" || blocked["infractionDate"] == nil {
		t.Fatalf("MED on c: %v", blocked)
	}
	p.wantBalance("a MED dispute blocks the amount paid for c", 9_700, 30_000, 5_000)

	// Available 9700: a withdrawal of 9551 takes 9701 with its fee.
	over := p.do("POST", "/withdrawal", withdrawalBody(9_700-wdFee+1))
	if over.status != http.StatusUnprocessableEntity || over.problem() != "insufficient_balance" {
		t.Fatalf("withdrawal over the balance: %s, want 422 insufficient_balance", over)
	}
	p.wantBalance("a refused withdrawal changes nothing", 9_700, 30_000, 5_000)

	w1 := p.want(http.StatusCreated, "POST", "/withdrawal", withdrawalBody(5_000)).object(t)
	w1ID := w1["id"].(string)
	if w1["status"] != "PROCESSING" || cents(w1["feeAmount"]) != wdFee {
		t.Fatalf("withdrawal w1: %v", w1)
	}
	p.wantBalance("a withdrawal in progress holds its amount and fee", 4_550, 30_000, 5_000)
	processed := p.waitStatus("/withdrawal/"+w1ID, "PROCESSED", 30*time.Second)
	if cents(processed["amountWithdrawn"]) != 5_000 || processed["endToEnd"] == nil {
		t.Fatalf("processed w1: %v", processed)
	}
	p.wantBalance("a processed withdrawal keeps its money out", 4_550, 30_000, 5_000)
	if back := p.sandbox("withdrawal", w1ID, "refund"); back["status"] != "REFUNDED" {
		t.Fatalf("refund of w1: %v", back)
	}
	p.wantBalance("a refunded withdrawal gives its money back", 9_700, 30_000, 5_000)

	w2 := p.want(http.StatusCreated, "POST", "/withdrawal", withdrawalBody(9_700-wdFee)).object(t)
	p.wantBalance("the whole available balance withdrawn", 0, 30_000, 5_000)
	oneCent := p.do("POST", "/withdrawal", withdrawalBody(1))
	if oneCent.status != http.StatusUnprocessableEntity || oneCent.problem() != "insufficient_balance" {
		t.Fatalf("one cent more: %s, want 422 insufficient_balance", oneCent)
	}
	p.wantBalance("one cent more is refused", 0, 30_000, 5_000)
	if lookup := p.want(http.StatusOK, "GET", "/withdrawal/"+w2["id"].(string), nil).object(t); cents(lookup["amount"]) != 9_700-wdFee {
		t.Fatalf("lookup of w2: %v", lookup)
	}

	if released := p.sandbox("transaction", ids["c"], "med/reject"); released["status"] != "PAID" {
		t.Fatalf("MED rejected on c: %v", released)
	}
	p.wantBalance("a rejected dispute releases c", 30_000, 0, 5_000)
	p.sandbox("transaction", ids["d"], "pay")
	p.waitStatus("/withdrawal/"+w2["id"].(string), "PROCESSED", 30*time.Second)
	p.wantBalance("the last charge paid", 34_900, 0, 0)

	// Every transaction is there once, in its final status.
	if total, _ := list(p, url.Values{"perPage": {"100"}}); total != 4 {
		t.Fatalf("%d transactions listed, want 4", total)
	}
}

// list is GET /transaction?query: the total and the ids of the page.
func list(p *pixgate, query url.Values) (total int, ids []string) {
	p.t.Helper()
	m := p.want(http.StatusOK, "GET", "/transaction?"+query.Encode(), nil).object(p.t)
	for _, item := range m["data"].([]any) {
		ids = append(ids, item.(map[string]any)["id"].(string))
	}
	return int(cents(m["total"])), ids
}

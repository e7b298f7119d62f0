package httpapi_test

// GET /transaction over HTTP: filters, paging, order, and every parameter it refuses. Helpers
// here start with "ls".

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// lsIDs lists with query and returns the ids in the answer's order, and the paging figures.
func (a *api) lsIDs(t *testing.T, token, query string) ([]string, map[string]any) {
	t.Helper()
	r := a.do("GET", "/transaction?"+query, token, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /transaction?%s: %d %s", query, r.status, r.body)
	}
	page := r.json(t)
	var ids []string
	for _, d := range page["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids, page
}

func TestListTransactionsFiltersPagingAndOrder(t *testing.T) {
	t.Parallel()
	clock := stoppedClock()
	a := newAPI(t, apiSettings{Clock: clock})
	_, tok := a.account()
	_, otherTok := a.account()

	// Three customers, three amounts; created in order, so the list shows them newest first.
	var ids []string
	customers := []map[string]any{
		{"name": "Maria da Silva", "email": "Maria@Example.com", "document": validCPF, "mobilePhone": "+55 11 91234-5678"},
		{"name": "José Pereira", "email": "jose@example.com", "document": "12.ABC.345/01DE-35", "landline": "(31) 3333-4444"},
		{"name": "Ana Souza", "email": "ana@example.com", "document": validCNPJ},
	}
	for i, c := range customers {
		body := minimalTransaction()
		body["amount"] = 1000 * (i + 1)
		body["customer"] = c
		body["externalCode"] = fmt.Sprintf("order-%05d", i)
		r := a.do("POST", "/transaction", tok, body)
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		ids = append(ids, r.json(t)["id"].(string))
		clock.Advance(2 * time.Millisecond) // distinct createdAt, at millisecond precision
	}
	// Another account's transaction never shows.
	a.do("POST", "/transaction", otherTok, minimalTransaction())
	newestFirst := []string{ids[2], ids[1], ids[0]}

	now := clock.Now()
	cases := []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"no filter lists every transaction of the account, newest first", url.Values{}, newestFirst},
		{"status matches any of the values", url.Values{"status": {"PAID", "PIX_QRCODE_GENERATED"}}, newestFirst},
		{"a status nobody has matches nothing", url.Values{"status": {"REFUNDED"}}, nil},
		{"paymentMethod PIX", url.Values{"paymentMethod": {"PIX"}}, newestFirst},
		{"customerEmail is exact and case-insensitive", url.Values{"customerEmail": {"maria@example.COM"}}, []string{ids[0]}},
		{"customerEmail does not match a part", url.Values{"customerEmail": {"aria@example.com"}}, nil},
		{"customerName is a case-insensitive substring", url.Values{"customerName": {"pereira"}}, []string{ids[1]}},
		{"customerDocument matches a punctuated CPF", url.Values{"customerDocument": {"52998224725"}}, []string{ids[0]}},
		{"customerDocument matches an alphanumeric CNPJ", url.Values{"customerDocument": {"12ABC34501DE35"}}, []string{ids[1]}},
		{"customerPhone matches the mobile's digits", url.Values{"customerPhone": {"(11) 91234-5678"}}, []string{ids[0]}},
		{"customerPhone matches the landline's digits", url.Values{"customerPhone": {"+553133334444"}}, []string{ids[1]}},
		{"id is exact", url.Values{"id": {ids[1]}}, []string{ids[1]}},
		{"externalCode is exact", url.Values{"externalCode": {"order-00002"}}, []string{ids[2]}},
		{"endToEnd matches nothing before payment", url.Values{"endToEnd": {"E9999999920261123"}}, nil},
		{"minAmount is inclusive", url.Values{"minAmount": {"2000"}}, []string{ids[2], ids[1]}},
		{"maxAmount is inclusive", url.Values{"maxAmount": {"2000"}}, []string{ids[1], ids[0]}},
		{"amount bounds combine", url.Values{"minAmount": {"2000"}, "maxAmount": {"2000"}}, []string{ids[1]}},
		{"dates are inclusive and take offsets", url.Values{"startDate": {now.Add(-time.Hour).Format(time.RFC3339)}, "endDate": {now.Add(time.Hour).In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339)}}, newestFirst},
		{"a window in the past matches nothing", url.Values{"endDate": {now.Add(-time.Hour).Format(time.RFC3339)}}, nil},
		{"filters combine with AND", url.Values{"customerName": {"a"}, "maxAmount": {"1000"}}, []string{ids[0]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, page := a.lsIDs(t, tok, c.query.Encode())
			if !slices.Equal(got, c.want) {
				t.Fatalf("ids = %v, want %v", got, c.want)
			}
			if page["total"] != float64(len(c.want)) {
				t.Fatalf("total = %v, want %d", page["total"], len(c.want))
			}
		})
	}

	t.Run("paging splits the list and counts pages", func(t *testing.T) {
		t.Parallel()
		p1, page := a.lsIDs(t, tok, "perPage=2")
		p2, page2 := a.lsIDs(t, tok, "perPage=2&page=2")
		if !slices.Equal(append(p1, p2...), newestFirst) {
			t.Fatalf("pages %v + %v, want %v", p1, p2, newestFirst)
		}
		if page["totalPages"] != float64(2) || page["perPage"] != float64(2) || page["currentPage"] != float64(1) || page2["currentPage"] != float64(2) {
			t.Fatalf("paging = %v / %v", page, page2)
		}
	})
	t.Run("a page past the end is empty with the right totals", func(t *testing.T) {
		t.Parallel()
		got, page := a.lsIDs(t, tok, "page=9")
		if len(got) != 0 || page["total"] != float64(3) || page["totalPages"] != float64(1) {
			t.Fatalf("page = %v", page)
		}
		if fmt.Sprint(page["data"]) != "[]" {
			t.Fatalf("data = %v, want []", page["data"])
		}
	})
	t.Run("the default page size is 20", func(t *testing.T) {
		t.Parallel()
		_, page := a.lsIDs(t, tok, "")
		if page["perPage"] != float64(20) {
			t.Fatalf("perPage = %v", page["perPage"])
		}
	})
}

func TestListTransactions422(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	cases := []struct{ name, query, want string }{
		{"an unknown parameter", "per_page=10", "per_page unknown_field"},
		{"page 0", "page=0", "page out_of_range"},
		{"page as a word", "page=two", "page invalid_type"},
		{"perPage 101", "perPage=101", "perPage out_of_range"},
		{"perPage 0", "perPage=0", "perPage out_of_range"},
		{"a date without a time", "startDate=2026-01-01", "startDate invalid_format"},
		{"a date-time without an offset", "endDate=2026-01-01T10:00:00", "endDate invalid_format"},
		{"startDate after endDate", "startDate=2026-01-02T00:00:00Z&endDate=2026-01-01T00:00:00Z", "startDate out_of_range"},
		{"an unknown status", "status=DONE", "status invalid_enum"},
		{"an empty status", "status=", "status invalid_enum"},
		{"a repeated status", "status=PAID&status=PAID", "status duplicate_value"},
		{"an unknown payment method", "paymentMethod=CARD", "paymentMethod invalid_enum"},
		{"an invalid e-mail", "customerEmail=nobody", "customerEmail invalid_format"},
		{"a name with markup", "customerName=%3Cb%3E", "customerName invalid_format"},
		{"an invalid document", "customerDocument=123", "customerDocument invalid_document"},
		{"an id that is not a UUID v4", "id=7b0e8a52-3c8e-1f0e-9d2a-2f3b4c5d6e7f", "id invalid_format"},
		{"an endToEnd of 7 characters", "endToEnd=E123456", "endToEnd too_short"},
		{"an endToEndRefund of 256 characters", "endToEndRefund=" + strings.Repeat("x", 256), "endToEndRefund too_long"},
		{"an externalCode of 7 characters", "externalCode=1234567", "externalCode too_short"},
		{"minAmount 0", "minAmount=0", "minAmount out_of_range"},
		{"maxAmount decimal", "maxAmount=10.5", "maxAmount invalid_type"},
		{"minAmount above maxAmount", "minAmount=500&maxAmount=100", "minAmount out_of_range"},
		{"a single-valued parameter given twice", "externalCode=abcdefgh&externalCode=abcdefgi", "externalCode duplicate_value"},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 "+c.want, func(t *testing.T) {
			t.Parallel()
			fields := problem(t, a.do("GET", "/transaction?"+c.query, tok, nil), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{c.want}) {
				t.Fatalf("errors = %v, want [%s]", fields, c.want)
			}
		})
	}
	t.Run("several broken parameters are reported together", func(t *testing.T) {
		t.Parallel()
		fields := problem(t, a.do("GET", "/transaction?page=0&perPage=500&status=NOPE&foo=1", tok, nil), http.StatusUnprocessableEntity, "validation_failed")
		want := []string{"foo unknown_field", "page out_of_range", "perPage out_of_range", "status invalid_enum"}
		if !slices.Equal(fields, want) {
			t.Fatalf("errors = %v, want %v", fields, want)
		}
	})
}

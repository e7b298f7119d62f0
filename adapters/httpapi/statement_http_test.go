package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// GET /balance/entries over HTTP: the ledger's statement, its paging, filters and CSV export.
// The money is feeSettings' (a payment's fee is 100 cents, a withdrawal's 150). Helpers here
// start with "st".

// stEntry is one statement line as the JSON answer shows it.
type stEntry struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	CreatedAt    string `json:"createdAt"`
	ResourceType string `json:"resourceType"`
	ResourceID   string `json:"resourceId"`
	Available    int64  `json:"available"`
	Blocked      int64  `json:"blocked"`
	BalanceAfter struct {
		Available int64 `json:"available"`
		Blocked   int64 `json:"blocked"`
	} `json:"balanceAfter"`
}

func (s stEntry) String() string {
	return fmt.Sprintf("%s %s %+d/%+d -> %d/%d", s.Type, s.ResourceType, s.Available, s.Blocked, s.BalanceAfter.Available, s.BalanceAfter.Blocked)
}

// stPage gets one page of the statement (query without the leading '?') and decodes it
// strictly: any field the document does not list fails the test.
func (a *api) stPage(t *testing.T, tok, query string) ([]stEntry, *string) {
	t.Helper()
	r := a.do("GET", "/balance/entries?"+query, tok, nil)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /balance/entries?%s: %d %s %s", query, r.status, r.header.Get("Content-Type"), r.body)
	}
	var page struct {
		Data       []stEntry `json:"data"`
		NextCursor *string   `json:"nextCursor"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&page); err != nil || page.Data == nil || !bytes.Contains(r.body, []byte(`"nextCursor":`)) {
		t.Fatalf("statement %s: %v", r.body, err)
	}
	return page.Data, page.NextCursor
}

// stAll follows the cursors of query from its first page to its last.
func (a *api) stAll(t *testing.T, tok, query string, limit int) []stEntry {
	t.Helper()
	var out []stEntry
	q := query + "&limit=" + strconv.Itoa(limit)
	for pages := 0; ; pages++ {
		page, next := a.stPage(t, tok, q)
		if len(page) > limit {
			t.Fatalf("a page of %d entries, limit %d", len(page), limit)
		}
		out = append(out, page...)
		if next == nil {
			return out
		}
		if pages > 10_000 {
			t.Fatal("the cursors never end")
		}
		q = query + "&limit=" + strconv.Itoa(limit) + "&cursor=" + url.QueryEscape(*next)
	}
}

func stDescribe(entries []stEntry) []string {
	out := make([]string, len(entries))
	for i, en := range entries {
		out[i] = en.String()
	}
	return out
}

func TestStatementShowsEveryMovementNewestFirst(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	if page, next := a.stPage(t, tok, ""); len(page) != 0 || next != nil {
		t.Fatalf("a new account's statement: %v %v", page, next)
	}

	sale := a.paidCharge(t, tok, 10_000)
	a.refundAccepted(t, tok, sale, map[string]any{"amount": 2_500})
	a.settle()
	a.refundAccepted(t, tok, sale, map[string]any{"amount": 1_000})
	a.sandboxStep(t, tok, sale, "refund/fail")
	b := a.paidCharge(t, tok, 5_000)
	a.sandboxStep(t, tok, b, "med/open")
	a.sandboxStep(t, tok, b, "med/reject")
	a.sandboxStep(t, tok, b, "med/open")
	a.sandboxStep(t, tok, b, "med/accept")
	a.settle()
	w := a.mustWithdraw(t, tok, 1_000)["id"].(string)
	if r := a.do("POST", "/sandbox/withdrawal/"+w+"/fail", tok, nil); r.status != http.StatusOK {
		t.Fatalf("fail: %d %s", r.status, r.body)
	}

	got := a.stAll(t, tok, "", 100)
	want := []string{
		"withdrawal_reversal withdrawal +1150/+0 -> 7300/0",
		"withdrawal withdrawal -1150/+0 -> 6150/0",
		"dispute_debit transaction +0/-5000 -> 7300/0",
		"dispute_hold transaction -5000/+5000 -> 7300/5000",
		"dispute_release transaction +5000/-5000 -> 12300/0",
		"dispute_hold transaction -5000/+5000 -> 7300/5000",
		"fee transaction -100/+0 -> 12300/0",
		"payment transaction +5000/+0 -> 12400/0",
		"refund_release transaction +1000/-1000 -> 7400/0",
		"refund_hold transaction -1000/+1000 -> 6400/1000",
		"refund transaction +0/-2500 -> 7400/0",
		"refund_hold transaction -2500/+2500 -> 7400/2500",
		"fee transaction -100/+0 -> 9900/0",
		"payment transaction +10000/+0 -> 10000/0",
	}
	if !slices.Equal(stDescribe(got), want) {
		t.Fatalf("statement, newest first:\n  %s\nwant\n  %s", strings.Join(stDescribe(got), "\n  "), strings.Join(want, "\n  "))
	}
	a.wantBalance(t, "the balance is the newest entry's balanceAfter", tok, 7_300, 0, 0)

	seen := map[string]bool{}
	var last time.Time
	for i, en := range got {
		if seen[en.ID] || en.ID == "" {
			t.Errorf("entry %d: id %q empty or repeated", i, en.ID)
		}
		seen[en.ID] = true
		at, err := time.Parse("2006-01-02T15:04:05.000Z", en.CreatedAt)
		if err != nil {
			t.Errorf("entry %d: createdAt %q is not RFC 3339 UTC with milliseconds", i, en.CreatedAt)
		}
		if i > 0 && at.After(last) {
			t.Errorf("entry %d is newer than the one before it: not newest first", i)
		}
		last = at
		wantID := sale
		switch {
		case en.ResourceType == "withdrawal":
			wantID = w
		case i < 8:
			wantID = b
		}
		if en.ResourceID != wantID {
			t.Errorf("entry %d (%s): resourceId %s, want %s", i, en.Type, en.ResourceID, wantID)
		}
	}
}

func TestStatementPagesStayExactWhileNewEntriesArrive(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	for range 6 {
		a.paidCharge(t, tok, 1_000)
	}
	everything := a.stAll(t, tok, "", 100)
	if len(everything) != 12 {
		t.Fatalf("%d entries, want 12", len(everything))
	}

	var walked []stEntry
	added := 0
	page, next := a.stPage(t, tok, "limit=5")
	walked = append(walked, page...)
	for pages := 1; next != nil; pages++ {
		// New entries between every two page requests: they are newer than every page handed
		// out, so they change none of the pages still to come.
		a.paidCharge(t, tok, 1_000)
		added += 2
		page, next = a.stPage(t, tok, "limit=5&cursor="+url.QueryEscape(*next))
		walked = append(walked, page...)
		if pages > 10 {
			t.Fatal("the cursors never end")
		}
	}
	if !slices.Equal(stDescribe(walked), stDescribe(everything)) || len(walked) != 12 {
		t.Fatalf("walking the pages found %d entries:\n%s\nwant\n%s", len(walked), stDescribe(walked), stDescribe(everything))
	}
	for i := range walked {
		if walked[i].ID != everything[i].ID {
			t.Fatalf("entry %d is %s, want %s", i, walked[i].ID, everything[i].ID)
		}
	}

	t.Run("a fresh first page starts at the newest entries", func(t *testing.T) {
		t.Parallel()
		fresh := a.stAll(t, tok, "", 7)
		if len(fresh) != 12+added || added == 0 || fresh[len(fresh)-1].ID != everything[len(everything)-1].ID {
			t.Fatalf("%d entries", len(fresh))
		}
	})
	t.Run("the last page has a null nextCursor, and so has a page that ends exactly at the last entry", func(t *testing.T) {
		t.Parallel()
		all := a.stAll(t, tok, "", 100)
		if _, next := a.stPage(t, tok, "limit="+strconv.Itoa(len(all))); next != nil {
			t.Fatalf("nextCursor %q after a page holding every entry", *next)
		}
	})
}

func TestStatementFilters(t *testing.T) {
	t.Parallel()
	s := feeSettings(apiSettings{})
	clock := stoppedClock()
	s.Clock = clock
	a := newAPI(t, s)
	_, tok := a.account()
	sale := a.paidCharge(t, tok, 10_000)
	a.refundAccepted(t, tok, sale, map[string]any{"amount": 300})
	a.settle()
	clock.Advance(5 * time.Millisecond) // later entries get a later millisecond
	a.paidCharge(t, tok, 20_000)
	a.mustWithdraw(t, tok, 1_000)
	all := a.stAll(t, tok, "", 100)

	ofTypes := func(types ...string) []string {
		var out []string
		for _, en := range all {
			if slices.Contains(types, en.Type) {
				out = append(out, en.ID)
			}
		}
		return out
	}
	ids := func(entries []stEntry) []string {
		var out []string
		for _, en := range entries {
			out = append(out, en.ID)
		}
		return out
	}
	for _, c := range []struct {
		query string
		types []string
	}{
		{"type=fee", []string{"fee"}},
		{"type=payment&type=fee", []string{"payment", "fee"}},
		{"type=refund_hold&type=refund&type=withdrawal", []string{"refund_hold", "refund", "withdrawal"}},
		{"type=dispute_hold", nil},
		{"type=opening_balance", nil},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			got := a.stAll(t, tok, c.query, 2)
			if want := ofTypes(c.types...); !slices.Equal(ids(got), want) {
				t.Fatalf("%v, want %v", stDescribe(got), want)
			}
		})
	}

	t.Run("startDate and endDate bound createdAt, inclusive", func(t *testing.T) {
		t.Parallel()
		// The first entry of the second sale: every entry from it on (newest first: before it).
		from := all[2].CreatedAt
		var want []string
		for _, en := range all {
			if en.CreatedAt >= from {
				want = append(want, en.ID)
			}
		}
		if got := a.stAll(t, tok, "startDate="+url.QueryEscape(from), 2); !slices.Equal(ids(got), want) {
			t.Fatalf("from %s: %v, want %v", from, ids(got), want)
		}
		until := all[len(all)-1].CreatedAt
		var first []string
		for _, en := range all {
			if en.CreatedAt <= until {
				first = append(first, en.ID)
			}
		}
		if got := a.stAll(t, tok, "endDate="+url.QueryEscape(until), 2); !slices.Equal(ids(got), first) {
			t.Fatalf("until %s: %v, want %v", until, ids(got), first)
		}
		brt, _ := time.Parse(time.RFC3339Nano, until)
		offset := brt.In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339Nano)
		if got := a.stAll(t, tok, "endDate="+url.QueryEscape(offset)+"&startDate="+url.QueryEscape(offset), 2); !slices.Equal(ids(got), first) {
			t.Fatalf("the same instant in another offset: %v, want %v", ids(got), first)
		}
		if got := a.stAll(t, tok, "startDate=2099-01-01T00:00:00Z", 2); len(got) != 0 {
			t.Fatalf("the future: %v", got)
		}
	})
}

func TestStatement422(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	_, other := a.account()
	for range 3 {
		a.paidCharge(t, tok, 1_000)
		a.paidCharge(t, other, 1_000)
	}
	_, feeCursor := a.stPage(t, tok, "type=fee&limit=1")
	_, plainCursor := a.stPage(t, tok, "limit=1")
	_, theirCursor := a.stPage(t, other, "limit=1")
	if feeCursor == nil || plainCursor == nil || theirCursor == nil {
		t.Fatal("no cursor on a first page of one entry out of several")
	}
	edited := []byte(*plainCursor)
	edited[len(edited)/2] ^= 1
	cases := []struct {
		name, query string
		want        []string
	}{
		{"a limit of 0", "limit=0", []string{"limit out_of_range"}},
		{"a limit of 101", "limit=101", []string{"limit out_of_range"}},
		{"a limit that is not a number", "limit=ten", []string{"limit invalid_type"}},
		{"a limit of 1.5", "limit=1.5", []string{"limit invalid_type"}},
		{"two limits", "limit=1&limit=2", []string{"limit duplicate_value"}},
		{"a date without a time", "startDate=2026-11-22", []string{"startDate invalid_format"}},
		{"a date without an offset", "endDate=2026-11-22T10:00:00", []string{"endDate invalid_format"}},
		{"startDate after endDate", "startDate=2026-11-23T00:00:00Z&endDate=2026-11-22T00:00:00Z", []string{"startDate out_of_range"}},
		{"an unknown type", "type=tip", []string{"type invalid_enum"}},
		{"a type of another ledger", "type=late_payment", []string{"type invalid_enum"}},
		{"a type twice", "type=fee&type=fee", []string{"type duplicate_value"}},
		{"an unknown parameter", "perPage=10", []string{"perPage unknown_field"}},
		{"a garbage cursor", "cursor=garbage", []string{"cursor invalid_format"}},
		{"an empty cursor", "cursor=", []string{"cursor invalid_format"}},
		{"an edited cursor", "cursor=" + url.QueryEscape(string(edited)), []string{"cursor invalid_format"}},
		{"another account's cursor", "cursor=" + url.QueryEscape(*theirCursor), []string{"cursor invalid_format"}},
		{"the cursor of another query (another type)", "type=payment&cursor=" + url.QueryEscape(*feeCursor), []string{"cursor invalid_format"}},
		{"the cursor of another query (a filter dropped)", "cursor=" + url.QueryEscape(*feeCursor), []string{"cursor invalid_format"}},
		{"the cursor of another query (a filter added)", "type=fee&cursor=" + url.QueryEscape(*plainCursor), []string{"cursor invalid_format"}},
		{"everything at once", "limit=0&startDate=x&type=tip&cursor=x&page=2",
			[]string{"cursor invalid_format", "limit out_of_range", "page unknown_field", "startDate invalid_format", "type invalid_enum"}},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 naming the parameter", func(t *testing.T) {
			t.Parallel()
			fields := problem(t, a.do("GET", "/balance/entries?"+c.query, tok, nil), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, c.want) {
				t.Fatalf("errors %v, want %v", fields, c.want)
			}
		})
	}
	t.Run("and so does the CSV export: a problem, not a CSV", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/balance/entries?limit=0", tok, nil, "Accept", "text/csv"), http.StatusUnprocessableEntity, "validation_failed")
	})
	t.Run("a cursor continues its own query", func(t *testing.T) {
		t.Parallel()
		page, _ := a.stPage(t, tok, "type=fee&limit=1&cursor="+url.QueryEscape(*feeCursor))
		if len(page) != 1 || page[0].Type != "fee" {
			t.Fatalf("%v", page)
		}
		// The limit is not part of the query a cursor belongs to.
		if page, _ := a.stPage(t, tok, "limit=50&cursor="+url.QueryEscape(*plainCursor)); len(page) != 5 {
			t.Fatalf("%d entries after the first", len(page))
		}
	})
}

// stCSV gets the statement as CSV and parses it.
func (a *api) stCSV(t *testing.T, tok, query string) (response, [][]string) {
	t.Helper()
	r := a.do("GET", "/balance/entries?"+query, tok, nil, "Accept", "text/csv")
	if r.status != http.StatusOK {
		t.Fatalf("CSV: %d %s", r.status, r.body)
	}
	rows, err := csv.NewReader(bufio.NewReader(bytes.NewReader(r.body))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, r.body)
	}
	return r, rows
}

func TestStatementAsCSVHasEveryEntryOfEveryPage(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, tok := a.account()
	sale := a.paidCharge(t, tok, 10_000)
	a.refundAccepted(t, tok, sale, map[string]any{"amount": 400})
	// More entries than one internal page of 100: the export reads several.
	for range 55 {
		a.paidCharge(t, tok, 1_000)
	}
	all := a.stAll(t, tok, "", 100)
	if len(all) != 113 {
		t.Fatalf("%d entries, want 113", len(all))
	}

	r, rows := a.stCSV(t, tok, "limit=1")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type %q", ct)
	}
	if !strings.Contains(r.header.Get("Cache-Control"), "no-store") {
		t.Errorf("Cache-Control %q: the statement is account data", r.header.Get("Cache-Control"))
	}
	header := "id,type,createdAt,resourceType,resourceId,available,blocked,balanceAfterAvailable,balanceAfterBlocked"
	if strings.Join(rows[0], ",") != header {
		t.Fatalf("header row %v", rows[0])
	}
	if len(rows) != 1+len(all) {
		t.Fatalf("%d rows for %d entries (limit and cursor do not apply to the export)", len(rows)-1, len(all))
	}
	for i, en := range all {
		want := []string{en.ID, en.Type, en.CreatedAt, en.ResourceType, en.ResourceID, strconv.FormatInt(en.Available, 10),
			strconv.FormatInt(en.Blocked, 10), strconv.FormatInt(en.BalanceAfter.Available, 10), strconv.FormatInt(en.BalanceAfter.Blocked, 10)}
		if !slices.Equal(rows[i+1], want) {
			t.Fatalf("row %d = %v, want %v", i+1, rows[i+1], want)
		}
	}
	// The refund's hold, in cents, signed.
	if !strings.Contains(string(r.body), ",refund_hold,") || !strings.Contains(string(r.body), ",-400,400,") {
		t.Errorf("no refund_hold row of -400/400:\n%s", r.body)
	}

	t.Run("filters apply to the export", func(t *testing.T) {
		t.Parallel()
		_, rows := a.stCSV(t, tok, "type=refund_hold&type=fee")
		if len(rows) != 1+1+56 {
			t.Fatalf("%d rows", len(rows)-1)
		}
		for _, row := range rows[1:] {
			if row[1] != "fee" && row[1] != "refund_hold" {
				t.Fatalf("row %v", row)
			}
		}
	})
	t.Run("an account without entries exports the header alone", func(t *testing.T) {
		t.Parallel()
		_, empty := a.account()
		if _, rows := a.stCSV(t, empty, ""); len(rows) != 1 {
			t.Fatalf("%v", rows)
		}
	})
	t.Run("without Accept: text/csv the answer is JSON", func(t *testing.T) {
		t.Parallel()
		for _, accept := range []string{"", "*/*", "application/json", "application/json, text/csv", "text/csv;q=0"} {
			r := a.do("GET", "/balance/entries", tok, nil, "Accept", accept)
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("Accept %q: Content-Type %q", accept, r.header.Get("Content-Type"))
			}
		}
	})
}

func TestBalanceAndStatementNeedBalanceRead(t *testing.T) {
	t.Parallel()
	a := newAPI(t, feeSettings(apiSettings{}))
	_, all := a.account()
	a.paidCharge(t, all, 1_000)
	var others []domain.Scope
	for _, s := range domain.AllScopes() {
		if s != domain.ScopeBalanceRead {
			others = append(others, s)
		}
	}
	_, without := a.account(others...)
	_, only := a.account(domain.ScopeBalanceRead)
	for _, path := range []string{"/balance", "/balance/entries", "/balance/entries?type=fee"} {
		for _, accept := range []string{"application/json", "text/csv"} {
			t.Run(path+" as "+accept, func(t *testing.T) {
				t.Parallel()
				r := a.do("GET", path, without, nil, "Accept", accept)
				problem(t, r, http.StatusForbidden, "insufficient_scope")
				if !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="balance:read"`) {
					t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
				}
				if r := a.do("GET", path, only, nil, "Accept", accept); r.status != http.StatusOK {
					t.Fatalf("with balance:read: %d %s", r.status, r.body)
				}
				problem(t, a.do("GET", path, "", nil, "Accept", accept), http.StatusUnauthorized, "unauthorized")
			})
		}
	}
}

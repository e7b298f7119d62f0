package httpapi

import (
	"encoding/base64"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func TestStatementCursorsAreRefusedUnlessIssuedForTheSameAccountAndQuery(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	query := ports.EntryFilter{AccountID: "acct-1", StartDate: &start, Types: []domain.MovementType{domain.MoveFee, domain.MovePayment}}
	cursor := encodeCursor(42, query)

	t.Run("the cursor issued for a query continues it", func(t *testing.T) {
		if before, ok := decodeCursor(cursor, query); !ok || before != 42 {
			t.Fatalf("decoded %d, %v", before, ok)
		}
	})
	t.Run("the same filters in another order and spelling are the same query", func(t *testing.T) {
		same := start.In(time.FixedZone("BRT", -3*3600))
		q := ports.EntryFilter{AccountID: "acct-1", StartDate: &same, Types: []domain.MovementType{domain.MovePayment, domain.MoveFee}}
		if _, ok := decodeCursor(cursor, q); !ok {
			t.Fatal("refused")
		}
	})
	raw, _ := base64.RawURLEncoding.DecodeString(cursor)
	edited := slices.Clone(raw)
	edited[8]++ // another entry number, the checksum left alone
	later := start.Add(time.Second)
	refused := map[string]struct {
		cursor string
		query  ports.EntryFilter
	}{
		"another account's":         {cursor, ports.EntryFilter{AccountID: "acct-2", StartDate: &start, Types: query.Types}},
		"another query's (a type)":  {cursor, ports.EntryFilter{AccountID: "acct-1", StartDate: &start, Types: query.Types[:1]}},
		"another query's (a date)":  {cursor, ports.EntryFilter{AccountID: "acct-1", StartDate: &later, Types: query.Types}},
		"another query's (no date)": {cursor, ports.EntryFilter{AccountID: "acct-1", Types: query.Types}},
		"an edited one":             {base64.RawURLEncoding.EncodeToString(edited), query},
		"a truncated one":           {cursor[:len(cursor)-2], query},
		"garbage":                   {"not-a-cursor", query},
		"padded base64":             {cursor + "=", query},
		"empty":                     {"", query},
		"one numbered 0":            {encodeCursor(0, query), query},
	}
	for name, c := range refused {
		t.Run(name+" is refused", func(t *testing.T) {
			if before, ok := decodeCursor(c.cursor, c.query); ok {
				t.Fatalf("accepted, continuing before %d", before)
			}
		})
	}
}

func TestStatementQueryReportsEveryBrokenParameter(t *testing.T) {
	q := url.Values{"limit": {"0"}, "startDate": {"2026-11-22"}, "endDate": {"x"}, "type": {"payment", "tip"},
		"cursor": {"garbage"}, "page": {"2"}}
	_, _, errs := parseEntriesQuery(q, "acct-1")
	var got []string
	for _, e := range errs {
		got = append(got, e.Field+" "+e.Code)
	}
	slices.Sort(got)
	want := []string{"cursor invalid_format", "endDate invalid_format", "limit out_of_range", "page unknown_field",
		"startDate invalid_format", "type invalid_enum"}
	if !slices.Equal(got, want) {
		t.Fatalf("errors %v, want %v", got, want)
	}
}

func TestStatementNegotiatesCSVOnlyWhenAsked(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                     false,
		"*/*":                                  false,
		"application/json":                     false,
		"text/csv":                             true,
		"text/csv; charset=utf-8":              true,
		"TEXT/CSV":                             true,
		"text/csv;q=0":                         false,
		"application/json, text/csv":           false,
		"text/csv, application/json":           true,
		"application/json;q=0.5, text/csv":     true,
		"text/csv;q=0.4, application/json":     false,
		"text/html, text/csv;q=0.9, */*;q=0.1": true,
		"garbage;;":                            false,
	} {
		if got := acceptsCSV(accept); got != want {
			t.Errorf("Accept %q: CSV %v, want %v", accept, got, want)
		}
	}
}

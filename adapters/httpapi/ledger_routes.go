package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	validation "github.com/go-ozzo/ozzo-validation/v4"
	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// LedgerDeps is the use case of GET /balance/entries, the merchant's statement. (GET /balance itself is served with the withdrawals, WithdrawalDeps.)
type LedgerDeps struct {
	Entries *application.ListEntries
}

// Paging of GET /balance/entries.
const (
	defaultEntriesLimit = 20
	maxEntriesLimit     = 100
	// csvPageSize is how many entries the CSV export reads at a time: it streams every page,
	// holding one in memory.
	csvPageSize = maxEntriesLimit
)

// ledgerRoutes registers GET /balance/entries: the statement as JSON pages, or as one CSV
// document of every page with Accept: text/csv.
func (s *Server) ledgerRoutes(r *mux.Router) {
	route(r, "balance.entries", http.MethodGet, "/balance/entries").
		Handler(s.authed(domain.ScopeBalanceRead, s.listEntries))
}

// entriesQuery holds the query parameters of GET /balance/entries as sent, before validation.
type entriesQuery struct {
	Limit     *string  `json:"limit"`
	Cursor    *string  `json:"cursor"`
	StartDate *string  `json:"startDate"`
	EndDate   *string  `json:"endDate"`
	Type      []string `json:"type"`
}

func statementTypeNames() []string {
	var out []string
	for _, t := range domain.StatementTypes() {
		out = append(out, string(t))
	}
	return out
}

// parseEntriesQuery reads and validates the query string of GET /balance/entries for the
// account, and reports every broken rule at once, unknown parameters included. The cursor is
// checked against the account and the filters it was issued for.
func parseEntriesQuery(q url.Values, accountID string) (ports.EntryFilter, int, []FieldError) {
	var eq entriesQuery
	errs := readQuery(q, map[string]**string{"limit": &eq.Limit, "cursor": &eq.Cursor, "startDate": &eq.StartDate, "endDate": &eq.EndDate},
		map[string]*[]string{"type": &eq.Type}, "the statement")
	f := ports.EntryFilter{AccountID: accountID}
	var n *int64
	err := validation.ValidateStruct(&eq,
		validation.Field(&eq.Limit, intInto(&n, 1, maxEntriesLimit)),
		validation.Field(&eq.StartDate, dateTimeInto(&f.StartDate)),
		validation.Field(&eq.EndDate, dateTimeInto(&f.EndDate)),
		validation.Field(&eq.Type, enumList(statementTypeNames()...)),
	)
	errs = append(errs, fieldErrors("", err)...)
	limit := defaultEntriesLimit
	if n != nil {
		limit = int(*n)
	}
	if f.StartDate != nil && f.EndDate != nil && f.StartDate.After(*f.EndDate) {
		errs = append(errs, FieldError{Field: "startDate", Code: "out_of_range", Message: "must not be after endDate"})
	}
	for _, t := range eq.Type {
		if mt, err := domain.ParseMovementType(t); err == nil && !slices.Contains(f.Types, mt) {
			f.Types = append(f.Types, mt)
		}
	}
	if eq.Cursor != nil {
		before, ok := decodeCursor(*eq.Cursor, f)
		if !ok {
			errs = append(errs, FieldError{Field: "cursor", Code: "invalid_format",
				Message: "must be the nextCursor of a previous page of this same query"})
		}
		f.Before = before
	}
	return f, limit, errs
}

// Cursors are opaque to merchants: base64url (unpadded) of a version byte, the entry number
// to continue before (8 bytes, big-endian) and the first 12 bytes of a SHA-256 over the
// version, that number, the account and the query's filters. A cursor that pixgate did not
// issue for this account and these filters (garbage, edited, another account's, another
// query's) fails the check and is refused, rather than answering a page of some other listing.
const (
	cursorVersion  = 1
	cursorSumBytes = 12
	cursorBytes    = 1 + 8 + cursorSumBytes
)

func cursorSum(before int64, f ports.EntryFilter) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "pixgate statement cursor\x00%d\x00%d\x00%s\x00", cursorVersion, before, f.AccountID)
	for _, t := range []*int64{unixNano(f.StartDate), unixNano(f.EndDate)} {
		if t != nil {
			b.WriteString(strconv.FormatInt(*t, 10))
		}
		b.WriteByte(0)
	}
	types := make([]string, 0, len(f.Types))
	for _, t := range f.Types {
		types = append(types, string(t))
	}
	slices.Sort(types)
	b.WriteString(strings.Join(types, ","))
	sum := sha256.Sum256(b.Bytes())
	return sum[:cursorSumBytes]
}

func encodeCursor(before int64, f ports.EntryFilter) string {
	raw := make([]byte, 0, cursorBytes)
	raw = append(raw, cursorVersion)
	raw = binary.BigEndian.AppendUint64(raw, uint64(before))
	raw = append(raw, cursorSum(before, f)...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor returns the entry number a cursor continues before, and false for a cursor
// that pixgate did not issue for f.
func decodeCursor(s string, f ports.EntryFilter) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != cursorBytes || raw[0] != cursorVersion {
		return 0, false
	}
	before := int64(binary.BigEndian.Uint64(raw[1:9]))
	if before < 1 || !bytes.Equal(raw[9:], cursorSum(before, f)) {
		return 0, false
	}
	return before, true
}

// listEntries answers the statement: one JSON page, or every page as CSV.
func (s *Server) listEntries(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r.Context())
	f, limit, fields := parseEntriesQuery(r.URL.Query(), p.AccountID)
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	if acceptsCSV(r.Header.Get("Accept")) {
		f.Before = 0 // the export is the whole statement: paging does not apply
		s.streamEntriesCSV(w, r, p, f)
		return
	}
	st, err := s.deps.Ledger.Entries.Execute(r.Context(), p, f, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := statementView{Data: make([]entryView, 0, len(st.Entries))}
	for _, e := range st.Entries {
		out.Data = append(out.Data, viewEntry(e))
	}
	if st.Next != 0 {
		next := encodeCursor(st.Next, f)
		out.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, out)
}

// acceptsCSV tells whether the Accept header prefers text/csv to JSON: text/csv is named with
// a weight above zero and application/json is not named with a higher one (on a tie, the
// media type named first wins). Wildcards alone keep the JSON default.
func acceptsCSV(accept string) bool {
	if accept == "" {
		return false
	}
	csvQ, jsonQ := -1.0, -1.0
	csvAt, jsonAt := 0, 0
	for i, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if parsed, err := strconv.ParseFloat(v, 64); err == nil {
				q = parsed
			}
		}
		switch mt {
		case "text/csv":
			csvQ, csvAt = q, i
		case "application/json":
			jsonQ, jsonAt = q, i
		}
	}
	switch {
	case csvQ <= 0:
		return false
	case jsonQ > csvQ:
		return false
	case jsonQ == csvQ:
		return csvAt < jsonAt
	}
	return true
}

// streamEntriesCSV writes every entry matching f, newest first, as CSV, reading and flushing
// one page at a time so that a statement of millions of lines never sits in memory. A store
// failure before the first byte answers the usual problem; after it, the answer has started
// and cannot change its status, so the connection is cut: a truncated export must never pass
// for a complete one.
func (s *Server) streamEntriesCSV(w http.ResponseWriter, r *http.Request, p domain.Principal, f ports.EntryFilter) {
	st, err := s.deps.Ledger.Entries.Execute(r.Context(), p, f, csvPageSize)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="statement.csv"`)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	cw := csv.NewWriter(w)
	_ = cw.Write(entryCSVHeader)
	for {
		for _, e := range st.Entries {
			_ = cw.Write(entryCSVRow(e))
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return // the client went away
		}
		_ = rc.Flush()
		if st.Next == 0 {
			return
		}
		f.Before = st.Next
		if st, err = s.deps.Ledger.Entries.Execute(r.Context(), p, f, csvPageSize); err != nil {
			s.log.ErrorContext(r.Context(), "statement export failed midway; the connection is cut",
				slog.String("requestId", requestIDFrom(r.Context())), slog.String("error", err.Error()))
			panic(http.ErrAbortHandler)
		}
	}
}

package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"time"

	validation "github.com/go-ozzo/ozzo-validation/v4"
	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// AcquirerDeps are the use case and the shared secret of POST /acquirer/pix, the acquirer's
// payment notifications (Deps.Acquirer: without it the route does not exist).
type AcquirerDeps struct {
	Notifications *application.ApplyPixNotifications
	// Secret is what the acquirer sends as "Authorization: Bearer <secret>".
	Secret string
	// Payouts takes the notices of payouts a PSP posts to the same webhook (Efí: entries
	// without txid, with gnExtras.idEnvio). Nil when no payout provider notifies: such
	// entries are then payments without a txid (unknown_txid).
	Payouts PayoutNotices
}

// PayoutNotices is the payout outbox as the callback sees it
// (application.PayOutWithdrawals.Notice).
type PayoutNotices interface {
	Notice(ctx context.Context, payoutID string) (application.PayoutNotice, error)
}

// acquirerRoutes registers POST /acquirer/pix, the acquirer's payment notifications.
func (s *Server) acquirerRoutes(r *mux.Router) {
	d := s.deps.Acquirer
	if d == nil {
		return
	}
	route(r, "acquirer.pix", http.MethodPost, "/acquirer/pix").
		Handler(acquirerAuthed(d.Secret, acquirerChecked(s.acquirerPix)))
}

// acquirerAuthed lets through the requests that carry the shared secret as a bearer token. The
// comparison runs over digests of equal length in constant time, so that neither the secret's
// content nor its length leaks through timing.
func acquirerAuthed(secret string, h http.HandlerFunc) http.Handler {
	want := sha256.Sum256([]byte(secret))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, present := bearerToken(r)
		got := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || token == "" {
			if present {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer`)
			}
			writeProblem(w, r, http.StatusUnauthorized, "unauthorized", "the acquirer's shared secret is required", nil)
			return
		}
		h(w, r)
	})
}

// The callback body of Banco Central's standard API Pix (its `Pix` and `Devolucao` schemas),
// read tolerantly, as the specification asks of clients: PSPs add members of their own (Efí's
// gnExtras), so unknown members are ignored at every depth. The body as a whole must be JSON
// under the strict rules of every body, with a `pix` array; each entry is then judged on its
// own, and one that is malformed by the specification becomes an entry of outcome "invalid"
// (its reason in the result's detail) while the others apply.
type acquirerPix struct {
	EndToEndID       *string             `json:"endToEndId"`
	TxID             *string             `json:"txid"`
	Valor            *string             `json:"valor"`
	ComponentesValor rawObject           `json:"componentesValor"`
	Chave            *string             `json:"chave"`
	Horario          *string             `json:"horario"`
	InfoPagador      *string             `json:"infoPagador"`
	Devolucoes       []acquirerDevolucao `json:"devolucoes"`
	// GnExtras is Efí's own member: idEnvio names the payout a notice is about.
	GnExtras *acquirerGnExtras `json:"gnExtras"`
}

type acquirerGnExtras struct {
	IDEnvio *string `json:"idEnvio"`
}

type acquirerDevolucao struct {
	ID        *string                `json:"id"`
	RtrID     *string                `json:"rtrId"`
	Valor     *string                `json:"valor"`
	Natureza  *string                `json:"natureza"`
	Descricao *string                `json:"descricao"`
	Horario   *acquirerRefundHorario `json:"horario"`
	Status    *string                `json:"status"`
	Motivo    *string                `json:"motivo"`
}

// acquirerRefundHorario: the specification requires the object and none of its members.
type acquirerRefundHorario struct {
	Solicitacao *string `json:"solicitacao"`
	Liquidacao  *string `json:"liquidacao"`
}

// maxAcquirerEntries bounds the entries of one callback (acquirers send a few at a time).
const maxAcquirerEntries = 1000

// maxInvalidReasons bounds the reasons an invalid entry's detail lists.
const maxInvalidReasons = 5

var (
	// acquirerIDRule: end-to-end ids (endToEndId, rtrId) are 32 characters [a-zA-Z0-9].
	acquirerIDRule = acquirerAlnum(32, 32, "must be an end-to-end id: 32 letters and digits")
	// acquirerTxIDRule: API Pix txids, refund ids and Efí's idEnvio have 1 to 35 characters
	// [a-zA-Z0-9].
	acquirerTxIDRule = acquirerAlnum(1, 35, "must have 1 to 35 letters and digits")
	// acquirerTimeRule checks an RFC 3339 time that nothing maps (a refund's horario). It
	// keeps nothing: every request shares it, so it may not write anywhere.
	acquirerTimeRule = parsed(func(s string) error { _, err := parseAcquirerTime(s); return err },
		"invalid_format", acquirerTimeMessage)
)

// acquirerValorInto checks an amount in reais (positive, two decimals) and keeps it in *dst.
func acquirerValorInto(dst *domain.Cents) validation.Rule {
	return into(dst, func(s string) (domain.Cents, error) {
		c, err := domain.ParseReais(s)
		if err == nil && c < 1 {
			return 0, domain.ErrAmountOutOfRange{Amount: c}
		}
		return c, err
	}, "invalid_format", "must be a positive amount in reais with two decimals, such as 10.00")
}

// acquirerTimeInto checks an RFC 3339 time and keeps it in *dst.
func acquirerTimeInto(dst *time.Time) validation.Rule {
	return into(dst, parseAcquirerTime, "invalid_format", acquirerTimeMessage)
}

// parseAcquirerTime reads the acquirer's times (RFC 3339, fractions of a second allowed), and
// acquirerTimeMessage is what a field error says of one it cannot read.
func parseAcquirerTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

const acquirerTimeMessage = "must be an RFC 3339 date-time"

var errAcquirerFormat = errors.New("not letters and digits of the right length")

func acquirerAlnum(min, max int, message string) validation.Rule {
	return parsed(func(s string) error {
		if !acquirerAlnumOK(s, min, max) {
			return errAcquirerFormat
		}
		return nil
	}, "invalid_format", message)
}

func acquirerAlnumOK(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// acquirerEntry is one parsed `pix` entry: a PIX received (or an invalid entry, Invalid set),
// or, with payoutID set, Efí's notice about a payout it made for pixgate.
type acquirerEntry struct {
	pix      application.PixNotification
	payoutID string
}

// errNoPixArray: the body has no `pix` array; field says how (required, invalid_type, too_long).
type errNoPixArray struct{ field FieldError }

func (e errNoPixArray) Error() string { return "pix " + e.field.Code }

// parseAcquirerEntries judges each element of the body's `pix` array (the body decoded by the
// strict decoder) on its own.
func parseAcquirerEntries(body map[string]any) ([]acquirerEntry, error) {
	v, ok := body["pix"]
	if !ok || v == nil {
		return nil, errNoPixArray{FieldError{Field: "pix", Code: "required", Message: "is required"}}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, errNoPixArray{invalidType("pix", "an array")}
	}
	if len(arr) > maxAcquirerEntries {
		// One error for the array rather than one per entry it should not have had.
		return nil, errNoPixArray{FieldError{Field: "pix", Code: "too_long",
			Message: fmt.Sprintf("must have at most %d entries", maxAcquirerEntries)}}
	}
	out := make([]acquirerEntry, len(arr))
	for i, el := range arr {
		out[i] = parseAcquirerEntry(el)
	}
	return out, nil
}

// parseAcquirerEntry maps one element of `pix`. Every amount and time is kept as its rule
// parsed it; an entry that breaks a rule of the specification is Invalid, with the reasons.
func parseAcquirerEntry(el any) acquirerEntry {
	obj, ok := el.(map[string]any)
	if !ok {
		return acquirerEntry{pix: application.PixNotification{Invalid: "the entry must be an object"}}
	}
	var p acquirerPix
	var decoding []FieldError
	// Members the specification does not define are the PSP's to add: dropped before
	// decoding, so that however many there are, every defined member is still checked.
	fillStruct("", knownMembers(obj, reflect.TypeOf(p)), reflect.ValueOf(&p).Elem(), &decoding)
	kept := decoding[:0]
	for _, f := range decoding {
		// So is the shape of Efí's gnExtras, whose idEnvio is read only when it is a string.
		if f.Field != "gnExtras" && !strings.HasPrefix(f.Field, "gnExtras.") {
			kept = append(kept, f)
		}
	}
	if p.TxID == nil && p.GnExtras != nil && p.GnExtras.IDEnvio != nil {
		// Efí posts its notices of payouts to the same webhook: no txid, and the payout's
		// idEnvio. Its content is not trusted: the payout is read back from Efí.
		if id := *p.GnExtras.IDEnvio; acquirerAlnumOK(id, 1, 35) {
			return acquirerEntry{payoutID: id, pix: application.PixNotification{EndToEndID: wellFormedID(p.EndToEndID)}}
		}
		kept = append(kept, FieldError{Field: "gnExtras.idEnvio", Code: "invalid_format", Message: "must have 1 to 35 letters and digits"})
	}
	var n application.PixNotification
	fields := mergeFieldErrors(kept, fieldErrors("", p.parse(&n)))
	if len(fields) == 0 {
		return acquirerEntry{pix: n}
	}
	// An invalid entry echoes its ids only when they have their shape, so that an answer
	// never carries what a broken entry held.
	return acquirerEntry{pix: application.PixNotification{EndToEndID: wellFormedID(p.EndToEndID),
		TxID: wellFormedTxID(p.TxID), Invalid: invalidReason(fields)}}
}

// knownMembers is obj without the members that t (a request struct) does not define, at every
// depth: objects of struct-typed members and the objects of arrays of structs are pruned too.
func knownMembers(obj map[string]any, t reflect.Type) map[string]any {
	out := make(map[string]any, len(obj))
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		v, ok := obj[name]
		if !ok {
			continue
		}
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			if m, isObject := v.(map[string]any); isObject {
				v = knownMembers(m, ft)
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			if arr, isArray := v.([]any); isArray {
				pruned := make([]any, len(arr))
				for j, el := range arr {
					pruned[j] = el
					if m, isObject := el.(map[string]any); isObject {
						pruned[j] = knownMembers(m, ft.Elem())
					}
				}
				v = pruned
			}
		}
		out[name] = v
	}
	return out
}

func wellFormedID(s *string) string {
	if s != nil && acquirerAlnumOK(*s, 32, 32) {
		return *s
	}
	return ""
}

func wellFormedTxID(s *string) string {
	if s != nil && acquirerAlnumOK(*s, 1, 35) {
		return *s
	}
	return ""
}

// invalidReason says in words what is wrong with an entry: its field errors, as a problem
// answer would list them, a few at most.
func invalidReason(fields []FieldError) string {
	sort.Slice(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	var b strings.Builder
	for i, f := range fields {
		if i == maxInvalidReasons {
			fmt.Fprintf(&b, "; and %d more", len(fields)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s: %s", f.Field, f.Code, f.Message)
	}
	return b.String()
}

func (p *acquirerPix) parse(n *application.PixNotification) error {
	n.Refunds = make([]application.PixRefund, len(p.Devolucoes))
	err := validation.ValidateStruct(p,
		validation.Field(&p.EndToEndID, required, acquirerIDRule),
		validation.Field(&p.TxID, acquirerTxIDRule),
		validation.Field(&p.Valor, required, acquirerValorInto(&n.Amount)),
		validation.Field(&p.Chave, length(1, 77)),
		validation.Field(&p.Horario, required, acquirerTimeInto(&n.PaidAt)),
		validation.Field(&p.InfoPagador, length(0, 140)),
		validation.Field(&p.Devolucoes, eachInto(p.Devolucoes, n.Refunds, (*acquirerDevolucao).parse)),
	)
	if err == nil {
		n.EndToEndID, n.TxID = *p.EndToEndID, str(p.TxID)
	}
	return err
}

func (d *acquirerDevolucao) parse(r *application.PixRefund) error {
	err := validation.ValidateStruct(d,
		validation.Field(&d.ID, required, acquirerTxIDRule),
		validation.Field(&d.RtrID, required, acquirerIDRule),
		validation.Field(&d.Valor, required, acquirerValorInto(&r.Amount)),
		validation.Field(&d.Natureza, oneOf(application.PixRefundNatures()...)),
		validation.Field(&d.Descricao, length(0, 140)),
		validation.Field(&d.Horario, required),
		validation.Field(&d.Status, required, oneOf(string(application.PixRefundInProgress),
			string(application.PixRefundReturned), string(application.PixRefundNotDone))),
		validation.Field(&d.Motivo, length(0, 140)),
	)
	if err == nil {
		r.ID, r.ReturnID, r.Status = *d.ID, *d.RtrID, application.PixRefundStatus(*d.Status)
		r.Reason, r.Nature = strings.TrimSpace(str(d.Motivo)), str(d.Natureza)
	}
	return err
}

func (h acquirerRefundHorario) Validate() error {
	return validation.ValidateStruct(&h,
		validation.Field(&h.Solicitacao, acquirerTimeRule),
		validation.Field(&h.Liquidacao, acquirerTimeRule),
	)
}

// acquirerResultsView is the 200 body of POST /acquirer/pix: one result per `pix` entry, in
// order (application.NotificationOutcome lists the outcomes of payments, and
// application.PayoutNoticeOutcome those of Efí's payout notices, which carry idEnvio).
type acquirerResultsView struct {
	Results []acquirerResultView `json:"results"`
}

type acquirerResultView struct {
	EndToEndID string                     `json:"endToEndId"`
	TxID       string                     `json:"txid"`
	IDEnvio    string                     `json:"idEnvio,omitempty"`
	Outcome    string                     `json:"outcome"`
	Status     string                     `json:"status,omitempty"`
	Detail     string                     `json:"detail,omitempty"`
	Devolucoes []acquirerRefundResultView `json:"devolucoes,omitempty"`
}

type acquirerRefundResultView struct {
	ID      string `json:"id"`
	RtrID   string `json:"rtrId"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// AcquirerCallback is POST /acquirer/pix without the shared secret, for a listener that
// authenticates the PSP otherwise (mutual TLS): the same checks of the query and the body, the
// same answers, behind the same outermost middleware as Handler (request id, body limit,
// access log, metrics under the route name "acquirer.pix"). It answers 404 to every request
// when Deps.Acquirer is nil.
func (s *Server) AcquirerCallback() http.Handler {
	if s.deps.Acquirer == nil {
		return s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeProblem(w, r, http.StatusNotFound, "not_found", "no such route", nil)
		}))
	}
	return s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stateOf(r.Context()).route = "acquirer.pix"
		acquirerChecked(s.acquirerPix).ServeHTTP(w, r)
	}))
}

// acquirerChecked judges the query string and the body's media type, as every route does.
func acquirerChecked(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if fields := queryErrors(r.URL.RawQuery); len(fields) > 0 {
			validationFailed(w, r, fields)
			return
		}
		if !jsonBodyOrNone(w, r) {
			return
		}
		h(w, r)
	}
}

// acquirerEnvelope decodes nothing: the callback's members are read from the decoded body,
// where the strict decoder leaves them, and unknown ones are ignored.
type acquirerEnvelope struct{}

// acquirerPix applies a callback. A body with a `pix` array answers 200 with a result per
// entry, whatever each entry's outcome, so that the acquirer stops retrying what can never
// apply; the entries that were not applied are logged for operations, who reconcile the money.
func (s *Server) acquirerPix(w http.ResponseWriter, r *http.Request) {
	body, _, ok := decodeBody(w, r, &acquirerEnvelope{})
	if !ok {
		return
	}
	entries, err := parseAcquirerEntries(body)
	var noPix errNoPixArray
	if errors.As(err, &noPix) {
		validationFailed(w, r, []FieldError{noPix.field})
		return
	}
	d := s.deps.Acquirer
	var payments []application.PixNotification
	for _, e := range entries {
		if e.payoutID == "" || d.Payouts == nil {
			payments = append(payments, e.pix)
		}
	}
	results, err := d.Notifications.Execute(r.Context(), payments)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := acquirerResultsView{Results: make([]acquirerResultView, 0, len(entries))}
	for _, e := range entries {
		if e.payoutID != "" && d.Payouts != nil {
			v, err := s.payoutNotice(r, d.Payouts, e)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			out.Results = append(out.Results, v)
			continue
		}
		res := results[0]
		results = results[1:]
		v := acquirerResultView{EndToEndID: res.EndToEndID, TxID: res.TxID, IDEnvio: e.payoutID, Outcome: string(res.Outcome),
			Status: string(res.Status), Detail: res.Detail}
		if e.payoutID != "" {
			v.Detail = "a notice of the payout " + e.payoutID + ", and no payouts are configured"
		}
		s.logUnapplied(r, res.EndToEndID, res.TxID, "", res.Outcome, v.Detail)
		for _, rr := range res.Refunds {
			v.Devolucoes = append(v.Devolucoes, acquirerRefundResultView{ID: rr.ID, RtrID: rr.ReturnID,
				Outcome: string(rr.Outcome), Detail: rr.Detail})
			s.logUnapplied(r, res.EndToEndID, res.TxID, rr.ReturnID, rr.Outcome, rr.Detail)
		}
		out.Results = append(out.Results, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// payoutNotice hands Efí's notice of a payout to the payout outbox, which reads the payout
// back from Efí.
func (s *Server) payoutNotice(r *http.Request, payouts PayoutNotices, e acquirerEntry) (acquirerResultView, error) {
	n, err := payouts.Notice(r.Context(), e.payoutID)
	if err != nil {
		return acquirerResultView{}, err
	}
	v := acquirerResultView{EndToEndID: e.pix.EndToEndID, IDEnvio: e.payoutID, Outcome: string(n.Outcome), Status: string(n.Status)}
	switch n.Outcome {
	case application.NoticeUnknownPayout:
		v.Detail = "no withdrawal of pixgate's has this idEnvio"
	case application.NoticeDeferred:
		v.Detail = "the payout could not be read back now; it is read back later"
	}
	if n.Outcome == application.NoticeUnknownPayout {
		s.log.WarnContext(r.Context(), "acquirer notification not applied",
			slog.String("requestId", requestIDFrom(r.Context())), slog.String("idEnvio", e.payoutID),
			slog.String("outcome", string(n.Outcome)), slog.String("detail", v.Detail))
	}
	return v, nil
}

// logUnapplied warns about a notification that moved money pixgate could not record.
func (s *Server) logUnapplied(r *http.Request, endToEnd, txid, rtrID string, outcome application.NotificationOutcome, detail string) {
	switch outcome {
	case application.OutcomeApplied, application.OutcomeAlreadyApplied, application.OutcomeInProgress:
		return
	}
	s.log.WarnContext(r.Context(), "acquirer notification not applied",
		slog.String("requestId", requestIDFrom(r.Context())), slog.String("endToEndId", endToEnd),
		slog.String("txid", txid), slog.String("rtrId", rtrID), slog.String("outcome", string(outcome)),
		slog.String("detail", detail))
}

package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
}

// acquirerRoutes registers POST /acquirer/pix, the acquirer's payment notifications.
func (s *Server) acquirerRoutes(r *mux.Router) {
	d := s.deps.Acquirer
	if d == nil {
		return
	}
	r.Name("acquirer.pix").Methods(http.MethodPost).Path("/acquirer/pix").
		Handler(acquirerAuthed(d.Secret, s.acquirerPix))
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
		if fields := queryErrors(r.URL.RawQuery); len(fields) > 0 {
			validationFailed(w, r, fields)
			return
		}
		if !jsonBodyOrNone(w, r) {
			return
		}
		h(w, r)
	})
}

// The callback body of Banco Central's standard API Pix ("Webhook" of the API Pix, `Pix` and
// `Devolucao` schemas). Fields of that schema pixgate does not use (componentesValor, chave,
// infoPagador, natureza, liquidacao) are accepted and checked for shape; any other field is an
// unknown_field error, like everywhere else.
type acquirerCallback struct {
	Pix []acquirerPix `json:"pix"`
}

type acquirerPix struct {
	EndToEndID       *string             `json:"endToEndId"`
	TxID             *string             `json:"txid"`
	Valor            *string             `json:"valor"`
	ComponentesValor rawObject           `json:"componentesValor"`
	Chave            *string             `json:"chave"`
	Horario          *string             `json:"horario"`
	InfoPagador      *string             `json:"infoPagador"`
	Devolucoes       []acquirerDevolucao `json:"devolucoes"`
}

type acquirerDevolucao struct {
	ID       *string                `json:"id"`
	RtrID    *string                `json:"rtrId"`
	Valor    *string                `json:"valor"`
	Natureza *string                `json:"natureza"`
	Horario  *acquirerRefundHorario `json:"horario"`
	Status   *string                `json:"status"`
	Motivo   *string                `json:"motivo"`
}

type acquirerRefundHorario struct {
	Solicitacao *string `json:"solicitacao"`
	Liquidacao  *string `json:"liquidacao"`
}

// maxAcquirerEntries bounds the entries of one callback (acquirers send a few at a time).
const maxAcquirerEntries = 1000

var (
	// acquirerIDRule: end-to-end ids (endToEndId, rtrId) are 32 characters [a-zA-Z0-9].
	acquirerIDRule = acquirerAlnum(32, 32, "must be an end-to-end id: 32 letters and digits")
	// acquirerTxIDRule: API Pix txids and refund ids have 1 to 35 characters [a-zA-Z0-9].
	acquirerTxIDRule = acquirerAlnum(1, 35, "must have 1 to 35 letters and digits")
	// acquirerTimeRule checks an RFC 3339 time that nothing maps (a refund's horario).
	acquirerTimeRule = acquirerTimeInto(new(time.Time))
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
	return into(dst, func(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) },
		"invalid_format", "must be an RFC 3339 date-time")
}

var errAcquirerFormat = errors.New("not letters and digits of the right length")

func acquirerAlnum(min, max int, message string) validation.Rule {
	return parsed(func(s string) error {
		if len(s) < min || len(s) > max {
			return errAcquirerFormat
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return errAcquirerFormat
			}
		}
		return nil
	}, "invalid_format", message)
}

// parse checks every rule of the callback and maps it to the use case's input in the same
// pass: each amount and time is kept as its rule parsed it. The notifications are meaningful
// only when no field error is returned.
func (c *acquirerCallback) parse() ([]application.PixNotification, []FieldError) {
	out := make([]application.PixNotification, len(c.Pix))
	err := validation.ValidateStruct(c,
		validation.Field(&c.Pix, required, eachInto(c.Pix, out, (*acquirerPix).parse)),
	)
	if fields := fieldErrors("", err); len(fields) > 0 {
		return nil, fields
	}
	return out, nil
}

func (p *acquirerPix) parse(n *application.PixNotification) error {
	n.Refunds = make([]application.PixRefund, len(p.Devolucoes))
	err := validation.ValidateStruct(p,
		validation.Field(&p.EndToEndID, required, acquirerIDRule),
		validation.Field(&p.TxID, required, acquirerTxIDRule),
		validation.Field(&p.Valor, required, acquirerValorInto(&n.Amount)),
		validation.Field(&p.Chave, length(1, 77)),
		validation.Field(&p.Horario, required, acquirerTimeInto(&n.PaidAt)),
		validation.Field(&p.InfoPagador, length(0, 140)),
		validation.Field(&p.Devolucoes, eachInto(p.Devolucoes, n.Refunds, (*acquirerDevolucao).parse)),
	)
	if err == nil {
		n.EndToEndID, n.TxID = *p.EndToEndID, *p.TxID
	}
	return err
}

func (d *acquirerDevolucao) parse(r *application.PixRefund) error {
	err := validation.ValidateStruct(d,
		validation.Field(&d.ID, required, acquirerTxIDRule),
		validation.Field(&d.RtrID, required, acquirerIDRule),
		validation.Field(&d.Valor, required, acquirerValorInto(&r.Amount)),
		validation.Field(&d.Natureza, oneOf("ORIGINAL", "RETIRADA", "MED_OPERACIONAL", "MED_FRAUDE")),
		validation.Field(&d.Horario, required),
		validation.Field(&d.Status, required, oneOf(string(application.PixRefundInProgress),
			string(application.PixRefundReturned), string(application.PixRefundNotDone))),
		validation.Field(&d.Motivo, length(0, 140)),
	)
	if err == nil {
		r.ID, r.ReturnID, r.Status = *d.ID, *d.RtrID, application.PixRefundStatus(*d.Status)
		r.Reason = strings.TrimSpace(str(d.Motivo))
	}
	return err
}

func (h acquirerRefundHorario) Validate() error {
	return validation.ValidateStruct(&h,
		validation.Field(&h.Solicitacao, required, acquirerTimeRule),
		validation.Field(&h.Liquidacao, acquirerTimeRule),
	)
}

// acquirerResultsView is the 200 body of POST /acquirer/pix: one result per `pix` entry, in
// order (application.NotificationOutcome lists the outcomes).
type acquirerResultsView struct {
	Results []acquirerResultView `json:"results"`
}

type acquirerResultView struct {
	EndToEndID string                     `json:"endToEndId"`
	TxID       string                     `json:"txid"`
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

// acquirerPix applies a callback. A well-formed body answers 200 with a result per entry,
// whatever each entry's outcome, so that the acquirer stops retrying what can never apply; the
// entries that were not applied are logged for operations, who reconcile the money.
func (s *Server) acquirerPix(w http.ResponseWriter, r *http.Request) {
	var req acquirerCallback
	_, fields, ok := decodeBody(w, r, &req)
	if !ok {
		return
	}
	if len(req.Pix) > maxAcquirerEntries {
		// One error for the array rather than one per entry it should not have had.
		validationFailed(w, r, []FieldError{{Field: "pix", Code: "too_long",
			Message: fmt.Sprintf("must have at most %d entries", maxAcquirerEntries)}})
		return
	}
	notifications, parseErrs := req.parse()
	if fields = mergeFieldErrors(fields, parseErrs); len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	results, err := s.deps.Acquirer.Notifications.Execute(r.Context(), notifications)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := acquirerResultsView{Results: make([]acquirerResultView, 0, len(results))}
	for _, res := range results {
		v := acquirerResultView{EndToEndID: res.EndToEndID, TxID: res.TxID, Outcome: string(res.Outcome),
			Status: string(res.Status), Detail: res.Detail}
		s.logUnapplied(r, res.EndToEndID, res.TxID, "", res.Outcome, res.Detail)
		for _, rr := range res.Refunds {
			v.Devolucoes = append(v.Devolucoes, acquirerRefundResultView{ID: rr.ID, RtrID: rr.ReturnID,
				Outcome: string(rr.Outcome), Detail: rr.Detail})
			s.logUnapplied(r, res.EndToEndID, res.TxID, rr.ReturnID, rr.Outcome, rr.Detail)
		}
		out.Results = append(out.Results, v)
	}
	writeJSON(w, http.StatusOK, out)
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

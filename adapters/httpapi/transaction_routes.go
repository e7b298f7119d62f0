package httpapi

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

func (s *Server) transactionRoutes(r *mux.Router) {
	route(r, "transaction.create", http.MethodPost, "/transaction").
		Handler(s.authed(domain.ScopeTransactionWrite, s.limited(s.createTransaction)))
	route(r, "transaction.list", http.MethodGet, "/transaction").
		Handler(s.authed(domain.ScopeTransactionRead, s.listTransactions))
	// The busiest route: matched without a regexp.
	s.routeLastSegment(r, "transaction.get", http.MethodGet, "/transaction/{id}").
		Handler(s.authed(domain.ScopeTransactionRead, s.getTransaction))
	route(r, "transaction.refund", http.MethodPost, "/transaction/{id}/refund").
		Handler(s.authed(domain.ScopeTransactionWrite, s.refundTransaction))
}

// decodeBody decodes a JSON request body into dst and answers the body-level failures (415,
// 413, 422 malformed_json) itself; it returns false when it answered.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) (map[string]any, []FieldError, bool) {
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type",
			"the body must be sent as Content-Type: application/json", nil)
		return nil, nil, false
	}
	raw, fields, err := decodeJSON(r, dst)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "payload_too_large", "the request body exceeds 1 MiB", nil)
		return nil, nil, false
	case errors.Is(err, errDuplicateMember):
		writeProblem(w, r, http.StatusUnprocessableEntity, "malformed_json", "the body repeats a member name in one object", nil)
		return nil, nil, false
	case errors.Is(err, errInvalidUTF8), errors.Is(err, errLoneSurrogate):
		writeProblem(w, r, http.StatusUnprocessableEntity, "malformed_json",
			"the body must be UTF-8 and its strings must not hold a lone surrogate escape", nil)
		return nil, nil, false
	case err != nil:
		writeProblem(w, r, http.StatusUnprocessableEntity, "malformed_json", "the body must be a JSON object", nil)
		return nil, nil, false
	}
	return raw, fields, true
}

// isJSONMediaType accepts application/json, with parameters; a charset, when given, must be
// UTF-8, the only encoding of JSON bodies.
func isJSONMediaType(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// hasBody tells whether a request came with a body, however it was framed.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 || len(r.TransferEncoding) > 0 || r.Header.Get("Transfer-Encoding") != ""
}

// pathID reads the {id} path parameter; a malformed id answers 422 and false.
func pathID(w http.ResponseWriter, r *http.Request) (string, bool) {
	return checkID(w, r, mux.Vars(r)["id"])
}

// checkID is pathID for an id read from the path by other means (lastSegment).
func checkID(w http.ResponseWriter, r *http.Request, id string) (string, bool) {
	if !domain.IsUUID(id) {
		validationFailed(w, r, []FieldError{{Field: "id", Code: "invalid_format", Message: "must be a UUID"}})
		return "", false
	}
	// Ids are lowercase; an uppercase spelling names the same resource.
	return toLowerASCII(id), true
}

func toLowerASCII(s string) string {
	upper := 0
	for upper < len(s) && (s[upper] < 'A' || s[upper] > 'Z') {
		upper++
	}
	if upper == len(s) {
		return s // ids come lowercase: no copy
	}
	b := []byte(s)
	for i, c := range b[upper:] {
		if c >= 'A' && c <= 'Z' {
			b[upper+i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (s *Server) createTransaction(w http.ResponseWriter, r *http.Request) {
	var req createTransactionRequest
	raw, fields, ok := decodeBody(w, r, &req)
	if !ok {
		return
	}
	order, orderErrs := req.parse(s.deps.Clock.Now())
	fields = mergeFieldErrors(fields, orderErrs)
	key, keyErrs := idempotencyKeyOf(r, req.IdempotencyKey)
	fields = append(fields, keyErrs...)
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	res, err := s.deps.CreateTransaction.Execute(r.Context(), principalFrom(r.Context()), application.CreateTransactionInput{
		Order: order, IdempotencyKey: key, Fingerprint: fingerprint(raw),
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCreated(w, "/transaction/"+res.Transaction.ID(), res.Replayed, viewCreatedTransaction(res.Transaction, s.cfg.PublicURL))
}

func (s *Server) getTransaction(w http.ResponseWriter, r *http.Request) {
	id, ok := checkID(w, r, lastSegment(r.URL.Path)) // its route is registered by routeLastSegment
	if !ok {
		return
	}
	t, err := s.deps.GetTransaction.Execute(r.Context(), principalFrom(r.Context()), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b := s.jsonBufs.get()
	v := viewTransactionInto(t, s.cfg.PublicURL, &b.view)
	s.jsonBufs.writeTransaction(w, http.StatusOK, &v, b)
}

func (s *Server) listTransactions(w http.ResponseWriter, r *http.Request) {
	filter, page, fields := parseListQuery(r.URL.Query())
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	list, err := s.deps.ListTransactions.Execute(r.Context(), principalFrom(r.Context()), filter, page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := listView{Total: list.Total, TotalPages: list.TotalPages, CurrentPage: list.CurrentPage,
		PerPage: list.PerPage, Data: make([]transactionView, 0, len(list.Items))}
	for _, t := range list.Items {
		out.Data = append(out.Data, viewTransaction(t, s.cfg.PublicURL))
	}
	writeJSON(w, http.StatusOK, out)
}

// refundTransaction starts a full or partial refund. The body is optional: none (or {})
// refunds everything still refundable. The idempotency key comes from the body or the
// Idempotency-Key header, as for POST /transaction, and the fingerprint is the body's.
func (s *Server) refundTransaction(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var req refundRequest
	var raw map[string]any
	var fields []FieldError
	if hasBody(r) {
		if raw, fields, ok = decodeBody(w, r, &req); !ok {
			return
		}
	}
	fields = mergeFieldErrors(fields, req.validate())
	key, keyErrs := idempotencyKeyOf(r, req.IdempotencyKey)
	fields = append(fields, keyErrs...)
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	in := application.RefundInput{Reason: str(req.Reason), IdempotencyKey: key, Fingerprint: fingerprint(raw)}
	if req.Amount != nil {
		in.Amount = domain.Cents(*req.Amount)
	}
	res, err := s.deps.RefundTransaction.Execute(r.Context(), principalFrom(r.Context()), id, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	markReplayed(w, res.Replayed)
	writeJSON(w, http.StatusAccepted, viewTransaction(res.Transaction, s.cfg.PublicURL))
}

// emptyBody accepts an action request with no body, or an empty JSON object; anything else
// is refused as the action takes no fields.
func emptyBody(w http.ResponseWriter, r *http.Request) bool {
	if !hasBody(r) {
		return true
	}
	var none struct{}
	_, fields, ok := decodeBody(w, r, &none)
	if !ok {
		return false
	}
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return false
	}
	return true
}

// idempotencyKeyOf is the request's idempotency key: the body's, or else the Idempotency-Key
// header's (8 to 255 characters too). Both present and different is a validation error.
func idempotencyKeyOf(r *http.Request, body *string) (string, []FieldError) {
	key := str(body)
	header := r.Header.Get("Idempotency-Key")
	switch {
	case header == "":
		return key, nil
	case key != "" && key != header:
		return key, []FieldError{{Field: "idempotencyKey", Code: "invalid_format", Message: "differs from the Idempotency-Key header"}}
	case key == "":
		if err := length(8, 255).Validate(&header); err != nil {
			return "", fieldErrors("Idempotency-Key", err)
		}
		return header, nil
	}
	return key, nil
}

package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// errorTable is the one place that decides which status and problem code an error of the
// application answers with. Errors are matched with errors.Is, so wrapping never turns a
// merchant's mistake into a 500.
var errorTable = []struct {
	err    error
	status int
	code   string
	detail string
}{
	{domain.ErrNotFound, http.StatusNotFound, "not_found", "no such resource"},
	{domain.ErrInvalidTransition, http.StatusConflict, "invalid_transition", ""},
	{domain.ErrInsufficientBalance, http.StatusUnprocessableEntity, "insufficient_balance",
		"the available balance does not cover this debit (a withdrawal's amount and fee, or a refund's amount); nothing was recorded"},
	{domain.ErrRefundNotAllowed, http.StatusUnprocessableEntity, "refund_not_allowed",
		"a transaction may be refunded up to 90 days after its payment"},
	{domain.ErrAccountDisabled, http.StatusForbidden, "forbidden", "the client account is disabled"},
	{domain.ErrCredentialLimit, http.StatusUnprocessableEntity, "limit_exceeded",
		fmt.Sprintf("the account already holds %d credentials that are not revoked; revoke one before creating another", domain.MaxActiveCredentials)},
	// The request mapping checks every rule the domain's constructors hold, so these reach the
	// table only if the two drift apart; the merchant still learns what the domain refused.
	{domain.ErrInvalidOrder, http.StatusUnprocessableEntity, "validation_failed", ""},
	{domain.ErrInvalidPixKey, http.StatusUnprocessableEntity, "validation_failed", ""},
	{domain.ErrInvalidPixKeyType, http.StatusUnprocessableEntity, "validation_failed", ""},
	// A creation that met a stored resource with the same id, payment token or client id (all
	// random) or a key a concurrent twin took: nothing was stored.
	{ports.ErrDuplicate, http.StatusConflict, "conflict", "a resource with the same identity already exists; nothing was stored"},
	{application.ErrIdempotencyKeyReused, http.StatusUnprocessableEntity, "idempotency_key_reused", "the idempotency key was used with a different request"},
	{ports.ErrInvalidToken, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"},
	{ports.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "the service is temporarily unavailable; retry later"},
	// Too many creations wait for their QR code already; nothing was stored.
	{ports.ErrOverloaded, http.StatusServiceUnavailable, "unavailable", "too many charges are being created at once; nothing was stored, retry in a moment"},
	// The QR code was not drawn within its deadline (PIXGATE_QR_TIMEOUT); nothing was stored.
	{ports.ErrTimedOut, http.StatusServiceUnavailable, "unavailable", "the charge's QR code could not be drawn in time; nothing was stored, retry in a moment"},
	// A change that kept losing to concurrent ones: nothing was stored, a retry will do.
	{ports.ErrVersionConflict, http.StatusServiceUnavailable, "unavailable", "the resource is busy; retry later"},
	// The PSP did not make the charge, or did not say whether it did: nothing was stored, and a
	// retry with the same Idempotency-Key asks for the same charge.
	{ports.ErrChargeUnavailable, http.StatusServiceUnavailable, "unavailable", "the PSP that makes the charges could not be reached or did not answer in time; nothing was stored, retry with the same Idempotency-Key"},
	// The PSP refused the charge: its words are the detail (writeError). Nothing was stored.
	{ports.ErrChargeRefused, http.StatusBadGateway, "acquirer_error", ""},
}

// fieldErrorTable turns the typed errors of the application that blame one field of the
// request into 422 validation_failed, exactly as if this adapter's validation had found them.
var fieldErrorTable = []func(error) (FieldError, bool){
	func(err error) (FieldError, bool) {
		e, ok := errors.AsType[*domain.RefundAmountError](err)
		if !ok {
			return FieldError{}, false
		}
		msg := fmt.Sprintf("must be between 1 and %d, the amount still refundable", e.Refundable)
		if e.Refundable < 1 {
			msg = "must be at most what is still refundable, and nothing is"
		}
		return FieldError{Field: "amount", Code: "out_of_range", Message: msg}, true
	},
}

// writeError answers err as a problem (Problems.WriteError).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	Problems{log: s.log}.WriteError(w, r, err)
}

// WriteError answers err as a problem. Errors outside the table are internal: the answer says
// nothing about them, the log line with the same request id says everything.
func (p Problems) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if p.log == nil {
		p = NewProblems(nil)
	}
	if errors.Is(err, ports.ErrChargeRefused) || errors.Is(err, ports.ErrChargeUnavailable) {
		// The merchant learns that the PSP made nothing; operators learn why.
		p.log.WarnContext(r.Context(), "the PSP did not make the charge", slog.String("requestId", requestIDFrom(r.Context())),
			slog.String("error", err.Error()))
	}
	if refused, ok := errors.AsType[*ports.ChargeRefusedError](err); ok {
		writeProblem(w, r, http.StatusBadGateway, "acquirer_error", refused.Error()+"; nothing was stored", nil)
		return
	}
	for _, blame := range fieldErrorTable {
		if f, ok := blame(err); ok {
			validationFailed(w, r, []FieldError{f})
			return
		}
	}
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			detail := e.detail
			if detail == "" {
				detail = err.Error()
			}
			if e.status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			}
			if e.status == http.StatusServiceUnavailable {
				retry := "1"
				if errors.Is(err, ports.ErrChargeUnavailable) {
					retry = "5" // the PSP is down or slow: a second is too soon to ask again
				}
				w.Header().Set("Retry-After", retry)
			}
			writeProblem(w, r, e.status, e.code, detail, nil)
			return
		}
	}
	if ee, ok := errors.AsType[*application.EmissionError](err); ok {
		p.log.ErrorContext(r.Context(), "PIX emission failed", slog.String("requestId", requestIDFrom(r.Context())),
			slog.String("transactionId", ee.TransactionID), slog.String("error", ee.Err.Error()))
		writeProblem(w, r, http.StatusInternalServerError, "internal_error",
			"the PIX charge could not be emitted; transaction "+ee.TransactionID+" was kept FAILED", nil)
		return
	}
	p.log.ErrorContext(r.Context(), "request failed", slog.String("requestId", requestIDFrom(r.Context())), slog.String("error", err.Error()))
	writeProblem(w, r, http.StatusInternalServerError, "internal_error", "an internal error occurred; quote the request id to support", nil)
}

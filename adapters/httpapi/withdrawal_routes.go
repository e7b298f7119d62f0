package httpapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// WithdrawalDeps are the use cases of POST /withdrawal, GET /withdrawal/{id}, cancel,
// GET /balance and the sandbox's withdrawal routes. The group is registered when Create, Get,
// Cancel and Balance are all set; the sandbox routes, with Config.Sandbox, when Fail, Reject
// and Refund are set too.
type WithdrawalDeps struct {
	Create  *application.CreateWithdrawal
	Get     *application.GetWithdrawal
	Cancel  *application.CancelWithdrawal
	Balance *application.GetBalance

	// The sandbox acquirer's steering.
	Fail   *application.FailWithdrawal
	Reject *application.RejectWithdrawal
	Refund *application.RefundWithdrawal
}

// withdrawalRoutes registers POST /withdrawal, GET /withdrawal/{id}, cancel and GET /balance,
// and in the sandbox POST /sandbox/withdrawal/{id}/fail, /reject and /refund.
func (s *Server) withdrawalRoutes(r *mux.Router) {
	d := s.deps.Withdrawals
	if d.Create == nil || d.Get == nil || d.Cancel == nil || d.Balance == nil {
		return
	}
	r.Name("withdrawal.create").Methods(http.MethodPost).Path("/withdrawal").
		Handler(s.authed(domain.ScopeWithdrawalWrite, s.createWithdrawal))
	r.Name("withdrawal.get").Methods(http.MethodGet).Path("/withdrawal/{id}").
		Handler(s.authed(domain.ScopeWithdrawalRead, s.getWithdrawal))
	r.Name("withdrawal.cancel").Methods(http.MethodPost).Path("/withdrawal/{id}/cancel").
		Handler(s.authed(domain.ScopeWithdrawalWrite, s.withdrawalAction(d.Cancel.Execute)))
	r.Name("balance.get").Methods(http.MethodGet).Path("/balance").
		Handler(s.authed(domain.ScopeBalanceRead, s.getBalance))

	if s.cfg.Sandbox && d.Fail != nil && d.Reject != nil && d.Refund != nil {
		r.Name("sandbox.withdrawal.fail").Methods(http.MethodPost).Path("/sandbox/withdrawal/{id}/fail").
			Handler(s.authed(domain.ScopeWithdrawalWrite, s.withdrawalAction(d.Fail.Execute)))
		r.Name("sandbox.withdrawal.reject").Methods(http.MethodPost).Path("/sandbox/withdrawal/{id}/reject").
			Handler(s.authed(domain.ScopeWithdrawalWrite, s.withdrawalAction(d.Reject.Execute)))
		r.Name("sandbox.withdrawal.refund").Methods(http.MethodPost).Path("/sandbox/withdrawal/{id}/refund").
			Handler(s.authed(domain.ScopeWithdrawalWrite, s.withdrawalAction(d.Refund.Execute)))
	}
}

func (s *Server) createWithdrawal(w http.ResponseWriter, r *http.Request) {
	var req createWithdrawalRequest
	raw, fields, ok := decodeBody(w, r, &req)
	if !ok {
		return
	}
	pixKey, pixKeyFields := req.parse()
	fields = mergeFieldErrors(fields, pixKeyFields)
	key, keyFields := idempotencyKeyOf(r, req.IdempotencyKey)
	fields = append(fields, keyFields...)
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return
	}
	res, err := s.deps.Withdrawals.Create.Execute(r.Context(), principalFrom(r.Context()), application.CreateWithdrawalInput{
		Amount: domain.Cents(*req.Amount), PixKey: pixKey, ExternalCode: str(req.ExternalCode),
		WebhookURL: str(req.WebhookURL), IdempotencyKey: key, Fingerprint: fingerprint(raw),
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Location", "/withdrawal/"+res.Withdrawal.ID())
	writeJSON(w, http.StatusCreated, viewCreatedWithdrawal(res.Withdrawal))
}

func (s *Server) getWithdrawal(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	wd, err := s.deps.Withdrawals.Get.Execute(r.Context(), principalFrom(r.Context()), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewWithdrawal(wd))
}

// withdrawalAction serves a state-changing action on one withdrawal (cancel, the sandbox's
// steering): no body; 200 with the withdrawal as its GET shows it afterwards, or the use case's error
// (409 for a status the action does not leave from, 404 for another account's id).
func (s *Server) withdrawalAction(act func(context.Context, domain.Principal, string) (*domain.Withdrawal, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		if !emptyBody(w, r) {
			return
		}
		wd, err := act(r.Context(), principalFrom(r.Context()), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, viewWithdrawal(wd))
	}
}

func (s *Server) getBalance(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		var fields []FieldError
		for name := range r.URL.Query() {
			fields = append(fields, FieldError{Field: name, Code: "unknown_field", Message: "is not a parameter of this request"})
		}
		validationFailed(w, r, fields)
		return
	}
	b, err := s.deps.Withdrawals.Balance.Execute(r.Context(), principalFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewBalance(b))
}

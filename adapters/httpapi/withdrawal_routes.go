package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// WithdrawalDeps are the use cases of POST /withdrawal, GET /withdrawal/{id}, cancel and
// GET /balance.
type WithdrawalDeps struct {
	Create  *application.CreateWithdrawal
	Get     *application.GetWithdrawal
	Cancel  *application.CancelWithdrawal
	Balance *application.GetBalance
}

// withdrawalRoutes registers POST /withdrawal, GET /withdrawal/{id}, cancel and GET /balance.
func (s *Server) withdrawalRoutes(r *mux.Router) {
	d := s.deps.Withdrawals
	route(r, "withdrawal.create", http.MethodPost, "/withdrawal").
		Handler(s.authed(domain.ScopeWithdrawalWrite, s.createWithdrawal))
	route(r, "withdrawal.get", http.MethodGet, "/withdrawal/{id}").
		Handler(s.authed(domain.ScopeWithdrawalRead, s.getWithdrawal))
	route(r, "withdrawal.cancel", http.MethodPost, "/withdrawal/{id}/cancel").
		Handler(s.authed(domain.ScopeWithdrawalWrite, transitionHandler(s, d.Cancel, noInput, s.withdrawalView)))
	route(r, "balance.get", http.MethodGet, "/balance").
		Handler(s.authed(domain.ScopeBalanceRead, s.getBalance))

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
	writeCreated(w, "/withdrawal/"+res.Withdrawal.ID(), res.Replayed, viewCreatedWithdrawal(res.Withdrawal))
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

// withdrawalView is a withdrawal as its GET shows it.
func (s *Server) withdrawalView(w *domain.Withdrawal) any { return viewWithdrawal(w) }

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

package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WebhookDeps are the use cases of the event delivery routes.
type WebhookDeps struct {
	ListEvents *application.ListEvents
}

// webhookRoutes registers GET /transaction/{id}/events and GET /withdrawal/{id}/events: the
// notifications a resource raised and every delivery attempt, scoped like every other read.
func (s *Server) webhookRoutes(r *mux.Router) {
	route(r, "transaction.events", http.MethodGet, "/transaction/{id}/events").
		Handler(s.authed(domain.ScopeTransactionRead, s.listEvents(domain.ResourceTransaction)))
	route(r, "withdrawal.events", http.MethodGet, "/withdrawal/{id}/events").
		Handler(s.authed(domain.ScopeWithdrawalRead, s.listEvents(domain.ResourceWithdrawal)))
}

type attemptView struct {
	At         isoTime `json:"at"`
	StatusCode *int    `json:"statusCode"`
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationInMilliseconds"`
}

type eventDeliveryView struct {
	ID            string        `json:"id"`
	Type          string        `json:"type"`
	CreatedAt     isoTime       `json:"createdAt"`
	WebhookURL    string        `json:"webhookUrl"`
	Status        string        `json:"status"`
	NextAttemptAt *isoTime      `json:"nextAttemptAt"`
	Attempts      []attemptView `json:"attempts"`
}

func viewDelivery(d ports.Delivery) eventDeliveryView {
	v := eventDeliveryView{
		ID: d.Event.ID, Type: d.Event.Type, CreatedAt: isoTime(d.Event.CreatedAt), WebhookURL: d.Event.WebhookURL,
		Status: string(d.Status), Attempts: make([]attemptView, 0, len(d.Attempts)),
	}
	if d.Status == ports.DeliveryPending {
		v.NextAttemptAt = isoPtr(&d.NextAttemptAt)
	}
	for _, a := range d.Attempts {
		av := attemptView{At: isoTime(a.At), DurationMs: a.Duration.Milliseconds(), Error: nullableString(a.Error)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			av.StatusCode = &code
		}
		v.Attempts = append(v.Attempts, av)
	}
	return v
}

func (s *Server) listEvents(kind domain.ResourceKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		deliveries, err := s.deps.Webhooks.ListEvents.Execute(r.Context(), principalFrom(r.Context()), kind, id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := struct {
			Data []eventDeliveryView `json:"data"`
		}{Data: make([]eventDeliveryView, 0, len(deliveries))}
		for _, d := range deliveries {
			out.Data = append(out.Data, viewDelivery(d))
		}
		writeJSON(w, http.StatusOK, out)
	}
}

package httpapi

import "github.com/gorilla/mux"

// WebhookDeps are the use cases of the event delivery routes of transactions and withdrawals.
type WebhookDeps struct{}

// webhookRoutes registers the event delivery routes of transactions and withdrawals.
func (s *Server) webhookRoutes(r *mux.Router) {}

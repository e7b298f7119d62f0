package httpapi

import "github.com/gorilla/mux"

// WithdrawalDeps are the use cases of POST /withdrawal, GET /withdrawal/{id}, cancel and GET /balance.
type WithdrawalDeps struct{}

// withdrawalRoutes registers POST /withdrawal, GET /withdrawal/{id}, cancel and GET /balance.
func (s *Server) withdrawalRoutes(r *mux.Router) {}

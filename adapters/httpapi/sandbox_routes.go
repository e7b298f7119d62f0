package httpapi

import "github.com/gorilla/mux"

// SandboxDeps are the use cases of the /sandbox routes that steer transactions and withdrawals.
type SandboxDeps struct{}

// sandboxRoutes registers the /sandbox routes that steer transactions and withdrawals.
func (s *Server) sandboxRoutes(r *mux.Router) {}

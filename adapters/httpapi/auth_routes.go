package httpapi

import "github.com/gorilla/mux"

// AuthDeps are the use cases of the authentication routes.
type AuthDeps struct{}

// authRoutes registers the token, JWKS, credential and webhook-secret routes.
func (s *Server) authRoutes(r *mux.Router) {}

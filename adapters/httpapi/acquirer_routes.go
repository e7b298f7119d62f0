package httpapi

import "github.com/gorilla/mux"

// AcquirerDeps are the use cases of POST /acquirer/pix, the acquirer's payment notifications.
type AcquirerDeps struct{}

// acquirerRoutes registers POST /acquirer/pix, the acquirer's payment notifications.
func (s *Server) acquirerRoutes(r *mux.Router) {}

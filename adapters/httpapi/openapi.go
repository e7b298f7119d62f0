package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/gorilla/mux"
)

// openAPIDocument is the OpenAPI 3.1 description of every route of this adapter, kept by hand
// in openapi.json beside the routes it describes. Tests in cmd/pixgate hold it to the real
// router (no route missing, none invented) and validate real requests and answers against it,
// so a change of a route, a rule or a response shape that forgets the document fails there.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIRoute registers GET /openapi.json, an operational route: no token, one sent is
// ignored.
func (s *Server) openAPIRoute(r *mux.Router) {
	route(r, "openapi", http.MethodGet, "/openapi.json").HandlerFunc(serveOpenAPI)
}

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
}

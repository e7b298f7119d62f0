package httpapi

import (
	"net"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
)

// PixLocationDeps are the payload locations of dynamic charges (docs/API.md, Dynamic charges):
// GET /pix/qr/{locationId}, the signed charge a payer's bank reads, and GET /pix/jwks, the key
// set that verifies it. Registered when Show is set (pixgate has a public address).
type PixLocationDeps struct {
	Show *application.ShowPixLocation
	// KeySet is the JWKS document of the signing keys, served as is.
	KeySet []byte
	// Limiter limits both routes per client address; nil: not limited.
	Limiter *RateLimiter
}

// The paths of the two routes: a dynamic BR Code holds the public address, PixLocationPath and
// the location id; every JWS names the public address and PixKeySetPath as its jku.
const (
	PixLocationPath = "/pix/qr/"
	PixKeySetPath   = "/pix/jwks"
)

func (s *Server) pixLocationRoutes(r *mux.Router) {
	if s.deps.PixLocation == nil {
		return
	}
	// No token: the location is a capability URL, and a payer's bank holds no pixgate token.
	route(r, "pix.location", http.MethodGet, PixLocationPath+"{locationId}").HandlerFunc(s.pixLimited(s.pixLocation))
	route(r, "pix.keys", http.MethodGet, PixKeySetPath).HandlerFunc(s.pixLimited(s.pixKeySet))
}

// pixLimited spends a token of the client address's bucket; over the limit it answers 429
// rate_limited with Retry-After. Payers' banks fetch from a few addresses each, so the limit
// has its own settings, well above the payment page's.
func (s *Server) pixLimited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if l := s.deps.PixLocation.Limiter; l != nil {
			if d := l.take("pixloc/" + peerAddress(r)); !d.allowed {
				w.Header().Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(d.retryAfter))))
				writeProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many requests; retry after the time in Retry-After", nil)
				return
			}
		}
		h(w, r)
	}
}

// peerAddress is the client address a request came from: the TCP peer's IP. Behind a reverse
// proxy every request shares the proxy's; limit there (docs/API.md, Payment page).
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// pixLocation is GET /pix/qr/{locationId}: the charge as a compact JWS, application/jose. An
// unknown or malformed id answers the same 404 problem as any unknown resource.
func (s *Server) pixLocation(w http.ResponseWriter, r *http.Request) {
	jws, err := s.deps.PixLocation.Show.Execute(r.Context(), mux.Vars(r)["locationId"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The status changes with payment and expiry: every fetch must reach pixgate.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/jose")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(jws))
}

// pixKeySet is GET /pix/jwks, the jku of every location's JWS.
func (s *Server) pixKeySet(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSONBytes(w, http.StatusOK, s.deps.PixLocation.KeySet)
}

package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// noPaymentPage registers the /pay routes; no test here serves them.
type noPaymentPage struct{}

func (noPaymentPage) Page(http.ResponseWriter, *http.Request, string)   {}
func (noPaymentPage) Status(http.ResponseWriter, *http.Request, string) {}
func (noPaymentPage) Events(http.ResponseWriter, *http.Request, string) {}

// TestRouteGuardsMatchAsThePlainRoutesDo checks route's guards (server.go) against the same
// routes registered without them, in the same order: every method on paths that match routes,
// their prefixes, their neighbours and none, gives the same route, or the same 404 or 405.
// Every route group is registered (the use cases are never called: only the router runs).
func TestRouteGuardsMatchAsThePlainRoutesDo(t *testing.T) {
	repo := failingTransactions(false, false)
	clock := NewFakeClock(fakeNow)
	s := New(Config{Sandbox: true}, completeDeps(Deps{
		Authenticator:     fakeAuthenticator{},
		CreateTransaction: application.NewCreateTransaction(repo, fakeEmitter{}, fakeRenderer{}, fakeIDs{}, fakeCapabilities{}, clock),
		GetTransaction:    application.NewGetTransaction(repo),
		ListTransactions:  application.NewListTransactions(repo),
		RefundTransaction: application.NewRefundTransaction(repo, fakeDevolutions(repo, clock), fakeIDs{}, clock, func(error) {}),
		Sandbox: SandboxDeps{
			PayTransaction: &application.Transition[*domain.Transaction, *domain.AccountHolder]{},
			OpenDispute:    &application.TransactionStep{}, AcceptDispute: &application.TransactionStep{},
			RejectDispute: &application.TransactionStep{}, FailRefund: &application.TransactionStep{},
			FailWithdrawal: &application.WithdrawalStep{}, RejectWithdrawal: &application.WithdrawalStep{},
			RefundWithdrawal: &application.WithdrawalStep{},
		},
		Acquirer:    &AcquirerDeps{Notifications: &application.ApplyPixNotifications{}, Secret: "secret"},
		PixLocation: &PixLocationDeps{Show: &application.ShowPixLocation{}, KeySet: []byte(`{"keys":[]}`)},
		PaymentPage: noPaymentPage{},
	}))
	guarded := s.router
	plain := mux.NewRouter()
	for _, r := range s.Routes() {
		plain.Name(r.Name).Methods(r.Methods...).Path(r.Path).Handler(http.NotFoundHandler())
	}
	const id = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	var paths []string
	for _, r := range s.Routes() {
		path := mux.NewRouter().NewRoute().Path(r.Path)
		url, err := path.URLPath("id", id, "clientId", "c1", "token", "tok", "locationId", "loc")
		if err != nil {
			t.Fatalf("%s: %v", r.Path, err)
		}
		paths = append(paths, url.Path, url.Path+"/", url.Path+"/x", url.Path+"x", url.Path[:len(url.Path)-1])
	}
	paths = append(paths, "/", "/nowhere", "/transaction/", "/v1/transaction", "/withdrawal/"+id+"/cancel/x")
	// Decoded paths no request line spells (set on the URL below): the regexp-free matcher of
	// routeLastSegment must take what mux's [^/]+ takes (a newline, invalid UTF-8) and no more.
	paths = append(paths, "/transaction/a\nb", "/transaction/\xff", "/transaction/\x00", "/transaction//", "/transaction//x", "//transaction/x")
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace}
	for _, path := range paths {
		for _, method := range methods {
			req := httptest.NewRequest(method, "/", nil)
			req.URL.Path = path
			var got, want mux.RouteMatch
			gotOK, wantOK := guarded.Match(req, &got), plain.Match(req, &want)
			gotName, wantName := "", ""
			if got.Route != nil {
				gotName = got.Route.GetName()
			}
			if want.Route != nil {
				wantName = want.Route.GetName()
			}
			// The guarded router has handlers for 404 and 405 (Match is true with the error set);
			// the plain one has none.
			if got.MatchErr != want.MatchErr || gotName != wantName || (gotOK && got.MatchErr == nil) != (wantOK && want.MatchErr == nil) {
				t.Errorf("%s %s: route %q, error %v; without the guards route %q, error %v", method, path, gotName, got.MatchErr, wantName, want.MatchErr)
			}
		}
	}
}

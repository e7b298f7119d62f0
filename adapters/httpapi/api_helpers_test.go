package httpapi_test

// Helpers shared by the HTTP behaviour tests, beside the harness (harness_test.go): answers
// checked, requests and token requests, transactions and refunds, money moved through the
// sandbox, the acquirer's callback, and a merchant's webhook endpoint. A helper that only one
// file (or one family: sec, in security_helpers_test.go) needs stays there, under its prefix.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/domain"
)

// ---------------------------------------------------------------------------------------------
// Answers

// problem checks that r is an RFC 9457 problem+json answer of status and code, as
// apitest.Problem, and returns its field errors as "field code" strings.
func problem(t *testing.T, r response, status int, code string) []string {
	t.Helper()
	return apitest.Problem(t, r.api(), status, code)
}

// problemBody is a problem answer's body without what differs between any two answers
// (requestId, and instance, the path asked for), as canonical JSON: two answers that must not
// be told apart have the same problemBody.
func problemBody(t *testing.T, r response) string {
	t.Helper()
	m := r.json(t)
	delete(m, "requestId")
	delete(m, "instance")
	return jsonText(t, m)
}

// jsonText is v marshalled (map keys sorted).
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// sortedKeys are m's keys, sorted.
func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// unknownID is a well-formed id that no transaction, withdrawal or credential has.
const unknownID = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

// ---------------------------------------------------------------------------------------------
// Requests

// stoppedClock is a clock stopped at 2026-11-22 14:00 UTC, for a test that moves time itself.
func stoppedClock() *fakeClock { return newFakeClock(time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)) }

// want sends a request (as do) and wants status.
func (a *api) want(t *testing.T, status int, method, path, tok string, body any) response {
	t.Helper()
	r := a.do(method, path, tok, body)
	if r.status != status {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// postForm posts form, URL-encoded, to path (a token endpoint), with headers.
func (a *api) postForm(path string, form url.Values, headers ...string) response {
	a.t.Helper()
	return answer(a.client().PostForm(a.t, path, form, headers...))
}

// clientCredentials asks POST /auth/token for a token of the client_credentials grant with
// the client id and secret in the form, and returns the answer, whatever it is.
func (a *api) clientCredentials(clientID, secret string) response {
	a.t.Helper()
	return a.postForm("/auth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}})
}

// basicAuth is an Authorization header of HTTP Basic for a client id and secret, each
// form-encoded first as RFC 6749 (section 2.3.1) wants.
func basicAuth(clientID, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID)+":"+url.QueryEscape(secret)))
}

// ---------------------------------------------------------------------------------------------
// Transactions

// getTransaction is GET /transaction/{id}, which must answer 200.
func (a *api) getTransaction(t *testing.T, tok, id string) response {
	t.Helper()
	return a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil)
}

// webhookCharge creates a charge of 10.00 with a webhook URL (nothing listens there) and
// returns its id.
func (a *api) webhookCharge(t *testing.T, tok string) string {
	t.Helper()
	body := minimalTransaction()
	body["webhookUrl"] = "https://merchant.example.com/hooks"
	return a.want(t, http.StatusCreated, "POST", "/transaction", tok, body).json(t)["id"].(string)
}

// statusHistory checks the statusHistory of a transaction body, as apitest.StatusHistory, and
// returns the durations in milliseconds.
func statusHistory(t *testing.T, got map[string]any, want ...string) []int64 {
	t.Helper()
	return apitest.StatusHistory(t, got, want...)
}

// eventTypes lists the stored events of a transaction, of type typ ("" for all), oldest first.
func (a *api) eventTypes(t *testing.T, id, typ string) []string {
	t.Helper()
	tx, err := a.store.Transactions().Find(context.Background(), id)
	must(t, err)
	ds, err := a.store.Outbox().Deliveries(context.Background(), tx.AccountID(), domain.ResourceTransaction, id)
	must(t, err)
	var out []string
	for _, d := range ds {
		if typ == "" || d.Event.Type == typ {
			out = append(out, d.Event.Type)
		}
	}
	return out
}

// refund posts a refund of the transaction id with body (nil: none) and headers.
func (a *api) refund(tok, id string, body any, headers ...string) response {
	a.t.Helper()
	return a.do("POST", "/transaction/"+id+"/refund", tok, body, headers...)
}

// refundAccepted posts a refund, wants 202 and a body that is the transaction exactly as its
// GET shows it right then, and returns that body.
func (a *api) refundAccepted(t *testing.T, tok, id string, body any, headers ...string) map[string]any {
	t.Helper()
	r := a.refund(tok, id, body, headers...)
	if r.status != http.StatusAccepted {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	if g := a.getTransaction(t, tok, id); !bytes.Equal(g.body, r.body) {
		t.Fatalf("the 202 answer differs from the GET after it:\n%s\n%s", r.body, g.body)
	}
	return r.json(t)
}

// ---------------------------------------------------------------------------------------------
// Money through the sandbox

// The money of the refund, statement and withdrawal tests (feeSettings): each paid charge
// costs a fixed fee of chargeFee cents, each withdrawal withdrawalFee.
const (
	chargeFee     = 100
	withdrawalFee = 150
)

// feeSettings are s with the fees above and a sandbox that settles refunds and payouts as
// soon as its job runs.
func feeSettings(s apiSettings) apiSettings {
	s.Fee = &domain.FeePolicy{FixedCents: chargeFee}
	s.WithdrawalFee, s.SettleNow = withdrawalFee, true
	return s
}

// charge creates a transaction of amount (cents), wants 201 and returns its id.
func (a *api) charge(t *testing.T, tok string, amount int64) string {
	t.Helper()
	body := minimalTransaction()
	body["amount"] = amount
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /transaction: %d, want 201\n%s", r.status, r.body)
	}
	return r.json(t)["id"].(string)
}

// sandboxStep sends POST /sandbox/transaction/{id}/<step> (pay, dispute...) and wants 200.
func (a *api) sandboxStep(t *testing.T, tok, id, step string) {
	t.Helper()
	if r := a.do("POST", "/sandbox/transaction/"+id+"/"+step, tok, nil); r.status != http.StatusOK {
		t.Fatalf("sandbox %s: %d, want 200\n%s", step, r.status, r.body)
	}
}

// paidCharge creates a transaction of amount, pays it through the sandbox and returns its id.
func (a *api) paidCharge(t *testing.T, tok string, amount int64) string {
	t.Helper()
	id := a.charge(t, tok, amount)
	a.sandboxStep(t, tok, id, "pay")
	return id
}

// balance is GET /balance, which must answer 200 with exactly available, blocked and pending,
// as [available, blocked, pending].
func (a *api) balance(t *testing.T, tok string) [3]int64 {
	t.Helper()
	r := a.do("GET", "/balance", tok, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /balance: %d %s", r.status, r.body)
	}
	m := r.json(t)
	if len(m) != 3 {
		t.Fatalf("balance %v, want exactly available, blocked and pending", m)
	}
	return [3]int64{int64(m["available"].(float64)), int64(m["blocked"].(float64)), int64(m["pending"].(float64))}
}

// wantBalance checks the balance after step.
func (a *api) wantBalance(t *testing.T, step, tok string, available, blocked, pending int64) {
	t.Helper()
	if got, want := a.balance(t, tok), [3]int64{available, blocked, pending}; got != want {
		t.Fatalf("%s: balance [available blocked pending] = %v, want %v", step, got, want)
	}
}

// withdrawalRequest is the body of POST /withdrawal of amount to an e-mail key.
func withdrawalRequest(amount int64) map[string]any {
	return map[string]any{"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}
}

// withdraw sends POST /withdrawal of amount to an e-mail key, with headers.
func (a *api) withdraw(tok string, amount int64, headers ...string) response {
	a.t.Helper()
	return a.do("POST", "/withdrawal", tok, withdrawalRequest(amount), headers...)
}

// mustWithdraw withdraws amount to an e-mail key, wants 201 and returns the withdrawal.
func (a *api) mustWithdraw(t *testing.T, tok string, amount int64) map[string]any {
	t.Helper()
	r := a.withdraw(tok, amount)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /withdrawal of %d: %d %s", amount, r.status, r.body)
	}
	return r.json(t)
}

// ---------------------------------------------------------------------------------------------
// The acquirer's callback (POST /acquirer/pix)

// acquirerSecret is the acquirer's shared secret of the APIs that take its callback
// (apiSettings.AcquirerSecret).
const acquirerSecret = apitest.AcquirerSecret

// acquirerE2E is the end-to-end id of the callbacks' payments.
const acquirerE2E = apitest.AcquirerE2E

// pixTxID is the PIX txid of the transaction id.
func pixTxID(t *testing.T, id string) string {
	t.Helper()
	txid, err := pix.TxIDFromTransactionID(id)
	must(t, err)
	return txid
}

// acquirerHorario writes at as acquirers do: Brasília's offset, milliseconds.
func acquirerHorario(at time.Time) string { return apitest.AcquirerHorario(at) }

// pixPayment is one `pix` entry of a callback paying 10.00, the amount of minimalTransaction,
// to txid at the API's now (a horario must lie between the charge's creation and the API's
// now plus 5 minutes, so an API on a stopped clock needs its clock's time, not the wall's).
func (a *api) pixPayment(txid, e2e string) map[string]any {
	return pixPaymentAt(txid, e2e, acquirerHorario(a.clock.Now()))
}

// pixPaymentAt is pixPayment at horario, written as given.
func pixPaymentAt(txid, e2e, horario string) map[string]any {
	return apitest.PixPayment(txid, e2e, horario)
}

// devolucao is a `devolucoes` entry returning 10.00 (DEVOLVIDO, refund id D0001), with
// changes set over it.
func devolucao(changes map[string]any) map[string]any { return apitest.Devolucao(changes) }

// postAcquirer posts a callback body to POST /acquirer/pix with the acquirer's secret and
// returns the answer, whatever it is.
func (a *api) postAcquirer(body any) response {
	a.t.Helper()
	return a.do("POST", "/acquirer/pix", "", body, "Authorization", "Bearer "+acquirerSecret)
}

// acquirerResult is one result of the callback's answer.
type acquirerResult = apitest.AcquirerResult

// acquirerNotify posts a callback body as the acquirer, wants a 200 answer holding nothing but
// its results, and returns them.
func (a *api) acquirerNotify(t *testing.T, body any) []acquirerResult {
	t.Helper()
	return apitest.AcquirerResults(t, a.postAcquirer(body).api())
}

// ---------------------------------------------------------------------------------------------
// A merchant's webhook endpoint

// webhookReceiver is a merchant's HTTPS webhook endpoint, reached by the name example.com
// (which the sender resolves to loopback, see newWebhookAPI) and trusted through the sender's
// CA file, as a deployment would configure a private CA (PIXGATE_WEBHOOK_CA_FILE). It answers
// 204 to every request and keeps them.
type webhookReceiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	got    []webhookDelivery
}

// webhookDelivery is one request the receiver got.
type webhookDelivery struct {
	header http.Header
	body   []byte
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	t.Helper()
	rc := &webhookReceiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, webhookDelivery{header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	must(t, os.WriteFile(rc.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}), 0o600))
	return rc
}

// url is the receiver's address at path, by the name example.com.
func (rc *webhookReceiver) url(path string) string {
	return "https://example.com:" + rc.srv.URL[len("https://127.0.0.1:"):] + path
}

// deliveries are the requests received so far, oldest first.
func (rc *webhookReceiver) deliveries() []webhookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]webhookDelivery(nil), rc.got...)
}

// resolver answers every name with its addresses and counts the look-ups.
type resolver struct {
	addrs []netip.Addr
	mu    sync.Mutex
	asked int
}

// loopbackResolver answers every name with 127.0.0.1: no test request leaves the machine.
func loopbackResolver() *resolver {
	return &resolver{addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
}

func (r *resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	return r.addrs, nil
}

// lookups is how many names the resolver was asked.
func (r *resolver) lookups() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// newWebhookAPI is an API whose webhooks reach rc, as serve with
// PIXGATE_WEBHOOK_ALLOW_PRIVATE=true and rc's CA in PIXGATE_WEBHOOK_CA_FILE, every name
// resolved to loopback.
func newWebhookAPI(t *testing.T, rc *webhookReceiver) *api {
	t.Helper()
	return newAPI(t, apiSettings{Webhook: webhook.Options{AllowPrivate: true, CAFile: rc.caFile, Resolver: loopbackResolver()}})
}

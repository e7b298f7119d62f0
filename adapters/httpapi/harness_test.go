package httpapi_test

// The shared harness of the black-box HTTP behaviour tests: the API assembled as `pixgate
// serve` assembles it over the memory store, with the sandbox on, served over real HTTP on
// loopback. Every use case is the real one, tokens are real RS256 JWTs, QR codes are drawn,
// webhooks are signed and sent over real connections. Nothing runs in the background: a test
// runs the jobs it needs (settle, expire, payOut, devolve, deliver), so what it sees never
// depends on a timer. Each test builds its own API and may run in parallel with the others.
//
// The settings a test may change are the fields of apiSettings; their zero values are
// serve's defaults, except the rate limits and token limits, which are off (tests ask for
// many tokens and fail on purpose; the limits have tests of their own that turn them on).

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/adapters/paypage"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/pixsign"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// apiSettings are what a test may change of the API it builds. Zero values are the defaults
// documented in docs/OPERATIONS.md, except where said.
type apiSettings struct {
	// NoSandbox builds the API as production without an acquirer: no /sandbox routes.
	NoSandbox bool
	// Settle is how long sandbox refunds and payouts take to complete (default 2 s); set
	// SettleNow for 0.
	Settle    time.Duration
	SettleNow bool
	// RateRPS and RateBurst limit POST /transaction per account (default: off).
	RateRPS   float64
	RateBurst int
	// TokenRPS, TokenBurst and TokenFailures limit the token endpoint (default: off).
	TokenRPS      float64
	TokenBurst    int
	TokenFailures int
	// PayRPS and PayBurst limit the payment page per address (default 5/s, burst 30).
	PayRPS   float64
	PayBurst int
	// PayStreamsPerCharge and PayStreamsPerAddress bound the page's open live channels
	// (default 5 and 20).
	PayStreamsPerCharge  int
	PayStreamsPerAddress int
	// DynamicCharges is PIXGATE_PUBLIC_URL set to the API's own address (wire_pixlocation.go):
	// the API is served over TLS at its https address, every code holds a payload location
	// under it, and GET /pix/qr/{locationId} and /pix/jwks answer, signed as PixSigning says
	// (its Key nil: one key shared by the tests; its KeySetURL is the API's). PixLocationRPS
	// and PixLocationBurst limit both routes per address (default 50/s, burst 200).
	DynamicCharges   bool
	PixSigning       pixsign.Config
	PixLocationRPS   float64
	PixLocationBurst int
	// TokenTTL of issued tokens (default 1 h).
	TokenTTL time.Duration
	// JWTIssuer is the tokens' iss (default "pixgate").
	JWTIssuer string
	// AcquirerSecret turns POST /acquirer/pix on with that shared secret.
	AcquirerSecret string
	// WithdrawalFee in cents (default 0).
	WithdrawalFee int64
	// Fee on a paid transaction (default 0.99%, no fixed part: PIXGATE_FEE_BASIS_POINTS 99).
	Fee *domain.FeePolicy
	// Clock is the API's clock (default the wall clock, in UTC).
	Clock ports.Clock
	// Accounts is the account store (default a new memory one); two APIs may share one.
	Accounts ports.AccountRepository
	// Webhook are the webhook sender's options (the Clock is the API's).
	Webhook webhook.Options
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// AuthCacheTTL is how long the API trusts what it read about a credential and its account
	// (default 2 s); NoAuthCache reads them on every request (PIXGATE_AUTH_CACHE_TTL 0).
	AuthCacheTTL time.Duration
	NoAuthCache  bool
}

// api is one assembled API and what its tests reach behind it.
type api struct {
	t   *testing.T
	srv *httptest.Server
	log *httpapi.LogBuffer

	clock    ports.Clock
	store    *memory.Store
	accounts ports.AccountRepository
	ids      ports.IDGenerator
	hasher   ports.Secrets
	issuer   ports.TokenIssuer
	metrics  *metrics.Metrics

	// server is the assembled HTTP adapter (its router's routes).
	server *httpapi.Server

	expirer     *application.ExpireTransactions
	settler     *sandbox.SettleTransactions
	payouts     *application.PayOutWithdrawals
	devolutions *application.SendDevolutions
	dispatcher  *application.Dispatcher
	payPage     *paypage.Handler
}

// signingKey is the one RSA key the harness's token issuers sign with: generating a 2048-bit
// key takes longer than most tests.
var signingKey = sync.OnceValues(jwtauth.GenerateKey)

// credentialKey is the HMAC key of client secrets in every API the harness builds.
var credentialKey = bytes.Repeat([]byte{0x5a}, 32)

// newAPI assembles the API with the settings s (none: the defaults) and serves it until the
// test ends. t may be a fuzz target's *testing.F: its API's helper methods (account, do...)
// need a *testing.T, so a fuzz target calls the handler, a.srv.Config.Handler, itself.
func newAPI(t testing.TB, s ...apiSettings) *api {
	t.Helper()
	var set apiSettings
	if len(s) > 0 {
		set = s[0]
	}
	set.defaults()
	logs := &httpapi.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	// The listener comes first: payment page addresses name it.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	publicURL := "http://" + srv.Listener.Addr().String()

	tt, _ := t.(*testing.T)
	a := &api{t: tt, srv: srv, log: logs, clock: set.Clock, store: memory.NewStore(), ids: system.UUIDs{}, metrics: metrics.New()}
	authCache := application.NewAuthCache(set.AuthCacheTTL, a.clock, 0)
	a.accounts = authCache.Invalidating(set.Accounts)
	txs := a.metrics.Transactions(a.store.Transactions())
	wds := a.metrics.Withdrawals(a.store.Withdrawals())
	ledger := a.metrics.Ledger(a.store.Ledger())

	hasher, err := system.NewClientSecrets(credentialKey)
	must(t, err)
	key, err := signingKey()
	must(t, err)
	jwtCfg := jwtauth.Config{Issuer: set.JWTIssuer, Audience: "pixgate-api", Clock: a.clock}
	issuer, err := jwtauth.NewIssuer(jwtCfg, key)
	must(t, err)
	verifier, err := jwtauth.NewVerifier(jwtCfg, jwtauth.VerifierOptions{Leeway: 30 * time.Second}, &key.PublicKey)
	must(t, err)
	a.hasher, a.issuer = hasher, issuer

	var locationPrefix string
	if set.DynamicCharges {
		publicURL = "https://" + srv.Listener.Addr().String()
		locationPrefix = strings.TrimPrefix(publicURL, "https://") + httpapi.PixLocationPath
	}
	emitter, err := pix.NewEmitter(pix.EmitterConfig{PixKey: "pix@pixgate.example", MerchantName: "PIXGATE SANDBOX", MerchantCity: "SAO PAULO",
		LocationPrefix: locationPrefix})
	must(t, err)
	renderer := a.metrics.QRRenderer(qr.New(qr.Options{Timeout: 10 * time.Second}))
	fee := domain.FeePolicy{BasisPoints: 99}
	if set.Fee != nil {
		fee = *set.Fee
	}
	receiver, err := sandbox.ReceivingAccount("pix@pixgate.example", "PIXGATE SANDBOX")
	must(t, err)

	var acquirer ports.Acquirer = unconfiguredAcquirer{}
	if !set.NoSandbox {
		acquirer = sandbox.NewAcquirer(a.clock)
	}
	a.devolutions = application.NewSendDevolutions(txs, ledger, acquirer, a.clock,
		application.DevolutionSettings{CheckEvery: 300 * time.Second, Claim: application.ClaimMargin + 10*time.Second},
		func(r application.DevolutionReport) { log.Info(r.What, slog.String("transactionId", r.TransactionID)) })
	a.expirer = application.NewExpireTransactions(txs, a.clock)

	reportRefund := func(err error) {
		log.Warn("refund stored; its devolution is left to the outbox", slog.String("error", err.Error()))
	}
	deps := httpapi.Deps{
		Authenticator:     application.NewCachedAuthenticate(application.NewCachingVerifier(verifier, a.clock, 0), a.accounts, authCache),
		CreateTransaction: application.NewCreateTransaction(txs, emitter, renderer, a.ids, system.Capabilities{}, a.clock),
		GetTransaction:    application.NewGetTransaction(txs),
		ListTransactions:  application.NewListTransactions(txs),
		RefundTransaction: application.NewRefundTransaction(txs, a.devolutions, a.ids, a.clock, reportRefund),
		RateLimiter:       httpapi.NewRateLimiter(set.RateRPS, set.RateBurst, a.clock),
		Ready:             a.store,
		Clock:             a.clock,
		Observer:          a.metrics,
		Metrics:           a.metrics.Handler(),
		Logger:            log,
		Ledger:            httpapi.LedgerDeps{Entries: application.NewListEntries(ledger)},
		Auth: httpapi.AuthDeps{
			Token:               application.NewIssueToken(a.accounts, issuer, hasher, set.TokenTTL),
			Issuer:              set.JWTIssuer,
			PublicURL:           set.JWTIssuer,
			Limits:              httpapi.NewTokenLimits(set.TokenRPS, set.TokenBurst, set.TokenFailures, a.clock),
			JWKS:                verifier.JWKS(),
			CreateCredential:    application.NewCreateCredential(a.accounts, a.ids, a.clock, hasher),
			ListCredentials:     application.NewListCredentials(a.accounts),
			RevokeCredential:    application.NewRevokeCredential(a.accounts, a.clock),
			GetWebhookSecret:    application.NewGetWebhookSecret(a.accounts, a.clock),
			RotateWebhookSecret: application.NewRotateWebhookSecret(a.accounts, a.clock, hasher),
		},
	}
	withdrawals := application.WithdrawalSettings{Acquirer: emitter.Acquirer(), Fee: domain.Cents(set.WithdrawalFee)}
	if !set.NoSandbox {
		// As serve's sandbox: its account receives the payments and pays the withdrawals out,
		// the payout is taken in the creating request and completes after the settle delay.
		steer := sandbox.NewTransactionSteering(txs, a.clock, fee, receiver)
		steerWd := sandbox.NewWithdrawalSteering(wds, a.clock)
		deps.Sandbox = httpapi.SandboxDeps{
			PayTransaction: steer.PayTransaction, OpenDispute: steer.OpenDispute, AcceptDispute: steer.AcceptDispute,
			RejectDispute: steer.RejectDispute, FailRefund: steer.FailRefund,
			FailWithdrawal: steerWd.FailWithdrawal, RejectWithdrawal: steerWd.RejectWithdrawal, RefundWithdrawal: steerWd.RefundWithdrawal,
		}
		a.settler = sandbox.NewSettleTransactions(txs, a.clock, emitter.Acquirer(), set.Settle)
		payouts := sandbox.NewPayouts(wds, a.clock, set.Settle, receiver.BankAccount.ISPB)
		a.payouts = application.NewPayOutWithdrawals(wds, payouts, a.clock,
			application.PayoutSettings{CheckEvery: max(set.Settle/4, 500*time.Millisecond), Claim: application.ClaimMargin + 10*time.Second},
			func(r application.PayoutReport) { log.Info(r.What, slog.String("withdrawalId", r.WithdrawalID)) })
		payer := receiver
		withdrawals.Payer, withdrawals.Directory = &payer, sandbox.Directory{}
		withdrawals.StartAtOnce, withdrawals.FirstCheck = true, set.Settle
	}
	deps.Withdrawals = httpapi.WithdrawalDeps{
		Create:  application.NewCreateWithdrawal(wds, a.ids, a.clock, withdrawals),
		Get:     application.NewGetWithdrawal(wds),
		Cancel:  application.NewCancelWithdrawal(wds, a.clock),
		Balance: application.NewGetBalance(ledger),
	}
	if set.AcquirerSecret != "" {
		var paidTo *domain.AccountHolder
		if !set.NoSandbox {
			paidTo = &receiver
		}
		deps.Acquirer = &httpapi.AcquirerDeps{Secret: set.AcquirerSecret, Payouts: a.payouts,
			Notifications: application.NewApplyPixNotifications(txs, ledger, a.devolutions, pix.TxIDDecoder{}, a.clock, fee, paidTo,
				func(l application.LatePayment) { log.Warn("late payment", slog.String("outcome", string(l.Outcome))) })}
	}

	opts := set.Webhook
	opts.Clock = a.clock
	sender, err := webhook.NewSender(opts)
	must(t, err)
	a.dispatcher, err = application.NewDispatcher(a.store.Outbox(), a.accounts, httpapi.EventEncoder{PublicURL: publicURL}, sender, a.clock, system.Random{},
		application.DispatcherConfig{Owner: a.ids.NewID(), Concurrency: 8, PollInterval: time.Second, MaxPollInterval: 5 * time.Second,
			Lease: 30 * time.Second, Logger: log, OnAttempt: a.metrics.ObserveDelivery})
	must(t, err)
	deps.Webhooks = httpapi.WebhookDeps{ListEvents: application.NewListEvents(txs, wds, a.store.Outbox())}

	a.payPage = paypage.New(paypage.Config{MaxStreamsPerCharge: set.PayStreamsPerCharge, MaxStreamsPerAddress: set.PayStreamsPerAddress}, paypage.Deps{
		Show:     application.NewShowPaymentPage(txs, a.accounts, a.clock),
		Follow:   application.NewFollowPayment(txs, a.clock),
		Problems: httpapi.NewProblems(log),
		Limiter:  httpapi.NewRateLimiter(set.PayRPS, set.PayBurst, a.clock),
		Logger:   log,
	})
	deps.PaymentPage = a.payPage
	if set.DynamicCharges {
		deps.PixLocation = pixLocation(t, set, txs, a.clock, publicURL)
	}

	server := httpapi.New(httpapi.Config{MaxBodyBytes: set.MaxBodyBytes, Sandbox: !set.NoSandbox, PublicURL: publicURL}, deps)
	a.metrics.KnownRoutes(server.RouteNames()...)
	a.server = server
	srv.Config.Handler = server.Handler()
	if set.DynamicCharges {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	return a
}

// pixLocation is what serve wires with PIXGATE_PUBLIC_URL: the signer, the use case that
// answers the locations, with serve's cache size, and their rate limit.
func pixLocation(t testing.TB, set apiSettings, txs ports.TransactionRepository, clock ports.Clock, publicURL string) *httpapi.PixLocationDeps {
	t.Helper()
	cfg := set.PixSigning
	if cfg.Key == nil {
		key, err := pixKey()
		must(t, err)
		cfg.Key = key
	}
	cfg.KeySetURL = publicURL + httpapi.PixKeySetPath
	signer, err := pixsign.New(cfg)
	must(t, err)
	if set.PixLocationRPS == 0 && set.PixLocationBurst == 0 {
		set.PixLocationRPS, set.PixLocationBurst = 50, 200
	}
	return &httpapi.PixLocationDeps{
		Show:    application.NewShowPixLocation(txs, signer, clock, "pix@pixgate.example", application.DefaultPixLocationCacheSize),
		KeySet:  signer.KeySet(),
		Limiter: httpapi.NewRateLimiter(set.PixLocationRPS, set.PixLocationBurst, clock),
	}
}

// pixKey signs the payload locations of every API whose PixSigning names no key: a key of
// its own, never the token key, made once.
var pixKey = sync.OnceValues(pixsign.GenerateKey)

func (s *apiSettings) defaults() {
	if s.Settle == 0 && !s.SettleNow {
		s.Settle = 2 * time.Second
	}
	if s.PayRPS == 0 && s.PayBurst == 0 {
		s.PayRPS, s.PayBurst = 5, 30
	}
	if s.PayStreamsPerCharge == 0 {
		s.PayStreamsPerCharge = 5
	}
	if s.PayStreamsPerAddress == 0 {
		s.PayStreamsPerAddress = 20
	}
	if s.TokenTTL == 0 {
		s.TokenTTL = time.Hour
	}
	if s.JWTIssuer == "" {
		s.JWTIssuer = "pixgate"
	}
	if s.Clock == nil {
		s.Clock = system.Clock{}
	}
	if s.Accounts == nil {
		s.Accounts = memory.NewAccounts()
	}
	if s.AuthCacheTTL == 0 && !s.NoAuthCache {
		s.AuthCacheTTL = 2 * time.Second
	}
}

// unconfiguredAcquirer is production without an acquirer API: every devolution waits.
type unconfiguredAcquirer struct{}

func (unconfiguredAcquirer) RequestDevolution(context.Context, ports.Devolution) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, errNoAcquirerAPI
}

func (unconfiguredAcquirer) Devolution(context.Context, string, string) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, errNoAcquirerAPI
}

var errNoAcquirerAPI = errorString("no acquirer API is configured")

type errorString string

func (e errorString) Error() string { return string(e) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Jobs, run by hand: each answers how many items it handled.

// settle completes the sandbox refunds and MED refunds whose delay passed.
func (a *api) settle() int { return a.run(a.settler.RunOnce) }

// expire fails the charges that expired unpaid.
func (a *api) expire() int { return a.run(a.expirer.RunOnce) }

// payOut takes each due payout one step.
func (a *api) payOut() int { return a.run(a.payouts.RunOnce) }

// devolve takes each due devolution one step.
func (a *api) devolve() int { return a.run(a.devolutions.RunOnce) }

// deliver delivers the webhooks that are due.
func (a *api) deliver() int {
	a.t.Helper()
	n, err := a.dispatcher.DeliverDue(context.Background())
	must(a.t, err)
	return n
}

func (a *api) run(job func(context.Context) (int, error)) int {
	a.t.Helper()
	n, err := job(context.Background())
	must(a.t, err)
	return n
}

// account creates a client account with scopes (none: every scope) and returns its id and a
// bearer token for it.
func (a *api) account(scopes ...domain.Scope) (accountID, token string) {
	a.t.Helper()
	created := a.newAccount(scopes...)
	return created.Account.ID(), a.token(created)
}

// newAccount creates a client account with scopes (none: every scope), its credential and
// secret.
func (a *api) newAccount(scopes ...domain.Scope) application.CreatedAccount {
	a.t.Helper()
	created, err := application.NewCreateAccount(a.accounts, a.ids, a.clock, a.hasher).Execute(context.Background(), "Loja Teste", scopes)
	must(a.t, err)
	return created
}

// token issues a bearer token for an account's credential with the account's scopes, valid
// for an hour.
func (a *api) token(c application.CreatedAccount) string {
	a.t.Helper()
	return a.tokenWithScopes(c, c.Account.Scopes()...)
}

// tokenWithScopes issues a bearer token for an account's credential carrying exactly scopes
// (none: a token of no scope), valid for an hour.
func (a *api) tokenWithScopes(c application.CreatedAccount, scopes ...domain.Scope) string {
	a.t.Helper()
	tok, err := a.issuer.Issue(context.Background(), domain.Principal{AccountID: c.Account.ID(),
		ClientID: c.Credential.ClientID, Scopes: scopes}, time.Hour)
	must(a.t, err)
	return tok.Token
}

// response is an answer, read whole: an apitest.Response under the names these tests use.
type response struct {
	status int
	header http.Header
	body   []byte
}

// answer is r as a response.
func answer(r apitest.Response) response {
	return response{status: r.Status, header: r.Header, body: r.Body}
}

// api is r as an apitest.Response.
func (r response) api() apitest.Response {
	return apitest.Response{Status: r.status, Header: r.header, Body: r.body}
}

// json is the answer's body as a JSON object.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	return r.api().JSON(t)
}

// client talks to the API over HTTP.
func (a *api) client() *apitest.Client { return apitest.NewClient(a.srv.URL, a.srv.Client()) }

// do sends a request, as apitest.Client.Do: body is sent as is (a string) or marshalled
// (anything else); headers are name, value pairs.
func (a *api) do(method, path, token string, body any, headers ...string) response {
	a.t.Helper()
	return answer(a.client().Do(a.t, method, path, token, body, headers...))
}

// validCPF and validCNPJ are documents with correct check digits.
const (
	validCPF  = apitest.ValidCPF
	validCNPJ = apitest.ValidCNPJ
)

// minimalTransaction is the smallest valid creation request.
func minimalTransaction() map[string]any { return apitest.MinimalTransaction() }

// fullTransaction uses every field of the request.
func fullTransaction() map[string]any { return apitest.FullTransaction() }

package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/adapters/paypage"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// jwtLeeway is the clock skew tolerated on token times: the maximum docs/API.md, Token endpoints allows.
const jwtLeeway = 30 * time.Second

// stores are the storage ports of the configured store.
type stores struct {
	accounts     ports.AccountRepository
	transactions ports.TransactionRepository
	withdrawals  ports.WithdrawalRepository
	ledger       ports.Ledger
	outbox       ports.Outbox
	pinger       ports.Pinger
	// instances registers the live instances sharing the store (the shared rate limits).
	instances ports.InstanceRegistry
	// reconciliations is the reconciliation's shared state (reconcile.go).
	reconciliations ports.Reconciliations
	close           func(context.Context) error
}

func openStores(ctx context.Context, cfg Config) (stores, error) {
	switch cfg.Store.Kind {
	case "memory":
		s := memory.NewStore()
		return stores{
			accounts: memory.NewAccounts(), transactions: s.Transactions(), withdrawals: s.Withdrawals(),
			ledger: s.Ledger(), outbox: s.Outbox(), pinger: s, instances: memory.NewInstances(),
			reconciliations: memory.NewReconciliations(), close: func(context.Context) error { return nil },
		}, nil
	case "mongo":
		s, err := mongo.Open(ctx, mongo.Config{URI: cfg.Store.MongoURI, Database: cfg.Store.MongoDatabase,
			OpTimeout: cfg.Store.MongoTimeout, MaxPoolSize: cfg.Store.MongoMaxPool})
		if err != nil {
			return stores{}, fmt.Errorf("PIXGATE_MONGODB_URI: opening the store: %w", err)
		}
		return stores{
			accounts: s.Accounts(), transactions: s.Transactions(), withdrawals: s.Withdrawals(),
			ledger: s.Ledger(), outbox: s.Outbox(), pinger: s, instances: s.Instances(),
			reconciliations: s.Reconciliations(), close: s.Close,
		}, nil
	}
	return stores{}, fmt.Errorf("PIXGATE_STORE: store %q is not built in", cfg.Store.Kind)
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(cfg.Server.LogLevel)))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// signingKey loads the configured key, or makes one and says that its tokens die with the
// process.
func signingKey(cfg Config, log *slog.Logger) (*rsa.PrivateKey, error) {
	if cfg.Auth.JWTKeyFile != "" {
		key, err := jwtauth.LoadKeyFile(cfg.Auth.JWTKeyFile)
		if err != nil {
			return nil, fmt.Errorf("PIXGATE_JWT_PRIVATE_KEY_FILE: %w", err)
		}
		return key, nil
	}
	log.Warn("no PIXGATE_JWT_PRIVATE_KEY_FILE: generated a signing key; tokens die with the process")
	return jwtauth.GenerateKey()
}

func secretHasher(cfg Config, log *slog.Logger) (*system.ClientSecrets, error) {
	key := cfg.Store.CredentialKey
	if len(key) == 0 {
		log.Warn("no PIXGATE_CREDENTIAL_KEY: generated one; credentials created now stop matching after a restart")
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return system.NewClientSecrets(key)
}

// app is pixgate assembled: every adapter built and handed to the use cases that need it.
// Each route group is wired in its own wire_*.go file.
type app struct {
	cfg    Config
	log    *slog.Logger
	clock  ports.Clock
	ids    ports.IDGenerator
	tokens ports.CapabilityGenerator
	stores stores
	// publicURL is the base of the payment pages' addresses: PIXGATE_PUBLIC_URL, or the
	// server's own address (serve sets the one it listens on).
	publicURL string
	hasher    *system.ClientSecrets
	// authCache remembers what authentication read (nil when PIXGATE_AUTH_CACHE_TTL is 0).
	authCache *application.AuthCache
	issuer    *jwtauth.Issuer
	verifier  ports.TokenVerifier
	jwks      []byte // the JWKS document of verifier's keys
	emitter   *pix.Emitter
	renderer  ports.QRRenderer
	// accessLog is log's output, where the API writes its access log's lines by hand (serve
	// sets it; nil, they go through log).
	accessLog io.Writer
	// sandbox is the simulated world of PIXGATE_SANDBOX=true; nil, and never built, without it.
	sandbox *sandboxWorld
	// acquirer returns money to payers (refunds, late payments): the sandbox's, the acquirer's
	// API Pix, or none (devolutions.go).
	acquirer ports.Acquirer
	// devolutions is the outbox that sends them (wire_devolutions.go).
	devolutions *application.SendDevolutions

	// psp is the PSP's API Pix with PIXGATE_ACQUIRER_API_URL, nil otherwise (wire_psp.go);
	// onPSPCall, when set before it is built, sees each of its calls and token fetches.
	psp       *apipix.Client
	onPSPCall func(psp.Observation)
	server    *httpapi.Server
	// payPage is the payer-facing page the server mounts (wire_paypage.go).
	payPage *paypage.Handler
	metrics *metrics.Metrics
	// dispatcher delivers webhooks; tests drive it with DeliverDue.
	dispatcher *application.Dispatcher
	// payouts is the payout outbox and payoutAPI the provider it sends through (nil without
	// one: PIXGATE_PAYOUT_PROVIDER, wire_payouts.go).
	payouts   *application.PayOutWithdrawals
	payoutAPI ports.Payouts
	// onWebhookAttempt observes each delivery attempt (metrics); nil observes nothing.
	onWebhookAttempt func(domain.Event, ports.Attempt, ports.DeliveryStatus)
	// webhookOptions are the sender's options beyond the configuration.
	webhookOptions webhook.Options
	// expirer fails charges that expired unpaid; with a reconciliation, once it covered them.
	expirer *application.ExpireTransactions
	// receivedPix lists what the acquirer received, for reconciliation (nil: none; a test
	// may hand one in).
	receivedPix ports.ReceivedPixLister
	// reconcile is the reconciliation job (nil when off); tests run it with RunOnce.
	reconcile *application.ReconcileWithAcquirer
	// notifications applies the acquirer's callbacks and what reconciliation lists (nil
	// when neither exists).
	notifications *application.ApplyPixNotifications
	// jobs run in the background while the server serves, each on its pace, and workers run
	// beside them until shutdown (scheduler.go).
	jobs    []job
	workers []worker
	// callback is the PSP's mutual-TLS callback listener; nil without
	// PIXGATE_ACQUIRER_CALLBACK_ADDR (wire_callback.go).
	callback *callbackListener
	// pixLocationCache bounds the signed answers the location route keeps (0: the default;
	// a benchmark sets 1 to time the fetch that must sign).
	pixLocationCache int
}

// newApp assembles pixgate. Options adjust the app before anything is built (tests point the
// webhook sender at their own resolver, for instance).
func newApp(ctx context.Context, cfg Config, log *slog.Logger, options ...func(*app)) (*app, error) {
	a := &app{cfg: cfg, log: log, clock: system.Clock{}, ids: system.UUIDs{}, tokens: system.Capabilities{}}
	for _, o := range options {
		o(a)
	}
	if cfg.Server.PublicURL != "" {
		a.publicURL = cfg.Server.PublicURL
	} else if a.publicURL == "" {
		a.publicURL = ownBaseURL(cfg.Server.Addr)
	}
	if err := a.buildStores(ctx); err != nil {
		return nil, err
	}
	if err := a.buildSigners(cfg, log); err != nil {
		return nil, err
	}
	if err := a.buildPixCodes(); err != nil {
		return nil, err
	}
	a.measurePorts()
	if err := a.buildAcquirer(); err != nil {
		return nil, err
	}
	a.scheduleUpkeep()
	if err := a.buildServer(); err != nil {
		return nil, err
	}
	return a, nil
}

// buildStores opens the configured store, unless an option handed in stores (instances
// sharing one store), and puts the authentication cache in front of its accounts: every change
// of an account or credential made by this instance reaches its own authentication cache at
// once; other instances' changes within the TTL.
func (a *app) buildStores(ctx context.Context) error {
	if a.stores.accounts == nil {
		var err error
		if a.stores, err = openStores(ctx, a.cfg); err != nil {
			return err
		}
	}
	a.authCache = application.NewAuthCache(a.cfg.Auth.CacheTTL, a.clock, 0)
	a.stores.accounts = a.authCache.Invalidating(a.stores.accounts)
	return nil
}

// buildPixCodes builds the emitter of Pix codes and, unless an option handed one in (serve,
// tests), the renderer of their QR images.
func (a *app) buildPixCodes() error {
	cfg := a.cfg
	var err error
	if a.emitter, err = pix.NewEmitter(pix.EmitterConfig{PixKey: cfg.Pix.Key, MerchantName: cfg.Pix.MerchantName, MerchantCity: cfg.Pix.MerchantCity,
		LocationPrefix: pixLocationPrefix(cfg.Server.PublicURL)}); err != nil {
		return fmt.Errorf("PIXGATE_PIX_KEY: %w", err)
	}
	// Drawings take the CPU that nothing else wants, and a creation that would wait too long is
	// refused. serve hands in the drawing process (PIXGATE_QR_PROCESS); without it they are
	// drawn here, on threads of the lowest priority (serve's caller gives the Go scheduler a
	// processor per drawing on top of the machine's).
	if a.renderer == nil {
		a.renderer = qr.New(qr.Options{Workers: cfg.QR.Concurrency, Queue: cfg.QR.Queue, Background: true, Timeout: cfg.QR.Timeout})
	}
	return nil
}

// measurePorts wraps the storage ports in metrics, so every use case built after it is
// measured, and has the metrics observe webhook deliveries.
func (a *app) measurePorts() {
	a.metrics = metrics.New()
	a.stores.transactions = a.metrics.Transactions(a.stores.transactions)
	a.stores.withdrawals = a.metrics.Withdrawals(a.stores.withdrawals)
	a.stores.ledger = a.metrics.Ledger(a.stores.ledger)
	a.onWebhookAttempt = a.metrics.ObserveDelivery
}

// buildAcquirer builds the acquirer's side: the sandbox's simulated world with
// PIXGATE_SANDBOX=true, the client of the PSP's API Pix, who returns money to payers, and the
// devolution outbox that sends it.
func (a *app) buildAcquirer() error {
	if a.cfg.Sandbox.On {
		var err error
		if a.sandbox, err = newSandboxWorld(a.cfg); err != nil {
			return err
		}
	}
	if err := a.newPSP(); err != nil {
		return err
	}
	a.acquirer = newAcquirer(a.cfg, a.clock, a.psp)
	a.devolutions = a.newDevolutions()
	return nil
}

// scheduleUpkeep builds the expirer and schedules the store's upkeep: expiring charges, and
// finishing in the ledger what a crash left half done.
func (a *app) scheduleUpkeep() {
	a.expirer = application.NewExpireTransactions(a.stores.transactions, a.clock)
	a.jobs = append(a.jobs, job{name: "expiring transactions", pace: application.Pace{Interval: expiryEvery, Bound: expiryBound}, run: a.expirer.RunOnce},
		// The first run, at start, finishes what a crash left half done.
		job{name: recoverJobName, pace: application.Pace{Interval: recoverEvery, Bound: recoverBound}, run: a.stores.ledger.Recover})
}

// buildServer builds the API from the use cases of its core routes and each route group's
// wiring (wire_*.go), and tells the metrics every route name there is.
func (a *app) buildServer() error {
	cfg, st := a.cfg, a.stores
	deps := httpapi.Deps{
		Authenticator:     application.NewCachedAuthenticate(a.verifier, st.accounts, a.authCache),
		CreateTransaction: a.newCreateTransaction(),
		GetTransaction:    application.NewGetTransaction(st.transactions),
		ListTransactions:  application.NewListTransactions(st.transactions),
		RefundTransaction: application.NewRefundTransaction(st.transactions, a.devolutions, a.ids, a.clock, a.reportRefund),
		RateLimiter:       httpapi.NewRateLimiter(cfg.Limits.TransactionRPS, cfg.Limits.TransactionBurst, a.clock),
		Ready:             st.pinger,
		Clock:             a.clock,
		Observer:          a.metrics,
		Logger:            a.log,
		AccessLog:         a.accessLog,
		Ledger:            httpapi.LedgerDeps{Entries: application.NewListEntries(st.ledger)},
	}
	if cfg.Server.MetricsAddr == "" {
		deps.Metrics = a.metrics.Handler()
	}
	wirings := []func(*httpapi.Deps) error{a.wireAuth, a.wireWithdrawals, a.wireSandbox, a.wireAcquirer, a.wireWebhooks, a.wirePaymentPage, a.wirePixLocation, a.wireRateShare,
		a.wireReconcile, a.wireAcquirerWebhook}
	for _, wire := range wirings {
		if err := wire(&deps); err != nil {
			return err
		}
	}
	a.server = httpapi.New(httpapi.Config{MaxBodyBytes: cfg.Server.MaxRequestBytes, Sandbox: cfg.Sandbox.On, PublicURL: a.publicURL}, deps)
	routes := a.server.RouteNames()
	if a.callback != nil {
		routes = append(routes, a.callback.server.RouteNames()...)
	}
	a.metrics.KnownRoutes(routes...) // no other route name becomes a label value
	return nil
}

// buildSigners reads or makes the keys of client secrets and of tokens, and builds the token
// issuer and verifier.
func (a *app) buildSigners(cfg Config, log *slog.Logger) error {
	var err error
	if a.hasher, err = secretHasher(cfg, log); err != nil {
		return err
	}
	key, err := signingKey(cfg, log)
	if err != nil {
		return err
	}
	jwtCfg := jwtauth.Config{Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.Audience, Clock: a.clock}
	if a.issuer, err = jwtauth.NewIssuer(jwtCfg, key); err != nil {
		return err
	}
	verifier, err := jwtauth.NewVerifier(jwtCfg, jwtauth.VerifierOptions{Leeway: jwtLeeway}, &key.PublicKey)
	if err != nil {
		return err
	}
	// A token presented again skips the RSA check: the cache answers as the verifier would.
	a.verifier, a.jwks = application.NewCachingVerifier(verifier, a.clock, 0), verifier.JWKS()
	return nil
}

// wireRateShare makes the rate limits of POST /transaction and of the token endpoint the
// service's: each instance enforces its share, by the number of live instances registered in
// the store.
func (a *app) wireRateShare(deps *httpapi.Deps) error {
	share := httpapi.NewRateShare(a.stores.instances, a.ids.NewID(), a.clock, []*httpapi.RateLimiter{deps.RateLimiter}, deps.Auth.Limits)
	// A worker, not a job: once stopped it leaves the registry, so the others take up its share
	// at their next heartbeat.
	a.workers = append(a.workers, worker{name: "instance heartbeat", run: func(ctx context.Context) error {
		every(ctx, httpapi.HeartbeatInterval, share.Beat, func(err error) {
			a.log.Error("instance heartbeat", slog.String("error", err.Error()))
		})
		leave, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return share.Leave(leave)
	}})
	return nil
}

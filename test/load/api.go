package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// inProcessAPI is pixgate's API handler over a memory store, wired as cmd/pixgate/app.go wires
// `pixgate serve` with PIXGATE_STORE=memory and PIXGATE_SANDBOX=true for the routes the harness
// measures in process: metrics around the store's ports and the renderer, the access log at
// info level (to io.Discard, where the load run writes it to a file), JWT verification with its
// cache, transactions, withdrawals (paid out by the sandbox at once), the balance and the
// statement. It serves requests without a network: the figures are the handler's alone.
type inProcessAPI struct {
	handler http.Handler
	store   *memory.Store
	create  *application.CreateTransaction

	issuer   *jwtauth.Issuer
	accounts *application.CreateAccount
}

// newInProcessAPI wires the handler; renderer draws the QR images of created transactions.
func newInProcessAPI(renderer ports.QRRenderer) (*inProcessAPI, error) {
	clock, ids := system.Clock{}, system.UUIDs{}
	key, err := jwtauth.GenerateKey()
	if err != nil {
		return nil, err
	}
	jwtCfg := jwtauth.Config{Issuer: "pixgate", Audience: "pixgate-api", Clock: clock}
	issuer, err := jwtauth.NewIssuer(jwtCfg, key)
	if err != nil {
		return nil, err
	}
	verifier, err := jwtauth.NewVerifier(jwtCfg, jwtauth.VerifierOptions{Leeway: 30 * time.Second}, &key.PublicKey)
	if err != nil {
		return nil, err
	}
	hasher, err := system.NewClientSecrets([]byte("load-profile-key-load-profile-key"))
	if err != nil {
		return nil, err
	}
	emitter, err := defaultEmitter()
	if err != nil {
		return nil, err
	}
	payer, err := sandbox.ReceivingAccount("pix@pixgate.example", "PIXGATE SANDBOX")
	if err != nil {
		return nil, err
	}
	accounts := memory.NewAccounts()
	store := memory.NewStore()
	m := metrics.New()
	txs, wds, ledger := m.Transactions(store.Transactions()), m.Withdrawals(store.Withdrawals()), m.Ledger(store.Ledger())
	create := application.NewCreateTransaction(txs, emitter, m.QRRenderer(renderer), ids, system.Capabilities{}, clock)
	srv := httpapi.New(httpapi.Config{MaxBodyBytes: 1 << 20}, httpapi.Deps{
		Authenticator:     application.NewCachedAuthenticate(application.NewCachingVerifier(verifier, clock, 0), accounts, application.NewAuthCache(2*time.Second, clock, 0)),
		CreateTransaction: create,
		GetTransaction:    application.NewGetTransaction(txs),
		ListTransactions:  application.NewListTransactions(txs),
		RefundTransaction: application.NewRefundTransaction(txs, application.NewSendDevolutions(txs, ledger, sandbox.NewAcquirer(clock), clock,
			application.DevolutionSettings{CheckEvery: 5 * time.Minute, Claim: application.ClaimMargin + 10*time.Second},
			func(application.DevolutionReport) {}), ids, clock, func(error) {}),
		Withdrawals: httpapi.WithdrawalDeps{
			Create: application.NewCreateWithdrawal(wds, ids, clock, application.WithdrawalSettings{
				Acquirer: emitter.Acquirer(), Fee: ledgerWithdrawalFee, Payer: &payer,
				Directory: sandbox.Directory{}, StartAtOnce: true,
			}),
			Get:     application.NewGetWithdrawal(wds),
			Cancel:  application.NewCancelWithdrawal(wds, clock),
			Balance: application.NewGetBalance(ledger),
		},
		Ledger: httpapi.LedgerDeps{Entries: application.NewListEntries(ledger)},
		// Served like every route, though no phase of the profile times them.
		Auth: httpapi.AuthDeps{
			Token: application.NewIssueToken(accounts, issuer, hasher, time.Hour), JWKS: verifier.JWKS(),
			CreateCredential:    application.NewCreateCredential(accounts, ids, clock, hasher),
			ListCredentials:     application.NewListCredentials(accounts),
			RevokeCredential:    application.NewRevokeCredential(accounts, clock),
			GetWebhookSecret:    application.NewGetWebhookSecret(accounts, clock),
			RotateWebhookSecret: application.NewRotateWebhookSecret(accounts, clock, hasher),
		},
		Webhooks:  httpapi.WebhookDeps{ListEvents: application.NewListEvents(txs, wds, store.Outbox())},
		Observer:  m,
		Logger:    slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
		AccessLog: io.Discard,
	})
	return &inProcessAPI{handler: srv.Handler(), store: store, create: create, issuer: issuer,
		accounts: application.NewCreateAccount(accounts, ids, clock, hasher)}, nil
}

// account creates a client account with every scope and returns it with a token of an hour.
func (a *inProcessAPI) account(ctx context.Context, name string) (domain.Principal, string, error) {
	created, err := a.accounts.Execute(ctx, name, nil)
	if err != nil {
		return domain.Principal{}, "", err
	}
	p := domain.Principal{AccountID: created.Account.ID(), ClientID: created.Credential.ClientID, Scopes: created.Account.Scopes()}
	tok, err := a.issuer.Issue(ctx, p, time.Hour)
	if err != nil {
		return domain.Principal{}, "", err
	}
	return p, tok.Token, nil
}

// request is one request to the handler, built before it is timed.
func (a *inProcessAPI) request(method, target, token string, body []byte) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req := httptest.NewRequest(method, target, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// serve runs req through the whole handler and returns the answer.
func (a *inProcessAPI) serve(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, req)
	return w
}

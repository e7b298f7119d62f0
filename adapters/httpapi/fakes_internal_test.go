package httpapi

// The hand-written fakes of the ports the internal tests of this package need, one of each
// port: a clock the test moves, a transaction store that fails as a driver does, the PIX
// emitter, renderer, ids and payment tokens, the acquirer and the authenticator, and stand-ins
// for the ports a test does not exercise (interface values whose methods panic when called).
// Stores are adapters/memory, with ports/porttest to make them fail.

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
)

// Each fake is the port it stands for.
var (
	_ ports.Clock               = (*FakeClock)(nil)
	_ ports.PixEmitter          = fakeEmitter{}
	_ ports.QRRenderer          = fakeRenderer{}
	_ ports.IDGenerator         = fakeIDs{}
	_ ports.CapabilityGenerator = fakeCapabilities{}
	_ ports.Acquirer            = fakeAcquirer{}
	_ Authenticator             = fakeAuthenticator{}
)

// errDriver reads like what a database driver says, credentials and addresses included.
var errDriver = errors.New(`connection(db-0.internal:27017[-3]) incomplete read of message header: ` +
	`read tcp 10.0.3.7:51544->10.0.3.9:27017: i/o timeout; uri mongodb://pixgate:s3cr3t-passw0rd@db-0.internal`)

// fakeNow is when the tests' clocks start unless they say otherwise.
var fakeNow = time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)

// FakeClock is a clock that moves only when the test advances it. It and LogBuffer are
// exported for the black-box tests (package httpapi_test, fakes_test.go and harness_test.go)
// too; like every name in a _test.go file, they exist only in test builds.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock is a FakeClock stopped at at.
func NewFakeClock(at time.Time) *FakeClock { return &FakeClock{now: at} }

// Now is where the clock stands.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// LogBuffer collects log output written from several goroutines (the server's).
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// failingTransactions is a transaction store (adapters/memory) whose every call fails with
// errDriver, or panics, as a bug in an adapter would, when panics is set. With acceptCreate,
// Create and GetByIdempotencyKey reach the store (a new transaction is stored, a key finds
// nothing), so that a failure after them is someone else's.
func failingTransactions(panics, acceptCreate bool) *porttest.Transactions {
	r := porttest.NewTransactions(memory.NewStore().Transactions())
	switch {
	case panics:
		r.Before("", 0, func() {
			var none []int
			_ = none[3] // a runtime error, as a bug in an adapter would raise
		})
	case acceptCreate:
		for _, m := range []string{"Get", "Find", "FindByPaymentToken", "FindByPixLocation", "FindByCobTxID", "List",
			"Update", "ListExpired", "ListDevolutionsDue", "ListByStatus"} {
			r.Fail(m, 0, errDriver)
		}
	default:
		r.FailAll(errDriver)
	}
	return r
}

// fakeAuthenticator knows one bearer token, "good", of an account with every scope.
type fakeAuthenticator struct{}

func (fakeAuthenticator) Execute(_ context.Context, token string) (domain.Principal, error) {
	if token != "good" {
		return domain.Principal{}, ports.ErrInvalidToken
	}
	return domain.Principal{AccountID: "account", ClientID: "client", Scopes: domain.AllScopes()}, nil
}

// fakeEmitter writes a fixed BR Code, or fails with err when set.
type fakeEmitter struct{ err error }

func (fakeEmitter) Acquirer() string { return "SANDBOX" }
func (e fakeEmitter) Emit(context.Context, domain.PixCharge) (domain.PixCode, error) {
	return domain.PixCode{URI: "000201"}, e.err
}

// fakeRenderer draws every QR code as the same PNG signature.
type fakeRenderer struct{}

func (fakeRenderer) RenderPNG(context.Context, string) ([]byte, error) { return []byte("\x89PNG"), nil }

// fakeIDs makes one id, always the same.
type fakeIDs struct{}

func (fakeIDs) NewID() string { return "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f" }

// fakeCapabilities makes one payment token, always the same.
type fakeCapabilities struct{}

func (fakeCapabilities) NewCapability() string { return "sec-payment-token-0000001" }

// fakeAcquirer takes every devolution and answers it later, by callback.
type fakeAcquirer struct{}

func (fakeAcquirer) RequestDevolution(context.Context, ports.Devolution) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{Status: ports.DevolutionInProgress}, nil
}

func (fakeAcquirer) Devolution(context.Context, string, string) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{Status: ports.DevolutionInProgress}, nil
}

// fakeDevolutions is the devolution outbox over repo and fakeAcquirer.
func fakeDevolutions(repo ports.TransactionRepository, clock ports.Clock) *application.SendDevolutions {
	return application.NewSendDevolutions(repo, fakeLedger{}, fakeAcquirer{}, clock,
		application.DevolutionSettings{CheckEvery: time.Minute, Claim: time.Minute}, func(application.DevolutionReport) {})
}

// fakeLedger is a ledger no test of this package reaches: the outbox needs one.
type fakeLedger struct{ ports.Ledger }

// Ports a test does not exercise: interface values whose methods panic when called.
type (
	unusedWithdrawals struct{ ports.WithdrawalRepository }
	unusedAccounts    struct{ ports.AccountRepository }
	unusedLedger      struct{ ports.Ledger }
	unusedOutbox      struct{ ports.Outbox }
	unusedIssuer      struct{ ports.TokenIssuer }
)

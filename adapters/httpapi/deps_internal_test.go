package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
)

// completeDeps fills every required dependency d leaves nil with a use case over unused ports
// (or the failing transaction store),
// so that New accepts a server built for the routes a test exercises.
func completeDeps(d Deps) Deps {
	txs, wds, accounts, ledger, clock := failingTransactions(false, false), unusedWithdrawals{}, unusedAccounts{}, unusedLedger{}, NewFakeClock(fakeNow)
	hasher, err := system.NewClientSecrets([]byte("unused-test-key-unused-test-key-"))
	if err != nil {
		panic(err)
	}
	if d.Auth.Token == nil {
		d.Auth.Token = application.NewIssueToken(accounts, unusedIssuer{}, hasher, time.Hour)
	}
	if d.Auth.JWKS == nil {
		d.Auth.JWKS = []byte(`{"keys":[]}`)
	}
	if d.Auth.CreateCredential == nil {
		d.Auth.CreateCredential = application.NewCreateCredential(accounts, fakeIDs{}, clock, hasher)
	}
	if d.Auth.ListCredentials == nil {
		d.Auth.ListCredentials = application.NewListCredentials(accounts)
	}
	if d.Auth.RevokeCredential == nil {
		d.Auth.RevokeCredential = application.NewRevokeCredential(accounts, clock)
	}
	if d.Auth.GetWebhookSecret == nil {
		d.Auth.GetWebhookSecret = application.NewGetWebhookSecret(accounts, clock)
	}
	if d.Auth.RotateWebhookSecret == nil {
		d.Auth.RotateWebhookSecret = application.NewRotateWebhookSecret(accounts, clock, hasher)
	}
	if d.Withdrawals == (WithdrawalDeps{}) {
		d.Withdrawals = WithdrawalDeps{
			Create:  application.NewCreateWithdrawal(wds, fakeIDs{}, clock, application.WithdrawalSettings{Acquirer: "SANDBOX"}),
			Get:     application.NewGetWithdrawal(wds),
			Cancel:  application.NewCancelWithdrawal(wds, clock),
			Balance: application.NewGetBalance(ledger),
		}
	}
	if d.Webhooks.ListEvents == nil {
		d.Webhooks.ListEvents = application.NewListEvents(txs, wds, unusedOutbox{})
	}
	if d.Ledger.Entries == nil {
		d.Ledger.Entries = application.NewListEntries(ledger)
	}
	return d
}

func TestNewRefusesMissingDependenciesNamingThem(t *testing.T) {
	panicOf := func(build func()) (msg string) {
		defer func() { msg, _ = recover().(string) }()
		build()
		return ""
	}
	t.Run("a required use case left nil is named", func(t *testing.T) {
		d := completeDeps(Deps{})
		d.Withdrawals.Cancel, d.Ledger.Entries = nil, nil
		msg := panicOf(func() { New(Config{}, d) })
		if !strings.Contains(msg, "Withdrawals.Cancel") || !strings.Contains(msg, "Ledger.Entries") || !strings.Contains(msg, "Authenticator") {
			t.Fatalf("panic %q, want every missing dependency named", msg)
		}
	})
	t.Run("the sandbox without its use cases is refused", func(t *testing.T) {
		if msg := panicOf(func() { New(Config{Sandbox: true}, completeDeps(Deps{})) }); !strings.Contains(msg, "Sandbox") {
			t.Fatalf("panic %q, want the sandbox refused", msg)
		}
	})
	t.Run("an acquirer route without its secret is refused", func(t *testing.T) {
		d := completeDeps(Deps{})
		d.Acquirer = &AcquirerDeps{}
		if msg := panicOf(func() { New(Config{}, d) }); !strings.Contains(msg, "Acquirer.Secret") {
			t.Fatalf("panic %q, want the acquirer's secret named", msg)
		}
	})
}

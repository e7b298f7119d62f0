package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/efi"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/ports"
)

// payoutJobName names the payout outbox's job (in logs, and for tests that run it by hand).
const payoutJobName = "sending payouts"

// payoutClaimCalls is how many calls to the PSP one step of the outbox holds a payout for
// (application.PayoutSettings.Claim, with its margin): a step makes three at most (a read
// back, a send, a read back), each bounded by the transport's timeout.
const payoutClaimCalls = 4

// payoutWiring is the payout provider as the withdrawals need it: the port, and how the
// outbox runs against it. nil when no provider is configured.
type payoutWiring struct {
	payouts  ports.Payouts
	settings application.PayoutSettings
	pace     application.Pace
	// atOnce is the sandbox's: the payout is taken in the creating request, and first read
	// back firstCheck later.
	atOnce     bool
	firstCheck time.Duration
}

// newPayouts builds the provider PIXGATE_PAYOUT_PROVIDER names (config_payouts.go). A
// setting of the PSP's transport that cannot be used stops the start, naming it.
func (a *app) newPayouts() (*payoutWiring, error) {
	switch a.cfg.Payout.Provider {
	case payoutSandbox:
		// The sandbox's back office settles a payout PIXGATE_SANDBOX_SETTLE_SECONDS after it
		// entered PROCESSING; a quarter of the delay keeps "about 2 s" close to 2 s without
		// polling the store more than twice a second, and the bound keeps it within the
		// delay and 3 s (or the interval, when longer) on a slow store.
		every := min(max(a.cfg.SandboxSettle/4, 500*time.Millisecond), 10*time.Second)
		return &payoutWiring{
			payouts:  sandbox.NewPayouts(a.stores.withdrawals, a.clock, a.cfg.SandboxSettle, a.sandbox.account.BankAccount.ISPB),
			settings: application.PayoutSettings{CheckEvery: every, Claim: application.ClaimMargin + 10*time.Second},
			pace:     application.Pace{Interval: every, Bound: sandboxSettleBound},
			atOnce:   true, firstCheck: a.cfg.SandboxSettle,
		}, nil
	case payoutEfi:
		p := a.cfg.Payout
		transport := psp.Config{
			APIURL: p.APIURL, TokenURL: p.TokenURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			Scopes: p.Scopes, TokenRequest: psp.TokenRequest(p.TokenRequest),
			CertFile: p.CertFile, KeyFile: p.KeyFile, P12File: p.P12File, P12Password: p.P12Password,
			Observe: a.countPSPCall,
		}
		if p.CAFile != "" {
			transport.CAFiles = []string{p.CAFile}
		}
		adapter, err := efi.New(efi.Config{Transport: transport, PayerKey: a.cfg.PixKey})
		if err != nil {
			return nil, payoutSettingError(err)
		}
		return &payoutWiring{
			payouts: adapter,
			settings: application.PayoutSettings{CheckEvery: p.Check,
				Claim: payoutClaimCalls*psp.DefaultTimeout + application.ClaimMargin},
			pace: application.Pace{Interval: payoutEvery, Bound: payoutBound},
		}, nil
	}
	return nil, nil
}

// payoutVariables names the PIXGATE_PAYOUT_* variable of each setting of the transport.
var payoutVariables = map[psp.Setting]string{
	psp.SettingAPIURL: "API_URL", psp.SettingTokenURL: "TOKEN_URL", psp.SettingClientID: "CLIENT_ID",
	psp.SettingClientSecret: "CLIENT_SECRET", psp.SettingScopes: "SCOPES", psp.SettingTokenRequest: "TOKEN_REQUEST",
	psp.SettingCertFile: "CERT_FILE", psp.SettingKeyFile: "KEY_FILE", psp.SettingP12File: "P12_FILE",
	psp.SettingP12Password: "P12_PASSWORD", psp.SettingCAFile: "API_CA_FILE",
}

// payoutSettingError rewrites the transport's errors with the variables an operator sets:
// one line per setting at fault, each naming its PIXGATE_PAYOUT_* variable (and the
// PIXGATE_ACQUIRER_* one it defaults to, where it does). The transport's errors never hold a
// secret.
func payoutSettingError(err error) error {
	var all []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		all = joined.Unwrap()
	} else {
		all = []error{err}
	}
	var lines []string
	for _, e := range all {
		var se *psp.SettingError
		if !errors.As(e, &se) {
			lines = append(lines, "PIXGATE_PAYOUT_PROVIDER=efi: "+e.Error())
			continue
		}
		suffix, ok := payoutVariables[se.Setting]
		if !ok {
			lines = append(lines, "PIXGATE_PAYOUT_PROVIDER=efi: "+e.Error())
			continue
		}
		name := "PIXGATE_PAYOUT_" + suffix
		for _, d := range payoutDefaults {
			if d.suffix == suffix {
				name += " (default PIXGATE_ACQUIRER_" + suffix + ")"
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %v", name, se.Err))
	}
	return errors.New(strings.Join(lines, "; "))
}

// reportPayout logs what the payout outbox tells operators; never a secret, a token or the
// receiver's key.
func (a *app) reportPayout(r application.PayoutReport) {
	attrs := []any{slog.String("withdrawalId", r.WithdrawalID), slog.String("payoutId", r.PayoutID)}
	if r.Step != "" {
		attrs = append(attrs, slog.String("step", string(r.Step)))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("error", r.Err.Error()))
	}
	switch r.Level {
	case application.PayoutError:
		a.log.Error(r.What, attrs...)
	case application.PayoutWarn:
		a.log.Warn(r.What, attrs...)
	default:
		a.log.Info(r.What, attrs...)
	}
}

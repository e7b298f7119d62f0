package main

import (
	"log/slog"
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
	switch a.cfg.Payouts.Provider {
	case payoutSandbox:
		// The sandbox's back office settles a payout PIXGATE_SANDBOX_SETTLE_SECONDS after it
		// entered PROCESSING; a quarter of the delay keeps "about 2 s" close to 2 s without
		// polling the store more than twice a second, and the bound keeps it within the
		// delay and 3 s (or the interval, when longer) on a slow store.
		every := min(max(a.cfg.Sandbox.Settle/4, 500*time.Millisecond), 10*time.Second)
		return &payoutWiring{
			payouts:  sandbox.NewPayouts(a.stores.withdrawals, a.clock, a.cfg.Sandbox.Settle, a.sandbox.account.BankAccount.ISPB),
			settings: application.PayoutSettings{CheckEvery: every, Claim: application.ClaimMargin + 10*time.Second},
			pace:     application.Pace{Interval: every, Bound: sandboxSettleBound},
			atOnce:   true, firstCheck: a.cfg.Sandbox.Settle,
		}, nil
	case payoutEfi:
		p := a.cfg.Payouts
		adapter, err := efi.New(efi.Config{Transport: p.config(0, a.countPSPCall), PayerKey: a.cfg.Pix.Key})
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

// payoutSettingError rewrites the transport's errors with the variables an operator sets:
// one line per setting at fault, each naming its PIXGATE_PAYOUT_* variable (and the
// PIXGATE_ACQUIRER_* one it defaults to, where it does). The payout API has no timeout
// setting of its own.
func payoutSettingError(err error) error {
	return transportSettingError(err, "PIXGATE_PAYOUT_PROVIDER=efi", func(suffix string) (string, bool) {
		if suffix == "TIMEOUT" {
			return "", false
		}
		name := "PIXGATE_PAYOUT_" + suffix
		for _, d := range payoutDefaults {
			if d.suffix == suffix {
				name += " (default PIXGATE_ACQUIRER_" + suffix + ")"
			}
		}
		return name, true
	})
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

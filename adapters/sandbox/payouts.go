package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Payouts is the sandbox acquirer's payout API (a ports.Payouts): it takes every payout, and
// makes it the settle delay after the withdrawal entered PROCESSING, with an end-to-end id in
// Banco Central's format ('E', the paying institution's ISPB, the minute, 11 random
// characters). Its payouts need no state of their own: the sandbox reads them from the
// withdrawals, which every instance shares, so any instance answers alike, across restarts.
//
// The sandbox takes a withdrawal's payout in the request that creates it
// (application.WithdrawalSettings.StartAtOnce), so the payout outbox only reads its status back
// with Status; Send answers what a PSP that takes the payout would. A payout the merchant
// steers to FAILED or REJECTED (WithdrawalSteering) reads back NAO_REALIZADO; one canceled
// (which the sandbox never lets happen) reads back as never made.
type Payouts struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
	delay time.Duration
	ispb  string
}

var _ ports.Payouts = (*Payouts)(nil)

// NewPayouts builds the sandbox's payout API; ispb is the paying institution's, in the
// end-to-end ids.
func NewPayouts(repo ports.WithdrawalRepository, clock ports.Clock, delay time.Duration, ispb string) *Payouts {
	if repo == nil || clock == nil {
		panic("sandbox.NewPayouts: a repository and a clock are required")
	}
	if delay < 0 || len(ispb) != 8 {
		panic("sandbox.NewPayouts: the delay must be at least 0 and the ISPB 8 digits")
	}
	return &Payouts{repo: repo, clock: clock, delay: delay, ispb: ispb}
}

// Send takes the payout: the sandbox is making it.
func (p *Payouts) Send(ctx context.Context, o ports.PayoutOrder) (ports.PayoutResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.PayoutResult{}, err
	}
	if domain.WithdrawalIDOfPayout(o.ID) == "" {
		return ports.PayoutResult{}, &ports.PayoutRefusedError{Reason: "the payout id is not one of pixgate's (sandbox)"}
	}
	return ports.PayoutResult{Status: ports.PayoutInProgress}, nil
}

// Status reads the payout back from its withdrawal: made once the withdrawal has been
// PROCESSING for the settle delay.
func (p *Payouts) Status(ctx context.Context, id string) (ports.PayoutResult, error) {
	w, err := p.repo.Find(ctx, domain.WithdrawalIDOfPayout(id))
	if errors.Is(err, domain.ErrNotFound) {
		return ports.PayoutResult{}, fmt.Errorf("sandbox payout %s: %w", id, ports.ErrPayoutNotFound)
	}
	if err != nil {
		return ports.PayoutResult{}, err
	}
	switch w.Status() {
	case domain.WdProcessing:
		now := p.clock.Now()
		if now.Before(w.UpdatedAt().Add(p.delay)) {
			return ports.PayoutResult{Status: ports.PayoutInProgress}, nil
		}
		return ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: domain.NewEndToEndID('E', p.ispb, now)}, nil
	case domain.WdProcessed, domain.WdRefunded:
		return ports.PayoutResult{Status: ports.PayoutDone, EndToEndID: w.EndToEnd()}, nil
	case domain.WdFailed, domain.WdRejected:
		return ports.PayoutResult{Status: ports.PayoutNotDone, Reason: w.ErrorMessage()}, nil
	}
	return ports.PayoutResult{}, fmt.Errorf("sandbox payout %s: %w", id, ports.ErrPayoutNotFound)
}

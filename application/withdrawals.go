package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WithdrawalSettings say how withdrawals are paid out.
type WithdrawalSettings struct {
	// Acquirer names who pays the withdrawals out (the sandbox: "SANDBOX").
	Acquirer string
	// Fee is charged on every withdrawal, on top of its amount.
	Fee domain.Cents
	// Payer is the gateway's account that pays the withdrawals, recorded on each; nil when the
	// acquirer has not told it (it tells when it takes the payout).
	Payer *domain.AccountHolder
	// Directory resolves the PIX key to the receiver recorded on each withdrawal; nil leaves
	// the receiver to the acquirer that takes the payout.
	Directory ports.PixDirectory
	// StartAtOnce is a payout provider that takes every payout in the request that creates
	// the withdrawal (the sandbox, which moves no money): the withdrawal is stored PROCESSING
	// already, its payout counted as sent, and the payout outbox first reads its status back
	// FirstCheck later. Without it a withdrawal is stored PENDING, its payout due at once, and
	// may be canceled until the payout outbox claims it to send it.
	StartAtOnce bool
	FirstCheck  time.Duration
}

// CreateWithdrawalInput is a validated withdrawal request.
type CreateWithdrawalInput struct {
	Amount       domain.Cents
	PixKey       domain.PixKey
	ExternalCode string
	WebhookURL   string
	// IdempotencyKey is the merchant's key, empty when none was sent.
	IdempotencyKey string
	// Fingerprint identifies the request's content, so that a reused key can be told from a
	// retry.
	Fingerprint string
}

// CreatedWithdrawal is the outcome of a withdrawal request: the withdrawal, and whether it is
// the replay of an earlier request with the same idempotency key.
type CreatedWithdrawal struct {
	Withdrawal *domain.Withdrawal
	Replayed   bool
}

// CreateWithdrawal pays part of a merchant's balance out to a PIX key: the key's owner is
// looked up in the PIX directory (when there is one), the withdrawal starts PENDING (and, in
// the sandbox, PROCESSING at once) with the configured fee, and it is stored only when the
// account's available balance covers its amount and fee; otherwise the request fails with
// domain.ErrInsufficientBalance. Its payout is sent afterwards, by the payout outbox
// (PayOutWithdrawals), never within the request. The store serialises
// the reservations of one account, so concurrent withdrawals never spend the same money twice.
//
// Idempotency is CreateTransaction's: the same key with the same request answers the stored
// withdrawal (Replayed); with another request, ErrIdempotencyKeyReused; concurrent requests with
// one key race on the store's unique key, and the losers read the winner's withdrawal.
type CreateWithdrawal struct {
	repo     ports.WithdrawalRepository
	ids      ports.IDGenerator
	clock    ports.Clock
	settings WithdrawalSettings
}

// NewCreateWithdrawal builds the use case; every port is required, and so is the settings'
// acquirer.
func NewCreateWithdrawal(repo ports.WithdrawalRepository, ids ports.IDGenerator, clock ports.Clock, s WithdrawalSettings) *CreateWithdrawal {
	requirePorts("NewCreateWithdrawal", repo, ids, clock)
	if s.Acquirer == "" || s.Fee < 0 {
		panic("application.NewCreateWithdrawal: the settings need an acquirer and a fee of at least 0")
	}
	return &CreateWithdrawal{repo: repo, ids: ids, clock: clock, settings: s}
}

// Execute creates the withdrawal for the caller's account.
func (uc *CreateWithdrawal) Execute(ctx context.Context, p domain.Principal, in CreateWithdrawalInput) (CreatedWithdrawal, error) {
	idem := domain.Idempotency{Key: in.IdempotencyKey, Fingerprint: in.Fingerprint}
	w, replayed, err := createOnce(ctx, uc.repo, p.AccountID, idem, func() (*domain.Withdrawal, error) {
		return uc.create(ctx, p, in, idem)
	}, func(err error) bool {
		// Another request with the same key won the race, and may have spent the balance this
		// one was checked against.
		return errors.Is(err, ports.ErrDuplicate) || errors.Is(err, domain.ErrInsufficientBalance)
	})
	if err != nil {
		return CreatedWithdrawal{}, err
	}
	return CreatedWithdrawal{Withdrawal: w, Replayed: replayed}, nil
}

// create resolves the key's owner and stores a new withdrawal.
func (uc *CreateWithdrawal) create(ctx context.Context, p domain.Principal, in CreateWithdrawalInput, idem domain.Idempotency) (*domain.Withdrawal, error) {
	payout := domain.Payout{
		Amount: in.Amount, Fee: uc.settings.Fee, PixKey: in.PixKey,
		ExternalCode: in.ExternalCode, WebhookURL: in.WebhookURL,
	}
	if uc.settings.Payer != nil {
		payer := *uc.settings.Payer
		payout.Payer = &payer
	}
	if uc.settings.Directory != nil {
		receiver, err := uc.settings.Directory.Resolve(ctx, in.PixKey)
		if err != nil {
			return nil, fmt.Errorf("resolving the PIX key: %w", err)
		}
		payout.Receiver = &receiver
	}
	now := uc.clock.Now()
	w, err := domain.NewWithdrawal(uc.ids.NewID(), p.AccountID, uc.settings.Acquirer, payout, idem, now)
	if err != nil {
		return nil, err
	}
	if uc.settings.StartAtOnce {
		// The same instant as the creation: the replay of the 201 body relies on it (the
		// entries dated at the creation are the ones the first answer showed).
		if err := w.PayoutTakenAtOnce(now, now.Add(uc.settings.FirstCheck)); err != nil {
			return nil, err
		}
	}
	if err := uc.repo.Create(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// GetWithdrawal fetches one withdrawal of the caller's account.
type GetWithdrawal struct{ repo ports.WithdrawalRepository }

// NewGetWithdrawal builds the use case.
func NewGetWithdrawal(repo ports.WithdrawalRepository) *GetWithdrawal {
	requirePorts("NewGetWithdrawal", repo)
	return &GetWithdrawal{repo: repo}
}

// Execute returns the withdrawal, or domain.ErrNotFound (also for another account's id).
func (uc *GetWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Get(ctx, p.AccountID, id)
}

// GetBalance tells what the caller's account holds: available and blocked cents as its ledger
// keeps them, and the pending amount of its charges awaiting payment.
type GetBalance struct{ ledger ports.Ledger }

// NewGetBalance builds the use case.
func NewGetBalance(ledger ports.Ledger) *GetBalance {
	requirePorts("NewGetBalance", ledger)
	return &GetBalance{ledger: ledger}
}

// Execute returns the caller's balance; an account that never sold anything has zero.
func (uc *GetBalance) Execute(ctx context.Context, p domain.Principal) (domain.Balance, error) {
	return uc.ledger.Balance(ctx, p.AccountID)
}

// CancelWithdrawal withdraws a request before processing started: PENDING → CANCELED, which
// gives its amount and fee back to the balance. Any status but PENDING answers a
// domain.InvalidTransitionError, and so does a PENDING withdrawal whose payout the outbox has
// claimed to send (the cancel and the claim are two updates of the withdrawal, which the store
// serialises: one of them comes first).
type CancelWithdrawal = WithdrawalStep

// NewCancelWithdrawal builds the use case.
func NewCancelWithdrawal(repo ports.WithdrawalRepository, clock ports.Clock) *CancelWithdrawal {
	return NewTransition("NewCancelWithdrawal", repo, clock, func(w *domain.Withdrawal, _ NoInput, now time.Time) error {
		return w.Cancel(now)
	})
}

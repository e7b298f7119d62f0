package application

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// PaymentState is where a charge stands, as its hosted payment page follows it: the status, the
// expiry of its QR code, and whether that QR code expired unpaid (by the clock already, or
// failed by the sweeper since: the only way from PIX_QRCODE_GENERATED to FAILED).
type PaymentState struct {
	Status    domain.TransactionStatus
	ExpiresAt time.Time // zero when the charge never got a QR code
	Expired   bool
}

// Final tells whether the charge can change no more: the page stops following it.
func (s PaymentState) Final() bool { return s.Status.Final() }

// PaymentPage is everything the hosted payment page shows of a charge. It holds no payer data
// and nothing else of the order: the page is public to whoever holds its link.
type PaymentPage struct {
	PaymentState
	MerchantName string
	Amount       domain.Cents
	PixURI       string // "" when the charge has no QR code
	QRCodePNG    []byte
	Now          time.Time // when the page was read, to count down to ExpiresAt
}

// ShowPaymentPage reads the charge behind a payment page token, and the name of the merchant
// it belongs to. The token is the authority (a capability URL): no principal is asked for. A
// malformed token answers domain.ErrNotFound before any look-up, an unknown one after the
// store's indexed look-up, exactly alike.
type ShowPaymentPage struct {
	repo     ports.TransactionRepository
	accounts ports.AccountRepository
	clock    ports.Clock
}

// NewShowPaymentPage builds the use case; every port is required.
func NewShowPaymentPage(repo ports.TransactionRepository, accounts ports.AccountRepository, clock ports.Clock) *ShowPaymentPage {
	requirePorts("NewShowPaymentPage", repo, accounts, clock)
	return &ShowPaymentPage{repo: repo, accounts: accounts, clock: clock}
}

// Execute returns the page of token, or domain.ErrNotFound.
func (uc *ShowPaymentPage) Execute(ctx context.Context, token string) (PaymentPage, error) {
	t, err := findByPaymentToken(ctx, uc.repo, token)
	if err != nil {
		return PaymentPage{}, err
	}
	account, err := uc.accounts.GetAccount(ctx, t.AccountID())
	if err != nil {
		return PaymentPage{}, fmt.Errorf("the merchant of a payment page: %w", err)
	}
	now := uc.clock.Now()
	page := PaymentPage{PaymentState: paymentState(t, now), MerchantName: account.Name(), Amount: t.Amount(), Now: now}
	if p := t.Pix(); p != nil {
		page.PixURI, page.QRCodePNG = p.URI, p.QRCodePNG
	}
	return page, nil
}

// FollowPayment reads where the charge behind a payment page token stands: what the page's
// status route and live channel answer, again and again, so it reads the transaction only.
type FollowPayment struct {
	repo  ports.TransactionRepository
	clock ports.Clock
}

// NewFollowPayment builds the use case; every port is required.
func NewFollowPayment(repo ports.TransactionRepository, clock ports.Clock) *FollowPayment {
	requirePorts("NewFollowPayment", repo, clock)
	return &FollowPayment{repo: repo, clock: clock}
}

// Execute returns the state of token's charge, or domain.ErrNotFound.
func (uc *FollowPayment) Execute(ctx context.Context, token string) (PaymentState, error) {
	t, err := findByPaymentToken(ctx, uc.repo, token)
	if err != nil {
		return PaymentState{}, err
	}
	return paymentState(t, uc.clock.Now()), nil
}

func findByPaymentToken(ctx context.Context, repo ports.TransactionRepository, token string) (*domain.Transaction, error) {
	if !domain.ValidPaymentToken(token) {
		return nil, fmt.Errorf("payment page: %w", domain.ErrNotFound)
	}
	return repo.FindByPaymentToken(ctx, token)
}

func paymentState(t *domain.Transaction, now time.Time) PaymentState {
	s := PaymentState{Status: t.Status()}
	if p := t.Pix(); p != nil {
		s.ExpiresAt = p.ExpiresAt
		s.Expired = t.Expired(now) || t.Status() == domain.TxFailed
	}
	return s
}

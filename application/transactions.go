package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// CreateTransactionInput is a validated creation request.
type CreateTransactionInput struct {
	Order domain.Order
	// IdempotencyKey is the merchant's key, empty when none was sent.
	IdempotencyKey string
	// Fingerprint identifies the request's content (whatever its key order or white space),
	// so that a reused key can be told from a retry.
	Fingerprint string
}

// CreatedTransaction is the outcome of a creation: the transaction, and whether it is the
// replay of an earlier request with the same idempotency key.
type CreatedTransaction struct {
	Transaction *domain.Transaction
	Replayed    bool
}

// CreateTransaction records a PIX charge: the transaction starts PENDING with a fresh payment
// page token (a random capability, never derived from its id), the emitter produces
// the BR Code, the renderer draws its QR code, and the transaction is stored in
// PIX_QRCODE_GENERATED with the event that notifies the merchant, in one write. When the
// emitter fails, the transaction is stored FAILED with the error's text and the request fails
// with an *EmissionError. When the QR image cannot be had now (the renderer refused the work,
// ports.ErrOverloaded; it did not draw it within its deadline, ports.ErrTimedOut; or the
// request ended while it waited), nothing is stored and that error is answered: the charge
// never reached the merchant, and a retry with the same idempotency key creates it. Any other
// renderer failure is the emission's, stored FAILED.
//
// The same idempotency key with the same request answers the stored transaction (Replayed);
// with another request, ErrIdempotencyKeyReused. Concurrent requests with one key race on
// the store's unique key: one creates, the others read its result.
//
// Built with NewCreateTransactionAtPSP, the charge is made at the PSP instead of by the
// emitter (chargeAtPSP): the PSP's BR Code is the transaction's, and its refusal
// (ports.ErrChargeRefused) or silence (ports.ErrChargeUnavailable) is answered with nothing
// stored, as if the request had not come.
type CreateTransaction struct {
	repo     ports.TransactionRepository
	emitter  ports.PixEmitter
	issuer   ports.ChargeIssuer
	coder    ports.LocationCoder
	renderer ports.QRRenderer
	ids      ports.IDGenerator
	tokens   ports.CapabilityGenerator
	clock    ports.Clock
}

// NewCreateTransaction builds the use case; every port is required. tokens makes the
// capability of each charge's hosted payment page.
func NewCreateTransaction(repo ports.TransactionRepository, emitter ports.PixEmitter, renderer ports.QRRenderer, ids ports.IDGenerator, tokens ports.CapabilityGenerator, clock ports.Clock) *CreateTransaction {
	requirePorts("NewCreateTransaction", repo, emitter, renderer, ids, tokens, clock)
	return &CreateTransaction{repo: repo, emitter: emitter, renderer: renderer, ids: ids, tokens: tokens, clock: clock}
}

// NewCreateTransactionAtPSP builds the use case that makes each charge at the PSP (issuer);
// coder writes the BR Code of a charge the PSP answered without one, from its location. Every
// port is required.
func NewCreateTransactionAtPSP(repo ports.TransactionRepository, issuer ports.ChargeIssuer, coder ports.LocationCoder, renderer ports.QRRenderer, ids ports.IDGenerator, tokens ports.CapabilityGenerator, clock ports.Clock) *CreateTransaction {
	requirePorts("NewCreateTransactionAtPSP", repo, issuer, coder, renderer, ids, tokens, clock)
	return &CreateTransaction{repo: repo, issuer: issuer, coder: coder, renderer: renderer, ids: ids, tokens: tokens, clock: clock}
}

// acquirer names who makes the charges, each transaction's `acquirer`.
func (uc *CreateTransaction) acquirer() string {
	if uc.issuer != nil {
		return uc.issuer.Name()
	}
	return uc.emitter.Acquirer()
}

// Execute creates the transaction for the caller's account.
func (uc *CreateTransaction) Execute(ctx context.Context, p domain.Principal, in CreateTransactionInput) (CreatedTransaction, error) {
	idem := domain.Idempotency{Key: in.IdempotencyKey, Fingerprint: in.Fingerprint}
	t, replayed, err := createOnce(ctx, uc.repo, p.AccountID, idem, func() (*domain.Transaction, error) {
		return uc.create(ctx, p, in.Order, idem)
	}, func(err error) bool { return errors.Is(err, ports.ErrDuplicate) })
	if err != nil {
		return CreatedTransaction{}, err
	}
	return CreatedTransaction{Transaction: t, Replayed: replayed}, nil
}

// create emits and stores a new transaction.
func (uc *CreateTransaction) create(ctx context.Context, p domain.Principal, order domain.Order, idem domain.Idempotency) (*domain.Transaction, error) {
	t, err := domain.NewTransaction(uc.ids.NewID(), uc.tokens.NewCapability(), p.AccountID, uc.acquirer(), order, idem, uc.clock.Now())
	if err != nil {
		return nil, err
	}
	pix, emitErr := uc.emit(ctx, t, idem)
	if later, ok := errors.AsType[*notNow](emitErr); ok {
		// As if the request had not come: nothing is stored, and a retry with the same
		// idempotency key creates the transaction.
		return nil, later.err
	}
	if emitErr != nil {
		if err := t.FailEmission(emitErr.Error(), uc.clock.Now()); err != nil {
			return nil, err
		}
		// The failure is kept for the merchant to see, even when the request itself was
		// canceled meanwhile.
		if err := uc.repo.Create(context.WithoutCancel(ctx), t); err != nil {
			return nil, err
		}
		return nil, &EmissionError{TransactionID: t.ID(), Err: emitErr}
	}
	if err := t.AttachPix(pix, uc.clock.Now()); err != nil {
		return nil, err
	}
	if err := uc.repo.Create(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (uc *CreateTransaction) emit(ctx context.Context, t *domain.Transaction, idem domain.Idempotency) (domain.PixResponse, error) {
	var pix domain.PixResponse
	if uc.issuer != nil {
		charged, err := uc.chargeAtPSP(ctx, t, idem)
		if err != nil {
			return domain.PixResponse{}, &notNow{err}
		}
		pix = charged
	} else {
		expires := t.CreatedAt().Add(time.Duration(t.Order().ExpirationSeconds) * time.Second)
		code, err := uc.emitter.Emit(ctx, domain.PixCharge{
			TransactionID: t.ID(), Amount: t.Amount(), CreatedAt: t.CreatedAt(), ExpiresAt: expires,
		})
		if err != nil {
			return domain.PixResponse{}, err
		}
		pix = domain.PixResponse{URI: code.URI, ExpiresAt: expires, Location: code.Location}
	}
	png, err := uc.renderer.RenderPNG(ctx, pix.URI)
	if err != nil {
		if errors.Is(err, ports.ErrOverloaded) || errors.Is(err, ports.ErrTimedOut) || ctx.Err() != nil {
			return domain.PixResponse{}, &notNow{err}
		}
		return domain.PixResponse{}, err
	}
	pix.QRCodePNG = png
	return pix, nil
}

// chargeAtPSP has the PSP make t's charge (ports.ChargeIssuer.Create) and answers it as the
// transaction keeps it: the PSP's pixCopiaECola as it is (or, when the PSP sent none, a dynamic
// BR Code of its location), its txid, location and revision, and an expiry counted from its
// creation by the PSP's clock, so that pixgate never calls a charge expired that the PSP still
// takes. The PSP's errors are answered as they are; the caller stores nothing for them.
func (uc *CreateTransaction) chargeAtPSP(ctx context.Context, t *domain.Transaction, idem domain.Idempotency) (domain.PixResponse, error) {
	order := t.Order()
	req := ports.ChargeRequest{
		TxID: chargeTxID(t.AccountID(), idem, uc.ids), Amount: t.Amount(),
		ExpirationSeconds: order.ExpirationSeconds, PayerRequest: order.PayerRequest(),
	}
	if c := order.Customer; c != nil && !c.Document.IsZero() && strings.TrimSpace(c.Name) != "" {
		req.Debtor = ports.ChargeDebtor{Document: c.Document, Name: c.Name}
	}
	charge, err := uc.issuer.Create(ctx, req)
	if err != nil {
		return domain.PixResponse{}, err
	}
	uri := charge.CopyPaste
	if uri == "" {
		if uri, err = uc.coder.CodeForLocation(charge.Location); err != nil {
			return domain.PixResponse{}, fmt.Errorf("%w: the charge %s came without pixCopiaECola: %w", ports.ErrChargeUnavailable, req.TxID, err)
		}
	}
	return domain.PixResponse{
		URI:       uri,
		ExpiresAt: charge.CreatedAt.Add(time.Duration(charge.ExpirationSeconds) * time.Second),
		Location:  domain.PixLocation{CobTxID: req.TxID},
		PSP: domain.PSPCharge{LocationID: charge.LocationID, Location: charge.Location, Revision: charge.Revision,
			CreatedAt: charge.CreatedAt},
	}, nil
}

// chargeTxID is the txid a creation asks the PSP for. Without an idempotency key it is random
// (a UUID's 32 hexadecimal digits). With one it is derived from the account, the key and the
// request's fingerprint: the merchant's retry of a request whose outcome it never learned (the
// PSP did not answer in time, so nothing was stored) asks for the same charge, which the PSP
// then answers as already made, so one request and its retries make one charge and one
// transaction. Another request under the same key gets another txid.
func chargeTxID(accountID string, idem domain.Idempotency, ids ports.IDGenerator) string {
	if idem.Key == "" {
		return strings.ReplaceAll(ids.NewID(), "-", "")
	}
	sum := sha256.Sum256([]byte("pixgate cob txid\x00" + accountID + "\x00" + idem.Key + "\x00" + idem.Fingerprint))
	return hex.EncodeToString(sum[:16])
}

// notNow marks a charge that could not be had now (the QR image could not be drawn in time,
// the PSP refused or did not answer): not an emission that failed, so nothing of it is stored.
type notNow struct{ err error }

func (d *notNow) Error() string { return d.err.Error() }
func (d *notNow) Unwrap() error { return d.err }

// GetTransaction fetches one transaction of the caller's account.
type GetTransaction struct{ repo ports.TransactionRepository }

// NewGetTransaction builds the use case.
func NewGetTransaction(repo ports.TransactionRepository) *GetTransaction {
	requirePorts("NewGetTransaction", repo)
	return &GetTransaction{repo: repo}
}

// Execute returns the transaction, or domain.ErrNotFound (also for another account's id).
func (uc *GetTransaction) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return uc.repo.Get(ctx, p.AccountID, id)
}

// ListTransactions lists the caller's transactions with filters and paging.
type ListTransactions struct{ repo ports.TransactionRepository }

// NewListTransactions builds the use case.
func NewListTransactions(repo ports.TransactionRepository) *ListTransactions {
	requirePorts("NewListTransactions", repo)
	return &ListTransactions{repo: repo}
}

// TransactionList is one page of a list, with the paging figures of the response.
type TransactionList struct {
	Items       []*domain.Transaction
	Total       int
	TotalPages  int
	CurrentPage int
	PerPage     int
}

// Execute lists one page; the filter's account is always the caller's.
func (uc *ListTransactions) Execute(ctx context.Context, p domain.Principal, f ports.TransactionFilter, page ports.Page) (TransactionList, error) {
	f.AccountID = p.AccountID
	res, err := uc.repo.List(ctx, f, page)
	if err != nil {
		return TransactionList{}, err
	}
	return TransactionList{
		Items: res.Items, Total: res.Total, CurrentPage: page.Number, PerPage: page.Size,
		TotalPages: (res.Total + page.Size - 1) / page.Size,
	}, nil
}

// RefundInput is a validated refund request.
type RefundInput struct {
	Amount domain.Cents // 0: everything still refundable
	Reason string
	// IdempotencyKey is the merchant's key, empty when none was sent; keys are scoped to the
	// transaction.
	IdempotencyKey string
	// Fingerprint identifies the request's content, so that a reused key can be told from a
	// retry.
	Fingerprint string
}

// RefundOutcome is the transaction after a refund request, and whether the answer is the
// replay of an earlier request with the same idempotency key.
type RefundOutcome struct {
	Transaction *domain.Transaction
	Replayed    bool
}

// RefundTransaction refunds a paid transaction, in full or in part: PAID → PROCESSING_REFUND,
// with the amount moved from the merchant's available balance to its blocked one in the same
// atomic step as the status change (domain.ErrInsufficientBalance, nothing changed, when
// available does not cover it). The refund is stored with its devolution due: the devolution
// outbox (SendDevolutions) sends it to the acquirer under the refund's id until the acquirer
// answers, and takes its first step at once, within the request. The acquirer's answer, now,
// from the outbox's read backs or through its callback, completes or fails it.
//
// The idempotency key is checked first: the same key with the same request answers the
// transaction as it stood right after that refund was requested, whatever happened since
// (Replayed); with another request, ErrIdempotencyKeyReused.
type RefundTransaction struct {
	repo        ports.TransactionRepository
	devolutions *SendDevolutions
	ids         ports.IDGenerator
	clock       ports.Clock
	report      func(error)
}

// NewRefundTransaction builds the use case. report receives the store's failures of the
// devolution's first step, which do not fail the request: the refund is stored, and the
// outbox takes the step again (the outbox reports the acquirer's failures itself).
func NewRefundTransaction(repo ports.TransactionRepository, devolutions *SendDevolutions, ids ports.IDGenerator, clock ports.Clock, report func(error)) *RefundTransaction {
	requirePorts("NewRefundTransaction", repo, devolutions, ids, clock)
	if report == nil {
		panic("application.NewRefundTransaction: report is required")
	}
	return &RefundTransaction{repo: repo, devolutions: devolutions, ids: ids, clock: clock, report: report}
}

// Execute starts the refund of the caller's transaction id.
func (uc *RefundTransaction) Execute(ctx context.Context, p domain.Principal, id string, in RefundInput) (RefundOutcome, error) {
	if in.IdempotencyKey != "" {
		t, err := uc.repo.Get(ctx, p.AccountID, id)
		if err != nil {
			return RefundOutcome{}, err
		}
		if out, found, err := replayRefund(t, in); found {
			return out, err
		}
	}
	req := domain.RefundRequest{
		ID: refundID(uc.ids.NewID()), Amount: in.Amount, Reason: in.Reason,
		Idempotency: domain.Idempotency{Key: in.IdempotencyKey, Fingerprint: in.Fingerprint},
	}
	t, err := uc.repo.Update(ctx, p.AccountID, id, func(t *domain.Transaction) error {
		if out, found, err := replayRefund(t, in); found {
			// A concurrent request with the same key got in first: store nothing, answer as
			// it was answered.
			return refundReplayed{out: out, err: err}
		}
		return t.RequestRefund(req, uc.clock.Now())
	})
	if r, ok := errors.AsType[refundReplayed](err); ok {
		return r.out, r.err
	}
	if err != nil {
		return RefundOutcome{}, err
	}
	// The answer is the transaction as this request left it, even when the acquirer settles
	// the refund at once below: t is the stored copy of that moment, which the step does not
	// touch.
	if _, err := uc.devolutions.Refund(ctx, t.AccountID(), t.ID()); err != nil {
		uc.report(fmt.Errorf("refund %s of transaction %s: the devolution's first step: %w (the outbox takes it again)", req.ID, t.ID(), err))
	}
	return RefundOutcome{Transaction: t}, nil
}

// refundReplayed stops an update whose request turned out to be the replay of one stored
// meanwhile; it carries the replay's answer (err: ErrIdempotencyKeyReused, or nil).
type refundReplayed struct {
	out RefundOutcome
	err error
}

func (refundReplayed) Error() string { return "the refund request is the replay of a stored one" }

func replayRefund(t *domain.Transaction, in RefundInput) (RefundOutcome, bool, error) {
	prior, ok := t.RefundByIdempotencyKey(in.IdempotencyKey)
	if !ok {
		return RefundOutcome{}, false, nil
	}
	if prior.Idempotency.Fingerprint != in.Fingerprint {
		return RefundOutcome{}, true, ErrIdempotencyKeyReused
	}
	then, ok := t.AsRefundRequested(prior.ID)
	if !ok {
		then = t
	}
	return RefundOutcome{Transaction: then, Replayed: true}, true, nil
}

// refundID turns a UUID into a devolution id: 32 characters [0-9a-f], within API Pix's 35.
func refundID(uuid string) string { return strings.ReplaceAll(uuid, "-", "") }

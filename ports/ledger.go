package ports

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// EntryFilter selects the statement lines of one merchant. Zero fields select everything.
type EntryFilter struct {
	AccountID string // required: a statement never crosses accounts
	StartDate *time.Time
	EndDate   *time.Time // inclusive, like StartDate, on createdAt
	Types     []domain.MovementType
	// Before keeps the entries numbered below it (the cursor of the page before); 0 starts at
	// the newest entry.
	Before int64
}

// PaymentClaim records that a PIX payment, identified by its end-to-end id, was taken by one
// charge (or, for a late payment, sent back). An end-to-end id identifies one payment once:
// the first claim wins for ever.
type PaymentClaim struct {
	EndToEndID    string
	TransactionID string
	AccountID     string
	Amount        domain.Cents
	Late          bool // the charge was not awaiting it: the money went to suspense
	CreatedAt     time.Time
	// Devolution is where the sending of a late payment's return stands (the devolution
	// outbox's state, see domain.DevolutionDispatch); zero for a claim that paid its charge,
	// and for a late payment recorded before devolutions had an outbox.
	Devolution domain.DevolutionDispatch
}

// Ledger is the double-entry ledger: the entries that the repositories' status changes post,
// the balances they keep, and the registry of PIX payments.
//
// Repositories post a status change's entries themselves (TransactionRepository.Update,
// WithdrawalRepository.Create), together with the change: after any crash, restart or lost
// race each change has exactly its entries, each once (Recover finishes what a crash
// interrupted). Entries are numbered per merchant ledger (and in the service's own ledger, the
// empty account id), serialised with every other movement of that merchant, and carry the
// balance after them. Safe for concurrent use; errors as TransactionRepository's.
//
// The ledger is a journal: the postings of one change (one journal entry, domain.Journals: a
// payment and its fee) are recorded in one step, numbered one after the other, each with its
// balance after it; no reader ever sees some of them without the others, and no balance check
// runs between them. Every read answers lines — one domain.Entry per posting, numbered densely,
// the lines after a journal's first naming it in Journal — whatever the store keeps per
// journal.
type Ledger interface {
	// Balance returns the merchant's available and blocked balances, as its latest entry left
	// them, and the sum of its charges awaiting payment. It costs the same with ten entries or
	// ten million.
	Balance(ctx context.Context, accountID string) (domain.Balance, error)

	// Entries returns up to limit entries of f's account matching f, newest first.
	Entries(ctx context.Context, f EntryFilter, limit int) ([]domain.Entry, error)

	// Scan calls fn with every entry of the account's ledger ("" for the service's own),
	// oldest first, until fn answers an error, which Scan returns. It is for audits.
	Scan(ctx context.Context, accountID string, fn func(domain.Entry) error) error

	// Ledgers lists the account ids that have entries ("" for the service's own ledger).
	Ledgers(ctx context.Context) ([]string, error)

	// Post stores postings that belong to no status change (a late payment and its return;
	// an opening balance), each at most once: a posting whose id is stored already is skipped.
	// Each journal entry among them is recorded in one step, all of it or, when one of its
	// postings is refused, none; the journals go in order, and a refusal stops the call with
	// the journals before it recorded. It answers how many of the postings this call stored
	// (those stored before it, or by a concurrent call, are not counted), so that a caller can
	// act once per posting: of concurrent calls posting one id, exactly one counts it. On an
	// error, the postings counted so far stay stored.
	Post(ctx context.Context, postings ...domain.Posting) (stored int, err error)

	// ClaimPayment records c unless its end-to-end id was claimed before, and returns the
	// stored claim either way (the caller compares it with c).
	ClaimPayment(ctx context.Context, c PaymentClaim) (PaymentClaim, error)

	// MarkLate marks the claim of endToEndID as a late payment. The first marking also
	// records its devolution, due at due (Devolution.Due), in the same write: the devolution
	// is recorded before anything is sent. Marking a late claim again changes nothing. An
	// unknown end-to-end id is domain.ErrNotFound.
	MarkLate(ctx context.Context, endToEndID string, due time.Time) error

	// UpdateLateDevolution applies fn to the claim of endToEndID as stored now and stores the
	// Devolution it leaves (only that: the rest of the claim never changes). fn may run more
	// than once (after a lost race) and must not call the store; an error from fn stores
	// nothing and is returned. Two updates of one claim never run at once, across instances:
	// the devolution outbox claims a devolution with it. An unknown end-to-end id is
	// domain.ErrNotFound.
	UpdateLateDevolution(ctx context.Context, endToEndID string, fn func(*PaymentClaim) error) (PaymentClaim, error)

	// LateDevolutionsDue lists up to limit late claims whose devolution is due at or before
	// until, the earliest first.
	LateDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]PaymentClaim, error)

	// LatePayments lists the claims marked late, oldest first (audits compare them with the
	// suspense entries).
	LatePayments(ctx context.Context) ([]PaymentClaim, error)

	// Recover posts the entries of status changes that a crash left without them, and tells
	// how many it posted. Stores that write a change and its entries atomically have nothing
	// to recover.
	Recover(ctx context.Context) (int, error)
}

package domain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// LedgerAccount names one account of the double-entry ledger. A merchant has two (Available
// and Blocked); the others are the service's own. An entry's merchant accounts are those of
// its AccountID.
type LedgerAccount string

const (
	// LedgerAvailable is what a merchant may withdraw or refund from.
	LedgerAvailable LedgerAccount = "available"
	// LedgerBlocked holds a merchant's money while a refund or a MED dispute is in progress.
	LedgerBlocked LedgerAccount = "blocked"
	// LedgerClearing is the PIX network: money arrives from it and leaves through it.
	LedgerClearing LedgerAccount = "clearing"
	// LedgerFees is the service's revenue from payment fees.
	LedgerFees LedgerAccount = "fees"
	// LedgerPayouts is where withdrawals (amount and fee) go until they come back.
	LedgerPayouts LedgerAccount = "payouts"
	// LedgerSuspense holds money that belongs to no charge (late payments) until it is
	// returned to the payer.
	LedgerSuspense LedgerAccount = "suspense"
)

// Merchant tells whether a belongs to a merchant (rather than to the service).
func (a LedgerAccount) Merchant() bool { return a == LedgerAvailable || a == LedgerBlocked }

// MovementType is what an entry records: the `type` of a statement line.
type MovementType string

const (
	MovePayment            MovementType = "payment"
	MoveFee                MovementType = "fee"
	MoveRefundHold         MovementType = "refund_hold"
	MoveRefund             MovementType = "refund"
	MoveRefundRelease      MovementType = "refund_release"
	MoveDisputeHold        MovementType = "dispute_hold"
	MoveDisputeRelease     MovementType = "dispute_release"
	MoveDisputeDebit       MovementType = "dispute_debit"
	MoveWithdrawal         MovementType = "withdrawal"
	MoveWithdrawalReversal MovementType = "withdrawal_reversal"
	// MoveLatePayment records, in suspense, money that paid no charge: paid for a charge that
	// was not awaiting it, or of another amount than the charge's.
	MoveLatePayment MovementType = "late_payment"
	// MoveLatePaymentReturn records that money in suspense went back to its payer.
	MoveLatePaymentReturn MovementType = "late_payment_return"
	// MoveOpeningBalance brings an account that existed before the ledger to the balance the
	// gateway showed it, once, at the upgrade.
	MoveOpeningBalance MovementType = "opening_balance"
)

// StatementTypes are the movement types a merchant's statement shows and filters on.
func StatementTypes() []MovementType {
	return []MovementType{MovePayment, MoveFee, MoveRefundHold, MoveRefund, MoveRefundRelease,
		MoveDisputeHold, MoveDisputeRelease, MoveDisputeDebit, MoveWithdrawal, MoveWithdrawalReversal,
		MoveOpeningBalance}
}

// ParseMovementType accepts exactly one of StatementTypes.
func ParseMovementType(s string) (MovementType, error) {
	if slices.Contains(StatementTypes(), MovementType(s)) {
		return MovementType(s), nil
	}
	return "", fmt.Errorf("unknown entry type %q", s)
}

// Posting is one movement a transition asks the ledger to record: Amount leaves Debit and
// enters Credit (both the same integer amount: double entry). Postings are raised by the
// aggregates' transitions, like events, and stored by the repository in the same write as the
// status change, so that a status change and its entries are never separated.
//
// ID is derived from the resource and the transition (never random), so that posting the
// same movement twice — a retry, a recovery after a crash, two instances racing — stores it
// once.
//
// The postings one transition raises together form one journal entry (a payment and its fee):
// a ledger records them in one step, in order, so that no reader and no balance check ever
// sees some of them without the others. The first posting of a journal names it; the others
// carry its ID in Journal (see JournalID, Journals).
type Posting struct {
	ID         string
	Type       MovementType
	AccountID  string // the merchant; empty for movements between the service's own accounts
	Resource   ResourceKind
	ResourceID string
	Debit      LedgerAccount
	Credit     LedgerAccount
	Amount     Cents
	// Checked marks a debit the merchant asked for (a withdrawal, a refund): the ledger stores
	// it only when the merchant's available balance covers it, in the same atomic step.
	Checked bool
	// At is when the movement happened (the transition's time); zero lets the ledger date it.
	At time.Time
	// Journal is the ID of the first posting of the journal entry p belongs to, when p is not
	// that first posting itself; empty otherwise.
	Journal string
}

// JournalID names the journal entry p belongs to: the ID of its first posting.
func (p Posting) JournalID() string {
	if p.Journal == "" {
		return p.ID
	}
	return p.Journal
}

// Journals cuts postings into their journal entries, in order: a run of postings with one
// JournalID is one journal. (A transition raises the postings of a journal one after the
// other, so a journal is never split by another's.)
func Journals(postings []Posting) [][]Posting {
	var out [][]Posting
	for i, p := range postings {
		if i == 0 || p.JournalID() != postings[i-1].JournalID() {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// Delta is the signed change p makes to its merchant's available and blocked accounts.
func (p Posting) Delta() LedgerBalance {
	var d LedgerBalance
	d.add(p.Credit, p.Amount)
	d.add(p.Debit, -p.Amount)
	return d
}

// LedgerBalance is what a merchant's two ledger accounts hold.
type LedgerBalance struct {
	Available Cents
	Blocked   Cents
}

func (b *LedgerBalance) add(a LedgerAccount, c Cents) {
	switch a {
	case LedgerAvailable:
		b.Available += c
	case LedgerBlocked:
		b.Blocked += c
	}
}

// Apply returns the balance once p is recorded. A checked posting that would take Available
// below zero (or that finds it below zero already, after a MED hold) answers
// ErrInsufficientBalance: a merchant never spends money it does not have. Unchecked postings
// always apply: a MED hold is taken in full even when it leaves Available negative.
func (b LedgerBalance) Apply(p Posting) (LedgerBalance, error) {
	if p.Amount <= 0 {
		return b, fmt.Errorf("%w: posting %s of %d cents", ErrInvalidPosting, p.ID, p.Amount)
	}
	d := p.Delta()
	next := LedgerBalance{Available: b.Available + d.Available, Blocked: b.Blocked + d.Blocked}
	if p.Checked && next.Available < 0 {
		return b, fmt.Errorf("%w: %d cents available, %d asked", ErrInsufficientBalance, b.Available, p.Amount)
	}
	return next, nil
}

// ErrInvalidPosting reports a posting that breaks the ledger's shape (no amount, an unknown
// account); no transition of this program raises one.
var ErrInvalidPosting = errors.New("invalid posting")

// Entry is a posting as the ledger stored it: numbered in its ledger (Seq counts from 1 per
// AccountID, the service's own ledger being the empty AccountID), dated, and with the merchant's
// balance once it applied.
type Entry struct {
	Posting
	Seq          int64
	CreatedAt    time.Time
	BalanceAfter LedgerBalance
}

// NextEntry numbers and dates p after prev (nil for the first entry of a ledger) and applies
// it to the balance. Dates never go back within a ledger, even when clocks of several
// instances disagree, so that the statement's order by number is also its order by date.
func NextEntry(prev *Entry, p Posting, now time.Time) (Entry, error) {
	if !p.At.IsZero() {
		now = p.At
	}
	e := Entry{Posting: p, Seq: 1, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	var before LedgerBalance
	if prev != nil {
		e.Seq = prev.Seq + 1
		before = prev.BalanceAfter
		if e.CreatedAt.Before(prev.CreatedAt) {
			e.CreatedAt = prev.CreatedAt
		}
	}
	after, err := before.Apply(p)
	if err != nil {
		return Entry{}, err
	}
	if p.AccountID == "" {
		after = LedgerBalance{} // the service's ledger keeps no merchant balance
	}
	e.BalanceAfter = after
	return e, nil
}

// NextJournal numbers, dates and applies the postings of one journal entry after prev (nil
// for the first entry of a ledger), each after the one before it, as NextEntry does one
// posting: all of them, or none when one is refused (a checked posting the balance before it
// does not cover, with every earlier posting of the journal applied). The journal is dated
// once, by its first posting, so that its lines keep together in date order too. A journal
// records one movement of one resource in one ledger: postings of several ledgers or
// resources are ErrInvalidPosting, and so is an empty journal. The lines name their journal as
// the postings of a transition do: the first none, the others the first's ID.
func NextJournal(prev *Entry, postings []Posting, now time.Time) ([]Entry, error) {
	if len(postings) == 0 {
		return nil, fmt.Errorf("%w: a journal without postings", ErrInvalidPosting)
	}
	first := postings[0]
	out := make([]Entry, 0, len(postings))
	for _, p := range postings {
		if p.AccountID != first.AccountID || p.Resource != first.Resource || p.ResourceID != first.ResourceID {
			return nil, fmt.Errorf("%w: posting %s of %s %s in ledger %q joins a journal of %s %s in ledger %q",
				ErrInvalidPosting, p.ID, p.Resource, p.ResourceID, p.AccountID, first.Resource, first.ResourceID, first.AccountID)
		}
		e, err := NextEntry(prev, p, now)
		if err != nil {
			return nil, err
		}
		e.Journal = ""
		if len(out) > 0 {
			e.CreatedAt, e.Journal = out[0].CreatedAt, first.ID
		}
		out = append(out, e)
		prev = &out[len(out)-1]
	}
	return out, nil
}

// postingID names the posting of type kind raised by the transition that wrote history entry
// step of a resource.
func postingID(resourceID string, step int, kind MovementType) string {
	return resourceID + "/" + strconv.Itoa(step) + "/" + string(kind)
}

// LatePaymentPostings are the entries of a payment that belongs to no charge: it arrives in
// suspense; once its devolution to the payer is confirmed, it leaves. The ids derive from the
// payment's end-to-end id, which identifies one payment once.
func LatePaymentPostings(endToEndID, transactionID string, amount Cents) (arrive, leave Posting) {
	base := Posting{Resource: ResourceTransaction, ResourceID: transactionID, Amount: amount}
	arrive, leave = base, base
	arrive.ID, arrive.Type = "late/"+endToEndID+"/"+string(MoveLatePayment), MoveLatePayment
	arrive.Debit, arrive.Credit = LedgerClearing, LedgerSuspense
	leave.ID, leave.Type = "late/"+endToEndID+"/"+string(MoveLatePaymentReturn), MoveLatePaymentReturn
	leave.Debit, leave.Credit = LedgerSuspense, LedgerClearing
	return arrive, leave
}

// OpeningBalancePostings bring a merchant's ledger from have to want (at most one posting per
// merchant account, against clearing), for accounts that existed before the ledger.
func OpeningBalancePostings(accountID string, have, want LedgerBalance) []Posting {
	var out []Posting
	for _, side := range []struct {
		acct LedgerAccount
		diff Cents
	}{{LedgerAvailable, want.Available - have.Available}, {LedgerBlocked, want.Blocked - have.Blocked}} {
		if side.diff == 0 {
			continue
		}
		p := Posting{ID: "opening/" + accountID + "/" + string(side.acct), Type: MoveOpeningBalance,
			AccountID: accountID, Resource: ResourceAccount, ResourceID: accountID,
			Debit: LedgerClearing, Credit: side.acct, Amount: side.diff}
		if side.diff < 0 {
			p.Debit, p.Credit, p.Amount = side.acct, LedgerClearing, -side.diff
		}
		if len(out) > 0 {
			p.Journal = out[0].ID // both sides are one upgrade
		}
		out = append(out, p)
	}
	return out
}

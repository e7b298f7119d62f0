package moneycheck

import (
	"fmt"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// Kind names what an operation asked of pixgate.
type Kind string

// The operations a run records. Those that move no money of the merchant (a charge, a late
// payment, which goes to the service's suspense account, a dispute accepted, a payout
// processed) are recorded too, for the report and the per-resource check.
const (
	KindReadBalance         Kind = "read_balance"         // GetBalance
	KindCharge              Kind = "charge"               // CreateTransaction
	KindPayment             Kind = "payment"              // ApplyPixNotifications, a payment
	KindLatePayment         Kind = "late_payment"         // ApplyPixNotifications, a second payment of a paid charge
	KindRefund              Kind = "refund"               // RefundTransaction: the hold
	KindRefundReturned      Kind = "refund_returned"      // ApplyPixNotifications, a devolution DEVOLVIDO
	KindRefundNotDone       Kind = "refund_not_done"      // ApplyPixNotifications, a devolution NAO_REALIZADO
	KindRefundFailed        Kind = "refund_failed"        // the sandbox's FailRefund
	KindDisputeOpen         Kind = "dispute_open"         // the sandbox's OpenDispute
	KindDisputeReject       Kind = "dispute_reject"       // the sandbox's RejectDispute
	KindDisputeAccept       Kind = "dispute_accept"       // the sandbox's AcceptDispute
	KindDisputeComplete     Kind = "dispute_complete"     // ApplyPixNotifications, the MED devolution
	KindWithdraw            Kind = "withdraw"             // CreateWithdrawal
	KindWithdrawalProcessed Kind = "withdrawal_processed" // the transition the sandbox's settler applies
	KindWithdrawalFailed    Kind = "withdrawal_failed"    // the sandbox's FailWithdrawal
	KindWithdrawalRejected  Kind = "withdrawal_rejected"  // the sandbox's RejectWithdrawal
	KindWithdrawalCanceled  Kind = "withdrawal_canceled"  // CancelWithdrawal
	KindWithdrawalReturned  Kind = "withdrawal_returned"  // the sandbox's RefundWithdrawal
)

// Outcome is what became of an operation's movement of money.
type Outcome string

const (
	// Applied: the operation made its change, and its movement (if any) is due in the ledger.
	Applied Outcome = "applied"
	// Refused: a checked debit the available balance did not cover (domain.ErrInsufficientBalance).
	Refused Outcome = "refused"
	// NoEffect: nothing of the merchant's changed (a callback delivered again, a late payment).
	NoEffect Outcome = "no_effect"
	// Failed: the use case answered an error the run did not expect; the run reports it.
	Failed Outcome = "failed"
)

// Posting is a movement an applied operation leaves in its merchant's ledger.
type Posting struct {
	Type   domain.MovementType
	Amount domain.Cents
}

// Op is one operation of the history.
type Op struct {
	ID       int
	Client   int // the lane of the client that made it: one operation at a time per lane
	Instance int // the store instance it went through
	Account  string
	Kind     Kind
	// Resource and ResourceID name the transaction or withdrawal; empty for reads and for
	// withdrawals the balance did not cover (they were never stored).
	Resource   domain.ResourceKind
	ResourceID string
	// Call and Return are when the use case was called and when it answered, since the run
	// began (monotonic).
	Call, Return time.Duration
	Outcome      Outcome
	// Delta is the change the operation makes to the account when it applies; Checked marks a
	// debit the merchant asked for, which the ledger records only when available covers it.
	Delta   domain.LedgerBalance
	Checked bool
	// Postings are the entries the operation leaves in the merchant's ledger when it applies.
	Postings []Posting
	// Balance is what a read answered.
	Balance domain.LedgerBalance
	// Detail is the answer in words, for the report.
	Detail string
}

func (op Op) String() string {
	s := fmt.Sprintf("op %d (client %d, instance %d, %v..%v) %s", op.ID, op.Client, op.Instance,
		op.Call.Round(time.Microsecond), op.Return.Round(time.Microsecond), op.Kind)
	if op.ResourceID != "" {
		s += " " + string(op.Resource) + " " + op.ResourceID
	}
	if op.Kind == KindReadBalance {
		return s + " → " + describeBalance(op.Balance)
	}
	if op.Delta != (domain.LedgerBalance{}) {
		s += fmt.Sprintf(" moving available %+d, blocked %+d", op.Delta.Available, op.Delta.Blocked)
		if op.Checked {
			s += " (checked)"
		}
	}
	s += " → " + string(op.Outcome)
	if op.Detail != "" {
		s += ": " + op.Detail
	}
	return s
}

// movesMoney tells whether the operation belongs in the model: a read, or an operation that
// moved (or was refused a move of) the account's money.
func (op Op) movesMoney() bool {
	switch {
	case op.Kind == KindReadBalance:
		return op.Outcome == Applied
	case op.Outcome == Refused:
		return true
	case op.Outcome == Applied:
		return op.Delta != (domain.LedgerBalance{})
	}
	return false
}

func describeBalance(b domain.LedgerBalance) string {
	return fmt.Sprintf("available %d, blocked %d", b.Available, b.Blocked)
}

// History records the operations of a run. Safe for concurrent use.
type History struct {
	start time.Time

	mu  sync.Mutex
	ops []Op
}

func newHistory() *History { return &History{start: time.Now()} }

// now is the time since the run began, on the monotonic clock.
func (h *History) now() time.Duration { return time.Since(h.start) }

// add records op, numbering it.
func (h *History) add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	op.ID = len(h.ops)
	h.ops = append(h.ops, op)
}

// Ops returns the operations recorded so far, in the order they ended.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

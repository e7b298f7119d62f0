package domain

import (
	"fmt"
	"slices"
	"time"
)

// The ledger audit recomputes, from a resource's stored history alone, the entries it must
// have. It is written apart from the transitions on purpose: an audit that reused the code it
// checks would agree with any mistake of that code.

// ImpliedTransactionPostings are the postings the history of a transaction implies, in order.
func ImpliedTransactionPostings(r TransactionRecord) []Posting {
	var out []Posting
	post := func(step int, kind MovementType, debit, credit LedgerAccount, amount Cents, checked bool) {
		out = append(out, Posting{ID: postingID(r.ID, step, kind), Type: kind, AccountID: r.AccountID,
			Resource: ResourceTransaction, ResourceID: r.ID, Debit: debit, Credit: credit, Amount: amount, Checked: checked})
	}
	postRefund := func(rf Refund, kind MovementType, debit, credit LedgerAccount, checked bool) {
		out = append(out, Posting{ID: RefundPostingID(r.ID, rf.ID, kind), Type: kind, AccountID: r.AccountID,
			Resource: ResourceTransaction, ResourceID: r.ID, Debit: debit, Credit: credit, Amount: rf.Amount, Checked: checked})
	}
	var paid, fee Cents
	if r.AmountPaid != nil {
		paid = *r.AmountPaid
	}
	if r.FeeAmount != nil {
		fee = *r.FeeAmount
	}
	// refunded(i) is what refunds completed before history step i returned.
	refunded := func(i int) Cents {
		var sum Cents
		for _, rf := range r.Refunds {
			if rf.Status == RefundRefunded && rf.Step+1 < i {
				sum += rf.Amount
			}
		}
		return sum
	}
	refundAt := func(step int) (Refund, bool) {
		k := slices.IndexFunc(r.Refunds, func(rf Refund) bool { return rf.Step == step })
		if k < 0 {
			return Refund{}, false
		}
		return r.Refunds[k], true
	}
	for i := 1; i < len(r.History); i++ {
		from, to := r.History[i-1].Status, r.History[i].Status
		switch {
		case from == TxPixQRCodeGenerated && to == TxPaid:
			post(i, MovePayment, LedgerClearing, LedgerAvailable, paid, false)
			if fee > 0 {
				post(i, MoveFee, LedgerAvailable, LedgerFees, fee, false)
				out[len(out)-1].Journal = out[len(out)-2].ID // the payment and its fee are one journal
			}
		case to == TxProcessingRefund:
			if rf, ok := refundAt(i); ok {
				postRefund(rf, MoveRefundHold, LedgerAvailable, LedgerBlocked, true)
			}
		case from == TxProcessingRefund:
			if rf, ok := refundAt(i - 1); ok {
				switch rf.Status {
				case RefundRefunded:
					postRefund(rf, MoveRefund, LedgerBlocked, LedgerClearing, false)
				case RefundFailed:
					postRefund(rf, MoveRefundRelease, LedgerBlocked, LedgerAvailable, false)
				}
			}
		case to == TxBlocked:
			post(i, MoveDisputeHold, LedgerAvailable, LedgerBlocked, paid-refunded(i), false)
		case from == TxBlocked && to == TxPaid:
			post(i, MoveDisputeRelease, LedgerBlocked, LedgerAvailable, paid-refunded(i), false)
		case from == TxProcessingInfraction && to == TxInfraction:
			post(i, MoveDisputeDebit, LedgerBlocked, LedgerClearing, paid-refunded(i), false)
		}
	}
	return out
}

// ImpliedWithdrawalPostings are the postings the history of a withdrawal implies, in order.
func ImpliedWithdrawalPostings(r WithdrawalRecord) []Posting {
	total := r.Payout.Amount + r.Payout.Fee
	base := Posting{AccountID: r.AccountID, Resource: ResourceWithdrawal, ResourceID: r.ID, Amount: total}
	var out []Posting
	for i, h := range r.History {
		p := base
		switch {
		case i == 0:
			p.ID, p.Type, p.Debit, p.Credit, p.Checked = postingID(r.ID, 0, MoveWithdrawal), MoveWithdrawal, LedgerAvailable, LedgerPayouts, true
		case !h.Status.HoldsMoney():
			p.ID, p.Type, p.Debit, p.Credit = postingID(r.ID, i, MoveWithdrawalReversal), MoveWithdrawalReversal, LedgerPayouts, LedgerAvailable
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// SamePosting tells whether a stored entry records exactly the posting p (its checked mark
// and its journal aside, which only govern how it was stored: a ledger written before journals
// holds a payment and its fee as two); when not, the answer says how they differ.
func SamePosting(e Posting, p Posting) (bool, string) {
	e.Checked, p.Checked, e.At, p.At = false, false, time.Time{}, time.Time{}
	e.Journal, p.Journal = "", ""
	if e == p {
		return true, ""
	}
	return false, fmt.Sprintf("stored %s %d cents %s→%s, expected %s %d cents %s→%s",
		e.Type, e.Amount, e.Debit, e.Credit, p.Type, p.Amount, p.Debit, p.Credit)
}

package domain

// Balance is what an account holds, in cents.
type Balance struct {
	Available Cents // may be withdrawn
	Blocked   Cents // paid, but held by a refund or a MED dispute in progress
	Pending   Cents // charged and not yet paid
}

// TransactionTotals sums the transactions of one status.
type TransactionTotals struct{ Amount, Paid, Fee Cents }

// WithdrawalTotals sums the withdrawals of one status.
type WithdrawalTotals struct{ Amount, Fee Cents }

// BalanceTotals are the per-status sums a store computes for one account. The balance is
// always derived from them, never kept as a second figure that could drift.
type BalanceTotals struct {
	Transactions map[TransactionStatus]TransactionTotals
	Withdrawals  map[WithdrawalStatus]WithdrawalTotals
}

// AddTransaction adds one transaction to the totals (for stores that sum in code).
func (b *BalanceTotals) AddTransaction(t *Transaction) {
	if b.Transactions == nil {
		b.Transactions = map[TransactionStatus]TransactionTotals{}
	}
	s := b.Transactions[t.status]
	s.Amount += t.order.Amount
	if t.amountPaid != nil {
		s.Paid += *t.amountPaid
	}
	if t.feeAmount != nil {
		s.Fee += *t.feeAmount
	}
	b.Transactions[t.status] = s
}

// AddWithdrawal adds one withdrawal to the totals.
func (b *BalanceTotals) AddWithdrawal(w *Withdrawal) {
	if b.Withdrawals == nil {
		b.Withdrawals = map[WithdrawalStatus]WithdrawalTotals{}
	}
	s := b.Withdrawals[w.status]
	s.Amount += w.payout.Amount
	s.Fee += w.payout.Fee
	b.Withdrawals[w.status] = s
}

// Balance applies the balance rules: PAID transactions count their amount paid minus fees;
// BLOCKED, PROCESSING_REFUND and PROCESSING_INFRACTION money is blocked; REFUNDED, INFRACTION
// and FAILED count nothing; PIX_QRCODE_GENERATED amounts are pending; withdrawals that hold
// money (PENDING, PROCESSING, PROCESSED) take out their amount and fee.
func (b BalanceTotals) Balance() Balance {
	var out Balance
	for status, s := range b.Transactions {
		switch status {
		case TxPaid:
			out.Available += s.Paid - s.Fee
		case TxBlocked, TxProcessingRefund, TxProcessingInfraction:
			out.Blocked += s.Paid - s.Fee
		case TxPixQRCodeGenerated:
			out.Pending += s.Amount
		}
	}
	for status, s := range b.Withdrawals {
		if status.HoldsMoney() {
			out.Available -= s.Amount + s.Fee
		}
	}
	return out
}

package sandbox

import (
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Messages the sandbox records on what it makes fail.
const (
	RefundFailedMessage       = "the acquirer could not refund the payment (sandbox)"
	WithdrawalFailedMessage   = "the payout failed at the acquirer (sandbox)"
	WithdrawalRejectedMessage = "the payout was rejected by the gateway (sandbox)"
)

// TransactionSteering and WithdrawalSteering are the use cases behind the /sandbox routes:
// what the payers' banks and the acquirer would do, done on the merchant's request. Each moves
// one record of the caller's account by one transition of the state tables; from any other
// status it answers a domain.InvalidTransitionError and changes nothing.
type TransactionSteering struct {
	// PayTransaction pays a charge as if a bank customer had scanned its QR code:
	// PIX_QRCODE_GENERATED → PAID with the full amount, a real-format endToEnd, the payer (Payer
	// when the request names none), the gateway's receiving account and the configured fee.
	PayTransaction *application.Transition[*domain.Transaction, *domain.AccountHolder]
	// OpenDispute opens a MED dispute, as a payer's bank would: PAID → BLOCKED.
	OpenDispute *application.TransactionStep
	// AcceptDispute decides a MED dispute for the payer: BLOCKED → PROCESSING_INFRACTION;
	// SettleTransactions completes the MED refund (INFRACTION) after the settle delay.
	AcceptDispute *application.TransactionStep
	// RejectDispute decides a MED dispute for the merchant and releases the funds:
	// BLOCKED → PAID.
	RejectDispute *application.TransactionStep
	// FailRefund makes the refund in progress fail: PROCESSING_REFUND → PAID with an
	// errorMessage, the refund FAILED and its amount back in the available balance.
	FailRefund *application.TransactionStep
}

// WithdrawalSteering: see TransactionSteering.
type WithdrawalSteering struct {
	// FailWithdrawal is the acquirer reporting a processing error: PROCESSING → FAILED.
	FailWithdrawal *application.WithdrawalStep
	// RejectWithdrawal is the gateway refusing a payout: PROCESSING → REJECTED.
	RejectWithdrawal *application.WithdrawalStep
	// RefundWithdrawal is the receiving institution returning a processed payout's money:
	// PROCESSED → REFUNDED.
	RefundWithdrawal *application.WithdrawalStep
}

// NewTransactionSteering builds the steering of transactions; fee is charged on each
// payment, received by receiver (ReceivingAccount).
func NewTransactionSteering(transactions ports.TransactionRepository, clock ports.Clock, fee domain.FeePolicy, receiver domain.AccountHolder) TransactionSteering {
	step := func(name string, move func(*domain.Transaction, time.Time) error) *application.TransactionStep {
		return application.NewTransition(name, transactions, clock, func(t *domain.Transaction, _ application.NoInput, now time.Time) error {
			return move(t, now)
		})
	}
	return TransactionSteering{
		PayTransaction: application.NewTransition("sandbox.PayTransaction", transactions, clock, pay(fee, receiver)),
		OpenDispute:    step("sandbox.OpenDispute", (*domain.Transaction).OpenDispute),
		AcceptDispute:  step("sandbox.AcceptDispute", (*domain.Transaction).AcceptDispute),
		RejectDispute:  step("sandbox.RejectDispute", (*domain.Transaction).RejectDispute),
		FailRefund:     step("sandbox.FailRefund", failRefund),
	}
}

// NewWithdrawalSteering builds the steering of withdrawals.
func NewWithdrawalSteering(withdrawals ports.WithdrawalRepository, clock ports.Clock) WithdrawalSteering {
	step := func(name string, move func(*domain.Withdrawal, time.Time) error) *application.WithdrawalStep {
		return application.NewTransition(name, withdrawals, clock, func(w *domain.Withdrawal, _ application.NoInput, now time.Time) error {
			return move(w, now)
		})
	}
	return WithdrawalSteering{
		FailWithdrawal: step("sandbox.FailWithdrawal", func(w *domain.Withdrawal, now time.Time) error {
			return w.Fail(WithdrawalFailedMessage, now)
		}),
		RejectWithdrawal: step("sandbox.RejectWithdrawal", func(w *domain.Withdrawal, now time.Time) error {
			return w.Reject(WithdrawalRejectedMessage, now)
		}),
		RefundWithdrawal: step("sandbox.RefundWithdrawal", (*domain.Withdrawal).Refund),
	}
}

// pay is the transition of a payment by payer (nil: Payer) to receiver.
func pay(fee domain.FeePolicy, receiver domain.AccountHolder) func(*domain.Transaction, *domain.AccountHolder, time.Time) error {
	return func(t *domain.Transaction, payer *domain.AccountHolder, now time.Time) error {
		from, to := Payer(), receiver
		if payer != nil {
			from = *payer
		}
		return t.Pay(domain.Payment{
			AmountPaid: t.Amount(), PaidAt: now, EndToEnd: domain.NewEndToEndID('E', domain.SandboxISPB, now),
			Payer: &from, Receiver: &to, Fee: fee.For(t.Amount()),
		}, now)
	}
}

// failRefund fails the refund in progress.
func failRefund(t *domain.Transaction, now time.Time) error {
	r, ok := t.RefundInProgress()
	if !ok {
		return &domain.InvalidTransitionError{Resource: string(domain.ResourceTransaction), From: string(t.Status()), To: string(domain.TxPaid)}
	}
	return t.FailRefund(r.ID, RefundFailedMessage, now)
}

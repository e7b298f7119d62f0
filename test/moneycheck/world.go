package moneycheck

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Instance is what one pixgate instance holds of the store under test. Two Instances on one
// database are two pixgate processes sharing it (nothing shared but the data); a store that
// lives in one process is one Instance.
type Instance struct {
	Transactions ports.TransactionRepository
	Withdrawals  ports.WithdrawalRepository
	Ledger       ports.Ledger
	// Accounts lists the merchants for the audit; a store without merchant accounts of its own
	// (the memory store keeps them apart) may hand in an empty repository.
	Accounts ports.AccountRepository
}

// The money of a run. A charge is most often 1,000.00, the amount of the known interleaving
// that overdrew an account (a withdrawal of the balance plus 1,000.00 landing between a
// payment and its fee); the fees are those of a plausible contract.
const (
	chargeAmount  domain.Cents = 100_000
	withdrawalFee domain.Cents = 150
)

var paymentFee = domain.FeePolicy{FixedCents: 50, BasisPoints: 199}

// useCases are pixgate's use cases as one instance builds them on its store, with the world
// around it that the sandbox provides: its acquirer (a refund's devolution answers in progress,
// a late payment's is returned at once), its steering of disputes and payouts, the static PIX
// emitter and the QR renderer.
type useCases struct {
	create        *application.CreateTransaction
	notify        *application.ApplyPixNotifications
	refund        *application.RefundTransaction
	getTx         *application.GetTransaction
	balance       *application.GetBalance
	steer         sandbox.TransactionSteering
	withdrawNow   *application.CreateWithdrawal // stored PROCESSING, as the sandbox does
	withdrawLater *application.CreateWithdrawal // stored PENDING, until an acquirer takes it
	cancel        *application.CancelWithdrawal
	process       *application.WithdrawalStep // PROCESSING → PROCESSED, as the sandbox's payouts end
	payouts       sandbox.WithdrawalSteering
}

// newUseCases wires one instance. report receives what the use cases report on the side (an
// acquirer failing a refund's devolution, a late payment's return failing); neither should
// happen with the sandbox's acquirer.
func newUseCases(in Instance, renderer ports.QRRenderer, report func(error)) (*useCases, error) {
	const pixKey, merchant = "moneycheck@pixgate.example", "Moneycheck"
	emitter, err := pix.NewEmitter(pix.EmitterConfig{PixKey: pixKey, MerchantName: merchant, MerchantCity: "Sao Paulo"})
	if err != nil {
		return nil, fmt.Errorf("moneycheck: the PIX emitter: %w", err)
	}
	receiver, err := sandbox.ReceivingAccount(pixKey, merchant)
	if err != nil {
		return nil, fmt.Errorf("moneycheck: the receiving account: %w", err)
	}
	clock, ids := system.Clock{}, system.UUIDs{}
	devolutions := application.NewSendDevolutions(in.Transactions, in.Ledger, sandbox.NewAcquirer(clock), clock,
		application.DevolutionSettings{CheckEvery: 5 * time.Minute, Claim: application.ClaimMargin + 10*time.Second},
		func(r application.DevolutionReport) {
			if r.Level == application.DevolutionError {
				report(fmt.Errorf("devolution %s: %s: %v", r.Devolution.ID, r.What, r.Err))
			}
		})
	late := func(lp application.LatePayment) {
		if lp.Err != nil {
			report(fmt.Errorf("late payment %s: its devolution: %w", lp.Claim.EndToEndID, lp.Err))
		}
	}
	settings := application.WithdrawalSettings{Acquirer: emitter.Acquirer(), Fee: withdrawalFee}
	now := settings
	now.StartAtOnce = true
	return &useCases{
		create:        application.NewCreateTransaction(in.Transactions, emitter, renderer, ids, system.Capabilities{}, clock),
		notify:        application.NewApplyPixNotifications(in.Transactions, in.Ledger, devolutions, pix.TxIDDecoder{}, clock, paymentFee, &receiver, late),
		refund:        application.NewRefundTransaction(in.Transactions, devolutions, ids, clock, report),
		getTx:         application.NewGetTransaction(in.Transactions),
		balance:       application.NewGetBalance(in.Ledger),
		steer:         sandbox.NewTransactionSteering(in.Transactions, clock, paymentFee, receiver),
		withdrawNow:   application.NewCreateWithdrawal(in.Withdrawals, ids, clock, now),
		withdrawLater: application.NewCreateWithdrawal(in.Withdrawals, ids, clock, settings),
		cancel:        application.NewCancelWithdrawal(in.Withdrawals, clock),
		process: application.NewTransition("moneycheck.ProcessWithdrawal", in.Withdrawals, clock,
			func(w *domain.Withdrawal, _ application.NoInput, now time.Time) error {
				return w.Complete(domain.NewEndToEndID('E', domain.SandboxISPB, now), now)
			}),
		payouts: sandbox.NewWithdrawalSteering(in.Withdrawals, clock),
	}, nil
}

// newRenderer is the QR renderer the instances share, with room in its queue for every payer
// at once: a charge refused for an overloaded renderer would only be noise here.
func newRenderer(payers int) *qr.Renderer {
	return qr.New(qr.Options{Workers: 2, Queue: payers + 2})
}

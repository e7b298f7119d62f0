package moneycheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// client is one of a run's concurrent callers: a lane of the history (one operation at a time),
// working on one account, drawing its choices from its own seeded source.
type client struct {
	r       *run
	lane    int
	account string
	rng     *rand.Rand
	// twin delivers the same callback at the same time as this client, through another
	// instance where there are two, as an acquirer retrying would; nil for clients without one.
	twin *client
	// pace is the account's: the clients that sell (payers and their twins) tell it their
	// progress, the others keep in step with it.
	pace  *pace
	sells bool
}

func (c *client) principal() domain.Principal { return domain.Principal{AccountID: c.account} }

// instance picks the instance of the next operation.
func (c *client) instance() int { return c.rng.IntN(len(c.r.uses)) }

// do runs one operation through instance inst: op carries what the client knows before the
// call, and answer fills in the answer. An answer the run does not expect fails the operation,
// which the report lists, and the client stops: what it would do next depends on a fate it
// does not know. do answers the operation's outcome.
func (c *client) do(inst int, op Op, answer func(u *useCases, op *Op) error) Outcome {
	op.Client, op.Instance, op.Account = c.lane, inst, c.account
	paying := c.sells && op.Kind == KindPayment
	if paying {
		c.pace.paymentBegins()
	}
	op.Call = c.r.h.now()
	err := answer(c.r.uses[inst], &op)
	op.Return = c.r.h.now()
	if err != nil {
		op.Outcome, op.Detail = Failed, err.Error()
	}
	c.r.h.add(op)
	switch {
	case paying:
		c.pace.paymentEnds()
	case c.sells:
		c.pace.ended()
	}
	return op.Outcome
}

// going tells whether the run's time is left.
func (c *client) going(ctx context.Context) bool {
	return ctx.Err() == nil && time.Now().Before(c.r.deadline)
}

// readBalance reads the account's balance.
func (c *client) readBalance(ctx context.Context) (domain.LedgerBalance, bool) {
	var b domain.LedgerBalance
	ok := c.do(c.instance(), Op{Kind: KindReadBalance}, func(u *useCases, op *Op) error {
		got, err := u.balance.Execute(ctx, c.principal())
		if err != nil {
			return err
		}
		b = domain.LedgerBalance{Available: got.Available, Blocked: got.Blocked}
		op.Outcome, op.Balance = Applied, b
		return nil
	}) != Failed
	return b, ok
}

// reader reads the balance, over and over.
func (c *client) reader(ctx context.Context) {
	bound := c.r.cfg.ReadsPerReader
	for n := 0; n < bound && c.pace.next(ctx, c.r.deadline, n, bound); n++ {
		if _, ok := c.readBalance(ctx); !ok {
			return
		}
	}
}

// withdrawer withdraws from the balance it last read, and steers each payout to an outcome.
// Part of its withdrawals probe for a payment's change half made: they ask for the balance
// read plus a charge's amount, which only a payment seen without its fee would cover (or
// several payments landed since the read, which is fine).
func (c *client) withdrawer(ctx context.Context) {
	bound := c.r.cfg.WithdrawalsPerWithdrawer
	for n := 0; n < bound && c.pace.next(ctx, c.r.deadline, n, bound); n++ {
		b, ok := c.readBalance(ctx)
		if !ok {
			return
		}
		var total domain.Cents
		switch p := c.rng.IntN(100); {
		case p < 40:
			total = b.Available + chargeAmount
		case p < 85 && b.Available > withdrawalFee+1:
			total = withdrawalFee + 1 + domain.Cents(c.rng.Int64N(int64(b.Available-withdrawalFee)*3/4+1))
		default:
			total = b.Available + 1 + domain.Cents(c.rng.Int64N(5_000))
		}
		amount := min(max(total-withdrawalFee, domain.MinAmount), domain.MaxAmount)
		if !c.withdraw(ctx, amount) {
			return
		}
	}
}

// withdraw asks for one withdrawal of amount and, when it is stored, steers it on.
func (c *client) withdraw(ctx context.Context, amount domain.Cents) bool {
	total := amount + withdrawalFee
	later := c.rng.IntN(3) == 0
	var w *domain.Withdrawal
	ok := c.do(c.instance(), Op{Kind: KindWithdraw, Delta: domain.LedgerBalance{Available: -total}, Checked: true},
		func(u *useCases, op *Op) error {
			uc := u.withdrawNow
			if later {
				uc = u.withdrawLater
			}
			created, err := uc.Execute(ctx, c.principal(), application.CreateWithdrawalInput{
				Amount: amount, PixKey: c.r.payee, IdempotencyKey: domain.NewID(), Fingerprint: fmt.Sprint(amount),
			})
			if errors.Is(err, domain.ErrInsufficientBalance) {
				op.Outcome, op.Detail = Refused, err.Error()
				return nil
			}
			if err != nil {
				return err
			}
			w = created.Withdrawal
			op.Resource, op.ResourceID, op.Outcome = domain.ResourceWithdrawal, w.ID(), Applied
			op.Postings = []Posting{{domain.MoveWithdrawal, total}}
			op.Detail = string(w.Status())
			return nil
		}) != Failed
	if !ok || w == nil || !c.going(ctx) {
		return ok
	}
	step := func(kind Kind, money bool, move func(u *useCases) (*domain.Withdrawal, error)) bool {
		op := Op{Kind: kind, Resource: domain.ResourceWithdrawal, ResourceID: w.ID()}
		return c.do(c.instance(), op, func(u *useCases, op *Op) error {
			got, err := move(u)
			if err != nil {
				return err
			}
			op.Outcome, op.Detail = Applied, string(got.Status())
			if money {
				op.Delta = domain.LedgerBalance{Available: total}
				op.Postings = []Posting{{domain.MoveWithdrawalReversal, total}}
			}
			return nil
		}) != Failed
	}
	p := c.rng.IntN(100)
	if w.Status() == domain.WdPending {
		if p < 50 {
			return step(KindWithdrawalCanceled, true, func(u *useCases) (*domain.Withdrawal, error) {
				return u.cancel.Execute(ctx, c.principal(), w.ID(), application.NoInput{})
			})
		}
		return true // it keeps holding the money, as a payout no acquirer has taken yet
	}
	switch {
	case p < 65:
		if !step(KindWithdrawalProcessed, false, func(u *useCases) (*domain.Withdrawal, error) {
			return u.process.Execute(ctx, c.principal(), w.ID(), application.NoInput{})
		}) {
			return false
		}
		if c.rng.IntN(8) == 0 {
			return step(KindWithdrawalReturned, true, func(u *useCases) (*domain.Withdrawal, error) {
				return u.payouts.RefundWithdrawal.Execute(ctx, c.principal(), w.ID(), application.NoInput{})
			})
		}
		return true
	case p < 80:
		return step(KindWithdrawalFailed, true, func(u *useCases) (*domain.Withdrawal, error) {
			return u.payouts.FailWithdrawal.Execute(ctx, c.principal(), w.ID(), application.NoInput{})
		})
	case p < 90:
		return step(KindWithdrawalRejected, true, func(u *useCases) (*domain.Withdrawal, error) {
			return u.payouts.RejectWithdrawal.Execute(ctx, c.principal(), w.ID(), application.NoInput{})
		})
	}
	return true // still PROCESSING when the run ends
}

// payer sells: it creates charges, pays them through the acquirer's callback (sometimes
// delivered twice at once, sometimes followed by a late second payment), and then refunds or
// disputes some of them, each outcome coming through the callback or the sandbox.
func (c *client) payer(ctx context.Context) {
	defer c.pace.payerStops()
	for range c.r.cfg.ChargesPerPayer {
		if !c.going(ctx) || !c.sell(ctx) {
			return
		}
	}
}

// sale is what a payer knows of one charge it sold.
type sale struct {
	tx         *domain.Transaction
	txid       string
	endToEnd   string
	status     domain.TransactionStatus
	refundable domain.Cents
}

func (c *client) sell(ctx context.Context) bool {
	amount := chargeAmount
	if c.rng.IntN(10) < 3 {
		amount = domain.Cents(500 + c.rng.Int64N(250_000))
	}
	var s sale
	ok := c.do(c.instance(), Op{Kind: KindCharge}, func(u *useCases, op *Op) error {
		created, err := u.create.Execute(ctx, c.principal(), application.CreateTransactionInput{Order: domain.Order{
			Amount: amount, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 3600,
		}})
		if err != nil {
			return err
		}
		s.tx = created.Transaction
		op.Resource, op.ResourceID, op.Outcome = domain.ResourceTransaction, s.tx.ID(), Applied
		return nil
	}) != Failed
	if !ok {
		return false
	}
	var err error
	if s.txid, err = txidOf(s.tx); err != nil {
		c.r.problem("charge %s: %v", s.tx.ID(), err)
		return false
	}
	s.endToEnd = domain.NewEndToEndID('E', domain.SandboxISPB, time.Now())
	payment := application.PixNotification{EndToEndID: s.endToEnd, TxID: s.txid, Amount: amount, PaidAt: time.Now().UTC()}
	fee := paymentFee.For(amount)
	applied, ok := c.deliver(c.rng.IntN(4) == 0, func(d *client, _ int) Outcome {
		return d.do(d.instance(), Op{Kind: KindPayment, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()},
			func(u *useCases, op *Op) error {
				res, err := notify(ctx, u, payment)
				if err != nil {
					return err
				}
				switch res.Outcome {
				case application.OutcomeApplied:
					op.Outcome, op.Delta = Applied, domain.LedgerBalance{Available: amount - fee}
					op.Postings = []Posting{{domain.MovePayment, amount}}
					if fee > 0 {
						op.Postings = append(op.Postings, Posting{domain.MoveFee, fee})
					}
				case application.OutcomeAlreadyApplied:
					op.Outcome = NoEffect
				default:
					return unexpected(res.Outcome, res.Detail)
				}
				return nil
			})
	})
	if !ok {
		return false
	}
	if applied != 1 {
		c.r.problem("payment %s of transaction %s: %d deliveries applied it, want exactly 1", s.endToEnd, s.tx.ID(), applied)
		return false
	}
	s.status, s.refundable = domain.TxPaid, amount
	if c.rng.IntN(8) == 0 && c.going(ctx) && !c.latePayment(ctx, &s, amount) {
		return false
	}
	for range 3 {
		if s.status != domain.TxPaid || !c.going(ctx) {
			return true
		}
		switch p := c.rng.IntN(100); {
		case p < 40:
			return true
		case p < 75:
			if !c.refund(ctx, &s) {
				return false
			}
		default:
			if !c.dispute(ctx, &s) {
				return false
			}
		}
	}
	return true
}

// deliver makes one delivery of a callback, or two at once when twice (this client's, slot 0,
// and its twin's, slot 1), and tells how many of them applied; ok is false when one failed.
func (c *client) deliver(twice bool, one func(d *client, slot int) Outcome) (applied int, ok bool) {
	var outcomes [2]Outcome
	if !twice || c.twin == nil {
		outcomes[0] = one(c, 0)
	} else {
		var wg sync.WaitGroup
		wg.Go(func() { outcomes[0] = one(c, 0) })
		wg.Go(func() { outcomes[1] = one(c.twin, 1) })
		wg.Wait()
	}
	ok = true
	for _, o := range outcomes {
		switch o {
		case Applied:
			applied++
		case Failed:
			ok = false
		}
	}
	return applied, ok
}

// latePayment pays the paid charge a second time, under another end-to-end id: the money goes
// to the service's suspense account and back to the payer, never to the merchant.
func (c *client) latePayment(ctx context.Context, s *sale, amount domain.Cents) bool {
	late := application.PixNotification{EndToEndID: domain.NewEndToEndID('E', domain.SandboxISPB, time.Now()), TxID: s.txid,
		Amount: amount, PaidAt: time.Now().UTC()}
	return c.do(c.instance(), Op{Kind: KindLatePayment, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()},
		func(u *useCases, op *Op) error {
			res, err := notify(ctx, u, late)
			if err != nil {
				return err
			}
			if res.Outcome != application.OutcomeLatePaymentRefunded {
				return unexpected(res.Outcome, res.Detail)
			}
			op.Outcome, op.Detail = NoEffect, res.Detail
			return nil
		}) != Failed
}

// refund asks for a refund of the sale, in full or in part, and brings its outcome.
func (c *client) refund(ctx context.Context, s *sale) bool {
	asked := domain.Cents(0) // everything left
	x := s.refundable
	if c.rng.IntN(2) == 0 {
		asked = 1 + domain.Cents(c.rng.Int64N(int64(s.refundable)))
		x = asked
	}
	var refund domain.Refund
	ok := c.do(c.instance(), Op{Kind: KindRefund, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID(),
		Delta: domain.LedgerBalance{Available: -x, Blocked: x}, Checked: true},
		func(u *useCases, op *Op) error {
			out, err := u.refund.Execute(ctx, c.principal(), s.tx.ID(), application.RefundInput{Amount: asked, Reason: "moneycheck"})
			if errors.Is(err, domain.ErrInsufficientBalance) {
				op.Outcome, op.Detail = Refused, err.Error()
				return nil
			}
			if err != nil {
				return err
			}
			r, found := out.Transaction.RefundInProgress()
			if !found || r.Amount != x {
				return fmt.Errorf("the refund stored %v (found %t), want one of %d in progress", r, found, x)
			}
			refund = r
			op.Outcome, op.Detail = Applied, "refund "+r.ID
			op.Postings = []Posting{{domain.MoveRefundHold, x}}
			return nil
		}) != Failed
	if !ok || refund.ID == "" {
		return ok
	}
	s.status = domain.TxProcessingRefund
	if !c.going(ctx) {
		return true // the refund stays in progress
	}
	p := c.rng.IntN(100)
	if p < 25 {
		return c.do(c.instance(), Op{Kind: KindRefundFailed, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()},
			func(u *useCases, op *Op) error {
				t, err := u.steer.FailRefund.Execute(ctx, c.principal(), s.tx.ID(), application.NoInput{})
				if err != nil {
					return err
				}
				s.status = t.Status()
				op.Outcome, op.Delta = Applied, domain.LedgerBalance{Available: x, Blocked: -x}
				op.Postings = []Posting{{domain.MoveRefundRelease, x}}
				return nil
			}) != Failed
	}
	returned := p < 75
	devolution := application.PixRefund{ID: refund.ID, ReturnID: domain.NewEndToEndID('D', domain.SandboxISPB, time.Now()),
		Amount: x, Status: application.PixRefundReturned}
	kind, delta, posting := KindRefundReturned, domain.LedgerBalance{Blocked: -x}, Posting{domain.MoveRefund, x}
	if !returned {
		devolution.Status, devolution.Reason = application.PixRefundNotDone, "moneycheck says no"
		kind, delta, posting = KindRefundNotDone, domain.LedgerBalance{Available: x, Blocked: -x}, Posting{domain.MoveRefundRelease, x}
	}
	callback := application.PixNotification{EndToEndID: s.endToEnd, TxID: s.txid, Amount: s.tx.Amount(), PaidAt: time.Now().UTC(),
		Refunds: []application.PixRefund{devolution}}
	var statuses [2]domain.TransactionStatus
	applied, ok := c.deliver(c.rng.IntN(4) == 0, func(d *client, slot int) Outcome {
		return d.do(d.instance(), Op{Kind: kind, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()},
			func(u *useCases, op *Op) error {
				outcome, status, detail, err := refundOutcome(ctx, u, callback)
				if err != nil {
					return err
				}
				switch outcome {
				case application.OutcomeApplied:
					op.Outcome, op.Delta, op.Postings = Applied, delta, []Posting{posting}
					statuses[slot] = status
				case application.OutcomeAlreadyApplied:
					op.Outcome = NoEffect
				default:
					return unexpected(outcome, detail)
				}
				return nil
			})
	})
	if !ok {
		return false
	}
	if applied != 1 {
		c.r.problem("devolution %s of transaction %s: %d deliveries applied it, want exactly 1", refund.ID, s.tx.ID(), applied)
		return false
	}
	s.status = max(statuses[0], statuses[1]) // the one that applied; the other is empty
	if returned {
		s.refundable -= x
	}
	return true
}

// dispute opens a MED dispute of the sale and decides it: rejected (the money comes back) or
// accepted and refunded to the payer through the callback.
func (c *client) dispute(ctx context.Context, s *sale) bool {
	var held domain.Cents
	ok := c.do(c.instance(), Op{Kind: KindDisputeOpen, Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()},
		func(u *useCases, op *Op) error {
			t, err := u.steer.OpenDispute.Execute(ctx, c.principal(), s.tx.ID(), application.NoInput{})
			if err != nil {
				return err
			}
			held = t.Disputed()
			op.Outcome, op.Delta = Applied, domain.LedgerBalance{Available: -held, Blocked: held}
			op.Postings = []Posting{{domain.MoveDisputeHold, held}}
			return nil
		}) != Failed
	if !ok {
		return false
	}
	s.status = domain.TxBlocked
	if !c.going(ctx) {
		return true // the dispute stays open
	}
	txOp := Op{Resource: domain.ResourceTransaction, ResourceID: s.tx.ID()}
	if c.rng.IntN(2) == 0 {
		txOp.Kind = KindDisputeReject
		return c.do(c.instance(), txOp, func(u *useCases, op *Op) error {
			if _, err := u.steer.RejectDispute.Execute(ctx, c.principal(), s.tx.ID(), application.NoInput{}); err != nil {
				return err
			}
			s.status = domain.TxPaid
			op.Outcome, op.Delta = Applied, domain.LedgerBalance{Available: held, Blocked: -held}
			op.Postings = []Posting{{domain.MoveDisputeRelease, held}}
			return nil
		}) != Failed
	}
	txOp.Kind = KindDisputeAccept
	if c.do(c.instance(), txOp, func(u *useCases, op *Op) error {
		if _, err := u.steer.AcceptDispute.Execute(ctx, c.principal(), s.tx.ID(), application.NoInput{}); err != nil {
			return err
		}
		s.status = domain.TxProcessingInfraction
		op.Outcome = Applied
		return nil
	}) == Failed {
		return false
	}
	if !c.going(ctx) {
		return true // the MED refund stays to come
	}
	med := application.PixRefund{ID: "MED" + domain.NewID()[:8], ReturnID: domain.NewEndToEndID('D', domain.SandboxISPB, time.Now()),
		Amount: held, Status: application.PixRefundReturned}
	callback := application.PixNotification{EndToEndID: s.endToEnd, TxID: s.txid, Amount: s.tx.Amount(), PaidAt: time.Now().UTC(),
		Refunds: []application.PixRefund{med}}
	txOp.Kind = KindDisputeComplete
	return c.do(c.instance(), txOp, func(u *useCases, op *Op) error {
		outcome, status, detail, err := refundOutcome(ctx, u, callback)
		if err != nil {
			return err
		}
		if outcome != application.OutcomeApplied {
			return unexpected(outcome, detail)
		}
		s.status = status
		op.Outcome, op.Delta = Applied, domain.LedgerBalance{Blocked: -held}
		op.Postings = []Posting{{domain.MoveDisputeDebit, held}}
		return nil
	}) != Failed
}

// notify delivers one payment through the acquirer's callback and answers its result.
func notify(ctx context.Context, u *useCases, n application.PixNotification) (application.PixNotificationResult, error) {
	res, err := u.notify.Execute(ctx, []application.PixNotification{n})
	if err != nil {
		return application.PixNotificationResult{}, err
	}
	if len(res) != 1 {
		return application.PixNotificationResult{}, fmt.Errorf("the callback answered %d results for 1 entry", len(res))
	}
	return res[0], nil
}

// refundOutcome delivers a callback whose payment is applied already and which carries one
// devolution, and answers what became of the devolution.
func refundOutcome(ctx context.Context, u *useCases, n application.PixNotification) (application.NotificationOutcome, domain.TransactionStatus, string, error) {
	res, err := notify(ctx, u, n)
	if err != nil {
		return "", "", "", err
	}
	if res.Outcome != application.OutcomeAlreadyApplied || len(res.Refunds) != 1 {
		return "", "", "", fmt.Errorf("the callback's payment answered %s (%s) with %d devolution results; want already_applied and 1",
			res.Outcome, res.Detail, len(res.Refunds))
	}
	return res.Refunds[0].Outcome, res.Status, res.Refunds[0].Detail, nil
}

func unexpected(outcome application.NotificationOutcome, detail string) error {
	return fmt.Errorf("the callback answered %s (%s)", outcome, detail)
}

// txidOf is the txid of a charge's BR Code: the static emitter derives it from the id.
func txidOf(t *domain.Transaction) (string, error) { return pix.TxIDFromTransactionID(t.ID()) }

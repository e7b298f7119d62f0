package application_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// acquirer is the acquirer's side of an lcWorld.
func (w *lcWorld) acquirer() *application.ApplyPixNotifications {
	return application.NewApplyPixNotifications(w.repo, w.ledger, w.devolutions, fakeTxIDs{}, w.clock, w.fee, &w.receiver,
		func(l application.LatePayment) { w.late = append(w.late, l) })
}

const (
	lcE2E      = "E12345678202611221119AbCdEfGhIjK"
	lcOtherE2E = "E12345678202611221120ZyXwVuTsRqP"
	lcRtrID    = "D12345678202611221130AbCdEfGhIjK"
)

func lcPayment(id string) application.PixNotification {
	return application.PixNotification{EndToEndID: lcE2E, TxID: fakeTxID(id), Amount: 12345, PaidAt: lcStart.Add(3 * time.Second)}
}

func lcRefundNote(id string, status application.PixRefundStatus, amount domain.Cents) application.PixNotification {
	n := lcPayment(id)
	n.Refunds = []application.PixRefund{{ID: "devolucao1", ReturnID: lcRtrID, Amount: amount, Status: status, Reason: "saldo insuficiente"}}
	return n
}

// naming gives n's devolution the id of the transaction's latest refund, and n the payment's
// end-to-end id, as the acquirer would name them; a transaction without refunds keeps the
// note's own.
func (w *lcWorld) naming(id string, n application.PixNotification) application.PixNotification {
	if tx := w.repo.stored(id); tx != nil && len(n.Refunds) > 0 {
		if rs := tx.Refunds(); len(rs) > 0 {
			n.Refunds[0].ID = rs[len(rs)-1].ID
			n.EndToEndID = tx.EndToEnd() // the devolution of the payment that paid the charge
		}
	}
	return n
}

func (w *lcWorld) notify(t *testing.T, n ...application.PixNotification) []application.PixNotificationResult {
	t.Helper()
	res, err := w.acquirer().Execute(context.Background(), n)
	if err != nil {
		t.Fatalf("notifying: %v", err)
	}
	if len(res) != len(n) {
		t.Fatalf("%d results for %d entries", len(res), len(n))
	}
	return res
}

func TestAcquirerPaymentSetsWhatTheCallbackSays(t *testing.T) {
	w := newLcWorld(t)
	id := w.newTransaction(t)
	w.clock.Advance(10 * time.Second)
	res := w.notify(t, lcPayment(id))[0]
	if res.Outcome != application.OutcomeApplied || res.Status != domain.TxPaid || res.EndToEndID != lcE2E || res.TxID != fakeTxID(id) {
		t.Fatalf("result = %+v", res)
	}
	tx := w.repo.stored(id)
	if p := tx.AmountPaid(); p == nil || *p != 12345 {
		t.Errorf("amountPaid = %v", p)
	}
	if d := tx.PaymentDate(); d == nil || !d.Equal(lcStart.Add(3*time.Second)) {
		t.Errorf("paymentDate = %v, want horario", d)
	}
	if h := tx.History(); !h[len(h)-1].Date.Equal(lcStart.Add(10 * time.Second)) {
		t.Errorf("PAID entered at %v, want the time the notification arrived", h[len(h)-1].Date)
	}
	if tx.EndToEnd() != lcE2E {
		t.Errorf("endToEnd = %q", tx.EndToEnd())
	}
	if f := tx.FeeAmount(); f == nil || *f != 132 {
		t.Errorf("feeAmount = %v", f)
	}
	if r := tx.Receiver(); r == nil || *r != w.receiver {
		t.Errorf("receiver = %+v", r)
	}
	if tx.Payer() != nil {
		t.Errorf("payer = %+v: the callback does not name one", tx.Payer())
	}
}

func TestAcquirerOutcomes(t *testing.T) {
	type setup func(t *testing.T, w *lcWorld) (id string)
	at := func(status domain.TransactionStatus) setup {
		return func(t *testing.T, w *lcWorld) string { return w.reach(t, status) }
	}
	paidBy := func(e2e string, then ...func(*lcWorld, string) error) setup {
		return func(t *testing.T, w *lcWorld) string {
			id := w.newTransaction(t)
			n := lcPayment(id)
			n.EndToEndID = e2e
			w.notify(t, n)
			for _, step := range then {
				if err := step(w, id); err != nil {
					t.Fatal(err)
				}
			}
			return id
		}
	}
	cases := []struct {
		name        string
		setup       setup
		note        func(id string) application.PixNotification
		payment     application.NotificationOutcome
		refund      application.NotificationOutcome // "" when the entry has no refund
		status      domain.TransactionStatus        // after
		changes     bool
		wantHistory int // entries added
	}{
		{"a payment of a charge awaiting it is applied", at(domain.TxPixQRCodeGenerated), lcPayment,
			application.OutcomeApplied, "", domain.TxPaid, true, 1},
		{"the same payment again is already applied", paidBy(lcE2E), lcPayment,
			application.OutcomeAlreadyApplied, "", domain.TxPaid, false, 0},
		{"the same payment after a refund is still already applied", paidBy(lcE2E, lcRefund), lcPayment,
			application.OutcomeAlreadyApplied, "", domain.TxProcessingRefund, false, 0},
		{"a payment of another amount is not applied", at(domain.TxPixQRCodeGenerated),
			func(id string) application.PixNotification { n := lcPayment(id); n.Amount = 12344; return n },
			application.OutcomeAmountMismatch, "", domain.TxPixQRCodeGenerated, false, 0},
		{"a payment of another amount for an expired charge is amount_mismatch too, sent back", at(domain.TxFailed),
			func(id string) application.PixNotification { n := lcPayment(id); n.Amount = 12344; return n },
			application.OutcomeAmountMismatch, "", domain.TxFailed, false, 0},
		{"a payment of an expired charge is a late payment, sent back", at(domain.TxFailed), lcPayment,
			application.OutcomeLatePaymentRefunded, "", domain.TxFailed, false, 0},
		{"a second payment with another endToEndId is a late payment, sent back", paidBy(lcOtherE2E), lcPayment,
			application.OutcomeLatePaymentRefunded, "", domain.TxPaid, false, 0},
		{"a txid that names no transaction is unknown", at(domain.TxPixQRCodeGenerated),
			func(string) application.PixNotification { return lcPayment("7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f") },
			application.OutcomeUnknownTxID, "", "", false, 0},
		{"a txid of another origin is unknown", at(domain.TxPixQRCodeGenerated),
			func(id string) application.PixNotification {
				n := lcPayment(id)
				n.TxID = "somebodyElsesTxid"
				return n
			},
			application.OutcomeUnknownTxID, "", "", false, 0},
		{"a refund made (DEVOLVIDO) settles PROCESSING_REFUND into REFUNDED", paidBy(lcE2E, lcRefund),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundReturned, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeApplied, domain.TxRefunded, true, 1},
		{"a refund made (DEVOLVIDO) settles PROCESSING_INFRACTION into INFRACTION", paidBy(lcE2E, lcOpen, lcAccept),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundReturned, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeApplied, domain.TxInfraction, true, 1},
		{"the same refund again is already applied", paidBy(lcE2E, lcRefund, func(w *lcWorld, id string) error {
			_, err := w.acquirer().Execute(context.Background(), []application.PixNotification{w.naming(id, lcRefundNote(id, application.PixRefundReturned, 12345))})
			return err
		}),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundReturned, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeAlreadyApplied, domain.TxRefunded, false, 0},
		{"a partial refund is not applied", paidBy(lcE2E, lcRefund),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundReturned, 100)
			},
			application.OutcomeAlreadyApplied, application.OutcomeAmountMismatch, domain.TxProcessingRefund, false, 0},
		{"a refund nobody asked for is unknown", paidBy(lcE2E),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundReturned, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeUnknownRefund, domain.TxPaid, false, 0},
		{"a refund not made (NAO_REALIZADO) brings PROCESSING_REFUND back to PAID", paidBy(lcE2E, lcRefund),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundNotDone, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeApplied, domain.TxPaid, true, 1},
		{"the same refund not made again is already applied", paidBy(lcE2E, lcRefund, func(w *lcWorld, id string) error {
			_, err := w.acquirer().Execute(context.Background(), []application.PixNotification{w.naming(id, lcRefundNote(id, application.PixRefundNotDone, 12345))})
			return err
		}),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundNotDone, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeAlreadyApplied, domain.TxPaid, false, 0},
		{"a refund in progress (EM_PROCESSAMENTO) changes nothing", paidBy(lcE2E, lcRefund),
			func(id string) application.PixNotification {
				return lcRefundNote(id, application.PixRefundInProgress, 12345)
			},
			application.OutcomeAlreadyApplied, application.OutcomeInProgress, domain.TxProcessingRefund, false, 0},
		{"a refund of an unknown txid is unknown too", at(domain.TxPixQRCodeGenerated),
			func(string) application.PixNotification {
				return lcRefundNote("7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", application.PixRefundReturned, 12345)
			},
			application.OutcomeUnknownTxID, application.OutcomeUnknownTxID, "", false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newLcWorld(t)
			id := c.setup(t, w)
			before := w.repo.stored(id).Record()
			events := len(w.repo.eventTypes(id))
			w.clock.Advance(time.Second)
			res := w.notify(t, w.naming(id, c.note(id)))[0]
			if res.Outcome != c.payment || res.Status != c.status {
				t.Fatalf("payment: %s, status %q (%s); want %s, %q", res.Outcome, res.Status, res.Detail, c.payment, c.status)
			}
			if c.refund != "" && (len(res.Refunds) != 1 || res.Refunds[0].Outcome != c.refund) {
				t.Fatalf("refunds: %+v; want %s", res.Refunds, c.refund)
			}
			if c.refund == "" && len(res.Refunds) != 0 {
				t.Fatalf("refunds: %+v; want none", res.Refunds)
			}
			switch o := res.Outcome; {
			case o == application.OutcomeApplied || o == application.OutcomeAlreadyApplied:
				if res.Detail != "" {
					t.Errorf("detail %q on %s", res.Detail, o)
				}
			case res.Detail == "":
				t.Errorf("no detail on %s", o)
			}
			after := w.repo.stored(id).Record()
			if changed := after.Version != before.Version; changed != c.changes {
				t.Fatalf("changed = %v, want %v", changed, c.changes)
			}
			if added := len(after.History) - len(before.History); added != c.wantHistory {
				t.Fatalf("%d history entries added, want %d", added, c.wantHistory)
			}
			if added := len(w.repo.eventTypes(id)) - events; added != c.wantHistory {
				t.Fatalf("%d events raised, want %d", added, c.wantHistory)
			}
		})
	}
}

func TestAcquirerRefundResultsCarryTheirFields(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxProcessingRefund)
	res := w.notify(t, w.naming(id, lcRefundNote(id, application.PixRefundReturned, 12345)))[0]
	rr := res.Refunds[0]
	if refund := w.repo.stored(id).Refunds()[0]; rr.ID != refund.ID || rr.ReturnID != lcRtrID || rr.Outcome != application.OutcomeApplied ||
		refund.Status != domain.RefundRefunded || refund.EndToEndRefund != lcRtrID {
		t.Fatalf("refund result = %+v", rr)
	}
	if got := w.repo.stored(id).EndToEndRefund(); got != lcRtrID {
		t.Fatalf("endToEndRefund = %q, want rtrId", got)
	}
	id = w.reach(t, domain.TxProcessingRefund)
	w.notify(t, w.naming(id, lcRefundNote(id, application.PixRefundNotDone, 12345)))
	if got := w.repo.stored(id).ErrorMessage(); got != "the acquirer could not refund the payment: saldo insuficiente" {
		t.Fatalf("errorMessage = %q", got)
	}
}

func TestAcquirerEntriesAreIndependent(t *testing.T) {
	w := newLcWorld(t)
	a, b := w.newTransaction(t), w.newTransaction(t)
	second := lcPayment(b)
	second.EndToEndID = lcOtherE2E
	res := w.notify(t, lcPayment(a), lcPayment("7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f"), second, lcPayment(a))
	got := []application.NotificationOutcome{res[0].Outcome, res[1].Outcome, res[2].Outcome, res[3].Outcome}
	want := []application.NotificationOutcome{application.OutcomeApplied, application.OutcomeUnknownTxID, application.OutcomeApplied, application.OutcomeAlreadyApplied}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}

func TestAcquirerStoreFailureLosesNothingAndAppliesNothingTwice(t *testing.T) {
	w := newLcWorld(t)
	a, b := w.newTransaction(t), w.newTransaction(t)
	second := lcPayment(b)
	second.EndToEndID = lcOtherE2E
	unavailable := errors.New("store unavailable")
	w.repo.Fail("Update", 2, unavailable) // the update of b, after a's
	if _, err := w.acquirer().Execute(context.Background(), []application.PixNotification{lcPayment(a), second}); !errors.Is(err, unavailable) {
		t.Fatalf("err = %v, want the store's failure (so that the acquirer retries)", err)
	}
	if w.repo.stored(a).Status() != domain.TxPaid || w.repo.stored(b).Status() != domain.TxPixQRCodeGenerated {
		t.Fatal("the entry before the failure must stay applied, the failed one unapplied")
	}
	w.repo.Clear()
	res := w.notify(t, lcPayment(a), second)
	if res[0].Outcome != application.OutcomeAlreadyApplied || res[1].Outcome != application.OutcomeApplied {
		t.Fatalf("the retry: %s, %s", res[0].Outcome, res[1].Outcome)
	}
	if got := w.repo.eventTypes(a); !slices.Equal(got, []string{"transaction.pix_qrcode_generated", "transaction.paid"}) {
		t.Fatalf("events of the first entry: %v", got)
	}
}

func TestAcquirerConcurrentDeliveriesOfOnePaymentPayOnce(t *testing.T) {
	w := newLcWorld(t)
	id := w.newTransaction(t)
	const senders = 32
	outcomes := make([]application.NotificationOutcome, senders)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range senders {
		wg.Go(func() {
			<-start
			res, err := w.acquirer().Execute(context.Background(), []application.PixNotification{lcPayment(id)})
			if err != nil {
				t.Error(err)
				return
			}
			outcomes[i] = res[0].Outcome
		})
	}
	close(start)
	wg.Wait()
	applied := 0
	for _, o := range outcomes {
		switch o {
		case application.OutcomeApplied:
			applied++
		case application.OutcomeAlreadyApplied:
		default:
			t.Errorf("outcome %q", o)
		}
	}
	if applied != 1 {
		t.Fatalf("%d deliveries applied the payment, want 1", applied)
	}
	paid := 0
	for _, e := range w.repo.eventTypes(id) {
		if e == "transaction.paid" {
			paid++
		}
	}
	if paid != 1 {
		t.Fatalf("%d transaction.paid events, want 1", paid)
	}
}

func TestAcquirerEndToEndIdPaysOneChargeOnce(t *testing.T) {
	w := newLcWorld(t)
	first, second := w.newTransaction(t), w.newTransaction(t)
	if res := w.notify(t, lcPayment(first))[0]; res.Outcome != application.OutcomeApplied {
		t.Fatalf("first payment: %+v", res)
	}
	res := w.notify(t, lcPayment(second))[0]
	if res.Outcome != application.OutcomeDuplicateEndToEnd || res.Status != domain.TxPixQRCodeGenerated {
		t.Fatalf("the same endToEndId on another charge: %+v, want duplicate_end_to_end and the charge unpaid", res)
	}
	if got := w.repo.stored(second); got.Status() != domain.TxPixQRCodeGenerated || got.EndToEnd() != "" {
		t.Fatalf("the second charge is %s paid by %q, want it untouched", got.Status(), got.EndToEnd())
	}
}

func TestAcquirerLatePaymentGoesToSuspenseAndBack(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxFailed)
	res := w.notify(t, lcPayment(id))[0]
	if res.Outcome != application.OutcomeLatePaymentRefunded {
		t.Fatalf("payment of an expired charge: %+v", res)
	}
	if len(w.devolver.asked) != 1 || w.devolver.asked[0].Kind != ports.DevolutionLatePayment ||
		w.devolver.asked[0].Amount != 12345 || w.devolver.asked[0].EndToEndID != lcE2E ||
		w.devolver.asked[0].ID != application.LateDevolutionID(lcE2E) {
		t.Fatalf("devolutions asked: %+v, want the whole payment back", w.devolver.asked)
	}
	if len(w.late) != 1 || w.late[0].Claim.TransactionID != id {
		t.Fatalf("operators were told %+v, want the late payment", w.late)
	}
	if got := postingTypes(t, w.ledger); !slices.Equal(got, []domain.MovementType{domain.MoveLatePayment}) {
		t.Fatalf("postings %v, want the arrival in suspense", got)
	}
	// The acquirer retries the callback: nothing is recorded twice.
	if res := w.notify(t, lcPayment(id))[0]; res.Outcome != application.OutcomeLatePaymentRefunded {
		t.Fatalf("the retry: %+v", res)
	}
	if got := postingTypes(t, w.ledger); len(got) != 1 || len(w.devolver.asked) != 1 || len(w.late) != 1 {
		t.Fatalf("after a retry: postings %v, %d devolutions asked, operators told %d times", got, len(w.devolver.asked), len(w.late))
	}
	// The devolution's result arrives: the money leaves suspense, once.
	back := lcPayment(id)
	back.Refunds = []application.PixRefund{{ID: application.LateDevolutionID(lcE2E), ReturnID: lcRtrID, Amount: 12345, Status: application.PixRefundReturned}}
	for i, want := range []application.NotificationOutcome{application.OutcomeApplied, application.OutcomeAlreadyApplied} {
		res := w.notify(t, back)[0]
		if len(res.Refunds) != 1 || res.Refunds[0].Outcome != want {
			t.Fatalf("devolution result %d: %+v, want %s", i, res.Refunds, want)
		}
	}
	if got := postingTypes(t, w.ledger); !slices.Equal(got, []domain.MovementType{domain.MoveLatePayment, domain.MoveLatePaymentReturn}) {
		t.Fatalf("postings %v, want the arrival and the return", got)
	}
	if got := w.repo.stored(id); got.Status() != domain.TxFailed {
		t.Fatalf("the charge is %s, want it FAILED still", got.Status())
	}
}

func TestAcquirerLatePaymentReturnedAtOnce(t *testing.T) {
	w := newLcWorld(t)
	w.devolver.answer = ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: lcRtrID}
	id := w.reach(t, domain.TxFailed)
	if res := w.notify(t, lcPayment(id))[0]; res.Outcome != application.OutcomeLatePaymentRefunded {
		t.Fatalf("payment of an expired charge: %+v", res)
	}
	if got := postingTypes(t, w.ledger); !slices.Equal(got, []domain.MovementType{domain.MoveLatePayment, domain.MoveLatePaymentReturn}) {
		t.Fatalf("postings %v, want the arrival and the return", got)
	}
}

// suspense reads the service ledger's audit: whether late payments and suspense entries
// agree, and the suspense account's balance.
func (w *lcWorld) suspense(t *testing.T) domain.Cents {
	t.Helper()
	// Only the service's ledger is audited: the suspense account and the late payments live there.
	rep, err := application.NewVerifyLedger(w.ledger, w.repo, w.store.Withdrawals(), newAccounts()).Execute(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("the audit disagrees: %v", rep.Disagreements)
	}
	return rep.Balances[domain.LedgerSuspense]
}

func TestAcquirerPaymentOfAnotherAmountGoesToSuspenseAndBack(t *testing.T) {
	w := newLcWorld(t)
	id := w.newTransaction(t) // 123.45, awaiting payment
	before := w.repo.stored(id).Record()
	wrong := lcPayment(id)
	wrong.Amount = 12346

	res := w.notify(t, wrong)[0]
	if res.Outcome != application.OutcomeAmountMismatch || res.Status != domain.TxPixQRCodeGenerated ||
		!strings.Contains(res.Detail, "123.46") || !strings.Contains(res.Detail, application.LateDevolutionID(lcE2E)) {
		t.Fatalf("payment of 123.46 for a charge of 123.45: %+v", res)
	}
	if after := w.repo.stored(id).Record(); after.Version != before.Version || len(after.History) != len(before.History) {
		t.Fatal("the charge changed")
	}
	if len(w.devolver.asked) != 1 || w.devolver.asked[0].Kind != ports.DevolutionLatePayment ||
		w.devolver.asked[0].Amount != 12346 || w.devolver.asked[0].EndToEndID != lcE2E ||
		w.devolver.asked[0].ID != application.LateDevolutionID(lcE2E) {
		t.Fatalf("devolutions asked: %+v, want all of the 123.46 back", w.devolver.asked)
	}
	if len(w.late) != 1 || w.late[0].Outcome != application.OutcomeAmountMismatch || w.late[0].Claim.Amount != 12346 {
		t.Fatalf("operators were told %+v, want the payment of another amount", w.late)
	}
	if got := w.suspense(t); got != 12346 {
		t.Fatalf("suspense holds %d, want the 12346 cents paid", got)
	}

	// The acquirer retries: the same answer, nothing posted or asked twice.
	if again := w.notify(t, wrong)[0]; again.Outcome != application.OutcomeAmountMismatch || again.Detail != res.Detail {
		t.Fatalf("the retry: %+v", again)
	}
	if len(w.devolver.asked) != 1 || len(w.late) != 1 || w.suspense(t) != 12346 {
		t.Fatalf("after the retry: %d devolutions asked, operators told %d times, suspense %d", len(w.devolver.asked), len(w.late), w.suspense(t))
	}

	// The charge is still open to the right payment.
	right := lcPayment(id)
	right.EndToEndID = lcOtherE2E
	if paid := w.notify(t, right)[0]; paid.Outcome != application.OutcomeApplied || paid.Status != domain.TxPaid {
		t.Fatalf("the right payment afterwards: %+v", paid)
	}

	// The acquirer reports the devolution made, with the payment again: the money leaves
	// suspense, once, and the payment still answers as it did.
	back := wrong
	back.Refunds = []application.PixRefund{{ID: application.LateDevolutionID(lcE2E), ReturnID: lcRtrID, Amount: 12346, Status: application.PixRefundReturned}}
	for i, want := range []application.NotificationOutcome{application.OutcomeApplied, application.OutcomeAlreadyApplied} {
		res := w.notify(t, back)[0]
		if res.Outcome != application.OutcomeAmountMismatch || len(res.Refunds) != 1 || res.Refunds[0].Outcome != want {
			t.Fatalf("devolution result %d: %+v, want amount_mismatch and the devolution %s", i, res, want)
		}
	}
	if got := postingTypes(t, w.ledger); !slices.Equal(got, []domain.MovementType{domain.MoveLatePayment, domain.MoveLatePaymentReturn}) {
		t.Fatalf("service postings %v, want the arrival and the return", got)
	}
	if got := w.suspense(t); got != 0 {
		t.Fatalf("suspense holds %d after the devolution, want 0", got)
	}
	if len(w.devolver.asked) != 1 || len(w.late) != 1 {
		t.Fatalf("%d devolutions asked, operators told %d times; want 1 each", len(w.devolver.asked), len(w.late))
	}
}

func TestAcquirerConcurrentDeliveriesOfMoneyForNoChargeAskOnce(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, w *lcWorld) (id string)
		note  func(id string) application.PixNotification
		want  application.NotificationOutcome
	}{
		{"a payment of another amount", func(t *testing.T, w *lcWorld) string { return w.newTransaction(t) },
			func(id string) application.PixNotification { n := lcPayment(id); n.Amount = 100; return n },
			application.OutcomeAmountMismatch},
		{"a payment of an expired charge", func(t *testing.T, w *lcWorld) string { return w.reach(t, domain.TxFailed) },
			lcPayment, application.OutcomeLatePaymentRefunded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newLcWorld(t)
			id := c.setup(t, w)
			var mu sync.Mutex
			var told []application.LatePayment
			uc := application.NewApplyPixNotifications(w.repo, w.ledger, w.devolutions, fakeTxIDs{}, w.clock, w.fee, &w.receiver,
				func(l application.LatePayment) { mu.Lock(); told = append(told, l); mu.Unlock() })
			const senders = 16
			outcomes := make([]application.NotificationOutcome, senders)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range senders {
				wg.Go(func() {
					<-start
					res, err := uc.Execute(context.Background(), []application.PixNotification{c.note(id)})
					if err != nil {
						t.Error(err)
						return
					}
					outcomes[i] = res[0].Outcome
				})
			}
			close(start)
			wg.Wait()
			for i, o := range outcomes {
				if o != c.want {
					t.Errorf("delivery %d: %s, want %s", i, o, c.want)
				}
			}
			if len(w.devolver.asked) != 1 || len(told) != 1 || len(postingTypes(t, w.ledger)) != 1 {
				t.Fatalf("%d deliveries: %d devolutions asked, operators told %d times, %d postings; want 1 each",
					senders, len(w.devolver.asked), len(told), len(postingTypes(t, w.ledger)))
			}
		})
	}
}

func TestAcquirerPaymentTimeOutsideTheChargesLifeIsInvalidAndChangesNothing(t *testing.T) {
	cases := []struct {
		name    string
		horario func(created time.Time, w *lcWorld) time.Time
	}{
		{"a horario before the charge was created", func(created time.Time, _ *lcWorld) time.Time { return created.Add(-time.Hour) }},
		{"a horario of year 1", func(time.Time, *lcWorld) time.Time { return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"a horario more than 5 minutes ahead of now", func(_ time.Time, w *lcWorld) time.Time {
			return w.clock.Now().Add(application.MaxPaymentClockSkew + time.Second)
		}},
		{"a horario of year 9999", func(time.Time, *lcWorld) time.Time { return time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newLcWorld(t)
			id := w.newTransaction(t)
			created := w.repo.stored(id).CreatedAt()
			w.clock.Advance(10 * time.Second)
			n := lcRefundNote(id, application.PixRefundReturned, 12345)
			n.PaidAt = c.horario(created, w)
			res := w.notify(t, n)[0]
			if res.Outcome != application.OutcomeInvalidTime || res.Status != domain.TxPixQRCodeGenerated || res.Detail == "" {
				t.Fatalf("result = %+v, want invalid_time with the status unchanged", res)
			}
			if len(res.Refunds) != 1 || res.Refunds[0].Outcome != application.OutcomeInvalidTime {
				t.Fatalf("refund results = %+v, want invalid_time", res.Refunds)
			}
			claims, err := w.ledger.LatePayments(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			b, err := w.ledger.Balance(context.Background(), w.merchant.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			if entries := postingTypes(t, w.ledger); len(claims) != 0 || len(entries) != 0 || b.Available != lcOpening || b.Blocked != 0 {
				t.Fatalf("the ledger recorded claims %v, service entries %v and a merchant balance of %+v for an invalid time", claims, entries, b)
			}
			if tx := w.repo.stored(id); tx.Status() != domain.TxPixQRCodeGenerated || tx.EndToEnd() != "" {
				t.Fatalf("the charge moved to %s (endToEnd %q)", tx.Status(), tx.EndToEnd())
			}
		})
	}
	t.Run("a horario in the second the charge was created, or up to 5 minutes ahead, is applied", func(t *testing.T) {
		for _, ahead := range []time.Duration{0, application.MaxPaymentClockSkew} {
			w := newLcWorld(t)
			id := w.newTransaction(t)
			n := lcPayment(id)
			n.PaidAt = w.repo.stored(id).CreatedAt().Truncate(time.Second)
			if ahead > 0 {
				n.PaidAt = w.clock.Now().Add(ahead)
			}
			if res := w.notify(t, n)[0]; res.Outcome != application.OutcomeApplied {
				t.Fatalf("horario %v: %+v", n.PaidAt, res)
			}
		}
	})
}

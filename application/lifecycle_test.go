package application_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// lcOpening is the merchant's balance before a test starts.
const lcOpening domain.Cents = 1_000_000

var lcStart = time.Date(2026, 11, 22, 11, 19, 32, 123_000_000, time.UTC)

const lcSettle = 2 * time.Second

// lcDevolutionCheck and lcDevolutionClaim tune the devolution outbox of an lcWorld.
const (
	lcDevolutionCheck = 5 * time.Minute
	lcDevolutionClaim = application.ClaimMargin + 40*time.Second
)

var (
	lcPaymentE2E = regexp.MustCompile(`^E99999999\d{12}[A-Za-z0-9]{11}$`)
	lcRefundE2E  = regexp.MustCompile(`^D99999999\d{12}[A-Za-z0-9]{11}$`)
)

// lcWorld wires the lifecycle use cases, with the sandbox's steering, to one adapters/memory
// store (behind porttest's fault injector) and the package's fakes: one funded merchant, a
// clock the test moves.
type lcWorld struct {
	clock    *fakeClock
	store    *memory.Store
	repo     *txStore
	emitter  *fakeEmitter
	merchant domain.Principal
	fee      domain.FeePolicy
	receiver domain.AccountHolder
	ledger   *memory.Ledger
	devolver *fakeAcquirer
	// devolutions is the outbox over devolver; reports what it told operators.
	devolutions *application.SendDevolutions
	reportsMu   sync.Mutex
	reports     []application.DevolutionReport
	late        []application.LatePayment

	create *application.CreateTransaction
	refund *application.RefundTransaction
	expire *application.ExpireTransactions
	pay    *application.Transition[*domain.Transaction, *domain.AccountHolder]
	open   *application.TransactionStep
	accept *application.TransactionStep
	reject *application.TransactionStep
	fail   *application.TransactionStep
	settle *sandbox.SettleTransactions
}

func newLcWorld(t testing.TB) *lcWorld {
	t.Helper()
	receiver, err := sandbox.ReceivingAccount("pagamentos@pixgate.example", "Loja Exemplo")
	if err != nil {
		t.Fatal(err)
	}
	clock, store := newFakeClock(lcStart), memory.NewStore()
	w := &lcWorld{
		clock: clock, store: store, repo: newTxStore(store), emitter: &fakeEmitter{},
		merchant: domain.Principal{AccountID: "acct-lc-1", Scopes: domain.AllScopes()},
		fee:      domain.FeePolicy{FixedCents: 10, BasisPoints: 99},
		receiver: receiver,
		ledger:   store.Ledger(), devolver: &fakeAcquirer{},
	}
	// The merchant holds money from before, as a live one does: a refund is a checked debit,
	// and a full refund asks more than one payment less its fee left.
	if _, err := w.ledger.Post(context.Background(), domain.OpeningBalancePostings(w.merchant.AccountID,
		domain.LedgerBalance{}, domain.LedgerBalance{Available: lcOpening})...); err != nil {
		t.Fatal(err)
	}
	w.devolutions = application.NewSendDevolutions(w.repo, w.ledger, w.devolver, w.clock,
		application.DevolutionSettings{CheckEvery: lcDevolutionCheck, Claim: lcDevolutionClaim},
		func(r application.DevolutionReport) {
			w.reportsMu.Lock()
			w.reports = append(w.reports, r)
			w.reportsMu.Unlock()
		})
	w.create = application.NewCreateTransaction(w.repo, w.emitter, fakeRenderer{}, &fakeIDs{}, &fakeCapabilities{}, w.clock)
	w.refund = application.NewRefundTransaction(w.repo, w.devolutions, &fakeIDs{}, w.clock, func(err error) { t.Logf("refund: %v", err) })
	w.expire = application.NewExpireTransactions(w.repo, w.clock)
	steer := sandbox.NewTransactionSteering(w.repo, w.clock, w.fee, receiver)
	w.pay, w.open, w.accept, w.reject, w.fail = steer.PayTransaction, steer.OpenDispute, steer.AcceptDispute, steer.RejectDispute, steer.FailRefund
	w.settle = sandbox.NewSettleTransactions(w.repo, w.clock, "SANDBOX", lcSettle)
	return w
}

// newTransaction creates a charge of 123.45 with a webhook (so that every transition raises
// an event) and returns its id.
func (w *lcWorld) newTransaction(t testing.TB) string {
	t.Helper()
	res, err := w.create.Execute(context.Background(), w.merchant, application.CreateTransactionInput{Order: domain.Order{
		Amount: 12345, PaymentMethod: domain.PaymentPIX, WebhookURL: "https://shop.example.com/hooks",
		IsInfoProduct: true, ExpirationSeconds: 1800,
	}})
	if err != nil {
		t.Fatalf("creating a transaction: %v", err)
	}
	return res.Transaction.ID()
}

// lcStep is one move of a path: wait, then act.
type lcStep struct {
	wait time.Duration
	name string
	act  func(w *lcWorld, id string) error
}

func lcDo(name string, wait time.Duration, act func(w *lcWorld, id string) error) lcStep {
	return lcStep{wait: wait, name: name, act: act}
}

var (
	lcPay = func(w *lcWorld, id string) error {
		_, err := w.pay.Execute(context.Background(), w.merchant, id, nil)
		return err
	}
	lcRefund = func(w *lcWorld, id string) error {
		_, err := w.refund.Execute(context.Background(), w.merchant, id, application.RefundInput{})
		return err
	}
	lcOpen = func(w *lcWorld, id string) error {
		_, err := w.open.Execute(context.Background(), w.merchant, id, application.NoInput{})
		return err
	}
	lcAccept = func(w *lcWorld, id string) error {
		_, err := w.accept.Execute(context.Background(), w.merchant, id, application.NoInput{})
		return err
	}
	lcReject = func(w *lcWorld, id string) error {
		_, err := w.reject.Execute(context.Background(), w.merchant, id, application.NoInput{})
		return err
	}
	lcFailRefund = func(w *lcWorld, id string) error {
		_, err := w.fail.Execute(context.Background(), w.merchant, id, application.NoInput{})
		return err
	}
	lcSettleNow = func(w *lcWorld, _ string) error {
		n, err := w.settle.RunOnce(context.Background())
		if err == nil && n != 1 {
			return fmt.Errorf("settled %d transactions, want 1", n)
		}
		return err
	}
	lcExpireNow = func(w *lcWorld, _ string) error {
		n, err := w.expire.RunOnce(context.Background())
		if err == nil && n != 1 {
			return fmt.Errorf("expired %d transactions, want 1", n)
		}
		return err
	}
)

func TestSandboxWalksEveryPathOfTheStateTable(t *testing.T) {
	type want struct {
		history   []domain.TransactionStatus
		durations []int64 // milliseconds of every entry but the last
	}
	paths := []struct {
		name  string
		steps []lcStep
		want  want
		check func(t *testing.T, w *lcWorld, tx *domain.Transaction)
	}{
		{
			name:  "a paid charge is PAID",
			steps: []lcStep{lcDo("pay", 5*time.Second, lcPay)},
			want:  want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID"}, []int64{0, 5000}},
		},
		{
			name: "a refund settles by itself into REFUNDED after the delay",
			steps: []lcStep{lcDo("pay", 5*time.Second, lcPay), lcDo("refund", 7*time.Second, lcRefund),
				lcDo("settle", lcSettle, lcSettleNow)},
			want: want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED"},
				[]int64{0, 5000, 7000, 2000}},
			check: func(t *testing.T, w *lcWorld, tx *domain.Transaction) {
				if !lcRefundE2E.MatchString(tx.EndToEndRefund()) {
					t.Errorf("endToEndRefund %q is not in Banco Central's format", tx.EndToEndRefund())
				}
				if got := tx.EndToEndRefund()[9:21]; got != lcStart.Add(14*time.Second).Format("200601021504") {
					t.Errorf("endToEndRefund minute = %s", got)
				}
			},
		},
		{
			name: "a failed refund goes back to PAID with an errorMessage",
			steps: []lcStep{lcDo("pay", time.Second, lcPay), lcDo("refund", 2*time.Second, lcRefund),
				lcDo("refund/fail", 3*time.Second, lcFailRefund)},
			want: want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "PAID"},
				[]int64{0, 1000, 2000, 3000}},
			check: func(t *testing.T, w *lcWorld, tx *domain.Transaction) {
				if tx.ErrorMessage() == "" || tx.EndToEndRefund() != "" {
					t.Errorf("errorMessage %q, endToEndRefund %q", tx.ErrorMessage(), tx.EndToEndRefund())
				}
			},
		},
		{
			name: "a rejected dispute releases the funds back to PAID",
			steps: []lcStep{lcDo("pay", time.Second, lcPay), lcDo("med/open", 4*time.Second, lcOpen),
				lcDo("med/reject", 6*time.Second, lcReject)},
			want: want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PAID"},
				[]int64{0, 1000, 4000, 6000}},
			check: func(t *testing.T, w *lcWorld, tx *domain.Transaction) {
				if d := tx.InfractionDate(); d == nil || !d.Equal(lcStart.Add(5*time.Second)) {
					t.Errorf("infractionDate = %v", d)
				}
			},
		},
		{
			name: "an accepted dispute settles by itself into INFRACTION",
			steps: []lcStep{lcDo("pay", time.Second, lcPay), lcDo("med/open", time.Second, lcOpen),
				lcDo("med/accept", time.Second, lcAccept), lcDo("settle", 3*time.Second, lcSettleNow)},
			want: want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "BLOCKED", "PROCESSING_INFRACTION", "INFRACTION"},
				[]int64{0, 1000, 1000, 1000, 3000}},
			check: func(t *testing.T, w *lcWorld, tx *domain.Transaction) {
				if !lcRefundE2E.MatchString(tx.EndToEndRefund()) || tx.InfractionDate() == nil {
					t.Errorf("endToEndRefund %q, infractionDate %v", tx.EndToEndRefund(), tx.InfractionDate())
				}
			},
		},
		{
			name:  "an unpaid charge past its expiration is FAILED",
			steps: []lcStep{lcDo("expire", 1800*time.Second, lcExpireNow)},
			want:  want{[]domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "FAILED"}, []int64{0, 1_800_000}},
			check: func(t *testing.T, w *lcWorld, tx *domain.Transaction) {
				if tx.ErrorMessage() != domain.ExpiredMessage || tx.AmountPaid() != nil {
					t.Errorf("errorMessage %q, amountPaid %v", tx.ErrorMessage(), tx.AmountPaid())
				}
			},
		},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			w := newLcWorld(t)
			id := w.newTransaction(t)
			for _, s := range p.steps {
				w.clock.Advance(s.wait)
				if err := s.act(w, id); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
			}
			tx := w.repo.stored(id)
			h := tx.History()
			var statuses []domain.TransactionStatus
			var durations []int64
			for i, e := range h {
				statuses = append(statuses, e.Status)
				if d := domain.DurationMillis(h, i); d != nil {
					durations = append(durations, *d)
				}
			}
			if !slices.Equal(statuses, p.want.history) || !slices.Equal(durations, p.want.durations) {
				t.Fatalf("history %v with durations %v; want %v with %v", statuses, durations, p.want.history, p.want.durations)
			}
			if !tx.UpdatedAt().Equal(w.clock.Now()) {
				t.Errorf("updatedAt %v, want the last step's time %v", tx.UpdatedAt(), w.clock.Now())
			}
			var wantEvents []string
			for _, s := range statuses[1:] {
				wantEvents = append(wantEvents, domain.EventType(domain.ResourceTransaction, string(s)))
			}
			if got := w.repo.eventTypes(id); !slices.Equal(got, wantEvents) {
				t.Errorf("events %v, want one per status entered: %v", got, wantEvents)
			}
			if p.check != nil {
				p.check(t, w, tx)
			}
		})
	}
}

func TestEmitterFailureLeavesTheTransactionFailed(t *testing.T) {
	w := newLcWorld(t)
	w.emitter.err = errors.New("the acquirer refused the charge")
	_, err := w.create.Execute(context.Background(), w.merchant, application.CreateTransactionInput{Order: domain.Order{
		Amount: 500, PaymentMethod: domain.PaymentPIX, WebhookURL: "https://shop.example.com/hooks",
		IsInfoProduct: true, ExpirationSeconds: 60,
	}})
	ee, ok := errors.AsType[*application.EmissionError](err)
	if !ok {
		t.Fatalf("err = %v, want an *EmissionError", err)
	}
	tx := w.repo.stored(ee.TransactionID)
	h := tx.History()
	if tx.Status() != domain.TxFailed || len(h) != 2 || h[0].Status != domain.TxPending || h[1].Status != domain.TxFailed {
		t.Fatalf("stored %s with history %v", tx.Status(), h)
	}
	if d := domain.DurationMillis(h, 0); d == nil || *d != 0 {
		t.Errorf("PENDING lasted %v ms", d)
	}
	if tx.ErrorMessage() != "the acquirer refused the charge" {
		t.Errorf("errorMessage = %q", tx.ErrorMessage())
	}
	if got := w.repo.eventTypes(tx.ID()); !slices.Equal(got, []string{"transaction.failed"}) {
		t.Errorf("events = %v", got)
	}
	if _, err := w.pay.Execute(context.Background(), w.merchant, tx.ID(), nil); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("paying a FAILED transaction: %v", err)
	}
}

func TestCreateStoresNothingWhenTheQRImageCannotBeHadNow(t *testing.T) {
	cases := []struct {
		name   string
		render func(ctx context.Context, cancel context.CancelFunc) error
		want   error
	}{
		{"a full queue answers ErrOverloaded", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("%w: 64 QR drawings are already waiting", ports.ErrOverloaded)
		}, ports.ErrOverloaded},
		{"a drawing past its deadline answers ErrTimedOut", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("%w: the QR code was not drawn within 10s", ports.ErrTimedOut)
		}, ports.ErrTimedOut},
		{"a client that gave up while its image was drawn answers its context's end", func(ctx context.Context, cancel context.CancelFunc) error {
			cancel()
			return ctx.Err()
		}, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newLcWorld(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			create := application.NewCreateTransaction(w.repo, w.emitter, rendererFunc(func(ctx context.Context, _ string) ([]byte, error) {
				return nil, tc.render(ctx, cancel)
			}), &fakeIDs{}, &fakeCapabilities{}, w.clock)
			order := domain.Order{Amount: 500, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 60}
			_, err := create.Execute(ctx, w.merchant, application.CreateTransactionInput{Order: order, IdempotencyKey: "draw-later-0001", Fingerprint: "f1"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, isEmission := errors.AsType[*application.EmissionError](err); isEmission {
				t.Fatalf("err = %v, an *EmissionError: the charge would have been kept FAILED", err)
			}
			page, err := w.repo.List(context.Background(), ports.TransactionFilter{AccountID: w.merchant.AccountID}, ports.Page{Number: 1, Size: 10})
			if err != nil || page.Total != 0 {
				t.Fatalf("stored %d transactions (%v), want none", page.Total, err)
			}
			// The key was not kept: the retry creates the charge.
			retry := application.NewCreateTransaction(w.repo, w.emitter, fakeRenderer{}, &fakeIDs{}, &fakeCapabilities{}, w.clock)
			res, err := retry.Execute(context.Background(), w.merchant, application.CreateTransactionInput{Order: order, IdempotencyKey: "draw-later-0001", Fingerprint: "f1"})
			if err != nil || res.Replayed || res.Transaction.Status() != domain.TxPixQRCodeGenerated {
				t.Fatalf("the retry: %+v, %v; want a new charge", res, err)
			}
		})
	}
	t.Run("any other failure of the renderer is the emission's: kept FAILED", func(t *testing.T) {
		w := newLcWorld(t)
		create := application.NewCreateTransaction(w.repo, w.emitter, rendererFunc(func(context.Context, string) ([]byte, error) {
			return nil, errors.New("qr: cannot draw this content")
		}), &fakeIDs{}, &fakeCapabilities{}, w.clock)
		_, err := create.Execute(context.Background(), w.merchant, application.CreateTransactionInput{Order: domain.Order{
			Amount: 500, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 60}})
		ee, ok := errors.AsType[*application.EmissionError](err)
		if !ok {
			t.Fatalf("err = %v, want an *EmissionError", err)
		}
		if tx := w.repo.stored(ee.TransactionID); tx.Status() != domain.TxFailed {
			t.Fatalf("stored %s, want FAILED", tx.Status())
		}
	})
}

func TestSandboxPaymentRecordsEverythingTheContractLists(t *testing.T) {
	w := newLcWorld(t)
	t.Run("without a payer the fixed sandbox payer pays", func(t *testing.T) {
		id := w.newTransaction(t)
		tx, err := w.pay.Execute(context.Background(), w.merchant, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := tx.AmountPaid(); p == nil || *p != 12345 {
			t.Errorf("amountPaid = %v", p)
		}
		// 10 cents + 0.99% of 123.45 (122.2 cents, rounded) = 132 cents.
		if f := tx.FeeAmount(); f == nil || *f != 132 {
			t.Errorf("feeAmount = %v, want 132", f)
		}
		if d := tx.PaymentDate(); d == nil || !d.Equal(lcStart) {
			t.Errorf("paymentDate = %v", d)
		}
		if !lcPaymentE2E.MatchString(tx.EndToEnd()) || tx.EndToEnd()[9:21] != lcStart.Format("200601021504") {
			t.Errorf("endToEnd %q is not in Banco Central's format", tx.EndToEnd())
		}
		if p := tx.Payer(); p == nil || *p != sandbox.Payer() {
			t.Errorf("payer = %+v", p)
		}
		if r := tx.Receiver(); r == nil || *r != w.receiver {
			t.Errorf("receiver = %+v", r)
		}
	})
	t.Run("a given payer is recorded as given", func(t *testing.T) {
		id := w.newTransaction(t)
		payer := domain.AccountHolder{Type: domain.HolderPJ, Name: "Empresa Pagadora", Document: domain.MustParseDocument("11.222.333/0001-81"),
			BankAccount: domain.BankAccount{Type: "CACC", Digit: "7", ISPB: "00000000"},
			Pix:         domain.PixKey{Type: domain.PixKeyEmail, Key: "financeiro@pagadora.example.com"}}
		tx, err := w.pay.Execute(context.Background(), w.merchant, id, &payer)
		if err != nil {
			t.Fatal(err)
		}
		if p := tx.Payer(); p == nil || *p != payer {
			t.Errorf("payer = %+v", p)
		}
	})
	t.Run("two payments make two different endToEnd ids", func(t *testing.T) {
		a, _ := w.pay.Execute(context.Background(), w.merchant, w.newTransaction(t), nil)
		b, _ := w.pay.Execute(context.Background(), w.merchant, w.newTransaction(t), nil)
		if a.EndToEnd() == b.EndToEnd() {
			t.Fatalf("both payments have endToEnd %s", a.EndToEnd())
		}
	})
}

// lcReach brings a new transaction to status through the sandbox and returns its id.
func (w *lcWorld) reach(t *testing.T, status domain.TransactionStatus) string {
	t.Helper()
	id := w.newTransaction(t)
	paths := map[domain.TransactionStatus][]func(*lcWorld, string) error{
		domain.TxPixQRCodeGenerated:   nil,
		domain.TxPaid:                 {lcPay},
		domain.TxProcessingRefund:     {lcPay, lcRefund},
		domain.TxRefunded:             {lcPay, lcRefund, func(w *lcWorld, id string) error { w.clock.Advance(lcSettle); return lcSettleNow(w, id) }},
		domain.TxBlocked:              {lcPay, lcOpen},
		domain.TxProcessingInfraction: {lcPay, lcOpen, lcAccept},
		domain.TxInfraction:           {lcPay, lcOpen, lcAccept, func(w *lcWorld, id string) error { w.clock.Advance(lcSettle); return lcSettleNow(w, id) }},
		domain.TxFailed:               {func(w *lcWorld, id string) error { w.clock.Advance(time.Hour); return lcExpireNow(w, id) }},
	}
	steps, ok := paths[status]
	if !ok {
		t.Fatalf("no path to %s", status)
	}
	for _, s := range steps {
		if err := s(w, id); err != nil {
			t.Fatalf("reaching %s: %v", status, err)
		}
	}
	if got := w.repo.stored(id).Status(); got != status {
		t.Fatalf("reached %s, want %s", got, status)
	}
	return id
}

func TestSandboxStepsRefuseEveryOtherStatusAndChangeNothing(t *testing.T) {
	steps := []struct {
		name string
		from domain.TransactionStatus
		act  func(*lcWorld, string) error
	}{
		{"pay", domain.TxPixQRCodeGenerated, lcPay},
		{"med/open", domain.TxPaid, lcOpen},
		{"med/accept", domain.TxBlocked, lcAccept},
		{"med/reject", domain.TxBlocked, lcReject},
		{"refund/fail", domain.TxProcessingRefund, lcFailRefund},
	}
	for _, status := range domain.TransactionStatuses() {
		if status == domain.TxPending {
			continue // never stored: creation moves on in the same request
		}
		for _, s := range steps {
			if s.from == status {
				continue
			}
			t.Run(fmt.Sprintf("%s from %s is refused", s.name, status), func(t *testing.T) {
				w := newLcWorld(t)
				id := w.reach(t, status)
				before := w.repo.stored(id).Record()
				events := w.repo.eventTypes(id)
				w.clock.Advance(time.Second)
				err := s.act(w, id)
				var ite *domain.InvalidTransitionError
				if !errors.As(err, &ite) || ite.From != string(status) {
					t.Fatalf("err = %v, want an invalid transition from %s", err, status)
				}
				after := w.repo.stored(id).Record()
				if after.Version != before.Version || after.Status != before.Status || len(after.History) != len(before.History) {
					t.Fatalf("the refused step changed the transaction: %+v", after)
				}
				if got := w.repo.eventTypes(id); !slices.Equal(got, events) {
					t.Fatalf("the refused step raised events: %v", got)
				}
			})
		}
	}
}

func TestSandboxStepsReachOnlyTheCallersAccount(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxPixQRCodeGenerated)
	stranger := domain.Principal{AccountID: "acct-lc-2", Scopes: domain.AllScopes()}
	if _, err := w.pay.Execute(context.Background(), stranger, id, nil); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another account paying: %v", err)
	}
	if _, err := w.open.Execute(context.Background(), stranger, id, application.NoInput{}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another account opening a dispute: %v", err)
	}
	if got := w.repo.stored(id).Status(); got != domain.TxPixQRCodeGenerated {
		t.Fatalf("status = %s", got)
	}
}

func TestSettleSandbox(t *testing.T) {
	ctx := context.Background()
	t.Run("nothing settles before the delay, everything due settles after it", func(t *testing.T) {
		w := newLcWorld(t)
		refund := w.reach(t, domain.TxProcessingRefund)
		infraction := w.reach(t, domain.TxProcessingInfraction)
		w.clock.Advance(lcSettle - time.Millisecond)
		if n, err := w.settle.RunOnce(ctx); n != 0 || err != nil {
			t.Fatalf("before the delay: moved %d, %v", n, err)
		}
		w.clock.Advance(time.Millisecond)
		if n, err := w.settle.RunOnce(ctx); n != 2 || err != nil {
			t.Fatalf("at the delay: moved %d, %v", n, err)
		}
		if a, b := w.repo.stored(refund).Status(), w.repo.stored(infraction).Status(); a != domain.TxRefunded || b != domain.TxInfraction {
			t.Fatalf("statuses %s and %s", a, b)
		}
		if n, err := w.settle.RunOnce(ctx); n != 0 || err != nil {
			t.Fatalf("a second run: moved %d, %v", n, err)
		}
	})
	t.Run("a delay of zero settles at once", func(t *testing.T) {
		w := newLcWorld(t)
		w.settle = sandbox.NewSettleTransactions(w.repo, w.clock, "SANDBOX", 0)
		id := w.reach(t, domain.TxProcessingRefund)
		if n, err := w.settle.RunOnce(ctx); n != 1 || err != nil || w.repo.stored(id).Status() != domain.TxRefunded {
			t.Fatalf("moved %d, %v", n, err)
		}
	})
	t.Run("another acquirer's refunds are left alone", func(t *testing.T) {
		w := newLcWorld(t)
		w.settle = sandbox.NewSettleTransactions(w.repo, w.clock, "REAL-BANK", 0)
		id := w.reach(t, domain.TxProcessingRefund)
		if n, err := w.settle.RunOnce(ctx); n != 0 || err != nil || w.repo.stored(id).Status() != domain.TxProcessingRefund {
			t.Fatalf("moved %d, %v", n, err)
		}
	})
	t.Run("a refund asked again after the listing waits for its own delay", func(t *testing.T) {
		w := newLcWorld(t)
		id := w.reach(t, domain.TxProcessingRefund)
		w.clock.Advance(lcSettle)
		// Between the listing and the update, the refund fails and the merchant asks again.
		w.repo.Before("Update", 1, func() { // after the listing, before the update
			if err := lcFailRefund(w, id); err != nil {
				t.Error(err)
			}
			if err := lcRefund(w, id); err != nil {
				t.Error(err)
			}
		})
		if n, err := w.settle.RunOnce(ctx); n != 0 || err != nil {
			t.Fatalf("moved %d, %v", n, err)
		}
		if got := w.repo.stored(id).Status(); got != domain.TxProcessingRefund {
			t.Fatalf("status = %s", got)
		}
		w.clock.Advance(lcSettle)
		if n, err := w.settle.RunOnce(ctx); n != 1 || err != nil {
			t.Fatalf("after its own delay: moved %d, %v", n, err)
		}
	})
	t.Run("a refund failed after the listing is not settled", func(t *testing.T) {
		w := newLcWorld(t)
		id := w.reach(t, domain.TxProcessingRefund)
		w.clock.Advance(lcSettle)
		w.repo.Before("Update", 1, func() { // after the listing, before the update
			if err := lcFailRefund(w, id); err != nil {
				t.Error(err)
			}
		})
		if n, err := w.settle.RunOnce(ctx); n != 0 || err != nil || w.repo.stored(id).Status() != domain.TxPaid {
			t.Fatalf("moved %d, %v", n, err)
		}
	})
	t.Run("a store failure is reported", func(t *testing.T) {
		w := newLcWorld(t)
		w.reach(t, domain.TxProcessingRefund)
		w.clock.Advance(lcSettle)
		w.repo.Fail("Update", 0, errors.New("disk on fire"))
		if _, err := w.settle.RunOnce(ctx); err == nil {
			t.Fatal("the failure was swallowed")
		}
	})
	t.Run("instances racing settle each refund once, with one event", func(t *testing.T) {
		w := newLcWorld(t)
		var ids []string
		for range 5 {
			ids = append(ids, w.reach(t, domain.TxProcessingRefund))
		}
		w.clock.Advance(lcSettle)
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 16 {
			wg.Go(func() {
				n, err := sandbox.NewSettleTransactions(w.repo, w.clock, "SANDBOX", lcSettle).RunOnce(ctx)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != len(ids) {
			t.Fatalf("the instances moved %d transactions together, want %d", total, len(ids))
		}
		for _, id := range ids {
			refunded := 0
			for _, e := range w.repo.eventTypes(id) {
				if e == "transaction.refunded" {
					refunded++
				}
			}
			if refunded != 1 || w.repo.stored(id).Status() != domain.TxRefunded {
				t.Fatalf("transaction %s: %d refunded events, status %s", id, refunded, w.repo.stored(id).Status())
			}
		}
	})
}

func TestParsePixKeyFindsTheKeyType(t *testing.T) {
	cases := []struct {
		key  string
		want domain.PixKey
	}{
		{"pagamentos@pixgate.example", domain.PixKey{Type: domain.PixKeyEmail, Key: "pagamentos@pixgate.example"}},
		{"Pagamentos@Pixgate.Example", domain.PixKey{Type: domain.PixKeyEmail, Key: "pagamentos@pixgate.example"}},
		{"52998224725", domain.PixKey{Type: domain.PixKeyCPF, Key: "52998224725"}},
		{"11222333000181", domain.PixKey{Type: domain.PixKeyCNPJ, Key: "11222333000181"}},
		{"+5511987654321", domain.PixKey{Type: domain.PixKeyPhone, Key: "+5511987654321"}},
		{"123E4567-E89B-42D3-A456-426614174000", domain.PixKey{Type: domain.PixKeyEVP, Key: "123e4567-e89b-42d3-a456-426614174000"}},
	}
	for _, c := range cases {
		t.Run(c.key+" is a "+string(c.want.Type)+" key", func(t *testing.T) {
			got, err := domain.ParsePixKey(c.key)
			if err != nil || got != c.want {
				t.Fatalf("ParsePixKey(%q) = %+v, %v", c.key, got, err)
			}
		})
	}
	t.Run("a string of no key type is refused", func(t *testing.T) {
		if _, err := sandbox.ReceivingAccount("not a key", "Loja"); !errors.Is(err, domain.ErrUnknownPixKeyType) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLifecycleConstructorsRefuseNilPorts(t *testing.T) {
	store, clock := memory.NewStore(), newFakeClock(lcStart)
	repo := store.Transactions()
	outbox := application.NewSendDevolutions(repo, store.Ledger(), &fakeAcquirer{}, clock,
		application.DevolutionSettings{CheckEvery: time.Minute, Claim: time.Minute}, func(application.DevolutionReport) {})
	for name, build := range map[string]func(){
		"steering without a repository": func() { sandbox.NewTransactionSteering(nil, clock, domain.FeePolicy{}, domain.AccountHolder{}) },
		"steering without a clock":      func() { sandbox.NewTransactionSteering(repo, nil, domain.FeePolicy{}, domain.AccountHolder{}) },
		"a transition without a move": func() {
			application.NewTransition[*domain.Transaction, application.NoInput]("none", repo, clock, nil)
		},
		"settle without a clock":     func() { sandbox.NewSettleTransactions(repo, nil, "SANDBOX", 0) },
		"settle without an acquirer": func() { sandbox.NewSettleTransactions(repo, clock, "", 0) },
		"notifications without a decoder": func() {
			application.NewApplyPixNotifications(repo, store.Ledger(), outbox, nil, clock, domain.FeePolicy{}, nil, func(application.LatePayment) {})
		},
		"notifications without a clock": func() {
			application.NewApplyPixNotifications(repo, store.Ledger(), outbox, fakeTxIDs{}, nil, domain.FeePolicy{}, nil, func(application.LatePayment) {})
		},
		"notifications without a repository": func() {
			application.NewApplyPixNotifications(nil, store.Ledger(), outbox, fakeTxIDs{}, clock, domain.FeePolicy{}, nil, func(application.LatePayment) {})
		},
		"notifications without a ledger": func() {
			application.NewApplyPixNotifications(repo, nil, outbox, fakeTxIDs{}, clock, domain.FeePolicy{}, nil, func(application.LatePayment) {})
		},
	} {
		t.Run(name+" panics", func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			build()
		})
	}
}

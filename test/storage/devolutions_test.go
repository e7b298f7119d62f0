package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// movingClock is the instances' shared clock, which the test moves.
type movingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *movingClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// oneAtATime is the acquirer as the instances reach it, watching that no two calls about one
// devolution are ever in flight at once.
type oneAtATime struct {
	next ports.Acquirer
	mu   sync.Mutex
	busy map[string]bool
	errs []error
}

func (o *oneAtATime) enter(id string) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.busy[id] {
		o.errs = append(o.errs, fmt.Errorf("two calls about devolution %s at once", id))
	}
	o.busy[id] = true
	return func() { o.mu.Lock(); delete(o.busy, id); o.mu.Unlock() }
}

func (o *oneAtATime) RequestDevolution(ctx context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	defer o.enter(d.ID)()
	return o.next.RequestDevolution(ctx, d)
}

func (o *oneAtATime) Devolution(ctx context.Context, e2e, id string) (ports.DevolutionResult, error) {
	defer o.enter(id)()
	return o.next.Devolution(ctx, e2e, id)
}

// TestTwoInstancesSendEachDevolutionOnce runs the devolution outboxes of two instances on one
// FerretDB against the fake PSP over mutual TLS, both at once, round after round, while the PSP
// answers slowly and loses answers: every refund and every late payment's return is made once
// at the PSP, applied once in the books, and no two steps about one devolution ever overlap.
func TestTwoInstancesSendEachDevolutionOnce(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t, nil)
	ctx := ctxTimeout(t, 3*time.Minute)
	p := psptest.New(t, psptest.Config{})
	if err := p.SetDevolutionAnswer(psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	client, err := apipix.New(apipix.Config{Key: p.Chave, Transport: psp.Config{
		APIURL: p.APIURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAFiles: []string{p.CA.CertFile}, Timeout: 5 * time.Second,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	watch := &oneAtATime{next: client, busy: map[string]bool{}}
	clock := &movingClock{now: time.Now().UTC()}
	outbox := func(s *pixmongo.Store) *application.SendDevolutions {
		return application.NewSendDevolutions(s.Transactions(), s.Ledger(), watch, clock,
			application.DevolutionSettings{CheckEvery: time.Minute, Claim: application.ClaimMargin + 20*time.Second},
			func(r application.DevolutionReport) {
				if r.Level == application.DevolutionError {
					t.Errorf("%s: %s (%v)", r.Devolution.ID, r.What, r.Err)
				}
			})
	}
	outboxes := []*application.SendDevolutions{outbox(a), outbox(b)}

	// Refunds in progress, stored through either instance, each of a payment the PSP knows.
	account := newID()
	const refunds = 6
	var txs []*domain.Transaction
	for i := range refunds {
		paid, err := p.Pay("", psptest.Payment{Valor: "10.00"})
		if err != nil {
			t.Fatal(err)
		}
		at := clock.Now().Add(-time.Minute)
		tx := paidTransactionBy(t, account, 1000, at, paid.EndToEndID)
		if err := tx.RequestRefund(domain.RefundRequest{ID: fmt.Sprintf("R%d%s", i, newID()[:8]), Amount: 400}, at.Add(3*time.Second)); err != nil {
			t.Fatal(err)
		}
		s := []*pixmongo.Store{a, b}[i%2]
		if err := s.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	// A late payment, recorded (its devolution due) before anything is sent.
	late, err := p.Pay("", psptest.Payment{Valor: "7.00"})
	if err != nil {
		t.Fatal(err)
	}
	lateClaim := ports.PaymentClaim{EndToEndID: late.EndToEndID, TransactionID: txs[0].ID(), AccountID: account, Amount: 700, CreatedAt: clock.Now()}
	if _, err := b.Ledger().ClaimPayment(ctx, lateClaim); err != nil {
		t.Fatal(err)
	}
	if err := a.Ledger().MarkLate(ctx, late.EndToEndID, clock.Now()); err != nil {
		t.Fatal(err)
	}
	arrive, _ := domain.LatePaymentPostings(late.EndToEndID, txs[0].ID(), 700)
	arrive.At = clock.Now()
	if _, err := a.Ledger().Post(ctx, arrive); err != nil {
		t.Fatal(err)
	}

	// The PSP makes every devolution but answers slowly, and loses the first answers.
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut).AfterApplying(), 3)
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut), 2)
	p.Inject(psptest.Slow(50*time.Millisecond).On(psptest.OpDevolutionPut), -1)

	done := func() bool {
		for _, tx := range txs {
			got, err := a.Transactions().Get(ctx, tx.AccountID(), tx.ID())
			if err != nil || got.Status() != domain.TxPaid || got.Refunds()[0].Status != domain.RefundRefunded {
				return false
			}
		}
		due, err := a.Ledger().LateDevolutionsDue(ctx, clock.Now().Add(time.Hour), 10)
		return err == nil && len(due) == 0
	}
	for round := 0; !done(); round++ {
		if round == 30 {
			t.Fatal("30 rounds and the devolutions are not all made")
		}
		var wg sync.WaitGroup
		for _, o := range append(outboxes, outboxes...) {
			wg.Go(func() {
				if _, err := o.RunOnce(ctx); err != nil {
					t.Errorf("RunOnce: %v", err)
				}
			})
		}
		wg.Wait()
		clock.advance(2 * time.Second)
	}
	for _, err := range watch.errs {
		t.Error(err)
	}

	// One devolution per id at the PSP, each applied once in the books.
	for _, tx := range txs {
		r := tx.Refunds()[0]
		if d, ok := p.Devolution(tx.EndToEnd(), r.ID); !ok || d.Valor != "4.00" || d.Status != psptest.DevolutionReturned {
			t.Errorf("the PSP holds %+v (%v) for refund %s", d, ok, r.ID)
		}
	}
	if px, _ := p.Pix(late.EndToEndID); len(px.Devolucoes) != 1 || px.Devolucoes[0].ID != application.LateDevolutionID(late.EndToEndID) {
		t.Errorf("the late payment's devolutions at the PSP: %+v", px.Devolucoes)
	}
	count := func(ledger string, kind domain.MovementType) map[string]int {
		out := map[string]int{}
		if err := a.Ledger().Scan(ctx, ledger, func(e domain.Entry) error {
			if e.Type == kind {
				out[e.ResourceID]++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	refunded := count(account, domain.MoveRefund)
	for _, tx := range txs {
		if refunded[tx.ID()] != 1 {
			t.Errorf("transaction %s has %d refund entries; want 1", tx.ID(), refunded[tx.ID()])
		}
	}
	returned := 0
	for _, n := range count("", domain.MoveLatePaymentReturn) {
		returned += n
	}
	if returned != 1 {
		t.Errorf("%d late payment returns in the books; want 1", returned)
	}
	t.Logf("%d PUTs (%d answered 400: the id was used), %d GETs", p.Requests(psptest.OpDevolutionPut),
		p.Answered(psptest.OpDevolutionPut, 400), p.Requests(psptest.OpDevolutionGet))
}

// paidTransactionBy is paidTransaction paid by the PIX e2e.
func paidTransactionBy(t *testing.T, account string, amount domain.Cents, at time.Time, e2e string) *domain.Transaction {
	t.Helper()
	tx, err := domain.NewTransaction(newID(), newPaymentToken(), account, "APIPIX", domain.Order{
		Amount: amount, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: domain.DefaultExpirationSeconds,
	}, domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201" + tx.ID(), QRCodePNG: []byte("\x89PNG" + tx.ID()),
		ExpiresAt: at.Add(30 * time.Minute)}, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Pay(domain.Payment{AmountPaid: amount, PaidAt: at.Add(2 * time.Second), EndToEnd: e2e}, at.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestADevolutionWhoseSenderDiedIsReadBackByTheOtherInstance kills a step mid-send (its
// context ends while the PSP, which made the devolution, has not answered yet), as a SIGKILL
// would: the other instance leaves the devolution alone while the dead step's claim lasts,
// then reads it back, finds it made, and completes the refund without sending it again.
func TestADevolutionWhoseSenderDiedIsReadBackByTheOtherInstance(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t, nil)
	ctx := ctxTimeout(t, 2*time.Minute)
	p := psptest.New(t, psptest.Config{})
	if err := p.SetDevolutionAnswer(psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	client, err := apipix.New(apipix.Config{Key: p.Chave, Transport: psp.Config{
		APIURL: p.APIURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAFiles: []string{p.CA.CertFile}, Timeout: 5 * time.Second,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	clock := &movingClock{now: time.Now().UTC()}
	settings := application.DevolutionSettings{CheckEvery: time.Minute, Claim: application.ClaimMargin + 20*time.Second}
	outbox := func(s *pixmongo.Store) *application.SendDevolutions {
		return application.NewSendDevolutions(s.Transactions(), s.Ledger(), client, clock, settings, func(application.DevolutionReport) {})
	}
	paid, err := p.Pay("", psptest.Payment{Valor: "10.00"})
	if err != nil {
		t.Fatal(err)
	}
	at := clock.Now().Add(-time.Minute)
	tx := paidTransactionBy(t, newID(), 1000, at, paid.EndToEndID)
	if err := tx.RequestRefund(domain.RefundRequest{ID: "K" + newID()[:8], Amount: 1000}, at.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := a.Transactions().Create(ctx, tx); err != nil {
		t.Fatal(err)
	}

	p.Inject(psptest.Slow(3*time.Second).On(psptest.OpDevolutionPut).AfterApplying(), 1)
	dying, die := context.WithCancel(ctx)
	go func() {
		for p.Requests(psptest.OpDevolutionPut) == 0 && dying.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		die()
	}()
	if _, err := outbox(a).RunOnce(dying); err == nil {
		t.Fatal("the killed step ended well")
	}
	die()
	survivor := outbox(b)
	if n, err := survivor.RunOnce(ctx); n != 0 || err != nil {
		t.Fatalf("the survivor took %d steps (%v) while the dead step's claim lasted", n, err)
	}
	clock.advance(settings.Claim + time.Second)
	if n, err := survivor.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("the survivor took %d steps (%v) once the claim ran out; want the read back", n, err)
	}
	got, err := b.Transactions().Get(ctx, tx.AccountID(), tx.ID())
	if err != nil || got.Status() != domain.TxRefunded {
		t.Fatalf("the transaction is %v (%v); want REFUNDED", got.Status(), err)
	}
	if puts, gets := p.Requests(psptest.OpDevolutionPut), p.Requests(psptest.OpDevolutionGet); puts != 1 || gets != 1 {
		t.Fatalf("%d PUTs and %d GETs; want the dead one's PUT and the survivor's GET", puts, gets)
	}
}

package application_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// A PSP that makes charges, as ports.ChargeIssuer says: one charge per txid, a repeat of the
// same txid answered with the charge made. Its clock runs two seconds behind pixgate's.
type fakeChargeIssuer struct {
	clock *fakeClock

	mu       sync.Mutex
	cobs     map[string]ports.Charge
	requests []ports.ChargeRequest
	// refuse answers every request; lose makes the next charges and answers
	// ErrChargeUnavailable, as if the PSP's answer were lost; noCode leaves pixCopiaECola out.
	refuse error
	lose   int
	noCode bool
}

var _ ports.ChargeIssuer = (*fakeChargeIssuer)(nil)

func (f *fakeChargeIssuer) Name() string { return "BANCO_TESTE" }

func (f *fakeChargeIssuer) Create(_ context.Context, r ports.ChargeRequest) (ports.Charge, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	if f.refuse != nil {
		return ports.Charge{}, f.refuse
	}
	if c, ok := f.cobs[r.TxID]; ok {
		if c.Amount != r.Amount {
			return ports.Charge{}, &ports.ChargeRefusedError{Status: 400, Title: "Cobrança inválida.", Detail: "txid em uso"}
		}
		return c, nil
	}
	c := ports.Charge{TxID: r.TxID, Status: ports.ChargeActive, CreatedAt: f.clock.Now().Add(-2 * time.Second),
		ExpirationSeconds: r.ExpirationSeconds, Amount: r.Amount, Key: "chave", LocationID: int64(len(f.cobs) + 1),
		Location: "psp.example/qr/v2/" + r.TxID, CopyPaste: "00020101021226PSP" + r.TxID}
	if f.noCode {
		c.CopyPaste = ""
	}
	if f.cobs == nil {
		f.cobs = map[string]ports.Charge{}
	}
	f.cobs[r.TxID] = c
	if f.lose > 0 {
		f.lose--
		return ports.Charge{}, fmt.Errorf("cob %s: %w", r.TxID, ports.ErrChargeUnavailable)
	}
	return c, nil
}

func (f *fakeChargeIssuer) Get(_ context.Context, txid string) (ports.Charge, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.cobs[txid]; ok {
		return c, nil
	}
	return ports.Charge{}, ports.ErrChargeNotFound
}

func (f *fakeChargeIssuer) Remove(context.Context, string) (ports.Charge, error) {
	return ports.Charge{}, errors.New("not used")
}

// fakeCoder writes a BR Code of a location.
type fakeCoder struct{}

func (fakeCoder) CodeForLocation(location string) (string, error) {
	return "00020101021226LOC" + location, nil
}

type pspWorld struct {
	clock  *fakeClock
	repo   ports.TransactionRepository
	issuer *fakeChargeIssuer
	create *application.CreateTransaction
	p      domain.Principal
}

func newPSPWorld(t *testing.T) *pspWorld {
	t.Helper()
	clock := newFakeClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	repo := memory.NewStore().Transactions()
	issuer := &fakeChargeIssuer{clock: clock}
	return &pspWorld{clock: clock, repo: repo, issuer: issuer, p: domain.Principal{AccountID: "acct-psp", Scopes: domain.AllScopes()},
		create: application.NewCreateTransactionAtPSP(repo, issuer, fakeCoder{}, fakeRenderer{}, &fakeIDs{}, &fakeCapabilities{}, clock)}
}

func pspOrder() domain.Order {
	return domain.Order{Amount: 12345, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 600,
		Customer: &domain.Customer{Name: "Maria", Document: domain.MustParseDocument("529.982.247-25")},
		Items:    []domain.Item{{Title: "Camiseta", UnitPrice: 10000, Quantity: 1}, {Title: "Boné", Description: "azul", UnitPrice: 2345, Quantity: 1}}}
}

func (w *pspWorld) execute(key, fingerprint string) (application.CreatedTransaction, error) {
	return w.create.Execute(context.Background(), w.p, application.CreateTransactionInput{Order: pspOrder(), IdempotencyKey: key, Fingerprint: fingerprint})
}

func TestACreationAtThePSPKeepsThePSPsCharge(t *testing.T) {
	t.Parallel()
	w := newPSPWorld(t)
	res, err := w.execute("", "")
	if err != nil {
		t.Fatal(err)
	}
	tx, req := res.Transaction, w.issuer.requests[0]
	cob := w.issuer.cobs[req.TxID]
	pix := tx.Pix()
	psp, ok := tx.PSPCharge()
	if !ok || pix.URI != cob.CopyPaste || string(pix.QRCodePNG) != "\x89PNG"+cob.CopyPaste || pix.Location != (domain.PixLocation{CobTxID: req.TxID}) ||
		!pix.ExpiresAt.Equal(cob.CreatedAt.Add(600*time.Second)) || psp.CreatedAt != cob.CreatedAt || psp.Location != cob.Location ||
		psp.LocationID != cob.LocationID || tx.Acquirer() != "BANCO_TESTE" || tx.Status() != domain.TxPixQRCodeGenerated {
		t.Fatalf("the transaction keeps %+v (%+v); the PSP made %+v", pix, psp, cob)
	}
	if !domain.ValidCobTxID(req.TxID) || req.Amount != 12345 || req.ExpirationSeconds != 600 || req.PayerRequest != "azul" ||
		req.Debtor.Name != "Maria" || req.Debtor.Document.Value() != "52998224725" {
		t.Fatalf("the PSP was asked %+v", req)
	}
	if _, err := w.repo.FindByCobTxID(context.Background(), req.TxID); err != nil {
		t.Fatalf("the callback's look-up by txid: %v", err)
	}
}

func TestARetryWithTheSameKeyAsksForTheSameCharge(t *testing.T) {
	t.Parallel()
	w := newPSPWorld(t)
	w.issuer.lose = 1
	if _, err := w.execute("order-1", "fp-1"); !errors.Is(err, ports.ErrChargeUnavailable) {
		t.Fatalf("the first attempt: %v, want ErrChargeUnavailable", err)
	}
	if _, err := w.repo.GetByIdempotencyKey(context.Background(), w.p.AccountID, "order-1"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("something was stored for a charge the PSP did not answer: %v", err)
	}
	res, err := w.execute("order-1", "fp-1")
	if err != nil || len(w.issuer.cobs) != 1 || w.issuer.requests[0].TxID != w.issuer.requests[1].TxID {
		t.Fatalf("retry: %v; %d cobs for the requests %+v", err, len(w.issuer.cobs), w.issuer.requests)
	}
	if res.Transaction.Pix().Location.CobTxID != w.issuer.requests[0].TxID {
		t.Fatal("the retry's transaction is not the charge made first")
	}

	for name, again := range map[string]func() (application.CreatedTransaction, error){
		"another key":                    func() (application.CreatedTransaction, error) { return w.execute("order-2", "fp-1") },
		"another request on a fresh key": func() (application.CreatedTransaction, error) { return w.execute("order-3", "fp-2") },
		"no key":                         func() (application.CreatedTransaction, error) { return w.execute("", "") },
		"no key again":                   func() (application.CreatedTransaction, error) { return w.execute("", "") },
	} {
		n := len(w.issuer.cobs)
		if _, err := again(); err != nil || len(w.issuer.cobs) != n+1 {
			t.Fatalf("%s: %v, and %d cobs after %d: want a charge of its own", name, err, len(w.issuer.cobs), n)
		}
	}
}

func TestAChargeThePSPDoesNotMakeStoresNothing(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ err, want error }{
		"refused":     {&ports.ChargeRefusedError{Status: 403, Title: "Acesso Negado"}, ports.ErrChargeRefused},
		"unavailable": {fmt.Errorf("apipix: %w", ports.ErrChargeUnavailable), ports.ErrChargeUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newPSPWorld(t)
			w.issuer.refuse = c.err
			if _, got := w.execute("order-x", "fp"); !errors.Is(got, c.want) {
				t.Fatalf("err = %v, want %v", got, c.want)
			}
			list, lerr := w.repo.List(context.Background(), ports.TransactionFilter{AccountID: w.p.AccountID}, ports.Page{Number: 1, Size: 10})
			if lerr != nil || list.Total != 0 {
				t.Fatalf("%d transactions stored (%v)", list.Total, lerr)
			}
		})
	}
}

func TestACobWithoutABRCodeIsWrittenFromItsLocation(t *testing.T) {
	t.Parallel()
	w := newPSPWorld(t)
	w.issuer.noCode = true
	res, err := w.execute("", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "00020101021226LOCpsp.example/qr/v2/" + w.issuer.requests[0].TxID; res.Transaction.Pix().URI != want {
		t.Fatalf("uri %q, want %q", res.Transaction.Pix().URI, want)
	}
}

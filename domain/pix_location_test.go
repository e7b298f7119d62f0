package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

var location = domain.PixLocation{ID: "K2M4Q7ZC3TB5XW6NR2D7HJ4LPA", CobTxID: "Q7ZC3TB5XW6NR2D7HJ4LPAK2M4"}

// dynamicTx is a transaction awaiting payment of a dynamic charge at location, created at base.
func dynamicTx(t *testing.T, order domain.Order) *domain.Transaction {
	t.Helper()
	tx := newTx(t, order, base)
	pix := pixFor(tx, base)
	pix.Location = location
	if err := tx.AttachPix(pix, base.Add(time.Second)); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return tx
}

func TestAttachPixRefusesAMalformedLocation(t *testing.T) {
	for name, loc := range map[string]domain.PixLocation{
		"an id without a txid":       {ID: location.ID},
		"a txid without an id":       {CobTxID: location.CobTxID},
		"an id of 24 characters":     {ID: location.ID[:24], CobTxID: location.CobTxID},
		"an id of 33 characters":     {ID: location.ID + "ABCDEFG", CobTxID: location.CobTxID},
		"an id outside [A-Za-z0-9]":  {ID: location.ID[:25] + "-", CobTxID: location.CobTxID},
		"a txid of 25 characters":    {ID: location.ID, CobTxID: location.CobTxID[:25]},
		"a txid of 36 characters":    {ID: location.ID, CobTxID: location.CobTxID + "0123456789"},
		"a txid outside [A-Za-z0-9]": {ID: location.ID, CobTxID: location.CobTxID[:25] + "_"},
	} {
		t.Run(name, func(t *testing.T) {
			tx := newTx(t, validOrder(), base)
			pix := pixFor(tx, base)
			pix.Location = loc
			if err := tx.AttachPix(pix, base); !errors.Is(err, domain.ErrInvalidOrder) || tx.Status() != domain.TxPending {
				t.Fatalf("AttachPix = %v, status %s; want ErrInvalidOrder and nothing changed", err, tx.Status())
			}
		})
	}
}

func TestCobFollowsTheTransaction(t *testing.T) {
	order := validOrder()
	expires := base.Add(time.Duration(order.ExpirationSeconds) * time.Second)

	t.Run("a static charge, or none, has no cob", func(t *testing.T) {
		tx := newTx(t, order, base)
		if _, ok := tx.Cob(base); ok {
			t.Fatal("a PENDING transaction has a cob")
		}
		if err := tx.AttachPix(pixFor(tx, base), base); err != nil {
			t.Fatal(err)
		}
		if _, ok := tx.Cob(base); ok {
			t.Fatal("a static charge has a cob")
		}
	})

	t.Run("awaiting payment it is ATIVA at revision 0, with the charge's terms", func(t *testing.T) {
		tx := dynamicTx(t, order)
		c, ok := tx.Cob(base.Add(time.Minute))
		want := domain.Cob{Location: location, Status: domain.CobActive, CreatedAt: ms(base),
			ExpirationSeconds: order.ExpirationSeconds, Amount: order.Amount}
		if !ok || c != want {
			t.Fatalf("Cob = %+v, %v; want %+v", c, ok, want)
		}
	})

	t.Run("paid it is CONCLUIDA at revision 1, and stays so through refunds", func(t *testing.T) {
		tx := dynamicTx(t, order)
		at := base.Add(time.Minute)
		if err := tx.Pay(paymentAt(at), at); err != nil {
			t.Fatal(err)
		}
		steps := []func() error{
			func() error { return tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, at) },
			func() error { r, _ := tx.RefundInProgress(); return tx.ConfirmRefund(r.ID, "D1", at) },
		}
		for i := 0; ; i++ {
			if c, _ := tx.Cob(expires.Add(time.Hour)); c.Status != domain.CobCompleted || c.Revision != 1 {
				t.Fatalf("in %s: %s at revision %d, want CONCLUIDA at 1", tx.Status(), c.Status, c.Revision)
			}
			if i == len(steps) {
				break
			}
			if err := steps[i](); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("expired it is REMOVIDA_PELO_PSP at revision 1, by the clock and after the sweeper alike", func(t *testing.T) {
		tx := dynamicTx(t, order)
		if c, _ := tx.Cob(expires.Add(-time.Millisecond)); c.Status != domain.CobActive {
			t.Fatalf("a millisecond before the expiry: %s", c.Status)
		}
		byClock, _ := tx.Cob(expires)
		if err := tx.Expire(expires); err != nil {
			t.Fatal(err)
		}
		swept, _ := tx.Cob(expires.Add(time.Hour))
		if byClock.Status != domain.CobRemoved || byClock != swept || swept.Revision != 1 {
			t.Fatalf("by the clock %+v, after the sweeper %+v; want both REMOVIDA_PELO_PSP at 1", byClock, swept)
		}
	})

	t.Run("solicitacaoPagador is the first item description, at most 140 characters", func(t *testing.T) {
		o := validOrder()
		o.Items = []domain.Item{{Title: "A", UnitPrice: 1, Quantity: 1}, {Title: "B", UnitPrice: 1, Quantity: 1, Description: strings.Repeat("ç", 200)},
			{Title: "C", UnitPrice: 1, Quantity: 1, Description: "second"}}
		c, _ := dynamicTx(t, o).Cob(base)
		if c.PayerRequest != strings.Repeat("ç", domain.MaxPayerRequest) {
			t.Fatalf("PayerRequest = %q", c.PayerRequest)
		}
	})
}

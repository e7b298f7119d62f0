package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// scribbleTransaction changes everything a caller can reach through the transaction's getters.
func scribbleTransaction(tx *domain.Transaction) {
	o := tx.Order()
	o.Items[0].UnitPrice = 1
	o.Customer.Name, o.Seller.Name, o.Metadata[0] = "changed", "changed", 'X'
	if p := tx.Pix(); p != nil {
		p.QRCodePNG[0], p.URI = 0, "changed"
	}
	for _, c := range []*domain.Cents{tx.AmountPaid(), tx.FeeAmount()} {
		if c != nil {
			*c = 1
		}
	}
	for _, d := range []*time.Time{tx.PaymentDate(), tx.InfractionDate()} {
		if d != nil {
			*d = time.Time{}
		}
	}
	for _, h := range []*domain.AccountHolder{tx.Payer(), tx.Receiver()} {
		if h != nil {
			h.Name = "changed"
		}
	}
	if rs := tx.Refunds(); len(rs) > 0 && rs[0].CompletedAt != nil {
		*rs[0].CompletedAt = time.Time{}
	}
	if h := tx.History(); len(h) > 0 {
		h[0].Status = "changed"
	}
}

func TestTransactionGettersHandOutCopies(t *testing.T) {
	for _, path := range txPaths {
		t.Run(path.name, func(t *testing.T) {
			tx, _ := txAt(t, validOrder(), path)
			want := domain.UnmarshalTransactionFromDatabase(tx.Record()).Record()
			scribbleTransaction(tx)
			for _, e := range tx.Events() {
				scribbleTransaction(e.Transaction)
			}
			if got := tx.Record(); !reflect.DeepEqual(got, want) {
				t.Fatalf("changing what the getters returned changed the transaction:\n got %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("mutating Order().Items[0].UnitPrice leaves the order alone", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[2])
		tx.Order().Items[0].UnitPrice = 1
		if got := tx.Order().Items[0].UnitPrice; got != 10_000 {
			t.Fatalf("unit price %d after changing a copy, want 10000", got)
		}
	})

	t.Run("the transaction keeps its own copy of the order it was built with", func(t *testing.T) {
		order := validOrder()
		tx := newTx(t, order, base)
		order.Items[0].UnitPrice, order.Customer.Name = 1, "changed"
		if o := tx.Order(); o.Items[0].UnitPrice != 10_000 || o.Customer.Name != "Fulano de Tal" {
			t.Fatalf("the caller's order reached into the transaction: %+v", o)
		}
	})

	t.Run("the transaction keeps its own copy of the QR code and the payment's parties", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		pix := pixFor(tx, base)
		if err := tx.AttachPix(pix, base); err != nil {
			t.Fatal(err)
		}
		pay := paymentAt(base)
		if err := tx.Pay(pay, base); err != nil {
			t.Fatal(err)
		}
		pix.QRCodePNG[0], pay.Payer.Name = 0, "changed"
		if tx.Pix().QRCodePNG[0] != 0x89 || tx.Payer().Name != "Beltrano da Silva" {
			t.Fatal("the caller's PIX data or payer reached into the transaction")
		}
	})
}

func TestWithdrawalGettersHandOutCopies(t *testing.T) {
	for _, path := range wdPaths {
		t.Run(path.name, func(t *testing.T) {
			w, _ := wdAt(t, validPayout(), path)
			want := domain.UnmarshalWithdrawalFromDatabase(w.Record()).Record()
			p := w.Payout()
			p.Payer.Name, p.Receiver.Name = "changed", "changed"
			if a := w.AmountWithdrawn(); a != nil {
				*a = 1
			}
			if d := w.ProcessedDate(); d != nil {
				*d = time.Time{}
			}
			if got := w.Record(); !reflect.DeepEqual(got, want) {
				t.Fatalf("changing what the getters returned changed the withdrawal:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestAccountGettersHandOutCopies(t *testing.T) {
	a, err := domain.NewAccount("acc-1", "Loja", domain.AllScopes(), "whsec_a", base)
	if err != nil {
		t.Fatal(err)
	}
	a.RotateWebhookSecret("whsec_b", base, time.Hour)
	want := a.Record()
	*a.Webhook().PreviousExpiresAt = time.Time{}
	a.Scopes()[0] = "changed"
	*a.Record().Webhook.PreviousExpiresAt = time.Time{}
	if got := a.Record(); !reflect.DeepEqual(got, want) {
		t.Fatalf("changing what the getters returned changed the account:\n got %+v\nwant %+v", got, want)
	}
}

func TestStoredStatusesAreChecked(t *testing.T) {
	for _, s := range domain.TransactionStatuses() {
		if got, err := domain.ParseTransactionStatus(string(s)); got != s || err != nil {
			t.Errorf("ParseTransactionStatus(%s) = %s, %v", s, got, err)
		}
	}
	for _, s := range domain.WithdrawalStatuses() {
		if got, err := domain.ParseWithdrawalStatus(string(s)); got != s || err != nil {
			t.Errorf("ParseWithdrawalStatus(%s) = %s, %v", s, got, err)
		}
	}
	for _, s := range []domain.RefundStatus{domain.RefundProcessing, domain.RefundRefunded, domain.RefundFailed} {
		if got, err := domain.ParseRefundStatus(string(s)); got != s || err != nil {
			t.Errorf("ParseRefundStatus(%s) = %s, %v", s, got, err)
		}
	}
	for _, s := range []domain.AccountStatus{domain.AccountActive, domain.AccountDisabled} {
		if got, err := domain.ParseAccountStatus(string(s)); got != s || err != nil {
			t.Errorf("ParseAccountStatus(%s) = %s, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "paid", "UNKNOWN", "Active"} {
		if _, err := domain.ParseTransactionStatus(bad); err == nil {
			t.Errorf("ParseTransactionStatus(%q) accepted", bad)
		}
		if _, err := domain.ParseWithdrawalStatus(bad); err == nil {
			t.Errorf("ParseWithdrawalStatus(%q) accepted", bad)
		}
		if _, err := domain.ParseRefundStatus(bad); err == nil {
			t.Errorf("ParseRefundStatus(%q) accepted", bad)
		}
		if _, err := domain.ParseAccountStatus(bad); err == nil {
			t.Errorf("ParseAccountStatus(%q) accepted", bad)
		}
	}
}

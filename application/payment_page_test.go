package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

func TestPaymentPage(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*lcWorld, *application.ShowPaymentPage, *application.FollowPayment, *domain.Transaction) {
		t.Helper()
		w := newLcWorld(t)
		accounts := newAccounts()
		account, err := domain.NewAccount(w.merchant.AccountID, "Loja da Esquina", domain.AllScopes(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", lcStart)
		if err != nil {
			t.Fatal(err)
		}
		if err := accounts.CreateAccount(ctx, account); err != nil {
			t.Fatal(err)
		}
		id := w.newTransaction(t)
		tx, err := w.repo.Find(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return w, application.NewShowPaymentPage(w.repo, accounts, w.clock), application.NewFollowPayment(w.repo, w.clock), tx
	}

	t.Run("a new charge gets a payment token that is a capability, not its id", func(t *testing.T) {
		_, _, _, tx := setup(t)
		if !domain.ValidPaymentToken(tx.PaymentToken()) || tx.PaymentToken() == tx.ID() {
			t.Fatalf("token %q of transaction %s", tx.PaymentToken(), tx.ID())
		}
	})

	t.Run("the page shows the merchant's name, the amount, the code and the state, and nothing of the payer", func(t *testing.T) {
		_, show, _, tx := setup(t)
		page, err := show.Execute(ctx, tx.PaymentToken())
		if err != nil {
			t.Fatal(err)
		}
		if page.MerchantName != "Loja da Esquina" || page.Amount != tx.Amount() || page.PixURI != tx.Pix().URI ||
			string(page.QRCodePNG) != string(tx.Pix().QRCodePNG) || !page.ExpiresAt.Equal(tx.Pix().ExpiresAt) ||
			page.Status != domain.TxPixQRCodeGenerated || page.Expired || page.Final() {
			t.Fatalf("page %+v", page)
		}
	})

	t.Run("a paid charge reads PAID, and a refunded one its refund states", func(t *testing.T) {
		w, _, follow, tx := setup(t)
		if _, err := w.pay.Execute(ctx, w.merchant, tx.ID(), nil); err != nil {
			t.Fatal(err)
		}
		st, err := follow.Execute(ctx, tx.PaymentToken())
		if err != nil || st.Status != domain.TxPaid || st.Expired || st.Final() {
			t.Fatalf("state %+v, %v; want PAID, not final", st, err)
		}
	})

	t.Run("an unpaid charge reads expired at its expiry, before the sweeper and after", func(t *testing.T) {
		w, _, follow, tx := setup(t)
		w.clock.Advance(30 * time.Minute)
		st, err := follow.Execute(ctx, tx.PaymentToken())
		if err != nil || st.Status != domain.TxPixQRCodeGenerated || !st.Expired {
			t.Fatalf("state %+v, %v; want expired while still awaiting payment", st, err)
		}
		if _, err := w.expire.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		st, err = follow.Execute(ctx, tx.PaymentToken())
		if err != nil || st.Status != domain.TxFailed || !st.Expired || !st.Final() {
			t.Fatalf("state %+v, %v; want FAILED, expired and final", st, err)
		}
	})

	t.Run("unknown and malformed tokens are not found", func(t *testing.T) {
		_, show, follow, tx := setup(t)
		for _, token := range []string{"", "short", tx.ID(), "lc-payment-token-999999999999", "../../etc/passwd-and-more-chars"} {
			if _, err := show.Execute(ctx, token); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("page of %q: %v, want ErrNotFound", token, err)
			}
			if _, err := follow.Execute(ctx, token); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("state of %q: %v, want ErrNotFound", token, err)
			}
		}
	})
}

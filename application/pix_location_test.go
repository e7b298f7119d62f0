package application_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

var locBase = time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)

func locTx(t *testing.T, n int) *domain.Transaction {
	t.Helper()
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	order := domain.Order{Amount: 1234, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 600}
	tx, err := domain.NewTransaction(id, fmt.Sprintf("token-%018d", n), "acc", "SANDBOX", order, domain.Idempotency{}, locBase)
	if err != nil {
		t.Fatal(err)
	}
	loc := domain.PixLocation{ID: fmt.Sprintf("LOC%023d", n), CobTxID: fmt.Sprintf("TXID%022d", n)}
	if err := tx.AttachPix(domain.PixResponse{URI: "x", ExpiresAt: locBase.Add(600 * time.Second), Location: loc}, locBase); err != nil {
		t.Fatal(err)
	}
	return tx
}

func newLocCase(t *testing.T, cacheSize int, txs ...*domain.Transaction) (*application.ShowPixLocation, *txStore, *fakeSigner, *fakeClock) {
	repo := newTxStore(memory.NewStore())
	for _, tx := range txs {
		repo.put(tx)
	}
	signer, clock := &fakeSigner{}, newFakeClock(locBase.Add(time.Minute))
	return application.NewShowPixLocation(repo, signer, clock, "pix@pixgate.example", cacheSize), repo, signer, clock
}

func TestShowPixLocation(t *testing.T) {
	ctx := context.Background()

	t.Run("a malformed id is not found before any look-up, an unknown one after it", func(t *testing.T) {
		uc, repo, _, _ := newLocCase(t, 10)
		for _, id := range []string{"", "short", "00000000-0000-4000-8000-000000000001", "LOC00000000000000000000001-"} {
			if _, err := uc.Execute(ctx, id); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("Execute(%q) = %v, want ErrNotFound", id, err)
			}
		}
		if pixLookups(repo) != 0 {
			t.Fatalf("%d look-ups for malformed ids", pixLookups(repo))
		}
		if _, err := uc.Execute(ctx, "LOC00000000000000000000099"); !errors.Is(err, domain.ErrNotFound) || pixLookups(repo) != 1 {
			t.Fatalf("unknown id: %v after %d look-ups", err, pixLookups(repo))
		}
	})

	t.Run("an unchanged charge is signed once; a change signs its new revision", func(t *testing.T) {
		tx := locTx(t, 1)
		uc, repo, signer, clock := newLocCase(t, 10, tx)
		first, err := uc.Execute(ctx, tx.Pix().Location.ID)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		if again, _ := uc.Execute(ctx, tx.Pix().Location.ID); again != first || len(signer.signed) != 1 {
			t.Fatalf("second fetch %q after %d signatures; want %q after 1", again, len(signer.signed), first)
		}
		p := signer.signed[0]
		if p.Key != "pix@pixgate.example" || !p.PresentedAt.Equal(locBase.Add(time.Minute)) ||
			p.Cob.Status != domain.CobActive || p.Cob.Revision != 0 || p.Cob.Amount != 1234 || p.Cob.ExpirationSeconds != 600 {
			t.Fatalf("signed %+v", p)
		}
		if _, err := repo.Update(ctx, "acc", tx.ID(), func(tx *domain.Transaction) error {
			return tx.Pay(domain.Payment{AmountPaid: 1234, PaidAt: clock.Now(), EndToEnd: "E1"}, clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		paid, err := uc.Execute(ctx, tx.Pix().Location.ID)
		if err != nil || paid == first || len(signer.signed) != 2 {
			t.Fatalf("after payment %q, %v after %d signatures", paid, err, len(signer.signed))
		}
		if p := signer.signed[1]; p.Cob.Status != domain.CobCompleted || p.Cob.Revision != 1 {
			t.Fatalf("after payment signed %s at %d", p.Cob.Status, p.Cob.Revision)
		}
	})

	t.Run("a kept answer is served for at most MaxPixAnswerAge, then signed anew with the time of the answer", func(t *testing.T) {
		tx := locTx(t, 1)
		uc, _, signer, clock := newLocCase(t, 10, tx)
		first, err := uc.Execute(ctx, tx.Pix().Location.ID)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(application.MaxPixAnswerAge - time.Second)
		if again, _ := uc.Execute(ctx, tx.Pix().Location.ID); again != first || len(signer.signed) != 1 {
			t.Fatalf("within the age: %q after %d signatures, want the kept answer", again, len(signer.signed))
		}
		clock.Advance(time.Second)
		later, err := uc.Execute(ctx, tx.Pix().Location.ID)
		if err != nil || later == first || len(signer.signed) != 2 {
			t.Fatalf("past the age: %q, %v after %d signatures, want a new signature", later, err, len(signer.signed))
		}
		if p := signer.signed[1]; !p.PresentedAt.Equal(clock.Now()) || p.Cob.Revision != 0 {
			t.Fatalf("re-signed at %s revision %d, want %s revision 0", p.PresentedAt, p.Cob.Revision, clock.Now())
		}
		if again, _ := uc.Execute(ctx, tx.Pix().Location.ID); again != later || len(signer.signed) != 2 {
			t.Fatalf("the fresh answer is not kept: %q after %d signatures", again, len(signer.signed))
		}
	})

	t.Run("the kept answers are bounded, the oldest forgotten first", func(t *testing.T) {
		txs := []*domain.Transaction{locTx(t, 1), locTx(t, 2), locTx(t, 3)}
		uc, _, signer, _ := newLocCase(t, 2, txs...)
		for _, tx := range txs {
			if _, err := uc.Execute(ctx, tx.Pix().Location.ID); err != nil {
				t.Fatal(err)
			}
		}
		if n := uc.KeptAnswers(); n != 2 {
			t.Fatalf("%d answers kept, want 2", n)
		}
		_, _ = uc.Execute(ctx, txs[2].Pix().Location.ID) // still kept
		_, _ = uc.Execute(ctx, txs[0].Pix().Location.ID) // forgotten: signed again
		if len(signer.signed) != 4 {
			t.Fatalf("%d signatures, want 4", len(signer.signed))
		}
	})

	t.Run("a signing failure fails the request and keeps nothing", func(t *testing.T) {
		tx := locTx(t, 1)
		uc, _, signer, _ := newLocCase(t, 10, tx)
		signer.err = errors.New("no entropy")
		if _, err := uc.Execute(ctx, tx.Pix().Location.ID); err == nil || errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("Execute = %v, want the signing error", err)
		}
		signer.err = nil
		if jws, err := uc.Execute(ctx, tx.Pix().Location.ID); err != nil || jws == "" || uc.KeptAnswers() != 1 {
			t.Fatalf("after recovery %q, %v", jws, err)
		}
	})
}

// pixLookups counts the look-ups by PIX location or txid.
func pixLookups(r *txStore) int { return r.Calls("FindByPixLocation") + r.Calls("FindByCobTxID") }

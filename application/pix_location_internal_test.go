package application

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// locRepo finds the transactions it holds by location id; every other method of the port is
// the embedded nil interface, which these tests never reach.
type locRepo struct {
	ports.TransactionRepository
	mu      sync.Mutex
	byLoc   map[string]*domain.Transaction
	lookups int
}

func (r *locRepo) FindByPixLocation(_ context.Context, id string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if t, ok := r.byLoc[id]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("location %s: %w", id, domain.ErrNotFound)
}

// locSigner records what it signs and writes a token that names it.
type locSigner struct {
	mu     sync.Mutex
	signed []ports.PixLocationPayload
	err    error
}

func (s *locSigner) Sign(_ context.Context, p ports.PixLocationPayload) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "", s.err
	}
	s.signed = append(s.signed, p)
	return fmt.Sprintf("jws-%d-%s-%s-%d", len(s.signed), p.Cob.Location.ID, p.Cob.Status, p.Cob.Revision), nil
}

func (s *locSigner) KeySet() []byte { return []byte(`{"keys":[]}`) }

type locClock struct{ now time.Time }

func (c *locClock) Now() time.Time { return c.now }

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

func newLocCase(t *testing.T, cacheSize int, txs ...*domain.Transaction) (*ShowPixLocation, *locRepo, *locSigner, *locClock) {
	repo := &locRepo{byLoc: map[string]*domain.Transaction{}}
	for _, tx := range txs {
		repo.byLoc[tx.Pix().Location.ID] = tx
	}
	signer, clock := &locSigner{}, &locClock{now: locBase.Add(time.Minute)}
	return NewShowPixLocation(repo, signer, clock, "pix@pixgate.example", cacheSize), repo, signer, clock
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
		if repo.lookups != 0 {
			t.Fatalf("%d look-ups for malformed ids", repo.lookups)
		}
		if _, err := uc.Execute(ctx, "LOC00000000000000000000099"); !errors.Is(err, domain.ErrNotFound) || repo.lookups != 1 {
			t.Fatalf("unknown id: %v after %d look-ups", err, repo.lookups)
		}
	})

	t.Run("an unchanged charge is signed once; a change signs its new revision", func(t *testing.T) {
		tx := locTx(t, 1)
		uc, _, signer, clock := newLocCase(t, 10, tx)
		first, err := uc.Execute(ctx, tx.Pix().Location.ID)
		if err != nil {
			t.Fatal(err)
		}
		clock.now = clock.now.Add(time.Second)
		if again, _ := uc.Execute(ctx, tx.Pix().Location.ID); again != first || len(signer.signed) != 1 {
			t.Fatalf("second fetch %q after %d signatures; want %q after 1", again, len(signer.signed), first)
		}
		p := signer.signed[0]
		if p.Key != "pix@pixgate.example" || !p.PresentedAt.Equal(locBase.Add(time.Minute)) ||
			p.Cob.Status != domain.CobActive || p.Cob.Revision != 0 || p.Cob.Amount != 1234 || p.Cob.ExpirationSeconds != 600 {
			t.Fatalf("signed %+v", p)
		}
		if err := tx.Pay(domain.Payment{AmountPaid: 1234, PaidAt: clock.now, EndToEnd: "E1"}, clock.now); err != nil {
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

	t.Run("the kept answers are bounded, the oldest forgotten first", func(t *testing.T) {
		txs := []*domain.Transaction{locTx(t, 1), locTx(t, 2), locTx(t, 3)}
		uc, _, signer, _ := newLocCase(t, 2, txs...)
		for _, tx := range txs {
			if _, err := uc.Execute(ctx, tx.Pix().Location.ID); err != nil {
				t.Fatal(err)
			}
		}
		if n := uc.cache.len(); n != 2 {
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
		if jws, err := uc.Execute(ctx, tx.Pix().Location.ID); err != nil || jws == "" || uc.cache.len() != 1 {
			t.Fatalf("after recovery %q, %v", jws, err)
		}
	})
}

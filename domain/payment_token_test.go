package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestPaymentToken(t *testing.T) {
	for _, c := range []struct {
		name  string
		token string
		valid bool
	}{
		{"22 characters of the URL-safe alphabet are a token", "abcdefghijklmnopqrstuv", true},
		{"32 characters with - and _ are a token", "Ab0_-Ab0_-Ab0_-Ab0_-Ab0_-Ab0_-Ab", true},
		{"21 characters are too few for 128 bits", "abcdefghijklmnopqrstu", false},
		{"65 characters are too many", strings.Repeat("a", 65), false},
		{"a dot is not in the alphabet", "abcdefghijklmnopqrstu.", false},
		{"a slash is not in the alphabet", "abcdefghijklmnopqrstu/", false},
		{"a non-ASCII letter is not in the alphabet", "abcdefghijklmnopqrstuçç", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := domain.ValidPaymentToken(c.token); got != c.valid {
				t.Fatalf("ValidPaymentToken(%q) = %v, want %v", c.token, got, c.valid)
			}
		})
	}

	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	t.Run("a new transaction keeps its token and gives it back from storage", func(t *testing.T) {
		tx, err := domain.NewTransaction(newID(), "payment-token-kept-000001", accountID, acquirer, validOrder(), validIdempotency(), now)
		if err != nil {
			t.Fatal(err)
		}
		if tx.PaymentToken() != "payment-token-kept-000001" {
			t.Fatalf("token %q", tx.PaymentToken())
		}
		if back := domain.UnmarshalTransactionFromDatabase(tx.Record()); back.PaymentToken() != tx.PaymentToken() {
			t.Fatalf("token lost through the record: %q", back.PaymentToken())
		}
	})
	t.Run("a malformed token is refused", func(t *testing.T) {
		_, err := domain.NewTransaction(newID(), "short", accountID, acquirer, validOrder(), validIdempotency(), now)
		if !errors.Is(err, domain.ErrInvalidOrder) {
			t.Fatalf("error %v, want ErrInvalidOrder", err)
		}
	})
	t.Run("the transaction id is refused as its token", func(t *testing.T) {
		id := newID()
		_, err := domain.NewTransaction(id, id, accountID, acquirer, validOrder(), validIdempotency(), now)
		if !errors.Is(err, domain.ErrInvalidOrder) {
			t.Fatalf("error %v, want ErrInvalidOrder", err)
		}
	})
}

package storage_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// newID makes a random UUID v4, as the service's ids are.
// newPaymentToken makes a random payment token, as the system adapter does.
func newPaymentToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var base = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// paidTransaction is a transaction of account, PAID with amount and no fee, created at at.
func paidTransaction(t testing.TB, account string, amount domain.Cents, at time.Time) *domain.Transaction {
	t.Helper()
	tx, err := domain.NewTransaction(newID(), newPaymentToken(), account, "SANDBOX", domain.Order{
		Amount: amount, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true,
		ExpirationSeconds: domain.DefaultExpirationSeconds, WebhookURL: "https://shop.example.com/hooks",
		Customer: &domain.Customer{Name: "Maria da Silva", Email: "maria@example.com", MobilePhone: "11987654321"},
	}, domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201" + tx.ID(), QRCodePNG: []byte("\x89PNG" + tx.ID()),
		ExpiresAt: at.Add(30 * time.Minute)}, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Pay(domain.Payment{AmountPaid: amount, PaidAt: at.Add(2 * time.Second), EndToEnd: "E" + tx.ID()[:8]}, at.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	return tx
}

// withdrawal is a PENDING withdrawal of account.
func withdrawal(t testing.TB, account string, amount, fee domain.Cents) *domain.Withdrawal {
	t.Helper()
	key, err := domain.NewPixKey(domain.PixKeyEVP, newID())
	if err != nil {
		t.Fatal(err)
	}
	w, err := domain.NewWithdrawal(newID(), account, "SANDBOX", domain.Payout{Amount: amount, Fee: fee, PixKey: key},
		domain.Idempotency{}, base)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// toggleDispute moves a PAID transaction to BLOCKED and a BLOCKED one back to PAID: a change
// that can be applied any number of times, each adding one history entry, so that a lost
// update shows as a missing entry.
func toggleDispute(at time.Time) func(*domain.Transaction) error {
	return func(tx *domain.Transaction) error {
		if tx.Status() == domain.TxPaid {
			return tx.OpenDispute(at)
		}
		return tx.RejectDispute(at)
	}
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

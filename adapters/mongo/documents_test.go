package mongo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// These tests cover the mapping code that needs no server; everything else runs against a
// database in the test module (test/storage).

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func richTransaction(t *testing.T) *domain.Transaction {
	t.Helper()
	order := domain.Order{
		Amount: 15990, PaymentMethod: domain.PaymentPIX, WebhookURL: "https://shop.example.com/hooks",
		ExternalCode: "ORDER-1",
		Customer: &domain.Customer{IP: "203.0.113.7", Name: "Maria da Silva", Email: "Maria@Example.com",
			Document: domain.MustParseDocument("123.456.789-09"), Landline: "1133334444", MobilePhone: "11987654321",
			Birthdate: "1990-05-17"},
		Seller:   &domain.Seller{Name: "Loja", Document: domain.MustParseDocument("11.222.333/0001-81")},
		Address:  &domain.Address{ZipCode: "01310100", Number: "1000", Street: "Av. Paulista", City: "São Paulo", State: "SP", Country: "BR"},
		Items:    []domain.Item{{Title: "Camiseta", UnitPrice: 4995, Quantity: 2}},
		Metadata: []byte(`{"a":1}`), ExpirationSeconds: 3600,
	}
	tx, err := domain.NewTransaction("3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d", "acc-1", "SANDBOX", order,
		domain.Idempotency{Key: "k-1", Fingerprint: "sha256:ab"}, t0.Add(123*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	steps := []func(time.Time) error{
		func(at time.Time) error {
			return tx.AttachPix(domain.PixResponse{URI: "000201", QRCodePNG: []byte("\x89PNG"), ExpiresAt: at.Add(time.Hour)}, at)
		},
		func(at time.Time) error {
			return tx.Pay(domain.Payment{AmountPaid: 15990, Fee: 160, PaidAt: at, EndToEnd: "E1",
				Payer: &domain.AccountHolder{Type: domain.HolderPF, Name: "Maria", Document: domain.MustParseDocument("12345678909"),
					BankAccount: domain.BankAccount{Type: "CACC", Digit: "7", ISPB: "18236120"},
					Pix:         domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}}}, at)
		},
		func(at time.Time) error { return tx.OpenDispute(at) },
	}
	for i, step := range steps {
		if err := step(t0.Add(time.Duration(i+1) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// roundTrip stores v as BSON and reads it back into out, as the server would hand it back.
func roundTrip(t *testing.T, v, out any) {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if err := bson.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
}

func TestATransactionSurvivesItsDocument(t *testing.T) {
	tx := richTransaction(t)
	var back txSnapshot
	roundTrip(t, fromTransaction(tx), &back)
	got, err := back.toTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if want := tx.Record(); !reflect.DeepEqual(got.Record(), want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got.Record(), want)
	}
}

func TestAWithdrawalSurvivesItsDocument(t *testing.T) {
	key, _ := domain.NewPixKey(domain.PixKeyCPF, "123.456.789-09")
	w, err := domain.NewWithdrawal("w-1", "acc-1", "SANDBOX", domain.Payout{Amount: 1000, Fee: 10, PixKey: key,
		ExternalCode: "P-1", WebhookURL: "https://shop.example.com/hooks",
		Receiver: &domain.AccountHolder{Type: domain.HolderPF, Name: "João", Document: domain.MustParseDocument("12345678909")}},
		domain.Idempotency{Key: "p-1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.StartProcessing(t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := w.Complete("E9", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	var back wdSnapshot
	roundTrip(t, fromWithdrawal(w), &back)
	got, err := back.toWithdrawal()
	if err != nil {
		t.Fatal(err)
	}
	if want := w.Record(); !reflect.DeepEqual(got.Record(), want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got.Record(), want)
	}
}

func TestAnEventSurvivesItsDelivery(t *testing.T) {
	tx := richTransaction(t)
	events := tx.Events()
	var back deliveryDoc
	roundTrip(t, newDelivery(events[1]), &back)
	d, err := back.toDelivery(tx.AccountID(), tx.ID(), domain.ResourceTransaction)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Event
	if e.ID != events[1].ID || e.Type != "transaction.paid" || e.AccountID != tx.AccountID() || e.ResourceID != tx.ID() ||
		e.Kind != domain.ResourceTransaction || !e.CreatedAt.Equal(events[1].CreatedAt) || e.WebhookURL != tx.Order().WebhookURL {
		t.Errorf("event = %+v, want %+v", e, events[1])
	}
	if e.Transaction == nil || e.Transaction.Status() != domain.TxPaid {
		t.Errorf("the snapshot is %v, want the transaction as it was when paid", e.Transaction)
	}
	if d.Status != ports.DeliveryPending || !d.NextAttemptAt.Equal(events[1].CreatedAt) || len(d.Attempts) != 0 {
		t.Errorf("delivery = %s next %v attempts %d, want pending, due at once, none", d.Status, d.NextAttemptAt, len(d.Attempts))
	}
}

func TestAccountsAndCredentialsSurviveTheirDocuments(t *testing.T) {
	a, err := domain.NewAccount("acc-1", "Loja", domain.AllScopes(), "whsec_a", t0)
	if err != nil {
		t.Fatal(err)
	}
	a.RotateWebhookSecret("whsec_b", t0.Add(time.Hour), 24*time.Hour)
	a.Disable()
	var back accountDoc
	roundTrip(t, fromAccount(a, 7), &back)
	if got := back.toAccount(); !reflect.DeepEqual(got, a) || back.Version != 7 {
		t.Errorf("account read back %+v (version %d), want %+v (7)", got, back.Version, a)
	}
	revoked := t0.Add(time.Minute)
	c := domain.Credential{ClientID: "c-1", AccountID: "acc-1", SecretHash: []byte{1, 2, 3}, CreatedAt: t0, RevokedAt: &revoked}
	var cback credentialDoc
	roundTrip(t, fromCredential(c), &cback)
	if got := cback.toCredential(); !reflect.DeepEqual(got, c) {
		t.Errorf("credential read back %+v, want %+v", got, c)
	}
}

func TestIdempotencySlotsNeverCollide(t *testing.T) {
	slots := []string{idemSlot("", "a"), idemSlot("a", "b"), idemSlot("id:a", "c"), idemSlot("", "key:a")}
	seen := map[string]bool{}
	for _, s := range slots {
		if seen[s] {
			t.Errorf("slot %q is taken twice in %v", s, slots)
		}
		seen[s] = true
	}
}

func TestOutboxDueIsTheEarliestClaimableDelivery(t *testing.T) {
	lease := t0.Add(time.Hour)
	for _, c := range []struct {
		name string
		ds   []deliveryDoc
		want *time.Time
	}{
		{"nothing pending has no due time", []deliveryDoc{{Status: "delivered", NextAttemptAt: t0}, {Status: "failed", NextAttemptAt: t0}}, nil},
		{"a pending delivery is due at its next attempt", []deliveryDoc{{Status: "pending", NextAttemptAt: t0.Add(time.Minute)}, {Status: "delivered", NextAttemptAt: t0}}, ptr(t0.Add(time.Minute))},
		{"a leased delivery is due when its lease ends", []deliveryDoc{{Status: "pending", NextAttemptAt: t0, Owner: "a", LeaseUntil: &lease}}, &lease},
		{"the earliest of several wins", []deliveryDoc{{Status: "pending", NextAttemptAt: t0, Owner: "a", LeaseUntil: &lease}, {Status: "pending", NextAttemptAt: t0.Add(time.Minute)}}, ptr(t0.Add(time.Minute))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := outboxDue(c.ds)
			if (got == nil) != (c.want == nil) || got != nil && !got.Equal(*c.want) {
				t.Errorf("outboxDue = %v, want %v", got, c.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestTheBalanceSumsOnlyStatusesThatMoveMoney(t *testing.T) {
	tx := func(a bson.A) []string {
		var out []string
		for _, v := range a {
			out = append(out, v.(string))
		}
		slices.Sort(out)
		return out
	}
	if got, want := tx(countingTransactionStatuses), []string{"BLOCKED", "PAID", "PIX_QRCODE_GENERATED", "PROCESSING_INFRACTION", "PROCESSING_REFUND"}; !slices.Equal(got, want) {
		t.Errorf("transaction statuses summed = %v, want %v", got, want)
	}
	if got, want := tx(holdingWithdrawalStatuses), []string{"PENDING", "PROCESSED", "PROCESSING"}; !slices.Equal(got, want) {
		t.Errorf("withdrawal statuses summed = %v, want %v", got, want)
	}
}

func TestListFiltersMatchTheStoredShapes(t *testing.T) {
	at := t0
	amount := domain.Cents(500)
	got := listFilter(ports.TransactionFilter{
		AccountID: "acc", StartDate: &at, Statuses: []domain.TransactionStatus{domain.TxPaid},
		CustomerEmail: "Maria@Example.COM", CustomerName: "Silva (SP).", CustomerPhone: "11987654321",
		CustomerDocument: "12345678909", MinAmount: &amount,
	})
	want := bson.D{
		{Key: "accountId", Value: "acc"},
		{Key: "createdAt", Value: bson.D{{Key: "$gte", Value: at}}},
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"PAID"}}}},
		{Key: "search.email", Value: "maria@example.com"},
		{Key: "search.name", Value: bson.D{{Key: "$regex", Value: `silva \(sp\)\.`}}},
		{Key: "customer.document.value", Value: "12345678909"},
		{Key: "search.phones", Value: "11987654321"},
		{Key: "amount", Value: bson.D{{Key: "$gte", Value: int64(500)}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listFilter =\n%v\nwant\n%v", got, want)
	}
}

func TestDriverErrorsBecomePortErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"no document is not found", mdb.ErrNoDocuments, domain.ErrNotFound},
		{"a duplicate key is a duplicate", mdb.WriteException{WriteErrors: []mdb.WriteError{{Code: 11000}}}, ports.ErrDuplicate},
		{"a timeout is unavailable", context.DeadlineExceeded, ports.ErrUnavailable},
		{"a closed client is unavailable", mdb.ErrClientDisconnected, ports.ErrUnavailable},
		{"a primary stepping down is unavailable", mdb.CommandError{Code: 189}, ports.ErrUnavailable},
		{"a driver's own cancellation is unavailable", context.Canceled, ports.ErrUnavailable},
		{"a server abandoning the work at shutdown is unavailable (FerretDB's way)",
			mdb.CommandError{Code: 1, Name: "InternalError", Message: "[msg_find.go:344] context canceled after delay"}, ports.ErrUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mapErr(context.Background(), "op", c.err); !errors.Is(got, c.want) {
				t.Errorf("mapErr(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
	t.Run("a caller's cancellation stays a cancellation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := mapErr(ctx, "op", context.Canceled); !errors.Is(got, context.Canceled) || errors.Is(got, ports.ErrUnavailable) {
			t.Errorf("mapErr = %v, want context.Canceled", got)
		}
	})
	t.Run("any other driver error keeps its text but not its type", func(t *testing.T) {
		err := mapErr(context.Background(), "op", mdb.CommandError{Code: 2, Message: "bad value"})
		var ce mdb.CommandError
		if errors.As(err, &ce) || err == nil {
			t.Errorf("mapErr let the driver's error through: %#v", err)
		}
	})
}

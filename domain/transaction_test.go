package domain_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// arrow is one move of a state table.
type arrow[S ~string] struct{ from, to S }

// documentedTxTable is the transaction state table of docs/API.md, States and transitions,
// written out independently of the domain's own table.
var documentedTxTable = []arrow[domain.TransactionStatus]{
	{domain.TxPending, domain.TxPixQRCodeGenerated},
	{domain.TxPending, domain.TxFailed},
	{domain.TxPixQRCodeGenerated, domain.TxPaid},
	{domain.TxPixQRCodeGenerated, domain.TxFailed},
	{domain.TxPaid, domain.TxProcessingRefund},
	{domain.TxProcessingRefund, domain.TxRefunded},
	{domain.TxProcessingRefund, domain.TxPaid},
	{domain.TxPaid, domain.TxBlocked},
	{domain.TxBlocked, domain.TxPaid},
	{domain.TxBlocked, domain.TxProcessingInfraction},
	{domain.TxProcessingInfraction, domain.TxInfraction},
}

func TestTransactionStatuses(t *testing.T) {
	want := []domain.TransactionStatus{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND",
		"PROCESSING_INFRACTION", "REFUNDED", "INFRACTION", "FAILED", "BLOCKED"}
	got := domain.TransactionStatuses()
	if !sameElements(got, want) {
		t.Fatalf("TransactionStatuses() = %v, want %v in any order", got, want)
	}
	for _, s := range want {
		t.Run(string(s)+" parses as itself", func(t *testing.T) {
			p, err := domain.ParseTransactionStatus(string(s))
			if err != nil || p != s {
				t.Fatalf("ParseTransactionStatus(%q) = %q, %v", s, p, err)
			}
		})
	}
	for _, s := range []string{"", "paid", "Paid", "CANCELED", "PROCESSED", " PAID"} {
		t.Run("the status "+strconvQuote(s)+" is refused", func(t *testing.T) {
			if _, err := domain.ParseTransactionStatus(s); err == nil {
				t.Fatalf("ParseTransactionStatus(%q) accepted", s)
			}
		})
	}
}

func TestTransactionStatusFinal(t *testing.T) {
	final := []domain.TransactionStatus{domain.TxRefunded, domain.TxInfraction, domain.TxFailed}
	for _, s := range domain.TransactionStatuses() {
		want := slices.Contains(final, s)
		t.Run(string(s)+" is final only if docs/API.md, States and transitions says so", func(t *testing.T) {
			if got := s.Final(); got != want {
				t.Fatalf("%s.Final() = %v, want %v", s, got, want)
			}
			leaves := false
			for _, a := range documentedTxTable {
				leaves = leaves || a.from == s
			}
			if leaves == want {
				t.Fatalf("%s: final %v but the table has arrows leaving it: %v", s, want, leaves)
			}
		})
	}
}

func TestTransactionCanMoveMatchesTheDocumentedTable(t *testing.T) {
	for _, from := range domain.TransactionStatuses() {
		for _, to := range domain.TransactionStatuses() {
			want := slices.Contains(documentedTxTable, arrow[domain.TransactionStatus]{from, to})
			if got := domain.TransactionCanMove(from, to); got != want {
				t.Errorf("TransactionCanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	t.Run("every trigger method makes one arrow of the table and every arrow has a trigger", func(t *testing.T) {
		var made []arrow[domain.TransactionStatus]
		for _, tr := range txTriggers {
			made = append(made, arrow[domain.TransactionStatus]{tr.from, tr.to})
		}
		if !sameElements(made, documentedTxTable) {
			t.Fatalf("triggers make %v, the documented table is %v", made, documentedTxTable)
		}
	})
}

func TestTransactionTriggersAllowedByTheTable(t *testing.T) {
	for _, path := range txPaths {
		for _, tr := range txTriggers {
			if tr.from != path.want {
				continue
			}
			t.Run(tr.name+" moves "+path.name+" to "+string(tr.to), func(t *testing.T) {
				tx, now := txAt(t, validOrder(), path)
				before := txStateOf(tx)
				now = now.Add(1500 * time.Millisecond)
				if err := tr.fire(tx, now); err != nil {
					t.Fatalf("%s: %v", tr.name, err)
				}
				if tx.Status() != tr.to {
					t.Fatalf("status %s, want %s", tx.Status(), tr.to)
				}
				h := tx.History()
				checkHistory(t, h, tx.CreatedAt(), tx.UpdatedAt(), tx.Status(), len(before.rec.History)+1)
				if !reflect.DeepEqual(h[:len(h)-1], before.rec.History) {
					t.Fatalf("earlier history changed: %v, was %v", h[:len(h)-1], before.rec.History)
				}
				events := tx.Events()
				if len(events) != len(before.events)+1 {
					t.Fatalf("%d events, want %d", len(events), len(before.events)+1)
				}
				ev := events[len(events)-1]
				if want := "transaction." + strings.ToLower(string(tr.to)); ev.Type != want {
					t.Fatalf("event type %q, want %q", ev.Type, want)
				}
				if !reflect.DeepEqual(ev.Transaction.Record(), tx.Record()) {
					t.Fatalf("event snapshot %+v differs from the transaction %+v", ev.Transaction.Record(), tx.Record())
				}
				if tx.Version() != before.rec.Version {
					t.Fatalf("a transition changed the version from %d to %d", before.rec.Version, tx.Version())
				}
			})
		}
	}
}

func TestTransactionTriggersRefusedByTheTable(t *testing.T) {
	for _, path := range txPaths {
		for _, tr := range txTriggers {
			if tr.from == path.want {
				continue
			}
			t.Run(tr.name+" is refused for "+path.name+" and changes nothing", func(t *testing.T) {
				tx, now := txAt(t, validOrder(), path)
				before := txStateOf(tx)
				err := tr.fire(tx, now.Add(time.Hour))
				checkInvalidTransition(t, err, "transaction", string(path.want), string(tr.to))
				if after := txStateOf(tx); !reflect.DeepEqual(after, before) {
					t.Fatalf("a refused %s changed the transaction:\n got %+v\nwant %+v", tr.name, after, before)
				}
			})
		}
	}
}

func checkInvalidTransition(t testing.TB, err error, resource, from, to string) {
	t.Helper()
	if !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("error %v does not match ErrInvalidTransition", err)
	}
	var ite *domain.InvalidTransitionError
	if !errors.As(err, &ite) {
		t.Fatalf("error %v is not an *InvalidTransitionError", err)
	}
	if ite.Resource != resource || ite.From != from || ite.To != to {
		t.Fatalf("InvalidTransitionError{%q, %q, %q}, want {%q, %q, %q}", ite.Resource, ite.From, ite.To, resource, from, to)
	}
	if want := resource + " cannot move from " + from + " to " + to; ite.Error() != want {
		t.Fatalf("message %q, want %q", ite.Error(), want)
	}
}

func TestTransactionFinalStatusesRefuseEveryTrigger(t *testing.T) {
	for _, path := range txPaths {
		if !path.want.Final() {
			continue
		}
		t.Run(path.name+" refuses every trigger", func(t *testing.T) {
			tx, now := txAt(t, validOrder(), path)
			before := txStateOf(tx)
			for _, tr := range txTriggers {
				now = now.Add(time.Hour)
				if err := tr.fire(tx, now); !errors.Is(err, domain.ErrInvalidTransition) {
					t.Fatalf("%s from %s: error %v, want ErrInvalidTransition", tr.name, path.want, err)
				}
			}
			if !reflect.DeepEqual(txStateOf(tx), before) {
				t.Fatalf("refused triggers changed a final transaction")
			}
		})
	}
}

func TestTransactionFieldsSetByTransitions(t *testing.T) {
	t.Run("a new transaction has no payment data", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		if tx.Pix() != nil || tx.AmountPaid() != nil || tx.PaymentDate() != nil || tx.FeeAmount() != nil ||
			tx.InfractionDate() != nil || tx.Payer() != nil || tx.Receiver() != nil ||
			tx.EndToEnd() != "" || tx.EndToEndRefund() != "" || tx.ErrorMessage() != "" {
			t.Fatalf("a new transaction carries data of later statuses: %+v", tx.Record())
		}
	})

	t.Run("AttachPix keeps the charge with its expiry in UTC", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		pix := pixFor(tx, base.In(saoPaulo))
		if err := tx.AttachPix(pix, base); err != nil {
			t.Fatal(err)
		}
		got := tx.Pix()
		if got == nil || got.URI != pix.URI || string(got.QRCodePNG) != string(pix.QRCodePNG) ||
			!got.ExpiresAt.Equal(pix.ExpiresAt) || got.ExpiresAt.Location() != time.UTC {
			t.Fatalf("Pix() = %+v, want %+v in UTC", got, pix)
		}
		if want := base.Add(domain.DefaultExpirationSeconds * time.Second); !got.ExpiresAt.Equal(want) {
			t.Fatalf("expires at %v, want %v", got.ExpiresAt, want)
		}
	})

	t.Run("Pay sets amountPaid, paymentDate, feeAmount, endToEnd, payer and receiver", func(t *testing.T) {
		tx, now := txAt(t, validOrder(), txPaths[1])
		p := paymentAt(now.Add(time.Second + 654321*time.Nanosecond).In(saoPaulo))
		p.AmountPaid = 9_990 // the acquirer's figure wins over the order's
		p.Fee = 123
		if err := tx.Pay(p, now.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		if tx.AmountPaid() == nil || *tx.AmountPaid() != 9_990 {
			t.Fatalf("AmountPaid() = %v, want 9990", tx.AmountPaid())
		}
		if tx.FeeAmount() == nil || *tx.FeeAmount() != 123 {
			t.Fatalf("FeeAmount() = %v, want 123", tx.FeeAmount())
		}
		if d := tx.PaymentDate(); d == nil || !d.Equal(ms(p.PaidAt)) || d.Location() != time.UTC {
			t.Fatalf("PaymentDate() = %v, want %v in UTC", d, ms(p.PaidAt))
		}
		if tx.EndToEnd() != p.EndToEnd {
			t.Fatalf("EndToEnd() = %q, want %q", tx.EndToEnd(), p.EndToEnd)
		}
		if !reflect.DeepEqual(tx.Payer(), p.Payer) || !reflect.DeepEqual(tx.Receiver(), p.Receiver) {
			t.Fatalf("payer %+v receiver %+v, want %+v and %+v", tx.Payer(), tx.Receiver(), p.Payer, p.Receiver)
		}
		if tx.Amount() != validOrder().Amount {
			t.Fatalf("paying changed the order amount to %d", tx.Amount())
		}
	})

	t.Run("OpenDispute sets infractionDate to the moment the dispute opened", func(t *testing.T) {
		tx, now := txAt(t, validOrder(), txPaths[2])
		at := now.Add(3*time.Second + 456789*time.Nanosecond).In(saoPaulo)
		if err := tx.OpenDispute(at); err != nil {
			t.Fatal(err)
		}
		if d := tx.InfractionDate(); d == nil || !d.Equal(ms(at)) || d.Location() != time.UTC {
			t.Fatalf("InfractionDate() = %v, want %v", d, ms(at))
		}
	})

	for _, c := range []struct {
		path    txPath
		trigger string
		want    string
	}{
		{txPaths[5], "ConfirmRefund", "D99999999202611221119refund00001"},
		{txPaths[8], "CompleteInfraction", "D99999999202611221119infract001"},
	} {
		t.Run(c.trigger+" sets endToEndRefund", func(t *testing.T) {
			tx, now := txAt(t, validOrder(), c.path)
			if err := txTriggerNamed(c.trigger).fire(tx, now.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if tx.EndToEndRefund() != c.want {
				t.Fatalf("EndToEndRefund() = %q, want %q", tx.EndToEndRefund(), c.want)
			}
			if tx.AmountPaid() == nil || *tx.AmountPaid() != 10_000 || tx.EndToEnd() == "" {
				t.Fatalf("the payment data was lost: %+v", tx.Record())
			}
		})
	}

	t.Run("FailEmission sets errorMessage and releases the idempotency key", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		if err := tx.FailEmission("emitter timed out", base.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if tx.ErrorMessage() != "emitter timed out" {
			t.Fatalf("ErrorMessage() = %q", tx.ErrorMessage())
		}
		if tx.Idempotency() != (domain.Idempotency{}) {
			t.Fatalf("Idempotency() = %+v, want the key released", tx.Idempotency())
		}
	})

	t.Run("no other transition releases the idempotency key", func(t *testing.T) {
		for _, path := range txPaths {
			if slices.Contains(path.triggers, "FailEmission") {
				continue
			}
			tx, _ := txAt(t, validOrder(), path)
			if tx.Idempotency() != validIdempotency() {
				t.Fatalf("%s: Idempotency() = %+v", path.name, tx.Idempotency())
			}
		}
	})

	t.Run("Expire sets the errorMessage PIX QR code expired", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[11])
		if tx.ErrorMessage() != "PIX QR code expired" || domain.ExpiredMessage != "PIX QR code expired" {
			t.Fatalf("ErrorMessage() = %q", tx.ErrorMessage())
		}
	})

	t.Run("FailRefund sets errorMessage and keeps the payment", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[3])
		if tx.ErrorMessage() != "acquirer refused the refund" {
			t.Fatalf("ErrorMessage() = %q", tx.ErrorMessage())
		}
		if tx.AmountPaid() == nil || *tx.AmountPaid() != 10_000 || *tx.FeeAmount() != 199 || tx.EndToEndRefund() != "" {
			t.Fatalf("a failed refund changed the payment: %+v", tx.Record())
		}
	})

	t.Run("a new refund request clears the error of the failed one", func(t *testing.T) {
		tx, now := txAt(t, validOrder(), txPaths[3])
		if err := tx.RequestRefund(nextRefund(tx), now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if tx.ErrorMessage() != "" {
			t.Fatalf("ErrorMessage() = %q, want empty", tx.ErrorMessage())
		}
	})

	t.Run("a rejected dispute keeps the infraction date and the payment", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[4])
		if tx.InfractionDate() == nil || tx.AmountPaid() == nil || *tx.AmountPaid() != 10_000 {
			t.Fatalf("RejectDispute lost data: %+v", tx.Record())
		}
	})
}

func TestTransactionPayRefusesAnInvalidPayment(t *testing.T) {
	for _, c := range []struct {
		name      string
		paid, fee domain.Cents
	}{
		{"a negative amount paid", -1, 0},
		{"a negative fee", 10_000, -1},
		{"a fee above the amount paid", 100, 101},
	} {
		t.Run(c.name+" is refused and changes nothing", func(t *testing.T) {
			tx, now := txAt(t, validOrder(), txPaths[1])
			before := txStateOf(tx)
			p := paymentAt(now)
			p.AmountPaid, p.Fee = c.paid, c.fee
			if err := tx.Pay(p, now.Add(time.Second)); !errors.Is(err, domain.ErrInvalidOrder) {
				t.Fatalf("Pay: error %v, want ErrInvalidOrder", err)
			}
			if !reflect.DeepEqual(txStateOf(tx), before) {
				t.Fatal("a refused payment changed the transaction")
			}
		})
	}
	t.Run("a fee equal to the amount paid is accepted", func(t *testing.T) {
		tx, now := txAt(t, validOrder(), txPaths[1])
		p := paymentAt(now)
		p.AmountPaid, p.Fee = 100, 100
		if err := tx.Pay(p, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTransactionExpire(t *testing.T) {
	setup := func(t *testing.T) (*domain.Transaction, time.Time) {
		tx, _ := txAt(t, validOrder(), txPaths[1])
		return tx, tx.Pix().ExpiresAt
	}
	for _, c := range []struct {
		name    string
		offset  time.Duration
		expired bool
	}{
		{"a millisecond before the expiry", -time.Millisecond, false},
		{"a nanosecond before the expiry", -time.Nanosecond, false},
		{"exactly at the expiry", 0, true},
		{"a day after the expiry", 24 * time.Hour, true},
	} {
		t.Run("Expire "+c.name+" follows Expired", func(t *testing.T) {
			tx, expiresAt := setup(t)
			at := expiresAt.Add(c.offset)
			if tx.Expired(at) != c.expired {
				t.Fatalf("Expired(%v) = %v, want %v", at, !c.expired, c.expired)
			}
			before := txStateOf(tx)
			err := tx.Expire(at)
			if !c.expired {
				if !errors.Is(err, domain.ErrNotExpired) || errors.Is(err, domain.ErrInvalidTransition) {
					t.Fatalf("Expire before the expiry: error %v, want ErrNotExpired only", err)
				}
				if !reflect.DeepEqual(txStateOf(tx), before) {
					t.Fatal("a refused Expire changed the transaction")
				}
				return
			}
			if err != nil {
				t.Fatalf("Expire: %v", err)
			}
			if tx.Status() != domain.TxFailed || tx.ErrorMessage() != domain.ExpiredMessage {
				t.Fatalf("status %s message %q", tx.Status(), tx.ErrorMessage())
			}
			if !tx.UpdatedAt().Equal(ms(at)) {
				t.Fatalf("FAILED entered at %v, want %v", tx.UpdatedAt(), ms(at))
			}
		})
	}
	t.Run("a transaction that is not awaiting payment is never expired", func(t *testing.T) {
		for _, path := range txPaths {
			if path.want == domain.TxPixQRCodeGenerated {
				continue
			}
			tx, now := txAt(t, validOrder(), path)
			if tx.Expired(now.Add(1000 * time.Hour)) {
				t.Fatalf("%s: Expired() = true", path.name)
			}
		}
	})
}

func TestNewTransaction(t *testing.T) {
	item := func(price domain.Cents, qty int) []domain.Item {
		return []domain.Item{{Title: "Item", UnitPrice: price, Quantity: qty}}
	}
	items := func(n int) []domain.Item {
		out := make([]domain.Item, n)
		for i := range out {
			out[i] = domain.Item{Title: "Item", UnitPrice: 100, Quantity: 1}
		}
		return out
	}
	cases := []struct {
		name   string
		change func(o *domain.Order)
		ok     bool
	}{
		{"a valid order is accepted", func(o *domain.Order) {}, true},
		{"an amount of 0 is refused", func(o *domain.Order) { o.Amount = 0 }, false},
		{"a negative amount is refused", func(o *domain.Order) { o.Amount = -1 }, false},
		{"an amount of 1 is accepted", func(o *domain.Order) { o.Amount = 1 }, true},
		{"an amount of 10000000 is accepted", func(o *domain.Order) { o.Amount = 10_000_000 }, true},
		{"an amount of 10000001 is refused", func(o *domain.Order) { o.Amount = 10_000_001 }, false},
		{"a payment method other than PIX is refused", func(o *domain.Order) { o.PaymentMethod = "BOLETO" }, false},
		{"an empty payment method is refused", func(o *domain.Order) { o.PaymentMethod = "" }, false},
		{"an expiration of 59 s is refused", func(o *domain.Order) { o.ExpirationSeconds = 59 }, false},
		{"an expiration of 60 s is accepted", func(o *domain.Order) { o.ExpirationSeconds = 60 }, true},
		{"an expiration of 86400 s is accepted", func(o *domain.Order) { o.ExpirationSeconds = 86400 }, true},
		{"an expiration of 86401 s is refused", func(o *domain.Order) { o.ExpirationSeconds = 86401 }, false},
		{"an expiration of 0 s is refused", func(o *domain.Order) { o.ExpirationSeconds = 0 }, false},
		{"a physical product without an address is refused", func(o *domain.Order) { o.IsInfoProduct = false }, false},
		{"a physical product with an address is accepted", func(o *domain.Order) {
			o.IsInfoProduct = false
			o.Address = &domain.Address{ZipCode: "01310100", Number: "1000", Street: "Av. Paulista", City: "São Paulo", State: "SP", Country: "BR"}
		}, true},
		{"an info product without an address is accepted", func(o *domain.Order) { o.Address = nil }, true},
		{"no items are accepted", func(o *domain.Order) { o.Items = nil }, true},
		{"100 items are accepted", func(o *domain.Order) { o.Items = items(100) }, true},
		{"101 items are refused", func(o *domain.Order) { o.Items = items(101) }, false},
		{"an item priced 0 is refused", func(o *domain.Order) { o.Items = item(0, 1) }, false},
		{"an item priced 1 is accepted", func(o *domain.Order) { o.Items = item(1, 1) }, true},
		{"an item priced 10000000 is accepted", func(o *domain.Order) { o.Items = item(10_000_000, 1) }, true},
		{"an item priced 10000001 is refused", func(o *domain.Order) { o.Items = item(10_000_001, 1) }, false},
		{"an item of quantity 0 is refused", func(o *domain.Order) { o.Items = item(100, 0) }, false},
		{"an item of negative quantity is refused", func(o *domain.Order) { o.Items = item(100, -1) }, false},
		{"an item of quantity 100 is accepted", func(o *domain.Order) { o.Items = item(100, 100) }, true},
		{"an item of quantity 101 is refused", func(o *domain.Order) { o.Items = item(100, 101) }, false},
		{"a bad item after good ones is refused", func(o *domain.Order) { o.Items = append(items(3), item(100, 0)...) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := validOrder()
			c.change(&o)
			tx, err := domain.NewTransaction(newID(), newToken(), accountID, acquirer, o, validIdempotency(), base)
			if c.ok {
				if err != nil || tx == nil {
					t.Fatalf("NewTransaction: %v", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalidOrder) || tx != nil {
				t.Fatalf("NewTransaction = %v, %v; want nil and ErrInvalidOrder", tx, err)
			}
		})
	}

	for _, amount := range []domain.Cents{0, 10_000_001} {
		t.Run("an amount out of range reports the amount", func(t *testing.T) {
			o := validOrder()
			o.Amount = amount
			_, err := domain.NewTransaction(newID(), newToken(), accountID, acquirer, o, validIdempotency(), base)
			var oor domain.ErrAmountOutOfRange
			if !errors.As(err, &oor) || oor.Amount != amount {
				t.Fatalf("error %v, want ErrAmountOutOfRange{%d}", err, amount)
			}
		})
	}

	for _, c := range []struct{ name, id, account, acq string }{
		{"an empty id is refused", "", accountID, acquirer},
		{"an empty account is refused", newID(), "", acquirer},
		{"an empty acquirer is refused", newID(), accountID, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := domain.NewTransaction(c.id, newToken(), c.account, c.acq, validOrder(), validIdempotency(), base); !errors.Is(err, domain.ErrInvalidOrder) {
				t.Fatalf("error %v, want ErrInvalidOrder", err)
			}
		})
	}

	t.Run("a new transaction is PENDING, created now in UTC at millisecond precision", func(t *testing.T) {
		id := newID()
		o := validOrder()
		now := base.In(saoPaulo)
		tx, err := domain.NewTransaction(id, newToken(), accountID, acquirer, o, validIdempotency(), now)
		if err != nil {
			t.Fatal(err)
		}
		if tx.ID() != id || tx.AccountID() != accountID || tx.Acquirer() != acquirer ||
			tx.Amount() != o.Amount || !reflect.DeepEqual(tx.Order(), o) || tx.Idempotency() != validIdempotency() {
			t.Fatalf("getters do not return the inputs: %+v", tx.Record())
		}
		if tx.Status() != domain.TxPending {
			t.Fatalf("status %s, want PENDING", tx.Status())
		}
		if !tx.CreatedAt().Equal(ms(base)) || tx.CreatedAt().Location() != time.UTC {
			t.Fatalf("CreatedAt() = %v, want %v", tx.CreatedAt(), ms(base))
		}
		if !tx.UpdatedAt().Equal(tx.CreatedAt()) {
			t.Fatalf("UpdatedAt() = %v, want CreatedAt %v", tx.UpdatedAt(), tx.CreatedAt())
		}
		checkHistory(t, tx.History(), tx.CreatedAt(), tx.UpdatedAt(), domain.TxPending, 1)
		if len(tx.Events()) != 0 {
			t.Fatalf("creating a transaction raised %d events; PENDING raises none", len(tx.Events()))
		}
		if tx.Version() != 0 {
			t.Fatalf("Version() = %d", tx.Version())
		}
	})
}

func TestTransactionHistory(t *testing.T) {
	t.Run("durations are the next entry's date minus the entry's own, nil for the last", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		if err := tx.AttachPix(pixFor(tx, base), base.Add(1500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := tx.Pay(paymentAt(base), base.Add(4*time.Second)); err != nil {
			t.Fatal(err)
		}
		h := tx.History()
		want := []*int64{ptr(int64(1500)), ptr(int64(2500)), nil}
		for i := range h {
			got := domain.DurationMillis(h, i)
			if !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("DurationMillis(h, %d) = %v, want %v", i, deref(got), deref(want[i]))
			}
		}
		if got := []domain.TransactionStatus{h[0].Status, h[1].Status, h[2].Status}; !slices.Equal(got, []domain.TransactionStatus{domain.TxPending, domain.TxPixQRCodeGenerated, domain.TxPaid}) {
			t.Fatalf("statuses %v", got)
		}
		if !tx.UpdatedAt().Equal(ms(base.Add(4 * time.Second))) {
			t.Fatalf("UpdatedAt() = %v", tx.UpdatedAt())
		}
	})

	t.Run("DurationMillis of an index past the end is nil", func(t *testing.T) {
		h := newTx(t, validOrder(), base).History()
		if domain.DurationMillis(h, 1) != nil || domain.DurationMillis(h, 5) != nil ||
			domain.DurationMillis[domain.TransactionStatus](nil, 0) != nil {
			t.Fatal("want nil")
		}
	})

	t.Run("dates never go backwards when the clock steps back", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		if err := tx.AttachPix(pixFor(tx, base), base.Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := tx.Pay(paymentAt(base), base.Add(5*time.Second)); err != nil { // NTP stepped back
			t.Fatal(err)
		}
		if err := tx.RequestRefund(nextRefund(tx), base.Add(-time.Hour)); err != nil { // before the creation, even
			t.Fatal(err)
		}
		h := tx.History()
		checkHistory(t, h, tx.CreatedAt(), tx.UpdatedAt(), domain.TxProcessingRefund, 4)
		for i := 1; i < len(h); i++ {
			if !h[i].Date.Equal(ms(base.Add(10 * time.Second))) {
				t.Fatalf("history[%d] at %v, want the latest date seen %v", i, h[i].Date, ms(base.Add(10*time.Second)))
			}
		}
		if d := domain.DurationMillis(h, 1); d == nil || *d != 0 {
			t.Fatalf("duration after a clock step back is %v, want 0", deref(d))
		}
	})

	t.Run("the clock stepping back within the creation millisecond keeps the history ordered", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		if err := tx.AttachPix(pixFor(tx, base), base.Add(-time.Nanosecond)); err != nil {
			t.Fatal(err)
		}
		checkHistory(t, tx.History(), tx.CreatedAt(), tx.UpdatedAt(), domain.TxPixQRCodeGenerated, 2)
	})

	t.Run("History returns a copy the caller may change", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[2])
		h := tx.History()
		h[0].Status = domain.TxRefunded
		h[1].Date = time.Time{}
		checkHistory(t, tx.History(), tx.CreatedAt(), tx.UpdatedAt(), domain.TxPaid, 3)
	})

	for _, path := range txPaths {
		t.Run("the history of "+path.name+" lists every status entered", func(t *testing.T) {
			tx, _ := txAt(t, validOrder(), path)
			h := tx.History()
			checkHistory(t, h, tx.CreatedAt(), tx.UpdatedAt(), tx.Status(), 1+len(path.triggers))
			for i, name := range path.triggers {
				if h[i+1].Status != txTriggerNamed(name).to {
					t.Fatalf("history[%d] = %s, want %s", i+1, h[i+1].Status, txTriggerNamed(name).to)
				}
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestTransactionEvents(t *testing.T) {
	t.Run("each status entered after PENDING raises one event of its type", func(t *testing.T) {
		want := map[domain.TransactionStatus]string{
			domain.TxPixQRCodeGenerated:   "transaction.pix_qrcode_generated",
			domain.TxPaid:                 "transaction.paid",
			domain.TxProcessingRefund:     "transaction.processing_refund",
			domain.TxRefunded:             "transaction.refunded",
			domain.TxBlocked:              "transaction.blocked",
			domain.TxProcessingInfraction: "transaction.processing_infraction",
			domain.TxInfraction:           "transaction.infraction",
			domain.TxFailed:               "transaction.failed",
		}
		for _, path := range txPaths {
			tx, _ := txAt(t, validOrder(), path)
			events := tx.Events()
			h := tx.History()
			if len(events) != len(h)-1 {
				t.Fatalf("%s: %d events for %d statuses entered after PENDING", path.name, len(events), len(h)-1)
			}
			for i, ev := range events {
				entry := h[i+1]
				if ev.Type != want[entry.Status] || ev.Type != domain.EventType(domain.ResourceTransaction, string(entry.Status)) {
					t.Fatalf("%s: event %d type %q, want %q", path.name, i, ev.Type, want[entry.Status])
				}
				if ev.Kind != domain.ResourceTransaction || ev.ResourceID != tx.ID() || ev.AccountID != accountID ||
					ev.WebhookURL != webhookURL || !ev.CreatedAt.Equal(entry.Date) || ev.Withdrawal != nil {
					t.Fatalf("%s: event %d = %+v", path.name, i, ev)
				}
				if ev.Transaction == nil || ev.Transaction.Status() != entry.Status ||
					!reflect.DeepEqual(ev.Transaction.History(), h[:i+2]) {
					t.Fatalf("%s: event %d snapshot is not the transaction right after entering %s", path.name, i, entry.Status)
				}
				if len(ev.Transaction.Events()) != 0 {
					t.Fatalf("%s: a snapshot carries %d events", path.name, len(ev.Transaction.Events()))
				}
			}
		}
	})

	t.Run("a transaction without a webhook URL raises no events", func(t *testing.T) {
		o := validOrder()
		o.WebhookURL = ""
		for _, path := range txPaths {
			tx, _ := txAt(t, o, path)
			if n := len(tx.Events()); n != 0 {
				t.Fatalf("%s: %d events", path.name, n)
			}
		}
	})

	t.Run("a snapshot is not changed by later transitions", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		now := base
		var saved []txState
		for _, name := range []string{"AttachPix", "Pay", "RequestRefund", "FailRefund", "OpenDispute", "AcceptDispute", "CompleteInfraction"} {
			now = now.Add(time.Second)
			if err := txTriggerNamed(name).fire(tx, now); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			events := tx.Events()
			saved = append(saved, txStateOf(events[len(events)-1].Transaction))
		}
		for i, ev := range tx.Events() {
			if got := txStateOf(ev.Transaction); !reflect.DeepEqual(got, saved[i]) {
				t.Fatalf("event %d (%s) snapshot changed:\n got %+v\nwant %+v", i, ev.Type, got.rec, saved[i].rec)
			}
		}
		if saved[0].rec.AmountPaid != nil || saved[1].rec.InfractionDate != nil || saved[2].rec.Status != domain.TxProcessingRefund ||
			saved[3].rec.ErrorMessage != "acquirer refused the refund" || saved[5].rec.EndToEndRefund != "" {
			t.Fatal("snapshots do not show the state right after their transitions")
		}
	})

	t.Run("event ids are lowercase UUID v4 and distinct", func(t *testing.T) {
		seen := map[string]bool{}
		for range 50 {
			for _, path := range txPaths {
				tx, _ := txAt(t, validOrder(), path)
				for _, ev := range tx.Events() {
					if !domain.IsUUIDv4(ev.ID) || strings.ToLower(ev.ID) != ev.ID {
						t.Fatalf("event id %q is not a lowercase UUID v4", ev.ID)
					}
					if seen[ev.ID] {
						t.Fatalf("event id %q repeated", ev.ID)
					}
					seen[ev.ID] = true
				}
			}
		}
	})

	t.Run("Events returns a copy and MarkStored forgets them", func(t *testing.T) {
		tx, now := txAt(t, validOrder(), txPaths[2])
		ev := tx.Events()
		ev[0].Type = "changed"
		if tx.Events()[0].Type != "transaction.pix_qrcode_generated" {
			t.Fatal("Events() exposes the transaction's own slice")
		}
		tx.MarkStored(tx.Version() + 1)
		if len(tx.Events()) != 0 {
			t.Fatal("MarkStored kept events")
		}
		if err := tx.RequestRefund(nextRefund(tx), now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if got := tx.Events(); len(got) != 1 || got[0].Type != "transaction.processing_refund" {
			t.Fatalf("after MarkStored and a transition: %+v", got)
		}
	})

	t.Run("EventType joins the resource and the lower-cased status", func(t *testing.T) {
		for _, c := range []struct {
			kind   domain.ResourceKind
			status string
			want   string
		}{
			{domain.ResourceTransaction, "PIX_QRCODE_GENERATED", "transaction.pix_qrcode_generated"},
			{domain.ResourceTransaction, "PAID", "transaction.paid"},
			{domain.ResourceWithdrawal, "PROCESSED", "withdrawal.processed"},
			{domain.ResourceWithdrawal, "REFUNDED", "withdrawal.refunded"},
		} {
			if got := domain.EventType(c.kind, c.status); got != c.want {
				t.Fatalf("EventType(%s, %s) = %q, want %q", c.kind, c.status, got, c.want)
			}
		}
	})
}

func TestTransactionRecordRoundTrip(t *testing.T) {
	for _, path := range txPaths {
		t.Run(path.name+" survives Record and UnmarshalTransactionFromDatabase", func(t *testing.T) {
			tx, now := txAt(t, validOrder(), path)
			tx.MarkStored(7)
			rec := tx.Record()
			back := domain.UnmarshalTransactionFromDatabase(rec)
			if !reflect.DeepEqual(back.Record(), rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back.Record(), rec)
			}
			if back.Version() != 7 || back.Status() != tx.Status() || !back.UpdatedAt().Equal(tx.UpdatedAt()) ||
				!back.CreatedAt().Equal(tx.CreatedAt()) {
				t.Fatalf("getters differ after the round trip")
			}
			if len(back.Events()) != 0 {
				t.Fatalf("a loaded transaction carries %d events", len(back.Events()))
			}
			// The rebuilt transaction goes on exactly as the original would.
			for _, tr := range txTriggers {
				a, b := domain.UnmarshalTransactionFromDatabase(tx.Record()), domain.UnmarshalTransactionFromDatabase(tx.Record())
				errA, errB := tr.fire(a, now.Add(time.Second)), tr.fire(b, now.Add(time.Second))
				if (errA == nil) != (tr.from == path.want) || (errA == nil) != (errB == nil) {
					t.Fatalf("%s on a rebuilt %s: %v", tr.name, path.want, errA)
				}
			}
		})
	}

	t.Run("the creation date of a record comes back in UTC", func(t *testing.T) {
		tx := newTx(t, validOrder(), base)
		rec := tx.Record()
		rec.CreatedAt = rec.CreatedAt.In(saoPaulo)
		back := domain.UnmarshalTransactionFromDatabase(rec)
		if back.CreatedAt().Location() != time.UTC || !back.CreatedAt().Equal(tx.CreatedAt()) {
			t.Fatalf("CreatedAt() = %v", back.CreatedAt())
		}
	})

	t.Run("Record returns a history the caller may change", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[2])
		rec := tx.Record()
		rec.History[0].Status = domain.TxFailed
		if tx.History()[0].Status != domain.TxPending {
			t.Fatal("Record() exposes the transaction's own history")
		}
	})
}

// sameElements tells whether a and b hold the same elements, ignoring order.
func sameElements[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[T]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func strconvQuote(s string) string { return "\"" + s + "\"" }

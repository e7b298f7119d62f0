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
	tx, err := domain.NewTransaction("3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d", "payment-token-documents-01", "acc-1", "SANDBOX", order,
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

func TestAChargeThePSPMadeSurvivesItsDocument(t *testing.T) {
	order := domain.Order{Amount: 1000, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 1800}
	tx, err := domain.NewTransaction("0b0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d", "payment-token-documents-02", "acc-1", "APIPIX", order,
		domain.Idempotency{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	created := t0.Add(-800 * time.Millisecond)
	if err := tx.AttachPix(domain.PixResponse{URI: "000201", QRCodePNG: []byte("\x89PNG"), ExpiresAt: created.Add(1800 * time.Second),
		Location: domain.PixLocation{CobTxID: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234"},
		PSP:      domain.PSPCharge{LocationID: 42, Location: "psp.example/qr/v2/abc", Revision: 1, CreatedAt: created}}, t0); err != nil {
		t.Fatal(err)
	}
	doc := fromTransaction(tx)
	if doc.Fields.Pix.Location != "" || doc.Fields.Pix.LocKey != "" || doc.Fields.Pix.CobTxID != "ABCDEFGHIJKLMNOPQRSTUVWXYZ234" {
		t.Fatalf("indexed fields %+v: the txid only, no location of pixgate's", doc.Fields.Pix)
	}
	var back txSnapshot
	roundTrip(t, doc, &back)
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
	want := a.Record()
	want.Version = 7
	if got, err := back.toAccount(); err != nil || !reflect.DeepEqual(got.Record(), want) || back.Version != 7 {
		t.Errorf("account read back %+v (version %d), %v; want %+v", got, back.Version, err, want)
	}
	back.Status = "suspended"
	if _, err := back.toAccount(); err == nil {
		t.Error("an account stored with an unknown status was read back")
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

func TestRefundsSurviveTheirDocument(t *testing.T) {
	tx := richTransaction(t)
	if err := tx.RejectDispute(t0.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := domain.RefundRequest{ID: "R1", Amount: 990, Reason: "broken", Idempotency: domain.Idempotency{Key: "r-1", Fingerprint: "sha256:cd"}}
	if err := tx.RequestRefund(req, t0.Add(11*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := tx.ConfirmRefund("R1", "D1", t0.Add(12*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := tx.RequestRefund(domain.RefundRequest{ID: "R2", Amount: 10}, t0.Add(13*time.Second)); err != nil {
		t.Fatal(err)
	}
	var back txSnapshot
	roundTrip(t, fromTransaction(tx), &back)
	got, err := back.toTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if want := tx.Record(); !reflect.DeepEqual(got.Record(), want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got.Record().Refunds, want.Refunds)
	}
}

// legacyDoc is a transaction document as the version before refunds were kept wrote it: a
// full refund in the status and endToEndRefund only.
func legacyDoc(t *testing.T, status domain.TransactionStatus) txSnapshot {
	t.Helper()
	tx := richTransaction(t) // BLOCKED
	if err := tx.RejectDispute(t0.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := tx.RequestRefund(domain.RefundRequest{ID: "X"}, t0.Add(11*time.Second)); err != nil {
		t.Fatal(err)
	}
	if status == domain.TxRefunded {
		if err := tx.ConfirmRefund("X", "D77", t0.Add(12*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	d := fromTransaction(tx)
	d.Fields.Refunds = nil
	return d
}

func TestALegacyRefundIsRebuiltOnRead(t *testing.T) {
	for _, c := range []struct {
		status domain.TransactionStatus
		want   domain.RefundStatus
		e2e    string
	}{{domain.TxProcessingRefund, domain.RefundProcessing, ""}, {domain.TxRefunded, domain.RefundRefunded, "D77"}} {
		t.Run("a transaction "+string(c.status)+" without refunds gets one refund of everything paid", func(t *testing.T) {
			var back txSnapshot
			roundTrip(t, legacyDoc(t, c.status), &back)
			got, err := back.toTransaction()
			if err != nil {
				t.Fatal(err)
			}
			rs := got.Refunds()
			if len(rs) != 1 {
				t.Fatalf("refunds = %+v, want one", rs)
			}
			r := rs[0]
			if len(r.ID) != 32 || r.Amount != *got.AmountPaid() || r.Status != c.want || r.EndToEndRefund != c.e2e || r.Step != 5 ||
				got.History()[r.Step].Status != domain.TxProcessingRefund {
				t.Errorf("refund = %+v, want 32 characters, %d cents, %s, e2e %q, step 5", r, *got.AmountPaid(), c.want, c.e2e)
			}
			again, _ := back.toTransaction()
			if again.Refunds()[0].ID != r.ID {
				t.Errorf("the rebuilt refund's id changes between reads: %s, %s", r.ID, again.Refunds()[0].ID)
			}
			// The audit finds the refund's entries in the rebuilt transaction.
			var kinds []domain.MovementType
			for _, p := range domain.ImpliedTransactionPostings(got.Record()) {
				kinds = append(kinds, p.Type)
			}
			want := []domain.MovementType{domain.MovePayment, domain.MoveFee, domain.MoveDisputeHold, domain.MoveDisputeRelease, domain.MoveRefundHold}
			if c.status == domain.TxRefunded {
				want = append(want, domain.MoveRefund)
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("implied postings %v, want %v", kinds, want)
			}
		})
	}
	t.Run("a paid transaction without refunds gets none", func(t *testing.T) {
		var back txSnapshot
		roundTrip(t, fromTransaction(richTransaction(t)), &back)
		if got, err := back.toTransaction(); err != nil || got.Refunds() != nil {
			t.Errorf("refunds = %+v, %v; want none", got.Refunds(), err)
		}
	})
}

func TestAStatusThisProgramDoesNotKnowIsRefused(t *testing.T) {
	d := fromTransaction(richTransaction(t))
	d.Fields.Status = "SETTLED"
	if _, err := d.toTransaction(); err == nil {
		t.Error("a transaction in SETTLED was read")
	}
	d = fromTransaction(richTransaction(t))
	d.Fields.History[1].Status = "paid"
	if _, err := d.toTransaction(); err == nil {
		t.Error("a history entry in paid was read")
	}
}

func TestTheOldBalanceRules(t *testing.T) {
	paid, fee := domain.Cents(1000), domain.Cents(30)
	tx := func(s domain.TransactionStatus) domain.TransactionRecord {
		return domain.TransactionRecord{Status: s, AmountPaid: &paid, FeeAmount: &fee}
	}
	for _, c := range []struct {
		status domain.TransactionStatus
		want   domain.LedgerBalance
	}{
		{domain.TxPaid, domain.LedgerBalance{Available: 970}},
		{domain.TxBlocked, domain.LedgerBalance{Blocked: 970}},
		{domain.TxProcessingRefund, domain.LedgerBalance{Blocked: 970}},
		{domain.TxProcessingInfraction, domain.LedgerBalance{Blocked: 970}},
		{domain.TxRefunded, domain.LedgerBalance{}},
		{domain.TxInfraction, domain.LedgerBalance{}},
	} {
		if got := legacyTransactionBalance(tx(c.status)); got != c.want {
			t.Errorf("a %s transaction counted %+v, want %+v", c.status, got, c.want)
		}
	}
	for _, s := range domain.WithdrawalStatuses() {
		w := domain.WithdrawalRecord{Status: s, Payout: domain.Payout{Amount: 500, Fee: 5}}
		want := domain.LedgerBalance{}
		if s == domain.WdPending || s == domain.WdProcessing || s == domain.WdProcessed {
			want.Available = -505
		}
		if got := legacyWithdrawalBalance(w); got != want {
			t.Errorf("a %s withdrawal counted %+v, want %+v", s, got, want)
		}
	}
}

func TestAnEntrySurvivesItsDocument(t *testing.T) {
	p := domain.Posting{ID: "w/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: "acc", Resource: domain.ResourceWithdrawal,
		ResourceID: "w", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 505, Checked: true}
	es, err := domain.NextJournal(&domain.Entry{Seq: 4, CreatedAt: t0, BalanceAfter: domain.LedgerBalance{Available: 1000, Blocked: 7}},
		[]domain.Posting{p}, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var back entryDoc
	roundTrip(t, fromJournal(es), &back)
	if got := back.lines(); !reflect.DeepEqual(got, es) {
		t.Errorf("read back %+v, want %+v", got, es)
	}
	var pback postingDoc
	p.Checked = false
	roundTrip(t, fromPosting(p), &pback)
	if got := pback.toPosting(); got != p {
		t.Errorf("pending posting read back %+v, want %+v", got, p)
	}
}

func TestAJournalSurvivesItsDocumentLineByLine(t *testing.T) {
	pay := domain.Posting{ID: "tx/2/payment", Type: domain.MovePayment, AccountID: "acc", Resource: domain.ResourceTransaction,
		ResourceID: "tx", Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable, Amount: 1000, At: t0}
	fee := pay
	fee.ID, fee.Journal, fee.Type, fee.Debit, fee.Credit, fee.Amount = "tx/2/fee", pay.ID, domain.MoveFee, domain.LedgerAvailable, domain.LedgerFees, 10
	es, err := domain.NextJournal(&domain.Entry{Seq: 4, CreatedAt: t0, BalanceAfter: domain.LedgerBalance{Available: 5}},
		[]domain.Posting{pay, fee}, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	d := fromJournal(es)
	if d.ID != pay.ID || d.Seq != 5 || d.Last != 6 || len(d.Legs) != 1 || d.Legs[0].ID != fee.ID {
		t.Errorf("document %+v, want the payment's, numbered 5 to 6, with the fee as its second line", d)
	}
	var back entryDoc
	roundTrip(t, d, &back)
	if got := back.lines(); !reflect.DeepEqual(got, es) {
		t.Errorf("read back %+v, want %+v", got, es)
	}
	for _, q := range []domain.Posting{pay, fee} {
		var pback postingDoc
		roundTrip(t, fromPosting(q), &pback)
		if got := pback.toPosting(); got != q {
			t.Errorf("pending posting read back %+v, want %+v", got, q)
		}
	}
}

func TestPostingsPendingBeforeJournalsAreOneJournalPerDocument(t *testing.T) {
	legacy := []postingDoc{{ID: "tx/2/payment", Amount: 1000}, {ID: "tx/2/fee", Amount: 10}} // no journal field
	current := []postingDoc{fromPosting(domain.Posting{ID: "tx/3/dispute_hold", Amount: 990})}
	js := domain.Journals(pendingPostings(append(legacy, current...)))
	if len(js) != 2 || len(js[0]) != 2 || js[0][1].Journal != "tx/2/payment" || len(js[1]) != 1 || js[1][0].Journal != "" {
		t.Errorf("journals %+v, want the legacy payment and fee together, then the hold alone", js)
	}
}

func TestPostingsUpToTheLastCheckedOneGoFirst(t *testing.T) {
	pay := domain.Posting{ID: "p", Amount: 10}
	fee := domain.Posting{ID: "f", Amount: 1}
	hold := domain.Posting{ID: "h", Amount: 9, Checked: true}
	done := domain.Posting{ID: "d", Amount: 9}
	joined := domain.Posting{ID: "j", Journal: "h", Amount: 1}
	for _, c := range []struct {
		name    string
		in      []domain.Posting
		first   []domain.Posting
		pending []string
	}{
		{"unchecked postings all wait", []domain.Posting{pay, fee}, []domain.Posting{}, []string{"p", "f"}},
		{"a checked posting goes first", []domain.Posting{hold}, []domain.Posting{hold}, nil},
		{"what comes before a checked posting goes with it", []domain.Posting{pay, fee, hold, done}, []domain.Posting{pay, fee, hold}, []string{"d"}},
		{"the cut never splits a journal", []domain.Posting{hold, joined}, []domain.Posting{hold, joined}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, pending, err := splitPostings(c.in, t0)
			var ids []string
			for _, d := range pending {
				ids = append(ids, d.ID)
			}
			if err != nil || !slices.Equal(first, c.first) || !slices.Equal(ids, c.pending) {
				t.Errorf("split = %v, %v, %v; want %v, %v", first, ids, err, c.first, c.pending)
			}
		})
	}
	if _, _, err := splitPostings([]domain.Posting{{ID: "z"}}, t0); !errors.Is(err, domain.ErrInvalidPosting) {
		t.Errorf("a posting of nothing: %v, want ErrInvalidPosting", err)
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

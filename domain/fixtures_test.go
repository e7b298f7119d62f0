package domain_test

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// Shared fixtures of the domain tests: valid inputs, the triggers of both state machines as
// data, the paths that reach every status, and deep copies of aggregates to prove that a
// refused trigger changes nothing.

// base is the tests' reference instant. It carries nanoseconds on purpose: the domain keeps
// millisecond precision.
var base = time.Date(2026, 11, 22, 11, 19, 32, 123_456_789, time.UTC)

// saoPaulo is a fixed UTC-3 zone, so tests can hand the domain non-UTC times.
var saoPaulo = time.FixedZone("BRT", -3*60*60)

const (
	webhookURL = "https://merchant.example.com/hooks/pix"
	accountID  = "acc-0001"
	acquirer   = "SANDBOX"
)

func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

// clonePtr copies what p points at, so a saved state cannot change with the aggregate.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// newID returns distinct UUID-shaped ids for fixtures.
var idCounter atomic.Int64

func newID() string {
	return "00000000-0000-4000-8000-" + pad12(int(idCounter.Add(1)))
}

// newToken makes a distinct payment token of the right shape (tests need no randomness).
func newToken() string {
	return "payment-token-" + pad12(int(idCounter.Add(1)))
}

func pad12(n int) string {
	s := []byte("000000000000")
	for i := len(s) - 1; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

func holder(name, document string) *domain.AccountHolder {
	doc := domain.MustParseDocument(document)
	kind := domain.HolderPF
	if doc.Kind() == domain.CNPJ {
		kind = domain.HolderPJ
	}
	return &domain.AccountHolder{
		Type: kind, Name: name, Document: doc,
		BankAccount: domain.BankAccount{Type: "CACC", Digit: "7", ISPB: domain.SandboxISPB},
		Pix:         domain.PixKey{Type: domain.PixKeyEmail, Key: "payer@example.com"},
	}
}

// validOrder is an order NewTransaction accepts, with a webhook URL so transitions raise events.
func validOrder() domain.Order {
	return domain.Order{
		Amount:        10_000,
		PaymentMethod: domain.PaymentPIX,
		WebhookURL:    webhookURL,
		ExternalCode:  "order-0001",
		Customer: &domain.Customer{
			IP: "203.0.113.7", Name: "Fulano de Tal", Email: "fulano@example.com",
			Document: domain.MustParseDocument("529.982.247-25"), MobilePhone: "11987654321",
		},
		Seller:            &domain.Seller{Name: "Loja Exemplo", Document: domain.MustParseDocument("11.222.333/0001-81")},
		IsInfoProduct:     true,
		Items:             []domain.Item{{Title: "E-book", UnitPrice: 10_000, Quantity: 1}},
		Metadata:          []byte(`{"campaign":"black-friday"}`),
		ExpirationSeconds: domain.DefaultExpirationSeconds,
	}
}

func validIdempotency() domain.Idempotency {
	return domain.Idempotency{Key: "idem-key-0001", Fingerprint: "sha256:abc"}
}

func newTx(t testing.TB, order domain.Order, now time.Time) *domain.Transaction {
	t.Helper()
	tx, err := domain.NewTransaction(newID(), newToken(), accountID, acquirer, order, validIdempotency(), now)
	if err != nil {
		t.Fatalf("NewTransaction: %v", err)
	}
	return tx
}

// pixFor is the charge an emitter would produce for tx at now.
func pixFor(tx *domain.Transaction, now time.Time) domain.PixResponse {
	return domain.PixResponse{
		URI:       "00020101021226830014br.gov.bcb.pix2561pix.example.com/qr/v2/" + tx.ID(),
		QRCodePNG: []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a},
		ExpiresAt: now.Add(time.Duration(tx.Order().ExpirationSeconds) * time.Second),
	}
}

func paymentAt(now time.Time) domain.Payment {
	return domain.Payment{
		AmountPaid: 10_000,
		PaidAt:     now,
		EndToEnd:   "E99999999202611221119abcdefghijk",
		Payer:      holder("Beltrano da Silva", "111.444.777-35"),
		Receiver:   holder("Loja Exemplo", "11.222.333/0001-81"),
		Fee:        199,
	}
}

// txTrigger is one trigger of the transaction state table, as data.
type txTrigger struct {
	name     string
	from, to domain.TransactionStatus
	fire     func(tx *domain.Transaction, now time.Time) error
}

// expireAt is the earliest instant, not before now, at which Expire may succeed.
func expireAt(tx *domain.Transaction, now time.Time) time.Time {
	if p := tx.Pix(); p != nil && now.Before(p.ExpiresAt) {
		return p.ExpiresAt
	}
	return now
}

// txTriggers lists every trigger method with the one move it makes in the state table (docs/API.md, States and transitions).
var txTriggers = []txTrigger{
	{"AttachPix", domain.TxPending, domain.TxPixQRCodeGenerated, func(tx *domain.Transaction, now time.Time) error {
		return tx.AttachPix(pixFor(tx, now), now)
	}},
	{"FailEmission", domain.TxPending, domain.TxFailed, func(tx *domain.Transaction, now time.Time) error {
		return tx.FailEmission("emitter unavailable", now)
	}},
	{"Pay", domain.TxPixQRCodeGenerated, domain.TxPaid, func(tx *domain.Transaction, now time.Time) error {
		return tx.Pay(paymentAt(now), now)
	}},
	{"Expire", domain.TxPixQRCodeGenerated, domain.TxFailed, func(tx *domain.Transaction, now time.Time) error {
		return tx.Expire(expireAt(tx, now))
	}},
	{"RequestRefund", domain.TxPaid, domain.TxProcessingRefund, func(tx *domain.Transaction, now time.Time) error {
		return tx.RequestRefund(nextRefund(tx), now)
	}},
	{"ConfirmRefund", domain.TxProcessingRefund, domain.TxRefunded, func(tx *domain.Transaction, now time.Time) error {
		return tx.ConfirmRefund(inProgress(tx), "D99999999202611221119refund00001", now)
	}},
	{"FailRefund", domain.TxProcessingRefund, domain.TxPaid, func(tx *domain.Transaction, now time.Time) error {
		return tx.FailRefund(inProgress(tx), "acquirer refused the refund", now)
	}},
	{"OpenDispute", domain.TxPaid, domain.TxBlocked, func(tx *domain.Transaction, now time.Time) error {
		return tx.OpenDispute(now)
	}},
	{"RejectDispute", domain.TxBlocked, domain.TxPaid, func(tx *domain.Transaction, now time.Time) error {
		return tx.RejectDispute(now)
	}},
	{"AcceptDispute", domain.TxBlocked, domain.TxProcessingInfraction, func(tx *domain.Transaction, now time.Time) error {
		return tx.AcceptDispute(now)
	}},
	{"CompleteInfraction", domain.TxProcessingInfraction, domain.TxInfraction, func(tx *domain.Transaction, now time.Time) error {
		return tx.CompleteInfraction("D99999999202611221119infract001", now)
	}},
}

func txTriggerNamed(name string) txTrigger {
	for _, tr := range txTriggers {
		if tr.name == name {
			return tr
		}
	}
	panic("no trigger " + name)
}

// txPath is a way to reach a status from NewTransaction through legal triggers.
type txPath struct {
	name     string
	triggers []string
	want     domain.TransactionStatus
}

// txPaths reach every status, some of them in more than one way.
var txPaths = []txPath{
	{"a new transaction", nil, domain.TxPending},
	{"a transaction with its QR code", []string{"AttachPix"}, domain.TxPixQRCodeGenerated},
	{"a paid transaction", []string{"AttachPix", "Pay"}, domain.TxPaid},
	{"a transaction paid again after a failed refund", []string{"AttachPix", "Pay", "RequestRefund", "FailRefund"}, domain.TxPaid},
	{"a transaction paid again after a rejected dispute", []string{"AttachPix", "Pay", "OpenDispute", "RejectDispute"}, domain.TxPaid},
	{"a transaction being refunded", []string{"AttachPix", "Pay", "RequestRefund"}, domain.TxProcessingRefund},
	{"a refunded transaction", []string{"AttachPix", "Pay", "RequestRefund", "ConfirmRefund"}, domain.TxRefunded},
	{"a blocked transaction", []string{"AttachPix", "Pay", "OpenDispute"}, domain.TxBlocked},
	{"a transaction in MED refund", []string{"AttachPix", "Pay", "OpenDispute", "AcceptDispute"}, domain.TxProcessingInfraction},
	{"a transaction lost to an infraction", []string{"AttachPix", "Pay", "OpenDispute", "AcceptDispute", "CompleteInfraction"}, domain.TxInfraction},
	{"a transaction whose emission failed", []string{"FailEmission"}, domain.TxFailed},
	{"an expired transaction", []string{"AttachPix", "Expire"}, domain.TxFailed},
}

// txAt builds a transaction and walks it along path, one second per trigger. It returns the
// transaction and the instant after its last trigger.
func txAt(t testing.TB, order domain.Order, path txPath) (*domain.Transaction, time.Time) {
	t.Helper()
	now := base
	tx := newTx(t, order, now)
	for _, name := range path.triggers {
		now = now.Add(time.Second)
		tr := txTriggerNamed(name)
		if err := tr.fire(tx, now); err != nil {
			t.Fatalf("%s on the way to %s: %v", name, path.want, err)
		}
		now = tx.UpdatedAt() // Expire may have jumped to the expiry
	}
	if tx.Status() != path.want {
		t.Fatalf("path %v reached %s, want %s", path.triggers, tx.Status(), path.want)
	}
	return tx, now
}

// txState is a deep copy of everything a transaction shows.
type txState struct {
	rec    domain.TransactionRecord
	events []string // ids
}

func txStateOf(tx *domain.Transaction) txState {
	r := tx.Record()
	r.Order.Customer = clonePtr(r.Order.Customer)
	r.Order.Seller = clonePtr(r.Order.Seller)
	r.Order.Address = clonePtr(r.Order.Address)
	r.Order.Items = slices.Clone(r.Order.Items)
	r.Order.Metadata = bytes.Clone(r.Order.Metadata)
	r.History = slices.Clone(r.History)
	if r.Pix != nil {
		p := *r.Pix
		p.QRCodePNG = bytes.Clone(p.QRCodePNG)
		r.Pix = &p
	}
	r.AmountPaid = clonePtr(r.AmountPaid)
	r.PaymentDate = clonePtr(r.PaymentDate)
	r.InfractionDate = clonePtr(r.InfractionDate)
	r.Payer = clonePtr(r.Payer)
	r.Receiver = clonePtr(r.Receiver)
	r.FeeAmount = clonePtr(r.FeeAmount)
	var ids []string
	for _, e := range tx.Events() {
		ids = append(ids, e.ID)
	}
	return txState{rec: r, events: ids}
}

// validPayout is a payout NewWithdrawal accepts, with a webhook URL.
func validPayout() domain.Payout {
	return domain.Payout{
		Amount:       5_000,
		Fee:          150,
		PixKey:       domain.PixKey{Type: domain.PixKeyEVP, Key: "123e4567-e89b-42d3-a456-426614174000"},
		ExternalCode: "payout-0001",
		WebhookURL:   webhookURL,
		Payer:        holder("Loja Exemplo", "11.222.333/0001-81"),
		Receiver:     holder("Ciclano Souza", "529.982.247-25"),
	}
}

func newWd(t testing.TB, p domain.Payout, now time.Time) *domain.Withdrawal {
	t.Helper()
	w, err := domain.NewWithdrawal(newID(), accountID, acquirer, p, validIdempotency(), now)
	if err != nil {
		t.Fatalf("NewWithdrawal: %v", err)
	}
	return w
}

// wdTrigger is one trigger of the withdrawal state table, as data.
type wdTrigger struct {
	name     string
	from, to domain.WithdrawalStatus
	fire     func(w *domain.Withdrawal, now time.Time) error
}

var wdTriggers = []wdTrigger{
	{"StartProcessing", domain.WdPending, domain.WdProcessing, func(w *domain.Withdrawal, now time.Time) error {
		return w.StartProcessing(now)
	}},
	{"Cancel", domain.WdPending, domain.WdCanceled, func(w *domain.Withdrawal, now time.Time) error {
		return w.Cancel(now)
	}},
	{"Complete", domain.WdProcessing, domain.WdProcessed, func(w *domain.Withdrawal, now time.Time) error {
		return w.Complete("E99999999202611221119payout0001", now)
	}},
	{"Fail", domain.WdProcessing, domain.WdFailed, func(w *domain.Withdrawal, now time.Time) error {
		return w.Fail("receiving institution unavailable", now)
	}},
	{"RefusePayout", domain.WdPending, domain.WdFailed, func(w *domain.Withdrawal, now time.Time) error {
		return w.RefusePayout("chave_invalida: A chave informada não existe", now)
	}},
	{"Reject", domain.WdProcessing, domain.WdRejected, func(w *domain.Withdrawal, now time.Time) error {
		return w.Reject("PIX key owner mismatch", now)
	}},
	{"Refund", domain.WdProcessed, domain.WdRefunded, func(w *domain.Withdrawal, now time.Time) error {
		return w.Refund(now)
	}},
}

func wdTriggerNamed(name string) wdTrigger {
	for _, tr := range wdTriggers {
		if tr.name == name {
			return tr
		}
	}
	panic("no trigger " + name)
}

type wdPath struct {
	name     string
	triggers []string
	want     domain.WithdrawalStatus
}

var wdPaths = []wdPath{
	{"a new withdrawal", nil, domain.WdPending},
	{"a withdrawal in processing", []string{"StartProcessing"}, domain.WdProcessing},
	{"a processed withdrawal", []string{"StartProcessing", "Complete"}, domain.WdProcessed},
	{"a canceled withdrawal", []string{"Cancel"}, domain.WdCanceled},
	{"a failed withdrawal", []string{"StartProcessing", "Fail"}, domain.WdFailed},
	{"a rejected withdrawal", []string{"StartProcessing", "Reject"}, domain.WdRejected},
	{"a refunded withdrawal", []string{"StartProcessing", "Complete", "Refund"}, domain.WdRefunded},
	{"a withdrawal whose payout was refused", []string{"RefusePayout"}, domain.WdFailed},
}

func wdAt(t testing.TB, p domain.Payout, path wdPath) (*domain.Withdrawal, time.Time) {
	t.Helper()
	now := base
	w := newWd(t, p, now)
	for _, name := range path.triggers {
		now = now.Add(time.Second)
		if err := wdTriggerNamed(name).fire(w, now); err != nil {
			t.Fatalf("%s on the way to %s: %v", name, path.want, err)
		}
	}
	if w.Status() != path.want {
		t.Fatalf("path %v reached %s, want %s", path.triggers, w.Status(), path.want)
	}
	return w, now
}

type wdState struct {
	rec    domain.WithdrawalRecord
	events []string
}

func wdStateOf(w *domain.Withdrawal) wdState {
	r := w.Record()
	r.Payout.Payer = clonePtr(r.Payout.Payer)
	r.Payout.Receiver = clonePtr(r.Payout.Receiver)
	r.History = slices.Clone(r.History)
	r.AmountWithdrawn = clonePtr(r.AmountWithdrawn)
	r.ProcessedDate = clonePtr(r.ProcessedDate)
	r.PayoutDue = clonePtr(r.PayoutDue)
	var ids []string
	for _, e := range w.Events() {
		ids = append(ids, e.ID)
	}
	return wdState{rec: r, events: ids}
}

// checkHistory verifies the history rules of the state table for either aggregate: it
// starts with PENDING at the creation date, its dates never go backwards, its last entry is
// the current status at UpdatedAt, and its durations are non-negative, nil for the last entry,
// and add up to UpdatedAt minus CreatedAt.
func checkHistory[S ~string](t testing.TB, h []domain.StatusEntry[S], createdAt, updatedAt time.Time, status S, wantLen int) {
	t.Helper()
	if len(h) != wantLen {
		t.Fatalf("history has %d entries, want %d: %v", len(h), wantLen, h)
	}
	if h[0].Status != "PENDING" || !h[0].Date.Equal(createdAt) {
		t.Fatalf("history starts with %s at %v, want PENDING at %v", h[0].Status, h[0].Date, createdAt)
	}
	last := h[len(h)-1]
	if last.Status != status {
		t.Fatalf("last history entry is %s, status is %s", last.Status, status)
	}
	if !last.Date.Equal(updatedAt) {
		t.Fatalf("last history entry at %v, UpdatedAt %v", last.Date, updatedAt)
	}
	var sum int64
	for i := range h {
		if h[i].Date.Location() != time.UTC || !h[i].Date.Equal(h[i].Date.Truncate(time.Millisecond)) {
			t.Fatalf("history[%d] date %v is not UTC at millisecond precision", i, h[i].Date)
		}
		d := domain.DurationMillis(h, i)
		if i == len(h)-1 {
			if d != nil {
				t.Fatalf("the last entry has duration %d, want nil", *d)
			}
			continue
		}
		if h[i+1].Date.Before(h[i].Date) {
			t.Fatalf("history[%d] at %v comes before history[%d] at %v", i+1, h[i+1].Date, i, h[i].Date)
		}
		if d == nil || *d < 0 {
			t.Fatalf("history[%d] duration %v, want a non-negative number", i, d)
		}
		sum += *d
	}
	if want := updatedAt.Sub(createdAt).Milliseconds(); sum != want {
		t.Fatalf("durations add up to %d ms, want UpdatedAt-CreatedAt = %d ms", sum, want)
	}
}

// nextRefund asks for everything still refundable under a fresh refund id.
func nextRefund(tx *domain.Transaction) domain.RefundRequest {
	return domain.RefundRequest{ID: fmt.Sprintf("R%d", len(tx.Refunds())+1)}
}

// inProgress is the id of the refund being processed ("none" when there is none).
func inProgress(tx *domain.Transaction) string {
	if r, ok := tx.RefundInProgress(); ok {
		return r.ID
	}
	return "none"
}

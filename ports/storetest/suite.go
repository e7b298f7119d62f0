package storetest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Stores are the storage ports of one store. The suites call newStore once per subtest and
// expect an empty store every time: listing expired transactions, listing by status and
// claiming deliveries reach across accounts, so a store shared between subtests would mix their
// data. The three ports must share their data, as one store's do: a status change and its
// events are one write, and withdrawals draw on the transactions' money.
type Stores struct {
	Transactions ports.TransactionRepository
	Withdrawals  ports.WithdrawalRepository
	Outbox       ports.Outbox
	Ledger       ports.Ledger
}

// epoch is when the fixtures happen. Times are whole seconds, which every store keeps exactly.
var epoch = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func minutes(n int) time.Time { return epoch.Add(time.Duration(n) * time.Minute) }

// newPaymentToken makes a random payment token, as the system adapter does.
func newPaymentToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// cpf makes a valid CPF from n (0 to 999): nine digits and their two check digits.
func cpf(n int) domain.Document {
	digits := []byte(fmt.Sprintf("123456%03d", n))
	for len(digits) < 11 {
		sum := 0
		for i, d := range digits {
			sum += int(d-'0') * (len(digits) + 1 - i)
		}
		digits = append(digits, checkDigit(sum))
	}
	return domain.MustParseDocument(string(digits))
}

// cnpj makes a valid numeric CNPJ from n (0 to 999): twelve digits and their two check digits.
func cnpj(n int) domain.Document {
	digits := []byte(fmt.Sprintf("11222%03d0001", n))
	for len(digits) < 14 {
		sum, w := 0, 2
		for i := len(digits) - 1; i >= 0; i-- {
			sum += int(digits[i]-'0') * w
			if w++; w > 9 {
				w = 2
			}
		}
		digits = append(digits, checkDigit(sum))
	}
	return domain.MustParseDocument(string(digits))
}

func checkDigit(sum int) byte {
	if r := sum % 11; r >= 2 {
		return byte('0' + 11 - r)
	}
	return '0'
}

// txSpec describes a transaction to build; zero fields take plain defaults.
type txSpec struct {
	account   string
	id        string                   // a fresh UUID when empty
	createdAt time.Time                // epoch when zero
	amount    domain.Cents             // 1000 when zero
	status    domain.TransactionStatus // PIX_QRCODE_GENERATED when empty
	customer  *domain.Customer
	external  string
	webhook   string
	idemKey   string
	paid, fee domain.Cents // paid defaults to amount
	endToEnd  string
	refundE2E string
	payToken  string // a fresh random token when empty
}

// transactionPaths are the transitions that reach each status from PENDING, one second apart.
var transactionPaths = map[domain.TransactionStatus][]string{
	domain.TxPending:              {},
	domain.TxPixQRCodeGenerated:   {"pix"},
	domain.TxFailed:               {"fail"},
	domain.TxPaid:                 {"pix", "pay"},
	domain.TxProcessingRefund:     {"pix", "pay", "refund"},
	domain.TxRefunded:             {"pix", "pay", "refund", "refunded"},
	domain.TxBlocked:              {"pix", "pay", "dispute"},
	domain.TxProcessingInfraction: {"pix", "pay", "dispute", "accept"},
	domain.TxInfraction:           {"pix", "pay", "dispute", "accept", "infraction"},
}

// buildTransaction makes the transaction spec describes, walked to its status by the domain's
// own transitions: the n-th transition happens n seconds after createdAt.
func buildTransaction(t *testing.T, spec txSpec) *domain.Transaction {
	t.Helper()
	if spec.id == "" {
		spec.id = domain.NewID()
	}
	if spec.createdAt.IsZero() {
		spec.createdAt = epoch
	}
	if spec.amount == 0 {
		spec.amount = 1000
	}
	if spec.status == "" {
		spec.status = domain.TxPixQRCodeGenerated
	}
	if spec.paid == 0 {
		spec.paid = spec.amount
	}
	if spec.endToEnd == "" {
		spec.endToEnd = "E" + strings.ReplaceAll(spec.id, "-", "")[:31]
	}
	if spec.refundE2E == "" {
		spec.refundE2E = "D" + strings.ReplaceAll(spec.id, "-", "")[:31]
	}
	order := domain.Order{
		Amount: spec.amount, PaymentMethod: domain.PaymentPIX, WebhookURL: spec.webhook,
		ExternalCode: spec.external, Customer: spec.customer, IsInfoProduct: true,
		ExpirationSeconds: domain.DefaultExpirationSeconds,
	}
	if spec.payToken == "" {
		spec.payToken = newPaymentToken()
	}
	tx, err := domain.NewTransaction(spec.id, spec.payToken, spec.account, "SANDBOX", order,
		domain.Idempotency{Key: spec.idemKey, Fingerprint: fingerprint(spec.idemKey)}, spec.createdAt)
	if err != nil {
		t.Fatalf("NewTransaction: %v", err)
	}
	steps, ok := transactionPaths[spec.status]
	if !ok {
		t.Fatalf("no fixture path to %s", spec.status)
	}
	for i, step := range steps {
		if err := applyStep(tx, step, spec, spec.createdAt.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	return tx
}

func fingerprint(key string) string {
	if key == "" {
		return ""
	}
	return "sha256:" + key
}

func applyStep(tx *domain.Transaction, step string, spec txSpec, at time.Time) error {
	switch step {
	case "pix":
		return tx.AttachPix(pixFor(tx), at)
	case "fail":
		return tx.FailEmission("emitter unavailable", at)
	case "pay":
		return tx.Pay(domain.Payment{AmountPaid: spec.paid, PaidAt: at, EndToEnd: spec.endToEnd, Fee: spec.fee}, at)
	case "refund":
		return tx.RequestRefund(domain.RefundRequest{ID: "R" + strings.ReplaceAll(tx.ID(), "-", "")}, at)
	case "refunded":
		r, _ := tx.RefundInProgress()
		return tx.ConfirmRefund(r.ID, spec.refundE2E, at)
	case "dispute":
		return tx.OpenDispute(at)
	case "accept":
		return tx.AcceptDispute(at)
	case "infraction":
		return tx.CompleteInfraction(spec.refundE2E, at)
	}
	return fmt.Errorf("unknown step %q", step)
}

// pixFor is a charge for tx, expiring expirationSeconds after its creation. The PNG is a few
// bytes: stores must keep it exactly, whatever it holds.
func pixFor(tx *domain.Transaction) domain.PixResponse {
	return domain.PixResponse{
		URI:       "00020101021226900014br.gov.bcb.pix2568pix.example.com/qr/v2/" + tx.ID() + "5204000053039865802BR6304ABCD",
		QRCodePNG: []byte("\x89PNG\r\n\x1a\n" + tx.ID()),
		ExpiresAt: tx.CreatedAt().Add(time.Duration(tx.Order().ExpirationSeconds) * time.Second),
	}
}

// wdSpec describes a withdrawal to build; zero fields take plain defaults.
type wdSpec struct {
	account   string
	id        string
	createdAt time.Time
	amount    domain.Cents // 100 when zero
	fee       domain.Cents
	status    domain.WithdrawalStatus // PENDING when empty
	webhook   string
	idemKey   string
}

var withdrawalPaths = map[domain.WithdrawalStatus][]string{
	domain.WdPending:    {},
	domain.WdProcessing: {"start"},
	domain.WdCanceled:   {"cancel"},
	domain.WdProcessed:  {"start", "complete"},
	domain.WdFailed:     {"start", "fail"},
	domain.WdRejected:   {"start", "reject"},
	domain.WdRefunded:   {"start", "complete", "refund"},
}

func buildWithdrawal(t *testing.T, spec wdSpec) *domain.Withdrawal {
	t.Helper()
	if spec.id == "" {
		spec.id = domain.NewID()
	}
	if spec.createdAt.IsZero() {
		spec.createdAt = epoch
	}
	if spec.amount == 0 {
		spec.amount = 100
	}
	if spec.status == "" {
		spec.status = domain.WdPending
	}
	key, err := domain.NewPixKey(domain.PixKeyEVP, domain.NewID())
	if err != nil {
		t.Fatal(err)
	}
	w, err := domain.NewWithdrawal(spec.id, spec.account, "SANDBOX", domain.Payout{
		Amount: spec.amount, Fee: spec.fee, PixKey: key, WebhookURL: spec.webhook,
	}, domain.Idempotency{Key: spec.idemKey, Fingerprint: fingerprint(spec.idemKey)}, spec.createdAt)
	if err != nil {
		t.Fatalf("NewWithdrawal: %v", err)
	}
	for i, step := range withdrawalPaths[spec.status] {
		at := spec.createdAt.Add(time.Duration(i+1) * time.Second)
		var err error
		switch step {
		case "start":
			err = w.StartProcessing(at)
		case "cancel":
			err = w.Cancel(at)
		case "complete":
			err = w.Complete("E"+strings.ReplaceAll(spec.id, "-", "")[:31], at)
		case "fail":
			err = w.Fail("receiving institution unavailable", at)
		case "reject":
			err = w.Reject("refused by the gateway", at)
		case "refund":
			err = w.Refund(at)
		}
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	return w
}

func mustCreateTransaction(t *testing.T, s Stores, tx *domain.Transaction) {
	t.Helper()
	if err := s.Transactions.Create(context.Background(), tx); err != nil {
		t.Fatalf("Create(%s): %v", tx.ID(), err)
	}
}

// createTransaction builds and stores a transaction, returning it as stored.
func createTransaction(t *testing.T, s Stores, spec txSpec) *domain.Transaction {
	t.Helper()
	tx := buildTransaction(t, spec)
	mustCreateTransaction(t, s, tx)
	return tx
}

// createWithdrawal builds and stores a withdrawal; the account must have the money.
func createWithdrawal(t *testing.T, s Stores, spec wdSpec) *domain.Withdrawal {
	t.Helper()
	w := buildWithdrawal(t, spec)
	if err := s.Withdrawals.Create(context.Background(), w); err != nil {
		t.Fatalf("Create(%s): %v", w.ID(), err)
	}
	return w
}

// fundedWithdrawal funds the account with the withdrawal's amount and fee, then creates it.
func fundedWithdrawal(t *testing.T, s Stores, spec wdSpec) *domain.Withdrawal {
	t.Helper()
	w := buildWithdrawal(t, spec)
	fund(t, s, w.AccountID(), w.Total())
	if err := s.Withdrawals.Create(context.Background(), w); err != nil {
		t.Fatalf("Create(%s): %v", w.ID(), err)
	}
	return w
}

// fund gives the account available money: a transaction PAID with amount paid and no fee.
func fund(t *testing.T, s Stores, account string, amount domain.Cents) {
	t.Helper()
	createTransaction(t, s, txSpec{account: account, amount: amount, status: domain.TxPaid})
}

// concurrently runs fn n times at once and returns the errors, one per call.
func concurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			errs[i] = fn(i)
		})
	}
	start.Done()
	done.Wait()
	return errs
}

// claimWins counts the claims that won among the errors of claims raced by concurrently; every
// loser must have found what it claimed not due (notDue), or given up having written nothing
// (ports.ErrVersionConflict, when it kept losing the race to write).
func claimWins(t *testing.T, errs []error, notDue error) int {
	t.Helper()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, notDue) && !errors.Is(err, ports.ErrVersionConflict):
			t.Errorf("claim: %v, want nil, %q or ErrVersionConflict", err, notDue)
		}
	}
	return wins
}

// assertSameTransaction compares everything a store keeps, the version aside, and names the
// fields that differ. Times compare as instants.
func assertSameTransaction(t *testing.T, got, want *domain.Transaction) {
	t.Helper()
	g, w := got.Record(), want.Record()
	g.Version, w.Version = 0, 0
	assertSameRecord(t, "transaction "+want.ID(), normalTimes(g), normalTimes(w))
}

func assertSameWithdrawal(t *testing.T, got, want *domain.Withdrawal) {
	t.Helper()
	g, w := got.Record(), want.Record()
	g.Version, w.Version = 0, 0
	assertSameRecord(t, "withdrawal "+want.ID(), normalTimes(g), normalTimes(w))
}

// normalTimes returns a copy of the record v, a struct, with every time.Time reached through
// its fields, pointers and slices set to UTC, so that reflect.DeepEqual compares instants.
func normalTimes[R any](v R) R {
	out := reflect.New(reflect.TypeOf(v)).Elem()
	out.Set(normalValue(reflect.ValueOf(v)))
	return out.Interface().(R)
}

var timeType = reflect.TypeOf(time.Time{})

func normalValue(v reflect.Value) reflect.Value {
	switch {
	case v.Type() == timeType:
		return reflect.ValueOf(v.Interface().(time.Time).UTC())
	case v.Kind() == reflect.Pointer && !v.IsNil():
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(normalValue(v.Elem()))
		return p
	case v.Kind() == reflect.Slice && !v.IsNil() && v.Type().Elem().Kind() == reflect.Struct:
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(normalValue(v.Index(i)))
		}
		return s
	case v.Kind() == reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		s.Set(v) // unexported fields (a Document's) hold no times and are kept as they are
		for i := range v.NumField() {
			if s.Field(i).CanSet() {
				s.Field(i).Set(normalValue(v.Field(i)))
			}
		}
		return s
	}
	return v
}

func assertSameRecord[R any](t *testing.T, what string, got, want R) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s: %s = %+v, want %+v", what, g.Type().Field(i).Name, dereferenced(g.Field(i)), dereferenced(w.Field(i)))
		}
	}
}

// dereferenced follows pointers so that a failure prints values, not addresses.
func dereferenced(v reflect.Value) any {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v.Interface()
}

func transactionIDs(txs []*domain.Transaction) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.ID()
	}
	return out
}

func eventTypes(ds []ports.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event.Type
	}
	return out
}

// storeTest is one named subtest of a suite over Stores.
type storeTest struct {
	name string
	run  func(t *testing.T, newStore func(t *testing.T) Stores)
}

// runStoreTests runs each test as a subtest of its name.
func runStoreTests(t *testing.T, newStore func(t *testing.T) Stores, tests []storeTest) {
	t.Helper()
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore) })
	}
}

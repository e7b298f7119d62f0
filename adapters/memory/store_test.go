package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unicode"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
)

func newStores(*testing.T) storetest.Stores {
	s := memory.NewStore()
	return storetest.Stores{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Outbox: s.Outbox(), Ledger: s.Ledger()}
}

func TestTransactions(t *testing.T) { storetest.TestTransactions(t, newStores) }
func TestWithdrawals(t *testing.T)  { storetest.TestWithdrawals(t, newStores) }
func TestOutbox(t *testing.T)       { storetest.TestOutbox(t, newStores) }
func TestLedger(t *testing.T)       { storetest.TestLedger(t, newStores) }
func TestPixLocations(t *testing.T) { storetest.TestPixLocations(t, newStores) }

func TestPingAlwaysAnswers(t *testing.T) {
	if err := memory.NewStore().Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// TestCustomerNameFoldsCaseAsEqualFoldDoes goes beyond the suite's ASCII and Latin-1 cases:
// the filter compares under Unicode simple case folding, character by character.
func TestCustomerNameFoldsCaseAsEqualFoldDoes(t *testing.T) {
	ctx := context.Background()
	s := memory.NewStore()
	names := []string{"ÉLODIE Ünal", "Kelvin", "Straße", "ſusan", "Ωmega ǅemal"}
	for i, name := range names {
		tx := newTransaction(t, i, "acc", base.Add(time.Duration(i)*time.Second), false)
		r := tx.Record()
		c := *r.Order.Customer
		c.Name = name
		r.Order.Customer = &c
		if err := s.Transactions().Create(ctx, domain.UnmarshalTransactionFromDatabase(r)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter string
		want   []string
	}{
		{"élodie ü", []string{"ÉLODIE Ünal"}},
		{"KELVIN", []string{"Kelvin"}},
		{"\u212aelvin", []string{"Kelvin"}}, // the Kelvin sign folds to k
		{"STRASSE", nil},                    // ß is not ss under simple folding
		{"STRAßE", []string{"Straße"}},
		{"SUSAN", []string{"ſusan"}}, // the long s folds to s
		{"ω", []string{"Ωmega ǅemal"}},
		{"ǆ", []string{"Ωmega ǅemal"}},
		{"", names},
		{"xyz", nil},
	} {
		page, err := s.Transactions().List(ctx, ports.TransactionFilter{AccountID: "acc", CustomerName: c.filter}, ports.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tx := range page.Items {
			got = append(got, tx.Order().Customer.Name)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("customerName %q matched %q, want %q", c.filter, got, want)
		}
	}
}

// FuzzCustomerName checks the name filter against a plain statement of its rule: the name
// contains the filter once each character is replaced by the smallest of its case-folding orbit.
func FuzzCustomerName(f *testing.F) {
	for _, seed := range [][2]string{
		{"Maria da Silva", "SILVA"}, {"João", "JOÃO"}, {"Kelvin", "\u212a"}, {"ſusan", "SU"},
		{"ab", "ba"}, {"", ""}, {"x", ""}, {"Ωmega", "ω"}, {"a\xffb", "\xff"},
	} {
		f.Add(seed[0], seed[1])
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, name, filter string) {
		s := memory.NewStore()
		r := newTransaction(t, 0, "acc", base, false).Record()
		c := *r.Order.Customer
		c.Name = name
		r.Order.Customer = &c
		if err := s.Transactions().Create(ctx, domain.UnmarshalTransactionFromDatabase(r)); err != nil {
			t.Fatal(err)
		}
		page, err := s.Transactions().List(ctx, ports.TransactionFilter{AccountID: "acc", CustomerName: filter}, ports.Page{Number: 1, Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := containsFolded(name, filter); (page.Total == 1) != want {
			t.Errorf("name %q, filter %q: matched %v, want %v", name, filter, page.Total == 1, want)
		}
	})
}

func containsFolded(s, sub string) bool {
	fold := func(s string) []rune {
		var out []rune
		for _, r := range s {
			least := r
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				least = min(least, f)
			}
			out = append(out, least)
		}
		return out
	}
	rs, rsub := fold(s), fold(sub)
	for i := 0; i+len(rsub) <= len(rs); i++ {
		if slices.Equal(rs[i:i+len(rsub)], rsub) {
			return true
		}
	}
	return false
}

// TestCustomerEmailFoldsCaseAsEqualFoldDoes: the e-mail filter compares under Unicode simple
// case folding, as strings.EqualFold does.
func TestCustomerEmailFoldsCaseAsEqualFoldDoes(t *testing.T) {
	ctx := context.Background()
	s := memory.NewStore()
	emails := []string{"Kate.Smith@Example.com", "JOSÉ@exemplo.com.br", "ſam@example.com"}
	for i, email := range emails {
		tx := newTransaction(t, i, "acc", base.Add(time.Duration(i)*time.Second), false)
		r := tx.Record()
		c := *r.Order.Customer
		c.Email = email
		r.Order.Customer = &c
		if err := s.Transactions().Create(ctx, domain.UnmarshalTransactionFromDatabase(r)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter string
		want   []string
	}{
		{"kate.smith@example.com", emails[:1]},
		{"\u212aATE.SMITH@EXAMPLE.COM", emails[:1]},
		{"josé@EXEMPLO.com.br", emails[1:2]},
		{"SAM@example.com", emails[2:]},
		{"kate.smith@example.co", nil},
		{"jose@exemplo.com.br", nil},
	} {
		page, err := s.Transactions().List(ctx, ports.TransactionFilter{AccountID: "acc", CustomerEmail: c.filter}, ports.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tx := range page.Items {
			got = append(got, tx.Order().Customer.Email)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("customerEmail %q matched %q, want %q", c.filter, got, c.want)
		}
	}
}

// TestStoredTransactionStaysUnder4KiB holds the memory budget: a transaction with a 1 KB QR
// code, its customer, address and items, and the event it raised, under 4 KiB in all.
func TestStoredTransactionStaysUnder4KiB(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	for _, webhook := range []bool{false, true} {
		if got := bytesPerStoredTransaction(t, 5000, webhook); got >= 4096 {
			t.Errorf("a stored transaction (webhook %v) takes %.0f bytes, want under 4096", webhook, got)
		} else {
			t.Logf("a stored transaction (webhook %v) takes %.0f bytes", webhook, got)
		}
	}
}

var base = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// qrPNG is a stand-in for a QR code image of about 1 KB; its bytes do not matter to the store.
var qrPNG = func() []byte {
	b := make([]byte, 1024)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

// uuid makes a distinct, well-formed UUID v4 from n, quicker than randomness for big fixtures.
func uuid(kind byte, n int) string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", n, kind, n)
}

// newTransaction is a realistic transaction awaiting payment: a customer with both phones, an
// address, two items, metadata, an idempotency key and a 1 KB QR code.
func newTransaction(tb testing.TB, n int, account string, createdAt time.Time, webhook bool) *domain.Transaction {
	tb.Helper()
	order := domain.Order{
		Amount: domain.Cents(1000 + n%9000), PaymentMethod: domain.PaymentPIX,
		ExternalCode: fmt.Sprintf("ORDER-%08d", n),
		Customer: &domain.Customer{IP: "203.0.113.7", Name: fmt.Sprintf("Cliente Número %d da Silva", n),
			Email: fmt.Sprintf("cliente%d@example.com", n), Document: domain.MustParseDocument("52998224725"),
			Landline: "1133334444", MobilePhone: "11987654321", Birthdate: "1990-05-17"},
		Address: &domain.Address{ZipCode: "01310100", Number: "1000", Street: "Avenida Paulista",
			Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", Country: "BR"},
		Items: []domain.Item{
			{Title: "Camiseta", Description: "Algodão, tamanho M", UnitPrice: 4995, Quantity: 2},
			{Title: "Frete", UnitPrice: 1000, Quantity: 1},
		},
		Metadata:          []byte(`{"campaign":"spring","channel":"app"}`),
		ExpirationSeconds: domain.DefaultExpirationSeconds,
	}
	if webhook {
		order.WebhookURL = "https://shop.example.com/webhooks/pixgate"
	}
	id := uuid(1, n)
	tx, err := domain.NewTransaction(id, "pt-"+id, account, "SANDBOX", order,
		domain.Idempotency{Key: "order-" + id, Fingerprint: "4f9c1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7"}, createdAt)
	if err != nil {
		tb.Fatal(err)
	}
	pix := domain.PixResponse{
		URI:       "00020101021226900014br.gov.bcb.pix2568pix.example.com/qr/v2/cobv/" + id + "5204000053039865802BR5913LOJA EXEMPLO6009SAO PAULO62070503***6304ABCD",
		QRCodePNG: qrPNG,
		ExpiresAt: createdAt.Add(30 * time.Minute),
	}
	if err := tx.AttachPix(pix, createdAt); err != nil {
		tb.Fatal(err)
	}
	return tx
}

func newWithdrawal(tb testing.TB, n int, account string, amount domain.Cents, createdAt time.Time) *domain.Withdrawal {
	tb.Helper()
	key, err := domain.NewPixKey(domain.PixKeyEVP, uuid(3, n))
	if err != nil {
		tb.Fatal(err)
	}
	w, err := domain.NewWithdrawal(uuid(2, n), account, "SANDBOX", domain.Payout{Amount: amount, Fee: 1, PixKey: key}, domain.Idempotency{}, createdAt)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

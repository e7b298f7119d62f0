package pix_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/domain"
)

const transactionID = "9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f60718"

func newEmitter(t *testing.T, cfg pix.EmitterConfig) *pix.Emitter {
	t.Helper()
	e, err := pix.NewEmitter(cfg)
	if err != nil {
		t.Fatalf("NewEmitter: %v", err)
	}
	return e
}

func charge(amount domain.Cents) domain.PixCharge {
	now := time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)
	return domain.PixCharge{TransactionID: transactionID, Amount: amount, CreatedAt: now, ExpiresAt: now.Add(30 * time.Minute)}
}

func emit(t *testing.T, e *pix.Emitter, c domain.PixCharge) brCode {
	t.Helper()
	code, err := e.Emit(context.Background(), c)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	parsed, err := parseBRCode(code.URI)
	if err != nil {
		t.Fatalf("parseBRCode(%q): %v", code.URI, err)
	}
	return parsed
}

var sandbox = pix.EmitterConfig{PixKey: "pagamentos@pixgate.example", MerchantName: "pixgate Sandbox", MerchantCity: "Sao Paulo"}

func TestNewEmitterRefusesABadConfiguration(t *testing.T) {
	cases := []struct {
		name string
		cfg  pix.EmitterConfig
		want string // part of the error text
	}{
		{"a configuration without a key is refused", pix.EmitterConfig{MerchantName: "Loja", MerchantCity: "Recife"}, "PIX key"},
		{"a configuration without a name is refused", pix.EmitterConfig{PixKey: "a@b.co", MerchantCity: "Recife"}, "merchant name"},
		{"a configuration without a city is refused", pix.EmitterConfig{PixKey: "a@b.co", MerchantName: "Loja", MerchantCity: "  "}, "merchant city"},
		{"a key over 77 characters is refused", pix.EmitterConfig{PixKey: strings.Repeat("a", 78), MerchantName: "Loja", MerchantCity: "Recife"}, "PIX key"},
		{"a bad merchant category code is refused", pix.EmitterConfig{PixKey: "a@b.co", MerchantName: "Loja", MerchantCity: "Recife", MCC: "5411x"}, "merchant category code"},
		{"a name with nothing printable is refused", pix.EmitterConfig{PixKey: "a@b.co", MerchantName: "☕☕", MerchantCity: "Recife"}, "merchant name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := pix.NewEmitter(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewEmitter = %v, %v; want an error naming %q", e, err, tc.want)
			}
		})
	}
}

func TestEmitterNamesTheSandbox(t *testing.T) {
	if got := newEmitter(t, sandbox).Acquirer(); got != "SANDBOX" {
		t.Fatalf("Acquirer() = %q, want SANDBOX", got)
	}
}

func TestEmitWritesASingleUseStaticCode(t *testing.T) {
	c := emit(t, newEmitter(t, sandbox), charge(1000))
	checks := []struct {
		name, id, sub, want string
	}{
		{"the point of initiation is single use", "01", "", "12"},
		{"the key is the configured one", "26", "01", sandbox.PixKey},
		{"the merchant category code defaults to 0000", "52", "", "0000"},
		{"the amount is in reais", "54", "", "10.00"},
		{"the merchant name is the configured one", "59", "", "pixgate Sandbox"},
		{"the merchant city is the configured one", "60", "", "Sao Paulo"},
		{"the txid is derived from the transaction id", "62", "05", "4qEeOYlutcLejEfKABzskK"},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			var v string
			if ch.sub == "" {
				v, _ = c.get(ch.id)
			} else {
				v, _ = c.sub(ch.id, ch.sub)
			}
			if v != ch.want {
				t.Fatalf("field %s %s = %q, want %q", ch.id, ch.sub, v, ch.want)
			}
		})
	}
}

func TestEmitTxIDLeadsBackToTheTransaction(t *testing.T) {
	c := emit(t, newEmitter(t, sandbox), charge(1000))
	txid, _ := c.sub("62", "05")
	got, err := pix.TransactionIDFromTxID(txid)
	if err != nil || got != transactionID {
		t.Fatalf("TransactionIDFromTxID(%q) = %q, %v; want %q", txid, got, err, transactionID)
	}
}

func TestEmitWritesPlainASCIIMerchantText(t *testing.T) {
	cases := []struct {
		name               string
		merchant, city     string
		wantName, wantCity string
	}{
		{"accents are stripped", "Padaria São João", "Florianópolis", "Padaria Sao Joao", "Florianopolis"},
		{"long names and cities are cut", "Distribuidora de Bebidas Irmãos Araújo", "São José dos Campos", "Distribuidora de Bebidas", "Sao Jose dos Ca"},
		{"plain ASCII is kept as given", "LOJA do Ze", "Recife", "LOJA do Ze", "Recife"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := emit(t, newEmitter(t, pix.EmitterConfig{PixKey: "a@b.co", MerchantName: tc.merchant, MerchantCity: tc.city, MCC: "5411"}), charge(1))
			name, _ := c.get("59")
			city, _ := c.get("60")
			mcc, _ := c.get("52")
			if name != tc.wantName || city != tc.wantCity || mcc != "5411" {
				t.Fatalf("59, 60, 52 = %q, %q, %q; want %q, %q, \"5411\"", name, city, mcc, tc.wantName, tc.wantCity)
			}
		})
	}
}

func TestEmitFormatsTheAmount(t *testing.T) {
	cases := []struct {
		name   string
		amount domain.Cents
		want   string
	}{
		{"one centavo is 0.01", 1, "0.01"},
		{"ten centavos are 0.10", 10, "0.10"},
		{"one real is 1.00", 100, "1.00"},
		{"an amount with centavos keeps both decimals", 123456, "1234.56"},
		{"the largest amount is 100000.00", domain.MaxAmount, "100000.00"},
	}
	e := newEmitter(t, sandbox)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := emit(t, e, charge(tc.amount)).get("54"); got != tc.want {
				t.Fatalf("field 54 = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEmitRefusesWhatItCannotCharge(t *testing.T) {
	e := newEmitter(t, sandbox)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	badID := charge(1000)
	badID.TransactionID = "not-a-uuid"
	cases := []struct {
		name   string
		ctx    context.Context
		charge domain.PixCharge
		check  func(error) bool
	}{
		{"a canceled context gives context.Canceled", canceled, charge(1000), func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"a zero amount is refused, never a code without amount", context.Background(), charge(0), func(err error) bool {
			var e domain.ErrAmountOutOfRange
			return errors.As(err, &e)
		}},
		{"an amount over the maximum is refused", context.Background(), charge(domain.MaxAmount + 1), func(err error) bool {
			var e domain.ErrAmountOutOfRange
			return errors.As(err, &e)
		}},
		{"a transaction id that is not a UUID is refused", context.Background(), badID, func(err error) bool { return errors.Is(err, pix.ErrInvalidTransactionID) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, err := e.Emit(tc.ctx, tc.charge)
			if !tc.check(err) {
				t.Fatalf("Emit = %q, %v", code.URI, err)
			}
			if code.URI != "" {
				t.Fatalf("Emit returned a code with its error: %q", code.URI)
			}
		})
	}
}

// The longest code the emitter can write (a 77-character key, the DICT maximum; a name and a
// city over their limits; the largest amount) still parses. Package qr renders this very string
// in its tests, so the two packages agree on the worst case without importing each other.
func TestEmitWritesTheLongestCode(t *testing.T) {
	const longest = "00020101021226990014br.gov.bcb.pix0177maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br5204541153039865409100000.005802BR5925Mercearia e Padaria Boa V6015Sao Jose dos Ca622605227RKE2sawAICsEsyZKHWW6r63045676"
	e := newEmitter(t, pix.EmitterConfig{
		PixKey:       "maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br",
		MerchantName: "Mercearia e Padaria Boa Vista do Sul",
		MerchantCity: "São José dos Campos",
		MCC:          "5411",
	})
	c := domain.PixCharge{TransactionID: "f47ac10b-58cc-4372-a567-0e02b2c3d479", Amount: domain.MaxAmount}
	code, err := e.Emit(context.Background(), c)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	if code.URI != longest {
		t.Fatalf("Emit:\n got %s\nwant %s", code.URI, longest)
	}
	if _, err := parseBRCode(code.URI); err != nil {
		t.Fatalf("parseBRCode: %v", err)
	}
}

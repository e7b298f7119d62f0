package pix_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/domain"
)

// FuzzBRCode holds the builder to one promise: whatever it accepts parses back, with a valid
// CRC, to the fields it was given (name and city as their plain ASCII reduction); whatever it
// refuses, it refuses with a *pix.FieldError, never a panic.
func FuzzBRCode(f *testing.F) {
	f.Add("Fulano de Tal", "BRASILIA", "123e4567-e12b-12d1-a456-426655440000", int64(0), "")
	f.Add("Thales Ogliari", "SAO MIGUEL DO O", "thalesog@me.com", int64(1000), "***")
	f.Add("Padaria São João", "Florianópolis", "+5511999998888", int64(1), "4qEeOYlutcLejEfKABzskK")
	f.Add(strings.Repeat("N", 40), strings.Repeat("C", 40), strings.Repeat("k", 77), int64(10_000_000), strings.Repeat("t", 25))
	f.Add("  a\t\u00A0b  ", "x\u0301", "12345678909", int64(999999999999), "a")
	f.Add("☕", "北京", "a b", int64(-1), "a-b")
	f.Add("Loja", "Recife", strings.Repeat("k", 78), int64(1e13), strings.Repeat("t", 26))
	f.Add("Lo\x00ja\xff", "Re\x7fcife", "k\x80", int64(5), "\x00")

	f.Fuzz(func(t *testing.T, name, city, key string, amount int64, txid string) {
		p := pix.Payload{
			Initiation:   pix.SingleUse,
			Key:          key,
			Amount:       domain.Cents(amount),
			MerchantName: name,
			MerchantCity: city,
			TxID:         txid,
		}
		payload, err := p.Encode()
		if err != nil {
			var fe *pix.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Encode refused with %T %v, want a *pix.FieldError", err, err)
			}
			return
		}
		c, err := parseBRCode(payload)
		if err != nil {
			t.Fatalf("Encode wrote %q, which does not parse: %v", payload, err)
		}
		if len(payload) > 512 {
			t.Fatalf("payload has %d characters, more than an EMV QR code holds", len(payload))
		}

		if got, _ := c.sub("26", "01"); got != key {
			t.Fatalf("key = %q, want %q", got, key)
		}
		wantTxID := txid
		if wantTxID == "" {
			wantTxID = "***"
		}
		if got, _ := c.sub("62", "05"); got != wantTxID {
			t.Fatalf("txid = %q, want %q", got, wantTxID)
		}
		gotAmount, present := c.get("54")
		switch {
		case amount == 0 && present:
			t.Fatalf("a zero amount wrote field 54 = %q", gotAmount)
		case amount != 0:
			back, err := domain.ParseReais(gotAmount)
			if err != nil || int64(back) != amount {
				t.Fatalf("amount %d was written %q, which reads back as %d, %v", amount, gotAmount, back, err)
			}
		}

		gotName, _ := c.get("59")
		gotCity, _ := c.get("60")
		checkText(t, "merchant name", name, gotName, pix.MaxMerchantName)
		checkText(t, "merchant city", city, gotCity, pix.MaxMerchantCity)

		// The reduction is a fixed point: what came out goes back in unchanged.
		p.MerchantName, p.MerchantCity = gotName, gotCity
		if again, err := p.Encode(); err != nil || again != payload {
			t.Fatalf("encoding the written name and city again gave %q, %v; want %q", again, err, payload)
		}
	})
}

// checkText checks a reduced name or city: plain, trimmed, single-spaced ASCII within max, and
// the input itself whenever the input was already so.
func checkText(t *testing.T, field, in, got string, max int) {
	t.Helper()
	if got == "" || len(got) > max || strings.TrimSpace(got) != got || strings.Contains(got, "  ") {
		t.Fatalf("%s %q: want 1 to %d characters, trimmed, single-spaced", field, got, max)
	}
	for i := 0; i < len(got); i++ {
		if got[i] < 0x20 || got[i] > 0x7E {
			t.Fatalf("%s %q: byte %d is not printable ASCII", field, got, i)
		}
	}
	plain := len(in) <= max && strings.TrimSpace(in) == in && !strings.Contains(in, "  ")
	for i := 0; i < len(in) && plain; i++ {
		plain = in[i] >= 0x20 && in[i] <= 0x7E
	}
	if plain && got != in {
		t.Fatalf("%s %q was already plain ASCII but came out %q", field, in, got)
	}
}

package domain_test

import (
	"errors"
	"testing"

	"github.com/pixgate/pixgate/domain"
)

func TestNewAmount(t *testing.T) {
	for _, c := range []struct {
		in int64
		ok bool
	}{
		{-1, false}, {0, false}, {1, true}, {9_999_999, true}, {10_000_000, true}, {10_000_001, false},
		{-9_223_372_036_854_775_808, false}, {9_223_372_036_854_775_807, false},
	} {
		t.Run("the amount "+itoa(c.in)+" is checked against 1..10000000", func(t *testing.T) {
			got, err := domain.NewAmount(c.in)
			if c.ok {
				if err != nil || got != domain.Cents(c.in) {
					t.Fatalf("NewAmount(%d) = %d, %v", c.in, got, err)
				}
				return
			}
			var oor domain.ErrAmountOutOfRange
			if !errors.As(err, &oor) || oor.Amount != domain.Cents(c.in) || got != 0 {
				t.Fatalf("NewAmount(%d) = %d, %v; want ErrAmountOutOfRange", c.in, got, err)
			}
		})
	}
	t.Run("the error names the amount and the bounds", func(t *testing.T) {
		_, err := domain.NewAmount(0)
		if want := "amount 0 is outside 1..10000000 cents"; err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	})
	if domain.MinAmount != 1 || domain.MaxAmount != 10_000_000 {
		t.Fatalf("bounds %d..%d", domain.MinAmount, domain.MaxAmount)
	}
}

func TestCentsReais(t *testing.T) {
	for _, c := range []struct {
		in   domain.Cents
		want string
	}{
		{0, "0.00"}, {1, "0.01"}, {10, "0.10"}, {99, "0.99"}, {100, "1.00"}, {101, "1.01"},
		{123456, "1234.56"}, {10_000_000, "100000.00"}, {-5, "-0.05"}, {-12345, "-123.45"},
	} {
		t.Run(itoa(int64(c.in))+" cents are written "+c.want, func(t *testing.T) {
			if got := c.in.Reais(); got != c.want {
				t.Fatalf("Cents(%d).Reais() = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseReais(t *testing.T) {
	for _, c := range []struct {
		in   string
		want domain.Cents
	}{
		{"0.00", 0}, {"0.01", 1}, {"0.10", 10}, {"1.00", 100}, {"10.00", 1000}, {"1234.56", 123456},
		{"100000.00", 10_000_000}, {"999999999999.99", 99_999_999_999_999},
	} {
		t.Run(c.in+" reads as "+itoa(int64(c.want))+" cents", func(t *testing.T) {
			got, err := domain.ParseReais(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseReais(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
	for _, in := range []string{
		"", "1", "10", "1.5", "1.500", ".50", "1.", "-1.00", "+1.00", "01.00", "00.50", "1e2", "1e2.00",
		"1,00", "1.0a", "1.-5", " 1.00", "1.00 ", "1 000.00", "1234567890123.00", "１.00", "0x1.00",
		"NaN", "Inf", "1.00\n", "1..00",
	} {
		t.Run(strconvQuote(in)+" is refused", func(t *testing.T) {
			if got, err := domain.ParseReais(in); err == nil {
				t.Fatalf("ParseReais(%q) = %d, want an error", in, got)
			}
		})
	}
	t.Run("every amount in range survives Reais and ParseReais", func(t *testing.T) {
		for c := domain.Cents(0); c <= domain.MaxAmount; c += 9_973 {
			for _, v := range []domain.Cents{c, c + 1, c + 99} {
				back, err := domain.ParseReais(v.Reais())
				if err != nil || back != v {
					t.Fatalf("ParseReais(%q) = %d, %v; want %d", v.Reais(), back, err, v)
				}
			}
		}
	})
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	var b []byte
	for n != 0 {
		d := n % 10
		if d < 0 {
			d = -d
		}
		b = append([]byte{byte('0' + d)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

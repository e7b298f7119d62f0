package paypage

import (
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestFormatReais(t *testing.T) {
	for _, c := range []struct {
		cents  domain.Cents
		pt, en string
	}{
		{1, "R$ 0,01", "R$ 0.01"},
		{99, "R$ 0,99", "R$ 0.99"},
		{100, "R$ 1,00", "R$ 1.00"},
		{123456, "R$ 1.234,56", "R$ 1,234.56"},
		{10000000, "R$ 100.000,00", "R$ 100,000.00"},
		{123456789, "R$ 1.234.567,89", "R$ 1,234,567.89"},
	} {
		t.Run(c.pt, func(t *testing.T) {
			if got := formatReais(c.cents, "pt-BR"); got != c.pt {
				t.Errorf("pt-BR: %q", got)
			}
			if got := formatReais(c.cents, "en"); got != c.en {
				t.Errorf("en: %q", got)
			}
		})
	}
}

func TestFormatCountdown(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "00:00", 0: "00:00", 500 * time.Millisecond: "00:01", 59 * time.Second: "00:59",
		15 * time.Minute: "15:00", time.Hour + 2*time.Minute + 3*time.Second: "1:02:03", 24 * time.Hour: "24:00:00",
	} {
		if got := formatCountdown(d); got != want {
			t.Errorf("formatCountdown(%s) = %q, want %q", d, got, want)
		}
	}
}

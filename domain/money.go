package domain

import (
	"fmt"
	"strconv"
)

// Cents is an amount of Brazilian reais counted in centavos. Money never travels as a float.
type Cents int64

// The bounds of amount, unitPrice, minAmount and maxAmount (docs/API.md, Limits).
const (
	MinAmount Cents = 1
	MaxAmount Cents = 10_000_000
)

// ErrAmountOutOfRange reports an amount outside [MinAmount, MaxAmount].
type ErrAmountOutOfRange struct{ Amount Cents }

func (e ErrAmountOutOfRange) Error() string {
	return fmt.Sprintf("amount %d is outside %d..%d cents", e.Amount, MinAmount, MaxAmount)
}

// NewAmount returns c when it lies within the bounds of docs/API.md, Limits.
func NewAmount(c int64) (Cents, error) {
	if Cents(c) < MinAmount || Cents(c) > MaxAmount {
		return 0, ErrAmountOutOfRange{Amount: Cents(c)}
	}
	return Cents(c), nil
}

// Reais formats c as reais with two decimals and '.' as separator ("10.00"), as the BR Code and
// Banco Central's API Pix write amounts.
func (c Cents) Reais() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseReais reads an amount written as reais with exactly two decimals ("10.00"), the way
// Banco Central's API Pix writes `valor`. It never goes through a float.
func ParseReais(s string) (Cents, error) {
	n := len(s)
	if n < 4 || s[n-3] != '.' {
		return 0, fmt.Errorf("amount %q: want reais with two decimals", s)
	}
	whole, frac := s[:n-3], s[n-2:]
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("amount %q: want reais with two decimals", s)
		}
	}
	if len(whole) > 1 && whole[0] == '0' || len(whole) > 12 {
		return 0, fmt.Errorf("amount %q: want reais with two decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return Cents(w*100 + f), nil
}

package pix

import (
	"errors"
	"fmt"
	"math/bits"
)

// A static BR Code's txid holds at most 25 characters [A-Za-z0-9], while a transaction id is a
// UUID: 32 hexadecimal digits without its dashes. The txid is therefore the UUID's 128 bits
// written in base 62 (digits, then A to Z, then a to z, most significant first), left-padded
// with '0' to TxIDLen characters. The mapping is a bijection between UUIDs and such strings, so
// the acquirer's callback, which carries only the txid, leads straight back to the transaction
// without a lookup table.
//
// Base 62 is case-sensitive: "a" and "A" are different digits.
const (
	TxIDLen      = 22 // 62^22 > 2^128 > 62^21
	txidAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

var (
	// ErrInvalidTransactionID reports a transaction id that is not a UUID in its canonical
	// 8-4-4-4-12 hexadecimal form.
	ErrInvalidTransactionID = errors.New("transaction id is not a UUID")
	// ErrInvalidTxID reports a txid that TxIDFromTransactionID cannot have produced: a txid of
	// some other origin (another emitter, a hand-made code) or a damaged one.
	ErrInvalidTxID = errors.New("txid was not derived from a transaction id")
)

// TxIDFromTransactionID derives the BR Code txid of a transaction from its UUID (either case).
// The same id always gives the same txid.
func TxIDFromTransactionID(id string) (string, error) {
	hi, lo, ok := parseUUID(id)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrInvalidTransactionID, id)
	}
	var out [TxIDLen]byte
	for i := TxIDLen - 1; i >= 0; i-- {
		// Long division of the 128-bit number by 62, one 64-bit half at a time.
		var r uint64
		hi, r = hi/62, hi%62
		lo, r = bits.Div64(r, lo, 62)
		out[i] = txidAlphabet[r]
	}
	return string(out[:]), nil
}

// TransactionIDFromTxID is the inverse of TxIDFromTransactionID: it returns the transaction's
// UUID in lowercase canonical form.
func TransactionIDFromTxID(txid string) (string, error) {
	if len(txid) != TxIDLen {
		return "", fmt.Errorf("%w: %q", ErrInvalidTxID, txid)
	}
	var hi, lo uint64
	for i := 0; i < len(txid); i++ {
		d, ok := base62Digit(txid[i])
		if !ok {
			return "", fmt.Errorf("%w: %q", ErrInvalidTxID, txid)
		}
		// (hi, lo) = (hi, lo)*62 + d, refusing values past 2^128 - 1.
		carry, newLo := bits.Mul64(lo, 62)
		newLo, c := bits.Add64(newLo, d, 0)
		overflow, newHi := bits.Mul64(hi, 62)
		newHi, c2 := bits.Add64(newHi, carry, c)
		if overflow != 0 || c2 != 0 {
			return "", fmt.Errorf("%w: %q", ErrInvalidTxID, txid)
		}
		hi, lo = newHi, newLo
	}
	return formatUUID(hi, lo), nil
}

func base62Digit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'A' <= c && c <= 'Z':
		return uint64(c-'A') + 10, true
	case 'a' <= c && c <= 'z':
		return uint64(c-'a') + 36, true
	}
	return 0, false
}

// parseUUID reads the canonical 36-character form into its high and low 64 bits.
func parseUUID(s string) (hi, lo uint64, ok bool) {
	if len(s) != 36 {
		return 0, 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return 0, 0, false
			}
			continue
		}
		var v uint64
		switch {
		case '0' <= c && c <= '9':
			v = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			v = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			v = uint64(c-'A') + 10
		default:
			return 0, 0, false
		}
		if n < 16 {
			hi = hi<<4 | v
		} else {
			lo = lo<<4 | v
		}
		n++
	}
	return hi, lo, true
}

func formatUUID(hi, lo uint64) string {
	const hex = "0123456789abcdef"
	var out [36]byte
	n := 0
	for i := range out {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			out[i] = '-'
			continue
		}
		word, shift := hi, 60-4*n
		if n >= 16 {
			word, shift = lo, 60-4*(n-16)
		}
		out[i] = hex[word>>shift&0xF]
		n++
	}
	return string(out[:])
}

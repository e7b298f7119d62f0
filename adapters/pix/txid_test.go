package pix_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
)

func TestTxIDFromTransactionID(t *testing.T) {
	// Expected values computed independently (Python: the UUID as an integer, in base 62).
	cases := []struct {
		name, id, want string
	}{
		{"the nil UUID is all zeros", "00000000-0000-0000-0000-000000000000", "0000000000000000000000"},
		{"one is zero-padded to 22 characters", "00000000-0000-0000-0000-000000000001", "0000000000000000000001"},
		{"the largest UUID is the largest txid", "ffffffff-ffff-ffff-ffff-ffffffffffff", "7n42DGM5Tflk9n8mt7Fhc7"},
		{"a v4 UUID is encoded in base 62", "9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f60718", "4qEeOYlutcLejEfKABzskK"},
		{"an uppercase UUID gives the same txid", "9F1C2A4E-7B3D-4E8F-A1B2-C3D4E5F60718", "4qEeOYlutcLejEfKABzskK"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pix.TxIDFromTransactionID(tc.id)
			if err != nil || got != tc.want {
				t.Fatalf("TxIDFromTransactionID(%q) = %q, %v; want %q", tc.id, got, err, tc.want)
			}
			back, err := pix.TransactionIDFromTxID(got)
			if err != nil || back != strings.ToLower(tc.id) {
				t.Fatalf("TransactionIDFromTxID(%q) = %q, %v; want %q", got, back, err, strings.ToLower(tc.id))
			}
		})
	}
}

func TestTxIDRoundTripsRandomUUIDs(t *testing.T) {
	for range 1000 {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		txid, err := pix.TxIDFromTransactionID(id)
		if err != nil {
			t.Fatalf("TxIDFromTransactionID(%q): %v", id, err)
		}
		if len(txid) != pix.TxIDLen {
			t.Fatalf("TxIDFromTransactionID(%q) = %q: %d characters, want %d", id, txid, len(txid), pix.TxIDLen)
		}
		back, err := pix.TransactionIDFromTxID(txid)
		if err != nil || back != id {
			t.Fatalf("TransactionIDFromTxID(%q) = %q, %v; want %q", txid, back, err, id)
		}
	}
}

func TestTxIDFromTransactionIDRefusesNonUUIDs(t *testing.T) {
	cases := []struct{ name, id string }{
		{"an empty id is refused", ""},
		{"a UUID without dashes is refused", "9f1c2a4e7b3d4e8fa1b2c3d4e5f60718"},
		{"a UUID with braces is refused", "{9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f60718}"},
		{"a UUID with a dash out of place is refused", "9f1c2a4e7-b3d-4e8f-a1b2-c3d4e5f60718"},
		{"a UUID with a non-hex digit is refused", "9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f6071g"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := pix.TxIDFromTransactionID(tc.id); !errors.Is(err, pix.ErrInvalidTransactionID) {
				t.Fatalf("TxIDFromTransactionID(%q) = %q, %v; want ErrInvalidTransactionID", tc.id, got, err)
			}
		})
	}
}

func TestTransactionIDFromTxIDRefusesForeignTxIDs(t *testing.T) {
	cases := []struct{ name, txid string }{
		{"an empty txid is refused", ""},
		{"the static code placeholder is refused", "***"},
		{"a txid of 21 characters is refused", "000000000000000000001"},
		{"a txid of 25 characters is refused", "0000000000000000000000001"},
		{"a txid with a dash is refused", "4qEeOYlutcLejEfKABzsk-"},
		{"a txid just above the largest UUID is refused", "7n42DGM5Tflk9n8mt7Fhc8"},
		{"a txid of all z is refused", strings.Repeat("z", 22)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := pix.TransactionIDFromTxID(tc.txid); !errors.Is(err, pix.ErrInvalidTxID) {
				t.Fatalf("TransactionIDFromTxID(%q) = %q, %v; want ErrInvalidTxID", tc.txid, got, err)
			}
		})
	}
}

package pix_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/domain"
)

func TestTxIDDecoder(t *testing.T) {
	const id = "9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f60718"
	txid, err := pix.TxIDFromTransactionID(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a txid this emitter wrote names its transaction", func(t *testing.T) {
		got, err := pix.TxIDDecoder{}.TransactionID(txid)
		if err != nil || got != id {
			t.Fatalf("TransactionID(%q) = %q, %v; want %q", txid, got, err, id)
		}
	})
	for _, c := range []struct{ name, txid string }{
		{"an empty txid is not found", ""},
		{"a txid of another length is not found", txid + "0"},
		{"a txid with a character outside base 62 is not found", "-" + txid[1:]},
		{"a txid above the largest UUID is not found", strings.Repeat("z", pix.TxIDLen)},
		{"a 35-character txid of another emitter is not found", strings.Repeat("A", 35)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := pix.TxIDDecoder{}.TransactionID(c.txid)
			if !errors.Is(err, domain.ErrNotFound) || got != "" {
				t.Fatalf("TransactionID(%q) = %q, %v; want domain.ErrNotFound", c.txid, got, err)
			}
			if !errors.Is(err, pix.ErrInvalidTxID) {
				t.Fatalf("the cause is lost: %v", err)
			}
		})
	}
}

package pix

import (
	"fmt"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.TxIDDecoder = TxIDDecoder{}

// TxIDDecoder maps the txid of a BR Code this package wrote back to its transaction id, for
// the acquirer's notifications. A txid it cannot have written answers domain.ErrNotFound, like
// a transaction that does not exist. It holds no state and is safe for concurrent use.
type TxIDDecoder struct{}

// TransactionID implements ports.TxIDDecoder.
func (TxIDDecoder) TransactionID(txid string) (string, error) {
	id, err := TransactionIDFromTxID(txid)
	if err != nil {
		return "", fmt.Errorf("%w: %w", domain.ErrNotFound, err)
	}
	return id, nil
}

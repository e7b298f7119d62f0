package httpapi

import (
	"strings"

	"github.com/pixgate/pixgate/domain"
)

// TransactionAnswer is the body GET /transaction/{id} answers for one transaction, outside
// HTTP. It exists for test/load's comparison of the hand-written encoder with JSON libraries
// (docs/PERFORMANCE.md, The transaction encoder against JSON libraries); the handlers do not
// use it.
type TransactionAnswer struct{ view transactionView }

// NewTransactionAnswer is t's answer, its payment page under publicURL (Config.PublicURL).
func NewTransactionAnswer(t *domain.Transaction, publicURL string) *TransactionAnswer {
	return &TransactionAnswer{view: viewTransaction(t, strings.TrimRight(publicURL, "/"))}
}

// View is what the handler encodes: a pointer to a struct of exported fields whose times and
// QR image have MarshalText methods, which any JSON encoder can write (encoding/json writes
// the handler's bytes).
func (a *TransactionAnswer) View() any { return &a.view }

// AppendJSON appends the answer as the hand-written encoder writes it (writeTransaction adds
// a newline); false where writeTransaction falls back to encoding/json (metadata that is not
// valid JSON, which is never stored).
func (a *TransactionAnswer) AppendJSON(b []byte) ([]byte, bool) {
	return appendTransactionJSON(b, &a.view)
}

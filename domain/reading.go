package domain

import "time"

// TransactionReading reads a transaction's order and Pix response for showing it, without the
// copies Transaction.Order and Transaction.Pix make of everything they reach (the QR image is a
// kilobyte, copied on every lookup that way). It is read-only by construction: its accessors
// return values that share no memory a caller could write (structs of strings and numbers),
// and byte contents (the metadata, the QR image) are only ever appended to a slice the caller
// owns. Nothing read through it can change the transaction, and nothing it hands out keeps
// the transaction's memory.
type TransactionReading struct{ t *Transaction }

// Reading is a read-only look at t (TransactionReading).
func (t *Transaction) Reading() TransactionReading { return TransactionReading{t: t} }

// PaymentMethod is the order's payment method.
func (r TransactionReading) PaymentMethod() PaymentMethod { return r.t.order.PaymentMethod }

// WebhookURL is the order's webhook URL; "" when it gave none.
func (r TransactionReading) WebhookURL() string { return r.t.order.WebhookURL }

// ExternalCode is the order's external code; "" when it gave none.
func (r TransactionReading) ExternalCode() string { return r.t.order.ExternalCode }

// IsInfoProduct tells whether the order sells an info product.
func (r TransactionReading) IsInfoProduct() bool { return r.t.order.IsInfoProduct }

// Customer is the order's customer, false when it names none.
func (r TransactionReading) Customer() (Customer, bool) { return valueOf(r.t.order.Customer) }

// Seller is the order's seller, false when it names none.
func (r TransactionReading) Seller() (Seller, bool) { return valueOf(r.t.order.Seller) }

// Address is the order's address, false when it names none.
func (r TransactionReading) Address() (Address, bool) { return valueOf(r.t.order.Address) }

// ItemCount is the number of the order's items.
func (r TransactionReading) ItemCount() int { return len(r.t.order.Items) }

// Item is the order's item i, 0 <= i < ItemCount().
func (r TransactionReading) Item(i int) Item { return r.t.order.Items[i] }

// HasMetadata tells whether the order carries metadata.
func (r TransactionReading) HasMetadata() bool { return len(r.t.order.Metadata) > 0 }

// AppendMetadata appends the order's metadata (Order.Metadata: a compact JSON object) to dst.
func (r TransactionReading) AppendMetadata(dst []byte) []byte {
	return append(dst, r.t.order.Metadata...)
}

// HasPix tells whether the transaction has its Pix response (Transaction.Pix is not nil).
func (r TransactionReading) HasPix() bool { return r.t.pix != nil }

// PixURI is the Pix response's BR Code payload; "" without one.
func (r TransactionReading) PixURI() string {
	if r.t.pix == nil {
		return ""
	}
	return r.t.pix.URI
}

// PixExpiresAt is when the Pix response's code expires; zero without one.
func (r TransactionReading) PixExpiresAt() time.Time {
	if r.t.pix == nil {
		return time.Time{}
	}
	return r.t.pix.ExpiresAt
}

// AppendQRCodePNG appends the Pix response's QR image (a PNG) to dst; dst as it was without
// one.
func (r TransactionReading) AppendQRCodePNG(dst []byte) []byte {
	if r.t.pix == nil {
		return dst
	}
	return append(dst, r.t.pix.QRCodePNG...)
}

// valueOf is what p points at, false for nil: for types that hold values and strings only
// (clonePtr), a copy that shares nothing.
func valueOf[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

// StatusCount is the number of entries of the transaction's status history (History).
func (r TransactionReading) StatusCount() int { return len(r.t.history) }

// StatusEntry is the history's entry i, 0 <= i < StatusCount(), oldest first.
func (r TransactionReading) StatusEntry(i int) StatusEntry[TransactionStatus] { return r.t.history[i] }

// StatusDurationMillis is how long the transaction stayed in the history's entry i
// (DurationMillis); false for the last entry, the current status.
func (r TransactionReading) StatusDurationMillis(i int) (int64, bool) {
	if d := DurationMillis(r.t.history, i); d != nil {
		return *d, true
	}
	return 0, false
}

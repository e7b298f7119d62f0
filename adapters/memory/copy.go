package memory

import (
	"bytes"
	"reflect"
	"slices"

	"github.com/pixgate/pixgate/domain"
)

// ownTransaction returns r sharing no memory with anything outside the store. The order and
// the PIX data never change once set, so when they equal those of prev (the stored version of
// the same transaction) it takes prev's instead of a copy: a transaction and the snapshots of
// its events then keep one QR code between them. prev is nil for a copy handed out.
func ownTransaction(r domain.TransactionRecord, prev *domain.TransactionRecord) domain.TransactionRecord {
	if prev != nil && reflect.DeepEqual(r.Order, prev.Order) {
		r.Order = prev.Order
	} else {
		r.Order = copyOrder(r.Order)
	}
	if prev != nil && reflect.DeepEqual(r.Pix, prev.Pix) {
		r.Pix = prev.Pix
	} else if r.Pix != nil {
		pix := *r.Pix
		pix.QRCodePNG = bytes.Clone(pix.QRCodePNG)
		r.Pix = &pix
	}
	r.History = slices.Clone(r.History)
	r.AmountPaid = clonePtr(r.AmountPaid)
	r.PaymentDate = clonePtr(r.PaymentDate)
	r.InfractionDate = clonePtr(r.InfractionDate)
	r.Payer = clonePtr(r.Payer)
	r.Receiver = clonePtr(r.Receiver)
	r.FeeAmount = clonePtr(r.FeeAmount)
	return r
}

func copyOrder(o domain.Order) domain.Order {
	o.Customer = clonePtr(o.Customer)
	o.Seller = clonePtr(o.Seller)
	o.Address = clonePtr(o.Address)
	o.Items = slices.Clone(o.Items)
	o.Metadata = bytes.Clone(o.Metadata)
	return o
}

// ownWithdrawal returns r sharing no memory with anything outside the store.
func ownWithdrawal(r domain.WithdrawalRecord) domain.WithdrawalRecord {
	r.Payout.Payer = clonePtr(r.Payout.Payer)
	r.Payout.Receiver = clonePtr(r.Payout.Receiver)
	r.History = slices.Clone(r.History)
	r.AmountWithdrawn = clonePtr(r.AmountWithdrawn)
	r.ProcessedDate = clonePtr(r.ProcessedDate)
	return r
}

// transactionOut rebuilds a stored transaction as the caller's own aggregate. Everything is
// copied but the QR image's bytes, which never change once attached (domain.PixResponse):
// lookups are the hottest path, and copying the image on each of them was a tenth of a
// lookup's cost.
func transactionOut(r *domain.TransactionRecord) *domain.Transaction {
	rec := *r
	rec.Pix = nil
	out := ownTransaction(rec, nil)
	if r.Pix != nil {
		pix := *r.Pix
		out.Pix = &pix
	}
	return domain.UnmarshalTransactionFromDatabase(out)
}

// withdrawalOut rebuilds a stored withdrawal as the caller's own aggregate.
func withdrawalOut(r *domain.WithdrawalRecord) *domain.Withdrawal {
	return domain.UnmarshalWithdrawalFromDatabase(ownWithdrawal(*r))
}

// clonePtr copies what p points at. The pointed types (amounts, times, customers, addresses,
// account holders) hold values and strings only, so one level is a deep copy.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

package domain

import (
	"bytes"
	"slices"
)

// An aggregate never changes in place what its pointers and slices reach once it is set: a
// transition that changes the PIX data, a payer or an amount points at a new value, and the
// slices it appends to (history, refunds) are its own, copied when it is built or rebuilt.
// Records may therefore share that memory with a storage adapter, and the snapshots of events
// with their aggregate, while the getters hand out copies: callers may change what they get.

// clonePtr copies what p points at. Every type it is used for (amounts, times, customers,
// sellers, addresses, account holders) holds values and strings only, so one level is a deep
// copy.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// clone returns o sharing no memory with it.
func (o Order) clone() Order {
	o.Customer, o.Seller, o.Address = clonePtr(o.Customer), clonePtr(o.Seller), clonePtr(o.Address)
	o.Items = slices.Clone(o.Items)
	o.Metadata = bytes.Clone(o.Metadata)
	return o
}

// clonePix returns p sharing no memory with it.
func clonePix(p *PixResponse) *PixResponse {
	if p == nil {
		return nil
	}
	c := *p
	c.QRCodePNG = bytes.Clone(p.QRCodePNG)
	return &c
}

// cloneRefunds returns rs sharing no memory with it.
func cloneRefunds(rs []Refund) []Refund {
	out := slices.Clone(rs)
	for i := range out {
		out[i].CompletedAt = clonePtr(out[i].CompletedAt)
		out[i].Dispatch.Due = clonePtr(out[i].Dispatch.Due)
	}
	return out
}

// clone returns p sharing no memory with it.
func (p Payout) clone() Payout {
	p.Payer, p.Receiver = clonePtr(p.Payer), clonePtr(p.Receiver)
	return p
}

package domain

// FeePolicy is what the gateway charges: a fixed part plus a share of the amount in basis
// points (1/100 of a percent), rounded half up to the cent, never more than the amount.
type FeePolicy struct {
	FixedCents  Cents
	BasisPoints int64
}

// For returns the fee on amount.
func (f FeePolicy) For(amount Cents) Cents {
	fee := f.FixedCents + Cents((int64(amount)*f.BasisPoints+5_000)/10_000)
	if fee > amount {
		return amount
	}
	if fee < 0 {
		return 0
	}
	return fee
}

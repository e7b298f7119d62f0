package domain

// Balance is what an account holds, in cents.
type Balance struct {
	Available Cents // may be withdrawn or refunded from; negative only after a MED hold
	Blocked   Cents // held by a refund or a MED dispute in progress
	Pending   Cents // charged and not yet paid
}

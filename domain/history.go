package domain

import "time"

// StatusEntry records one status entered and when.
type StatusEntry[S ~string] struct {
	Status S
	Date   time.Time
}

// DurationMillis is how long history[i] lasted: the next entry's date minus its own, in
// milliseconds; nil for the last entry, whose status is current.
func DurationMillis[S ~string](history []StatusEntry[S], i int) *int64 {
	if i+1 >= len(history) {
		return nil
	}
	d := history[i+1].Date.Sub(history[i].Date).Milliseconds()
	return &d
}

// enter appends a status to a history. Dates never go backwards: a clock that steps back
// (NTP) would otherwise produce a negative duration, so the new entry takes the later date.
func enter[S ~string](history []StatusEntry[S], s S, now time.Time) []StatusEntry[S] {
	now = now.UTC().Truncate(time.Millisecond)
	if n := len(history); n > 0 && now.Before(history[n-1].Date) {
		now = history[n-1].Date
	}
	return append(history, StatusEntry[S]{Status: s, Date: now})
}

// move applies one trigger of a state table to an aggregate's status and history: it fires only
// from the status the trigger leaves (two triggers may lead to the same status from different
// places) and only when the table has the move, otherwise it changes nothing and answers an
// *InvalidTransitionError. apply changes the rest of the aggregate before the status moves.
// Transactions and withdrawals both move through it and then raise their own event.
func move[S ~string](resource ResourceKind, status *S, history *[]StatusEntry[S], from, to S,
	canMove func(from, to S) bool, now time.Time, apply func()) error {
	if *status != from || !canMove(from, to) {
		return &InvalidTransitionError{Resource: string(resource), From: string(*status), To: string(to)}
	}
	apply()
	*status = to
	*history = enter(*history, to, now)
	return nil
}

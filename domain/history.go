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

package application_test

import (
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
)

func TestPaceNext(t *testing.T) {
	settle := application.Pace{Interval: 500 * time.Millisecond, Bound: 3 * time.Second}
	for _, c := range []struct {
		name  string
		pace  application.Pace
		took  time.Duration
		found bool
		want  time.Duration
	}{
		{"an idle sweep answered from an index waits the interval", settle, time.Millisecond, false, 500 * time.Millisecond},
		{"an idle sweep that took nothing waits the interval", settle, 0, false, 500 * time.Millisecond},
		{"an idle sweep on a slow store waits a hundred times what it took", settle, 20 * time.Millisecond, false, 2 * time.Second},
		{"an idle sweep on a very slow store waits the bound at most", settle, 2 * time.Second, false, 3 * time.Second},
		{"an idle sweep that took longer than the bound waits as long as it took", settle, 5 * time.Second, false, 5 * time.Second},
		{"a sweep that found work on a fast store looks again nearly at once", settle, time.Millisecond, true, 100 * time.Millisecond},
		{"a sweep that found work in no time looks again at once", settle, 0, true, 0},
		{"a sweep that found work on a slow store looks again after the interval", settle, 2 * time.Second, true, 500 * time.Millisecond},
		{"a bound below the interval is the interval", application.Pace{Interval: 10 * time.Second, Bound: time.Second}, time.Second, false, 10 * time.Second},
		{"a pace without a bound waits the interval on a slow store", application.Pace{Interval: time.Second}, 20 * time.Millisecond, false, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.pace.Next(c.took, c.found); got != c.want {
				t.Errorf("%+v.Next(%s, %t) = %s, want %s", c.pace, c.took, c.found, got, c.want)
			}
		})
	}
}

package httpapi

import (
	"context"
	"fmt"
	"github.com/pixgate/pixgate/adapters/memory"
	"sync"
	"testing"
	"time"
)

// The budget of wrong secrets per client_id (TokenLimits). The HTTP behaviour, with many client
// addresses, is tested through the whole API in oauth_http_test.go.
func TestClientGuessBudget(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	newBudgets := func(perMinute int) (*failureBudgets, *FakeClock) {
		clock := NewFakeClock(start)
		return newFailureBudgets(perMinute, clock), clock
	}
	// guessWrong checks a wrong secret from addr: "401" (checked within the budget), "429
	// checked" (checked past it) or "429 unchecked".
	guessWrong := func(f *failureBudgets, client, addr string) string {
		g, ok, _ := f.admit(client, addr)
		if !ok {
			return "429 unchecked"
		}
		if over, _ := f.wrongSecret(g); over {
			return "429 checked"
		}
		return "401"
	}
	rightSecret := func(f *failureBudgets, client, addr string) bool {
		g, ok, _ := f.admit(client, addr)
		if ok {
			f.release(g)
		}
		return ok
	}

	t.Run("under the budget every secret is checked and a right one spends nothing", func(t *testing.T) {
		f, _ := newBudgets(3)
		for i := range 10 {
			if !rightSecret(f, "client", fmt.Sprint("addr-", i)) {
				t.Fatalf("right secret %d was not checked", i)
			}
		}
		for i := range 3 {
			if got := guessWrong(f, "client", "guesser"); got != "401" {
				t.Fatalf("guess %d: %s, want 401", i, got)
			}
		}
	})
	t.Run("past the budget an address that guessed is refused unchecked and any other is checked", func(t *testing.T) {
		f, _ := newBudgets(2)
		want := []struct{ addr, answer string }{
			{"a", "401"}, {"b", "401"}, // the budget
			{"c", "429 checked"}, {"a", "429 unchecked"}, {"c", "429 unchecked"},
		}
		for _, w := range want {
			if got := guessWrong(f, "client", w.addr); got != w.answer {
				t.Fatalf("a guess from %s: %s, want %s", w.addr, got, w.answer)
			}
		}
		if !rightSecret(f, "client", "d") {
			t.Fatal("an address that never guessed is not checked")
		}
		if rightSecret(f, "client", "a") {
			t.Fatal("an address that guessed is checked past the budget")
		}
		if !rightSecret(f, "other-client", "a") {
			t.Fatal("guessing one client_id's secret refuses the address for another client_id")
		}
	})
	t.Run("the refusal says when the budget holds a failure again and the budget refills", func(t *testing.T) {
		f, clock := newBudgets(3) // one failure every 20 s
		for _, addr := range []string{"a", "b", "c"} {
			guessWrong(f, "client", addr)
		}
		if _, ok, wait := f.admit("client", "a"); ok || wait != 20*time.Second {
			t.Fatalf("admit = %v, %s; want refused for 20 s", ok, wait)
		}
		clock.Advance(20 * time.Second)
		if got := guessWrong(f, "client", "a"); got != "401" {
			t.Fatalf("a guess after 20 s: %s, want it checked within the budget", got)
		}
	})
	t.Run("concurrent guesses never take more than the budget", func(t *testing.T) {
		f, _ := newBudgets(10)
		var mu sync.Mutex
		answers := map[string]int{}
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				got := guessWrong(f, "client", fmt.Sprint("addr-", i))
				mu.Lock()
				answers[got]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if answers["401"] != 10 || answers["429 checked"] != 90 {
			t.Fatalf("answers %v, want 10 within the budget and 90 past it", answers)
		}
	})
	t.Run("idle client_ids are dropped with what they remember", func(t *testing.T) {
		f, clock := newBudgets(3)
		for i := range 50 {
			guessWrong(f, fmt.Sprint("client-", i), "a")
		}
		clock.Advance(2 * time.Minute)
		guessWrong(f, "another", "a") // the sweep runs on the next request
		f.mu.Lock()
		defer f.mu.Unlock()
		if n := len(f.budgets); n != 1 {
			t.Fatalf("%d budgets kept, want only the new one", n)
		}
	})
	t.Run("instances sharing the limits hold a share each", func(t *testing.T) {
		clock := NewFakeClock(start)
		reg := memory.NewInstances()
		var limits []*TokenLimits
		var shares []*RateShare
		for _, id := range []string{"a", "b", "c"} {
			l := NewTokenLimits(10, 20, 6, clock)
			limits, shares = append(limits, l), append(shares, NewRateShare(reg, id, clock, nil, l))
		}
		for range 2 { // the first beats see fewer instances
			for _, s := range shares {
				if _, err := s.Beat(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		checked := 0
		for i := range 30 { // wrong secrets spread round-robin over the three
			if got := guessWrong(limits[i%3].guesses, "client", fmt.Sprint("addr-", i)); got == "401" {
				checked++
			}
		}
		if checked != 6 {
			t.Fatalf("%d wrong secrets answered 401 across three instances, want the configured 6", checked)
		}
	})
}

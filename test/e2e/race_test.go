package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentWithdrawalsNeverOverdrawOnMongoDB sends 20 concurrent POST /withdrawal, each
// of a third of the balance, through one pixgate container: with the fee only two fit, so at
// most two succeed (exactly two once the busy answers are retried), every other answers 422
// insufficient_balance, and the balance, watched all along, never goes below zero.
func TestConcurrentWithdrawalsNeverOverdrawOnMongoDB(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)
	withdrawalRace(t, []*pixgate{p})
}

// TestConcurrentWithdrawalsNeverOverdrawThroughTwoInstances is the same race through two
// pixgate containers sharing the database. The ledger's balance check rests on a unique index
// (each account's entries are numbered, and one writer only takes a number), which FerretDB
// enforces between clients as MongoDB does, so it runs on both.
func TestConcurrentWithdrawalsNeverOverdrawThroughTwoInstances(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p1 := s.startPixgate("pixgate-1", nil)
	p2 := s.startPixgate("pixgate-2", nil)
	withdrawalRace(t, []*pixgate{p1, p2})
}

// withdrawalRace funds the account with 90000 cents and races 20 withdrawals of 30000 (plus
// the fee of 150) spread over the instances.
func withdrawalRace(t *testing.T, instances []*pixgate) {
	p := instances[0]
	for i := range 3 {
		tx := p.charge(30_000+txFee, fmt.Sprintf("race-%s-%d", runTag, i))
		p.sandbox("transaction", tx["id"].(string), "pay")
	}
	const funds, third = 90_000, 30_000
	p.wantBalance("funded", funds, 0, 0)
	const affordable = funds / (third + wdFee) // 2

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := make(chan struct{})
	var lowest atomic.Int64
	lowest.Store(funds)
	var polls atomic.Int64
	watched := make(chan struct{})
	go func() {
		// Meanwhile the balance never goes below zero, on any instance.
		defer close(watched)
		for i := 0; i < 2_000; i++ {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			r, err := instances[i%len(instances)].call(ctx, "GET", "/balance", nil)
			if err != nil || r.status != http.StatusOK {
				t.Errorf("GET /balance during the race: %v %s", err, r)
				return
			}
			m, err := r.decode()
			if err != nil {
				t.Errorf("GET /balance during the race: %v", err)
				return
			}
			polls.Add(1)
			if a := cents(m["available"]); a < lowest.Load() {
				lowest.Store(a)
			}
		}
	}()

	var (
		wg                        sync.WaitGroup
		created, refused, retried atomic.Int64
		statusesMu                sync.Mutex
		unexpected                []string
		createdIDs                []string
	)
	for i := range 20 {
		wg.Go(func() {
			inst := instances[i%len(instances)]
			// A 503 (a reservation that kept losing races) is an answer a client retries.
			for attempt := 0; attempt < 5; attempt++ {
				r, err := inst.call(ctx, "POST", "/withdrawal", withdrawalBody(third))
				switch {
				case err != nil:
					t.Errorf("POST /withdrawal: %v", err)
				case r.status == http.StatusCreated:
					created.Add(1)
					m, _ := r.decode()
					id, _ := m["id"].(string)
					statusesMu.Lock()
					createdIDs = append(createdIDs, id)
					statusesMu.Unlock()
				case r.status == http.StatusUnprocessableEntity && r.problem() == "insufficient_balance":
					refused.Add(1)
				case r.status == http.StatusServiceUnavailable && r.problem() == "unavailable":
					retried.Add(1)
					after, _ := strconv.Atoi(r.header.Get("Retry-After"))
					time.Sleep(time.Duration(max(after, 1)) * 100 * time.Millisecond)
					continue
				default:
					statusesMu.Lock()
					unexpected = append(unexpected, r.String())
					statusesMu.Unlock()
				}
				return
			}
			t.Errorf("POST /withdrawal still busy after 5 attempts")
		})
	}
	wg.Wait()
	close(stop)
	<-watched

	t.Logf("%d created, %d refused, %d busy answers retried; balance watched %d times, lowest available %d",
		created.Load(), refused.Load(), retried.Load(), polls.Load(), lowest.Load())
	if len(unexpected) > 0 {
		t.Errorf("unexpected answers: %v", unexpected)
	}
	if lowest.Load() < 0 {
		t.Errorf("available went down to %d during the race", lowest.Load())
	}
	if created.Load() > affordable {
		t.Fatalf("%d withdrawals of %d created on a balance of %d: overdrawn", created.Load(), third, funds)
	}
	if created.Load() != affordable || refused.Load() != 20-affordable {
		t.Errorf("%d created and %d refused, want %d and %d", created.Load(), refused.Load(), affordable, 20-affordable)
	}
	left := funds - created.Load()*(third+wdFee)
	p.wantBalance("after the race", left, 0, 0)
	for _, id := range createdIDs {
		p.waitStatus("/withdrawal/"+id, "PROCESSED", 30*time.Second)
	}
	p.wantBalance("once processed", left, 0, 0)
}

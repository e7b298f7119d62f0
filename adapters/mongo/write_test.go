package mongo

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// operators lists the update operators of u, in order.
func operators(u bson.D) []string {
	var out []string
	for _, e := range u {
		out = append(out, e.Key)
	}
	return out
}

func TestVersionedUpdateWritesOnlyWhatTheChangeRaised(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	fields := bson.D{{Key: "status", Value: "PAID"}}
	event := domain.Event{ID: "e1", Type: "transaction.paid", CreatedAt: now, WebhookURL: "https://example.com/hook"}
	pending := []postingDoc{{ID: "p1", Amount: 100}}
	for _, c := range []struct {
		name    string
		events  []domain.Event
		pending []postingDoc
		want    []string
	}{
		{"a change with nothing else only sets its fields", nil, nil, []string{"$set"}},
		{"an event moves the outbox revision and opens the outbox", []domain.Event{event}, nil,
			[]string{"$set", "$inc", "$push", "$min", "$max"}},
		{"pending postings are pushed and lower ledgerDue, leaving the outbox alone", nil, pending,
			[]string{"$set", "$push", "$min"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := versionedUpdate(fields, c.events, c.pending, now)
			if got := fmt.Sprint(operators(u)); got != fmt.Sprint(c.want) {
				t.Fatalf("operators %s, want %s", got, fmt.Sprint(c.want))
			}
		})
	}
}

func TestAWriteThatMayHaveLandedKeepsWhatItTook(t *testing.T) {
	cause := fmt.Errorf("update transactions t1: %w", ports.ErrUnavailable)
	wrapped := fmt.Errorf("outer: %w", &writeUnknown{cause})
	if !mayHaveLanded(wrapped) {
		t.Fatal("a wrapped writeUnknown is not seen")
	}
	if !errors.Is(wrapped, ports.ErrUnavailable) {
		t.Fatal("writeUnknown hides the port's error")
	}
	if wrapped.Error() != "outer: "+cause.Error() {
		t.Fatalf("writeUnknown changes the text: %q", wrapped.Error())
	}
	if mayHaveLanded(cause) {
		t.Fatal("a plain error is taken for a write that may have landed")
	}
	// fail gives nothing back for such a cause: with postings held and no ledger at hand, it
	// must answer the cause without touching the ledger.
	held := &checkedPostings{mine: []domain.Posting{{ID: "hold", Amount: 1, Checked: true}}}
	if err := held.fail(context.Background(), wrapped); !errors.Is(err, wrapped) {
		t.Fatalf("fail answered %v", err)
	}
	if len(held.mine) != 1 {
		t.Fatal("fail forgot the postings of a write that may have landed")
	}
}

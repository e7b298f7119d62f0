package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/testdb"
)

// TestClaims checks the write claims' life cycle on the server: a claim held by a live writer
// makes the others lose the race, one left by a writer that died is taken over once older than
// RecoverAfter, and a finished write leaves no claim behind.
func TestClaims(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	cfg.MaxRetries = 3
	store := testdb.OpenStore(t, srv, cfg)
	claims := testdb.Client(t, srv).Database(cfg.Database).Collection("claims")
	ctx := ctxTimeout(t, time.Minute)
	// The claim of a new transaction's state: version 1, outbox revision 0, generation 0.
	claimOf := func(id string) string { return fmt.Sprintf("transactions/%s/v1/o0#0", id) }

	t.Run("a live claim makes the writer lose the race; a stale one is taken over", func(t *testing.T) {
		tx := paidTransaction(t, newID(), 1000, base)
		if err := store.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if _, err := claims.InsertOne(ctx, bson.D{{Key: "_id", Value: claimOf(tx.ID())}, {Key: "at", Value: time.Now().UTC()}}); err != nil {
			t.Fatal(err)
		}
		_, err := store.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Hour)))
		if !errors.Is(err, ports.ErrVersionConflict) {
			t.Fatalf("Update beside another writer's live claim = %v, want ErrVersionConflict", err)
		}
		// The writer died: its claim is as old as RecoverAfter and more.
		old := time.Now().UTC().Add(-time.Minute)
		if _, err := claims.UpdateOne(ctx, bson.D{{Key: "_id", Value: claimOf(tx.ID())}}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: old}}}}); err != nil {
			t.Fatal(err)
		}
		got, err := store.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Hour)))
		if err != nil || got.Version() != tx.Version()+1 {
			t.Fatalf("Update beside a stale claim = %v, %v; want it stored at version %d", got, err, tx.Version()+1)
		}
		if n, err := claims.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
			t.Errorf("%d claims left, %v; want none (the stale one goes with the taker's)", n, err)
		}
	})

	t.Run("Config.NoClaims writes without claiming", func(t *testing.T) {
		cfg := cfg
		cfg.NoClaims = true
		bare := testdb.OpenStore(t, srv, cfg)
		tx := paidTransaction(t, newID(), 1000, base)
		if err := bare.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if _, err := claims.InsertOne(ctx, bson.D{{Key: "_id", Value: claimOf(tx.ID())}, {Key: "at", Value: time.Now().UTC()}}); err != nil {
			t.Fatal(err)
		}
		if _, err := bare.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Hour))); err != nil {
			t.Fatalf("Update without claims beside a claim: %v", err)
		}
	})
}

// TestInstanceRegistry: two instances on one database count each other, and one that leaves
// stops counting at once.
func TestInstanceRegistry(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t, nil)
	ctx := context.Background()
	now := time.Now()
	var _ ports.InstanceRegistry = a.Instances()
	if n, err := a.Instances().Heartbeat(ctx, "a", now, 10*time.Second); err != nil || n != 1 {
		t.Fatalf("first heartbeat = %d, %v; want 1", n, err)
	}
	if n, err := b.Instances().Heartbeat(ctx, "b", now.Add(time.Second), 10*time.Second); err != nil || n != 2 {
		t.Fatalf("second instance's heartbeat = %d, %v; want 2", n, err)
	}
	if n, _ := a.Instances().Heartbeat(ctx, "a", now.Add(12*time.Second), 10*time.Second); n != 1 {
		t.Errorf("b silent for 11 s of a 10 s time to live: a counts %d, want 1", n)
	}
	if err := b.Instances().Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Instances().Heartbeat(ctx, "a", now.Add(13*time.Second), 10*time.Second); n != 1 {
		t.Errorf("after b left: a counts %d, want 1", n)
	}
}

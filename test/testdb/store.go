package testdb

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
)

var (
	dbCounter atomic.Int64
	unsafe    = regexp.MustCompile(`[^a-z0-9]+`)
	runID     = fmt.Sprintf("%x", time.Now().UnixNano()%0xffffff)
)

// DatabaseName is a database name of the test's own: its name, shortened, and a counter, so
// that tests sharing a server never see each other's data. Names fit MongoDB's and FerretDB's
// rules (at most 63 characters of [a-z0-9_]).
func DatabaseName(t testing.TB) string {
	name := strings.Trim(unsafe.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	suffix := fmt.Sprintf("_%s_%d", runID, dbCounter.Add(1))
	if max := 63 - len("t_") - len(suffix); len(name) > max {
		name = name[len(name)-max:]
	}
	return "t_" + name + suffix
}

// Config is the adapter's configuration for a database of the test's own on s.
func (s *Server) Config(t testing.TB) pixmongo.Config {
	return pixmongo.Config{URI: s.URI(), Database: DatabaseName(t), OpTimeout: 20 * time.Second}
}

// OpenStore opens the adapter on cfg (Server.Config, possibly changed), and closes it and
// drops its database when the test ends.
func OpenStore(t testing.TB, s *Server, cfg pixmongo.Config) *pixmongo.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := pixmongo.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open the store on %s: %v", s.URI(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := store.Close(ctx); err != nil {
			t.Errorf("close the store: %v", err)
		}
		DropDatabase(t, s, cfg.Database)
	})
	return store
}

// Client is a driver client of the test's own on s, disconnected when the test ends: for
// looking at what the adapter stored, or writing behind its back.
func Client(t testing.TB, s *Server) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// DropDatabase drops a test's database; a failure is only logged (the server goes away with
// the test binary anyway).
func DropDatabase(t testing.TB, s *Server, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI()))
	if err != nil {
		t.Logf("drop database %s: %v", name, err)
		return
	}
	defer c.Disconnect(ctx)
	if err := c.Database(name).Drop(ctx); err != nil {
		t.Logf("drop database %s: %v", name, err)
	}
}

package mongo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/pixgate/pixgate/ports"
)

// Config tells Open where the database is and how patient to be with it. Zero durations and
// counts take the defaults listed beside them.
type Config struct {
	// URI is a MongoDB connection string: "mongodb://host:27017", a replica set or a mongos.
	URI string
	// Database is the database holding pixgate's collections.
	Database string

	// OpTimeout bounds each call of a port method, retries included (default 5s). A call that
	// runs out of it answers ports.ErrUnavailable.
	OpTimeout time.Duration
	// OpenTimeout bounds Open: connecting, the first ping and creating the indexes
	// (default 30s).
	OpenTimeout time.Duration
	// ServerSelectionTimeout is how long the driver looks for a usable server before giving up
	// on one operation (default 5s; OpTimeout still bounds it).
	ServerSelectionTimeout time.Duration
	// MaxPoolSize bounds the connections to each server (default 100); MinPoolSize keeps some
	// open (default 0).
	MaxPoolSize uint64
	MinPoolSize uint64
	// MaxRetries bounds how often a contended write is retried: a closure-shaped update that
	// lost the race to the version check, a reservation that lost its sequence number
	// (default 64). After that the call answers ports.ErrVersionConflict.
	MaxRetries int
}

func (c Config) withDefaults() Config {
	if c.OpTimeout <= 0 {
		c.OpTimeout = 5 * time.Second
	}
	if c.OpenTimeout <= 0 {
		c.OpenTimeout = 30 * time.Second
	}
	if c.ServerSelectionTimeout <= 0 {
		c.ServerSelectionTimeout = 5 * time.Second
	}
	if c.MaxPoolSize == 0 {
		c.MaxPoolSize = 100
	}
	if c.MaxRetries <= 0 {
		c.MaxRetries = 64
	}
	return c
}

// Collection names.
const (
	collTransactions = "transactions"
	collWithdrawals  = "withdrawals"
	collAccounts     = "accounts"
	collCredentials  = "credentials"
)

// Store is a connection to one MongoDB database and the repositories built on it. It is safe
// for concurrent use; the driver keeps a pool of connections and reconnects by itself when the
// database comes back after an outage, so a Store lives as long as the program.
type Store struct {
	cfg    Config
	client *mdb.Client
	db     *mdb.Database
	locks  *localLocks

	transactions *TransactionRepository
	withdrawals  *WithdrawalRepository
	outbox       *Outbox
	accounts     *AccountRepository
}

var _ ports.Pinger = (*Store)(nil)

// Open connects to the database, checks that it answers and creates the indexes the
// repositories need (creating an index that exists is a no-op). A database that cannot be
// reached answers ports.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" || cfg.Database == "" {
		return nil, errors.New("mongo: a URI and a database name are required")
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.OpenTimeout)
	defer cancel()

	opts := options.Client().ApplyURI(cfg.URI).
		SetAppName("pixgate").
		SetMaxPoolSize(cfg.MaxPoolSize).
		SetMinPoolSize(cfg.MinPoolSize).
		SetServerSelectionTimeout(cfg.ServerSelectionTimeout).
		// Majority on both sides: an acknowledged write survives a failover, and a read never
		// returns what a failover could roll back (the reservation argument in doc.go relies
		// on reads that do not go backwards).
		SetWriteConcern(writeconcern.Majority()).
		SetReadConcern(readconcern.Majority()).
		SetReadPreference(readpref.Primary())
	client, err := mdb.Connect(opts)
	if err != nil {
		// Connect only parses and validates options; it does no I/O.
		return nil, fmt.Errorf("mongo: %v", err)
	}
	s := &Store{cfg: cfg, client: client, db: client.Database(cfg.Database), locks: newLocalLocks()}
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, mapErr(ctx, "open", err)
	}
	if err := s.createIndexes(ctx); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	s.transactions = &TransactionRepository{s: s, coll: s.db.Collection(collTransactions)}
	s.withdrawals = &WithdrawalRepository{s: s, coll: s.db.Collection(collWithdrawals), txColl: s.db.Collection(collTransactions)}
	s.outbox = &Outbox{s: s, txColl: s.db.Collection(collTransactions), wdColl: s.db.Collection(collWithdrawals)}
	s.accounts = &AccountRepository{s: s, accounts: s.db.Collection(collAccounts), credentials: s.db.Collection(collCredentials)}
	return s, nil
}

// Close closes the connections, waiting for operations in flight until ctx ends.
func (s *Store) Close(ctx context.Context) error {
	if err := s.client.Disconnect(ctx); err != nil {
		return fmt.Errorf("mongo: close: %v", err)
	}
	return nil
}

// Ping answers nil when the primary answers within the operation timeout, ports.ErrUnavailable
// otherwise.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("%w: ping: %v", ports.ErrUnavailable, err)
	}
	return nil
}

// Transactions returns the transaction repository.
func (s *Store) Transactions() *TransactionRepository { return s.transactions }

// Withdrawals returns the withdrawal repository.
func (s *Store) Withdrawals() *WithdrawalRepository { return s.withdrawals }

// Outbox returns the outbox of both transactions and withdrawals.
func (s *Store) Outbox() *Outbox { return s.outbox }

// Accounts returns the account repository.
func (s *Store) Accounts() *AccountRepository { return s.accounts }

// op bounds one port call by the operation timeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.OpTimeout)
}

// lock takes the in-process lock of key (see localLocks), mapping a context that ends while
// waiting like any other timeout.
func (s *Store) lock(ctx context.Context, key string) (func(), error) {
	unlock, err := s.locks.lock(ctx, key)
	if err != nil {
		return nil, mapErr(ctx, "wait for "+key, err)
	}
	return unlock, nil
}

// backoff waits a little before retry number attempt of a contended write, growing with the
// attempt and jittered so that the contenders spread out. It answers ctx's error when ctx
// ends first.
func backoff(ctx context.Context, attempt int) error {
	limit := time.Duration(1<<min(attempt, 5)) * time.Millisecond // 1ms .. 32ms
	t := time.NewTimer(rand.N(limit) + time.Millisecond/2)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// findAll runs a find and converts every document it returns, answering the ports' errors:
// the one shape of every list read of this adapter.
func findAll[D, A any](ctx context.Context, coll *mdb.Collection, what string, filter bson.D,
	opts *options.FindOptionsBuilder, convert func(*D) (A, error)) ([]A, error) {
	cur, err := coll.Find(ctx, filter, opts)
	if err != nil {
		return nil, mapErr(ctx, what, err)
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, mapErr(ctx, what, err)
	}
	out := make([]A, 0, len(docs))
	for i := range docs {
		a, err := convert(&docs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

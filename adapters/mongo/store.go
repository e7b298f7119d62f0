package mongo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// OpenTimeout bounds connecting, the first ping and creating the indexes (default 30s).
	// The ledger migration Open runs next, on a database written before the ledger, is bounded
	// by Open's context only, each of its calls by OpTimeout.
	OpenTimeout time.Duration
	// ServerSelectionTimeout is how long the driver looks for a usable server before giving up
	// on one operation (default 5s; OpTimeout still bounds it).
	ServerSelectionTimeout time.Duration
	// MaxPoolSize bounds the connections to each server (default 100); MinPoolSize keeps some
	// open (default 0).
	MaxPoolSize uint64
	MinPoolSize uint64
	// MaxRetries bounds how often a contended write is retried: a closure-shaped update that
	// lost the race to the version check, a ledger post that lost its entry's number
	// (default 64). After that the call answers ports.ErrVersionConflict.
	MaxRetries int
	// RecoverAfter is how old a half-done status change must be before Ledger().Recover
	// finishes it (default 10s, and at least twice OpTimeout). It must exceed OpTimeout, the
	// longest a call may still be writing: Recover gives back the balance a checked posting
	// held when its status change is not stored, which is right only once the call that would
	// store it is over; and the instances' clocks must agree to well within RecoverAfter less
	// OpTimeout, since Recover compares its clock with the posting instance's. Open refuses a
	// value that does not exceed OpTimeout.
	RecoverAfter time.Duration
	// Clock stamps the marks Recover reads, tells Recover the time, and dates the entries of
	// postings that carry no date of their own (late payments, opening balances); transitions
	// date theirs with the application's clock (default: the system's clock). Tests set it to
	// look at the database from a later moment.
	Clock ports.Clock
	// NoClaims skips the write claims (claims.go) that keep two instances from writing one
	// document at once. It is correct only when a single instance writes to the database (its
	// in-process locks then suffice), or on a server that applies a conditional update
	// atomically (MongoDB); never with several instances on FerretDB. pixgate leaves it off;
	// the benchmarks set it to measure what the claims cost.
	NoClaims bool
	// Logger receives the one line of a ledger migration and the warnings of ledger work left
	// to Recover (counts, ids and error texts only, never amounts or customer data); nil
	// discards them.
	Logger *slog.Logger
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
	if c.RecoverAfter <= 0 {
		c.RecoverAfter = max(10*time.Second, 2*c.OpTimeout)
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Collection names.
const (
	collTransactions = "transactions"
	collWithdrawals  = "withdrawals"
	collAccounts     = "accounts"
	collCredentials  = "credentials"
	collLedger       = "ledger"
	collPayments     = "payments"
	collInstances    = "instances"
)

// Store is a connection to one MongoDB database and the repositories built on it. It is safe
// for concurrent use; the driver keeps a pool of connections and reconnects by itself when the
// database comes back after an outage, so a Store lives as long as the program.
type Store struct {
	cfg    Config
	client *mdb.Client
	db     *mdb.Database
	locks  *localLocks
	// ledgerLocks serialise the posts to one account's ledger inside this process. They are a
	// set apart from locks: a writer holding a document's lock posts its entries, so it holds
	// one of each, always in that order, and never two of one set.
	ledgerLocks *localLocks
	// claims holds the write claims that make writes to one document exclusive across
	// instances (claims.go).
	claims *mdb.Collection

	transactions *TransactionRepository
	withdrawals  *WithdrawalRepository
	outbox       *Outbox
	accounts     *AccountRepository
	ledger       *LedgerRepository
}

var _ ports.Pinger = (*Store)(nil)

// Open connects to the database, checks that it answers, creates the indexes the
// repositories need (creating an index that exists is a no-op) and brings a database written
// before the ledger to it (MigrateLedger), then gives transactions written before the hosted
// payment page their tokens and indexes them (MigratePaymentTokens), and schedules the live
// withdrawals written before the payout outbox (MigratePayouts). A database that cannot be reached answers
// ports.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" || cfg.Database == "" {
		return nil, errors.New("mongo: a URI and a database name are required")
	}
	cfg = cfg.withDefaults()
	if cfg.RecoverAfter <= cfg.OpTimeout {
		return nil, fmt.Errorf("mongo: RecoverAfter (%s) must exceed OpTimeout (%s)", cfg.RecoverAfter, cfg.OpTimeout)
	}
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	m, err := s.MigrateLedger(ctx)
	if err != nil {
		_ = s.client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if m.Accounts > 0 || m.Entries > 0 {
		cfg.Logger.Info("mongo: ledger migrated", "accounts", m.Accounts, "entries", m.Entries)
	}
	tokens, err := s.MigratePaymentTokens(ctx)
	if err != nil {
		_ = s.client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if tokens > 0 {
		cfg.Logger.Info("mongo: payment tokens given to earlier transactions", "transactions", tokens)
	}
	payouts, err := s.MigratePayouts(ctx)
	if err != nil {
		_ = s.client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if payouts > 0 {
		cfg.Logger.Info("mongo: earlier withdrawals scheduled for the payout outbox", "withdrawals", payouts)
	}
	return s, nil
}

// connect connects, pings, creates the indexes and builds the repositories, within
// OpenTimeout.
func connect(ctx context.Context, cfg Config) (*Store, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.OpenTimeout)
	defer cancel()

	opts := options.Client().ApplyURI(cfg.URI).
		SetAppName("pixgate").
		SetMaxPoolSize(cfg.MaxPoolSize).
		SetMinPoolSize(cfg.MinPoolSize).
		SetServerSelectionTimeout(cfg.ServerSelectionTimeout).
		// Majority on both sides: an acknowledged write survives a failover, and a read never
		// returns what a failover could roll back (the ledger's argument, docs/adr/0007, relies on
		// reads that do not go backwards).
		SetWriteConcern(writeconcern.Majority()).
		SetReadConcern(readconcern.Majority()).
		SetReadPreference(readpref.Primary())
	client, err := mdb.Connect(opts)
	if err != nil {
		// Connect only parses and validates options; it does no I/O.
		return nil, fmt.Errorf("mongo: %v", err)
	}
	s := &Store{cfg: cfg, client: client, db: client.Database(cfg.Database), locks: newLocalLocks(), ledgerLocks: newLocalLocks()}
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, mapErr(ctx, "open", err)
	}
	if err := s.createIndexes(ctx); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	s.claims = s.db.Collection(collClaims)
	s.transactions = &TransactionRepository{s: s, coll: s.db.Collection(collTransactions)}
	s.withdrawals = &WithdrawalRepository{s: s, coll: s.db.Collection(collWithdrawals)}
	s.ledger = &LedgerRepository{s: s, entries: s.db.Collection(collLedger), payments: s.db.Collection(collPayments),
		txColl: s.db.Collection(collTransactions), wdColl: s.db.Collection(collWithdrawals),
		migrations: s.db.Collection(collMigrations)}
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

// Ledger returns the ledger.
func (s *Store) Ledger() *LedgerRepository { return s.ledger }

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

// lockLedger takes the in-process lock of the account's ledger (see Store.ledgerLocks).
func (s *Store) lockLedger(ctx context.Context, accountID string) (func(), error) {
	unlock, err := s.ledgerLocks.lock(ctx, accountID)
	if err != nil {
		return nil, mapErr(ctx, "wait for the ledger of "+accountID, err)
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

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/pixgate/pixgate/test/testdb"
)

// Helpers of the ledger suites (ledger_faults_test.go): the audit run as the operator runs it,
// the statement read page by page, and a look at the ledger's collections behind pixgate's back.

// verifyRun is one `pixgate ledger verify` run: its exit code and its output.
type verifyRun struct {
	code   int
	output string
}

// ok tells whether the audit passed: exit 0 and the summary line ending in OK.
func (v verifyRun) ok() bool { return v.code == 0 && strings.Contains(v.output, ": OK") }

// ledgerVerify runs `pixgate ledger verify` (args after it) in a one-off container of the
// pixgate image, on the stack's network with the stack's settings, as an operator would run it
// beside the serving instances, and returns its exit code and output once it has exited.
func (s *stack) ledgerVerify(args ...string) verifyRun {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctr, err := testcontainers.Run(ctx, s.image,
		testcontainers.WithEnv(s.env),
		testcontainers.WithCmd(append([]string{"ledger", "verify"}, args...)...),
		testdb.WithLabels("e2e-ledger-verify"),
		tcnetwork.WithNetworkName([]string{"ledger-verify"}, s.network.Name),
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(2*time.Minute).WithPollInterval(200*time.Millisecond)),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("run pixgate ledger verify: %v", err)
	}
	state, err := ctr.State(ctx)
	if err != nil {
		t.Fatalf("state of pixgate ledger verify: %v", err)
	}
	rc, err := ctr.Logs(ctx)
	if err != nil {
		t.Fatalf("output of pixgate ledger verify: %v", err)
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	return verifyRun{code: state.ExitCode, output: strings.TrimSpace(string(out))}
}

// statementLine is one line of GET /balance/entries, as the test reads it.
type statementLine struct {
	id, kind           string
	available, blocked int64 // the signed changes
	afterAvailable     int64
	afterBlocked       int64
}

// statement reads the merchant's whole statement, newest first, 100 lines a page, following
// nextCursor (at most 1000 pages).
func (p *pixgate) statement() []statementLine {
	p.t.Helper()
	var out []statementLine
	cursor := ""
	for range 1000 {
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		m := p.want(http.StatusOK, "GET", "/balance/entries?"+q.Encode(), nil).object(p.t)
		data, _ := m["data"].([]any)
		for _, item := range data {
			e := item.(map[string]any)
			after, _ := e["balanceAfter"].(map[string]any)
			out = append(out, statementLine{id: fmt.Sprint(e["id"]), kind: fmt.Sprint(e["type"]),
				available: cents(e["available"]), blocked: cents(e["blocked"]),
				afterAvailable: cents(after["available"]), afterBlocked: cents(after["blocked"])})
		}
		next, _ := m["nextCursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
	p.t.Fatalf("the statement has more than 1000 pages")
	return nil
}

// wantBalanceIsStatement checks that GET /balance is what the statement adds up to, and what
// its newest line's balanceAfter says, and returns [available, blocked, pending].
func (p *pixgate) wantBalanceIsStatement() [3]int64 {
	p.t.Helper()
	b := p.balance()
	lines := p.statement()
	var available, blocked int64
	for _, l := range lines {
		available += l.available
		blocked += l.blocked
	}
	if available != b[0] || blocked != b[1] {
		p.t.Errorf("GET /balance answers available %d blocked %d; the %d lines of GET /balance/entries add up to %d and %d",
			b[0], b[1], len(lines), available, blocked)
	}
	if len(lines) > 0 && (lines[0].afterAvailable != b[0] || lines[0].afterBlocked != b[1]) {
		p.t.Errorf("the newest statement line %s leaves available %d blocked %d; GET /balance answers %d and %d",
			lines[0].id, lines[0].afterAvailable, lines[0].afterBlocked, b[0], b[1])
	}
	p.t.Logf("GET /balance [available blocked pending] = %v, the sum of %d statement lines", b, len(lines))
	return b
}

// ledgerDB is the stack's database, for the test process: to see what a kill left half done,
// and to break the ledger on purpose.
func (s *stack) ledgerDB() *mdb.Database {
	return testdb.Client(s.t, s.db).Database(s.env["PIXGATE_MONGODB_DATABASE"])
}

// leftovers counts what a crash leaves for Ledger.Recover: resource documents whose postings
// were never posted (ledgerDue set) and checked entries whose status change is not known to be
// stored (open set).
type leftovers struct{ pendingDocs, openEntries int64 }

func (l leftovers) none() bool { return l.pendingDocs == 0 && l.openEntries == 0 }

func (l leftovers) String() string {
	return fmt.Sprintf("%d documents with pending postings, %d open entries", l.pendingDocs, l.openEntries)
}

func countLeftovers(ctx context.Context, db *mdb.Database) (leftovers, error) {
	var l leftovers
	due := bson.D{{Key: "ledgerDue", Value: bson.D{{Key: "$exists", Value: true}}}}
	for _, coll := range []string{"transactions", "withdrawals"} {
		n, err := db.Collection(coll).CountDocuments(ctx, due)
		if err != nil {
			return l, err
		}
		l.pendingDocs += n
	}
	n, err := db.Collection("ledger").CountDocuments(ctx, bson.D{{Key: "open", Value: bson.D{{Key: "$exists", Value: true}}}})
	l.openEntries = n
	return l, err
}

// inFlight counts the resources the sandbox has yet to settle: refunds and withdrawals in
// progress.
func inFlight(ctx context.Context, db *mdb.Database) (int64, error) {
	a, err := db.Collection("transactions").CountDocuments(ctx, bson.D{{Key: "status", Value: "PROCESSING_REFUND"}})
	if err != nil {
		return 0, err
	}
	b, err := db.Collection("withdrawals").CountDocuments(ctx, bson.D{{Key: "status", Value: "PROCESSING"}})
	return a + b, err
}

// waitLedgerWhole waits, within at most, until Recover has finished what the kills left:
// no document with pending postings, no open entry. It fails the test when that does not
// happen in time, and answers how long it took.
func (s *stack) waitLedgerWhole(within time.Duration) time.Duration {
	t := s.t
	t.Helper()
	db := s.ledgerDB()
	start := time.Now()
	eventually(t, within, "Recover to finish what the kills left", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err := countLeftovers(ctx, db)
		if err != nil {
			return false, err.Error()
		}
		return l.none(), l.String()
	})
	return time.Since(start)
}

// waitSettled waits, within at most, until Recover has finished what the kills left and the
// sandbox has settled every refund and withdrawal in progress, so that the audit reads a store
// at rest. It fails the test when that does not happen in time.
func (s *stack) waitSettled(within time.Duration) {
	t := s.t
	t.Helper()
	db := s.ledgerDB()
	start := time.Now()
	eventually(t, within, "Recover and the sandbox to settle everything", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err := countLeftovers(ctx, db)
		if err != nil {
			return false, err.Error()
		}
		n, err := inFlight(ctx, db)
		if err != nil {
			return false, err.Error()
		}
		return l.none() && n == 0, fmt.Sprintf("%s; %d refunds and withdrawals in progress", l, n)
	})
	t.Logf("everything settled within %v", time.Since(start).Round(100*time.Millisecond))
}

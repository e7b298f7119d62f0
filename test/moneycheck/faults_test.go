package moneycheck_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/moneycheck"
)

// laggingLedger is a fault injected into a ledger: each balance read of an account answers
// what the read before it saw, as a store reading a stale replica would.
type laggingLedger struct {
	ports.Ledger

	mu   sync.Mutex
	last map[string]domain.Balance
}

func (l *laggingLedger) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	b, err := l.Ledger.Balance(ctx, accountID)
	if err != nil {
		return b, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, seen := l.last[accountID]
	l.last[accountID] = b
	if !seen {
		return b, nil
	}
	return prev, nil
}

// TestTheCheckerCatchesReadsThatLag runs the checker against the memory store behind a ledger
// whose balance reads lag one read behind: the reads go back in time and miss movements that
// ended before them, which the checks of reads and of linearizability must report, with the
// drawing and the history written where the report says.
func TestTheCheckerCatchesReadsThatLag(t *testing.T) {
	t.Parallel()
	s := memory.NewStore()
	in := moneycheck.Instance{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(),
		Ledger: &laggingLedger{Ledger: s.Ledger(), last: map[string]domain.Balance{}}, Accounts: memory.NewAccounts()}
	cfg := moneycheck.Config{Seed: rand.Int64(), Accounts: 1, ReportDir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := moneycheck.Run(ctx, cfg, in)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	t.Log(rep.Summary())
	found := map[int]bool{}
	for _, f := range rep.Findings {
		found[f.Check] = true
	}
	if !found[moneycheck.CheckReads] || !found[moneycheck.CheckLinearizable] {
		t.Fatalf("seed %d: the report does not say that the reads lag (check %d) and fit no order (check %d):\n%s",
			cfg.Seed, moneycheck.CheckReads, moneycheck.CheckLinearizable, rep)
	}
	if !strings.HasPrefix(rep.Dir, cfg.ReportDir) {
		t.Fatalf("the history lies in %q, want under %q", rep.Dir, cfg.ReportDir)
	}
	drawing := filepath.Join(rep.Dir, "account-"+rep.Accounts[0]+".html")
	for _, path := range []string{filepath.Join(rep.Dir, "history.txt"), drawing} {
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, want a file the report names", path, err)
		}
	}
	if !strings.Contains(rep.String(), drawing) {
		t.Errorf("the report does not name the drawing %s:\n%s", drawing, rep)
	}
}

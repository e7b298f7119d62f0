package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// TestLedgerVerifyPassesAfterAWalkOnMongoDB moves money through the public API (payments and
// their fees, a refund settled by the sandbox, a withdrawal paid out and one refunded), then
// runs `pixgate ledger verify` inside the pixgate container, against the same database: every
// entry must agree with its resource, and the command must say OK and exit 0.
func TestLedgerVerifyPassesAfterAWalkOnMongoDB(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)
	code := func(name string) string { return "ledger-" + runTag + "-" + name }

	a := p.charge(10_000, code("a"))["id"].(string)
	b := p.charge(20_000, code("b"))["id"].(string)
	p.charge(5_000, code("pending"))
	p.sandbox("transaction", a, "pay")
	p.sandbox("transaction", b, "pay")
	p.want(http.StatusAccepted, "POST", "/transaction/"+b+"/refund", map[string]any{"amount": 4_000})
	p.waitStatus("/transaction/"+b, "PAID", 30*time.Second)
	w1 := p.want(http.StatusCreated, "POST", "/withdrawal", withdrawalBody(3_000)).object(t)["id"].(string)
	w2 := p.want(http.StatusCreated, "POST", "/withdrawal", withdrawalBody(1_000)).object(t)["id"].(string)
	p.waitStatus("/withdrawal/"+w1, "PROCESSED", 30*time.Second)
	p.waitStatus("/withdrawal/"+w2, "PROCESSED", 30*time.Second)
	p.sandbox("withdrawal", w2, "refund")
	// 30000 paid less 2 fees of 100, the refund of 4000, 3000 withdrawn with its fee of 150.
	p.wantBalance("after the walk", 30_000-2*txFee-4_000-3_000-wdFee, 0, 5_000)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exit, out, err := p.ctr.Exec(ctx, []string{"/pixgate", "ledger", "verify"}, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec pixgate ledger verify: %v", err)
	}
	raw, _ := io.ReadAll(out)
	report := string(raw)
	t.Log(report)
	if exit != 0 || !strings.Contains(report, "resources checked: OK") {
		t.Fatalf("ledger verify exited %d:\n%s", exit, report)
	}
	// One merchant and the service's own ledger; 3 transactions and 2 withdrawals.
	if !strings.Contains(report, "ledger verify: 2 ledgers,") || !strings.Contains(report, " 5 resources checked") {
		t.Fatalf("ledger verify checked less than the walk made:\n%s", report)
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/sandbox"
)

// TestProductionWiringBuildsNothingOfTheSandbox: with PIXGATE_SANDBOX off, no part of the
// simulated world is built or wired: no sandbox acquirer, parties, directory, steering, routes,
// settle job or payout API; with it on, all of them are.
func TestProductionWiringBuildsNothingOfTheSandbox(t *testing.T) {
	t.Parallel()
	sandboxRoutes := func(e *env) []string {
		var names []string
		for _, n := range e.app.server.RouteNames() {
			if strings.HasPrefix(n, "sandbox.") {
				names = append(names, n)
			}
		}
		return names
	}
	sandboxJobs := func(e *env) []string {
		var names []string
		for _, j := range e.app.jobs {
			if strings.Contains(j.name, "sandbox") {
				names = append(names, j.name)
			}
		}
		return names
	}

	t.Run("off, nothing of it exists", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
		if e.app.sandbox != nil {
			t.Errorf("the sandbox's parties and directory were built: %+v", e.app.sandbox)
		}
		if _, ok := e.app.acquirer.(*sandbox.Acquirer); ok {
			t.Errorf("the sandbox acquirer returns the payers' money")
		}
		if got := sandboxRoutes(e); len(got) != 0 {
			t.Errorf("sandbox routes %v", got)
		}
		if got := sandboxJobs(e); len(got) != 0 {
			t.Errorf("sandbox jobs %v", got)
		}
		if e.app.payoutAPI != nil || e.app.payouts != nil {
			t.Errorf("withdrawals are paid out through %T", e.app.payoutAPI)
		}
	})
	t.Run("on, all of it is wired", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_SANDBOX": "true"})
		if e.app.sandbox == nil {
			t.Errorf("no sandbox world")
		}
		if _, ok := e.app.acquirer.(*sandbox.Acquirer); !ok {
			t.Errorf("acquirer %T, want the sandbox's", e.app.acquirer)
		}
		if got := sandboxRoutes(e); len(got) != 8 {
			t.Errorf("sandbox routes %v, want the 8 steering routes", got)
		}
		if got := sandboxJobs(e); len(got) != 1 {
			t.Errorf("sandbox jobs %v, want the settle job of refunds", got)
		}
		if _, ok := e.app.payoutAPI.(*sandbox.Payouts); !ok || e.app.payouts == nil {
			t.Errorf("payouts go through %T, want the sandbox's payout API", e.app.payoutAPI)
		}
	})
}

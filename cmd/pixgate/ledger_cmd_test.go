package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/domain"
)

// `pixgate ledger verify`: its command line through run(), and its audit of a memory store
// that the API filled (the same wiring as `serve`).

func runLedger(t *testing.T, vars map[string]string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"ledger"}, args...), environ(vars), &stdout, &stderr)
	return stdout.String(), err
}

func TestLedgerHelpPrintsUsageAndSucceeds(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"verify", "--help"}, {"verify", "-h"}} {
		out, err := runLedger(t, nil, args...)
		if err != nil || !strings.Contains(out, "pixgate ledger verify [--account ID]") {
			t.Fatalf("ledger %v: %v\n%s", args, err, out)
		}
	}
}

func TestLedgerCommandLineMistakesFail(t *testing.T) {
	for _, args := range [][]string{{}, {"check"}, {"verify", "extra"}, {"verify", "--acount", "x"}} {
		if _, err := runLedger(t, nil, args...); err == nil {
			t.Fatalf("ledger %v succeeded", args)
		}
	}
}

func TestLedgerVerifyOnTheMemoryStoreSaysThereIsNothingToCheck(t *testing.T) {
	out, err := runLedger(t, nil, "verify")
	if err != nil || !strings.Contains(out, "no ledger here to verify") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// ledgerFill moves money through every kind of entry the API makes: payments and fees, a refund
// completed, a refund failed, a withdrawal paid out and one failed.
func ledgerFill(t *testing.T, e *env) (accountID, tok string) {
	t.Helper()
	accountID, tok = e.account()
	paid := e.rfPaid(tok, 10_000)
	e.rfPaid(tok, 5_000)
	e.rfAccepted(tok, paid, map[string]any{"amount": 1_000})
	e.lcSettle()
	e.rfAccepted(tok, paid, map[string]any{"amount": 500})
	e.lcStep(tok, paid, "refund/fail", http.StatusOK)
	e.secWithdraw(tok, 2_000)
	e.settle()
	failed := e.secWithdraw(tok, 1_000)
	if r := e.do("POST", "/sandbox/withdrawal/"+failed+"/fail", tok, nil); r.status != http.StatusOK {
		t.Fatalf("failing the withdrawal: %d %s", r.status, r.body)
	}
	return accountID, tok
}

func TestLedgerVerifyPassesWhatTheAPIRecorded(t *testing.T) {
	e := wdEnv(t, nil)
	accountID, _ := ledgerFill(t, e)
	ledgerFill(t, e)
	var out bytes.Buffer
	if err := verifyLedger(context.Background(), e.app.stores, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "resources checked: OK") || !strings.Contains(out.String(), "(sum 0.00)") {
		t.Fatalf("report:\n%s", out.String())
	}
	out.Reset()
	if err := verifyLedger(context.Background(), e.app.stores, accountID, &out); err != nil || !strings.Contains(out.String(), "ledger verify: 1 ledgers") {
		t.Fatalf("--account: %v\n%s", err, out.String())
	}
}

func TestLedgerVerifyFailsOnAnEntryOfNoResource(t *testing.T) {
	e := wdEnv(t, nil)
	accountID, _ := ledgerFill(t, e)
	ghost := domain.Posting{ID: "ghost/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: accountID,
		Resource: domain.ResourceWithdrawal, ResourceID: "ghost", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 10}
	if _, err := e.app.stores.ledger.Post(context.Background(), ghost); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := verifyLedger(context.Background(), e.app.stores, "", &out)
	if err == nil || !strings.Contains(err.Error(), "1 disagreements") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "unknown_resource ledger="+accountID) ||
		!strings.Contains(lines[0], "entry=ghost/0/withdrawal") || !strings.HasSuffix(lines[2], "resources checked: 1 disagreements") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestLedgerVerifyReportsAStoreFailure(t *testing.T) {
	e := wdEnv(t, nil)
	st := e.app.stores
	st.ledger = failingLedger{st.ledger}
	if err := verifyLedger(context.Background(), st, "", &bytes.Buffer{}); !errors.Is(err, errLedgerDown) {
		t.Fatalf("err = %v", err)
	}
}

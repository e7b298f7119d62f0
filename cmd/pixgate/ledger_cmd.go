package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// ledgerCmd runs `pixgate ledger verify [--account ID]` against the configured store.
func ledgerCmd(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("ledger needs a sub-command: verify\n%s", usage)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "verify":
	default:
		return fmt.Errorf("unknown ledger sub-command %q\n%s", args[0], usage)
	}
	fs := flag.NewFlagSet("ledger verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	account := fs.String("account", "", "verify this merchant account's ledger only")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("usage: pixgate ledger verify [--account ID]")
	}
	if cfg.Store.Kind == "memory" {
		fmt.Fprintln(stdout, "ledger verify: the memory store (PIXGATE_STORE=memory) lives and dies with its process: there is no ledger here to verify; set PIXGATE_STORE=mongo and PIXGATE_MONGODB_URI")
		return nil
	}
	st, err := openStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.close(context.WithoutCancel(ctx))
	return verifyLedger(ctx, st, *account, stdout)
}

// verifyLedger audits the stores' ledger and prints one line per disagreement, then the
// recomputed balances and a summary; it fails when anything disagrees.
func verifyLedger(ctx context.Context, st stores, accountID string, stdout io.Writer) error {
	rep, err := application.NewVerifyLedger(st.ledger, st.transactions, st.withdrawals, st.accounts).Execute(ctx, accountID)
	if err != nil {
		return fmt.Errorf("ledger verify: %w", err)
	}
	for _, d := range rep.Disagreements {
		fmt.Fprintln(stdout, d)
	}
	var sum domain.Cents
	parts := make([]string, 0, 6)
	for _, acct := range []domain.LedgerAccount{domain.LedgerAvailable, domain.LedgerBlocked, domain.LedgerClearing,
		domain.LedgerFees, domain.LedgerPayouts, domain.LedgerSuspense} {
		sum += rep.Balances[acct]
		parts = append(parts, fmt.Sprintf("%s %s", acct, rep.Balances[acct].Reais()))
	}
	fmt.Fprintf(stdout, "ledger verify: balances from the entries: %s (sum %s)\n", strings.Join(parts, ", "), sum.Reais())
	checked := fmt.Sprintf("ledger verify: %d ledgers, %d entries, %d resources checked", rep.Ledgers, rep.Entries, rep.Resources)
	if rep.OK() {
		fmt.Fprintln(stdout, checked+": OK")
		return nil
	}
	fmt.Fprintf(stdout, "%s: %d disagreements\n", checked, len(rep.Disagreements))
	return fmt.Errorf("ledger verify: %d disagreements", len(rep.Disagreements))
}

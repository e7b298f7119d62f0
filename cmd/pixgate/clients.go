package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// errEphemeralStore refuses to manage accounts in the memory store, which lives only as long
// as the command: an account created there would die before anyone could use its secret.
var errEphemeralStore = errors.New("clients: the memory store (PIXGATE_STORE=memory, the default) lives only as long as this command, " +
	"so an account made here would be gone before its secret could be used; point the command at the server's store " +
	"(PIXGATE_STORE=mongo with PIXGATE_MONGODB_URI and PIXGATE_CREDENTIAL_KEY), or give a memory-store server its accounts " +
	"with PIXGATE_SEED_CLIENTS (make run prints a demo account)")

// clients runs `pixgate clients create|list|disable` against the configured store.
func clients(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("clients needs a sub-command: create, list or disable\n%s", usage)
	}
	if cfg.Store.Kind == "memory" {
		return errEphemeralStore
	}
	st, err := openStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.close(context.WithoutCancel(ctx))
	return clientsIn(ctx, cfg, st, args, stdout, stderr)
}

// clientsIn runs a clients sub-command against st.
func clientsIn(ctx context.Context, cfg Config, st stores, args []string, stdout, stderr io.Writer) error {
	switch args[0] {
	case "create":
		return createClient(ctx, cfg, st, args[1:], stdout, stderr)
	case "list":
		return listClients(ctx, st, stdout)
	case "disable":
		return disableClient(ctx, st, args[1:], stdout)
	}
	return fmt.Errorf("unknown clients sub-command %q\n%s", args[0], usage)
}

// createClient runs `pixgate clients create --name NAME [--scopes a,b]`: it creates an account
// and its credential, and prints the secret, this once.
func createClient(ctx context.Context, cfg Config, st stores, args []string, stdout, stderr io.Writer) error {
	log := newLogger(cfg, stderr)
	fs := flag.NewFlagSet("clients create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "the merchant's name (required)")
	scopeList := fs.String("scopes", "", "comma-separated scopes; empty grants every scope")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return err
	}
	if *name == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: pixgate clients create --name NAME [--scopes a,b]")
	}
	var scopes []domain.Scope
	if *scopeList != "" {
		var err error
		if scopes, err = domain.ParseScopes(*scopeList); err != nil {
			return fmt.Errorf("--scopes: %w", err)
		}
	}
	hasher, err := secretHasher(cfg, log)
	if err != nil {
		return err
	}
	created, err := application.NewCreateAccount(st.accounts, system.UUIDs{}, system.Clock{}, hasher).Execute(ctx, *name, scopes)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account_id=%s\nclient_id=%s\nclient_secret=%s\nscopes=%s\n(the secret is shown this once)\n",
		created.Account.ID(), created.Credential.ClientID, created.Credential.Secret, domain.JoinScopes(created.Account.Scopes()))
	return nil
}

// listClients runs `pixgate clients list`: a table of the accounts, with their credentials'
// client IDs.
func listClients(ctx context.Context, st stores, stdout io.Writer) error {
	list, err := application.NewListAccounts(st.accounts).Execute(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT ID\tNAME\tSTATUS\tSCOPES\tCLIENT IDS")
	for _, l := range list {
		var ids []string
		for _, c := range l.Credentials {
			id := c.ClientID
			if c.Revoked() {
				id += " (revoked)"
			}
			ids = append(ids, id)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Account.ID(), l.Account.Name(), l.Account.Status(),
			domain.JoinScopes(l.Account.Scopes()), strings.Join(ids, ", "))
	}
	return tw.Flush()
}

// disableClient runs `pixgate clients disable ACCOUNT_ID`.
func disableClient(ctx context.Context, st stores, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: pixgate clients disable ACCOUNT_ID")
	}
	if err := application.NewDisableAccount(st.accounts).Execute(ctx, args[0]); err != nil {
		return fmt.Errorf("disabling %s: %w", args[0], err)
	}
	fmt.Fprintf(stdout, "account %s disabled\n", args[0])
	return nil
}

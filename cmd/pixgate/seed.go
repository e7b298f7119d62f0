package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/pixgate/pixgate/application"
)

// seed creates the PIXGATE_SEED_CLIENTS accounts that do not exist yet and, in sandbox mode
// with PIXGATE_SANDBOX_DEMO_ACCOUNT, a demo account whose credentials it prints once on
// stdout (never in the log).
func (a *app) seed(ctx context.Context, stdout io.Writer) error {
	if len(a.cfg.Auth.SeedClients) > 0 {
		res, err := application.NewSeedAccounts(a.stores.accounts, a.ids, a.clock, a.hasher).Execute(ctx, a.cfg.Auth.SeedClients)
		if err != nil {
			return fmt.Errorf("PIXGATE_SEED_CLIENTS: %w", err)
		}
		a.log.Info("seeded client accounts", slog.Any("created", res.Created), slog.Any("existing", res.Existing))
	}
	if !a.cfg.Sandbox.On || !a.cfg.Sandbox.DemoAccount {
		return nil
	}
	created, err := application.NewCreateAccount(a.stores.accounts, a.ids, a.clock, a.hasher).Execute(ctx, "Demo merchant", nil)
	if err != nil {
		return fmt.Errorf("creating the demo account: %w", err)
	}
	fmt.Fprintf(stdout, `
pixgate sandbox demo account (shown once; it lives as long as the store):
  account id:    %s
  client_id:     %s
  client_secret: %s
get a token:
  curl -s -u '%s:%s' -d grant_type=client_credentials http://%s/auth/token

`, created.Account.ID(), created.Credential.ClientID, created.Credential.Secret,
		created.Credential.ClientID, created.Credential.Secret, displayAddr(a.cfg.Server.Addr))
	return nil
}

// displayAddr is a listening address as a client would type it: ":8080" is localhost:8080.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || host == "0.0.0.0" || host == "::" {
		return "localhost:" + port
	}
	return net.JoinHostPort(host, port)
}

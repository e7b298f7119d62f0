package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp/efi"
	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
)

// loadVars is loadConfig of vars.
func loadVars(vars map[string]string) (Config, error) {
	return loadConfig(func(k string) string { return vars[k] })
}

func TestThePayoutProviderIsDecidedByTheSandbox(t *testing.T) {
	for _, c := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"production without a provider pays nothing out", nil, payoutNone},
		{"the sandbox pays out its own way", map[string]string{"PIXGATE_SANDBOX": "true"}, payoutSandbox},
		{"the sandbox may be named", map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_PAYOUT_PROVIDER": "sandbox"}, payoutSandbox},
		{"none may be named", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "none"}, payoutNone},
		{"efi with its API", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi", "PIXGATE_PAYOUT_API_URL": "https://pix.api.efipay.com.br"}, payoutEfi},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadVars(c.vars)
			if err != nil || cfg.Payouts.Provider != c.want {
				t.Fatalf("provider %q, %v; want %q", cfg.Payouts.Provider, err, c.want)
			}
		})
	}
}

func TestPayoutSettingsThatCannotWorkStopTheStartNamingTheVariable(t *testing.T) {
	for _, c := range []struct {
		name, variable string
		vars           map[string]string
	}{
		{"an unknown provider", "PIXGATE_PAYOUT_PROVIDER", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "inter"}},
		{"the sandbox's payouts without the sandbox", "PIXGATE_PAYOUT_PROVIDER", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "sandbox"}},
		{"Efí with the sandbox", "PIXGATE_PAYOUT_PROVIDER", map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_PAYOUT_PROVIDER": "efi",
			"PIXGATE_PAYOUT_API_URL": "https://pix.api.efipay.com.br"}},
		{"Efí without its API", "PIXGATE_PAYOUT_API_URL", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi"}},
		{"an API without Efí", "PIXGATE_PAYOUT_API_URL", map[string]string{"PIXGATE_PAYOUT_API_URL": "https://pix.api.efipay.com.br"}},
		{"an API over http", "PIXGATE_PAYOUT_API_URL", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi", "PIXGATE_PAYOUT_API_URL": "http://pix.api.efipay.com.br"}},
		{"a token URL with credentials", "PIXGATE_PAYOUT_TOKEN_URL", map[string]string{"PIXGATE_PAYOUT_TOKEN_URL": "https://id:s3cr3t@pix.example/oauth/token"}},
		{"a check of no seconds", "PIXGATE_PAYOUT_CHECK_SECONDS", map[string]string{"PIXGATE_PAYOUT_CHECK_SECONDS": "0"}},
		{"a token request of another style", "PIXGATE_PAYOUT_TOKEN_REQUEST", map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi",
			"PIXGATE_PAYOUT_API_URL": "https://pix.api.efipay.com.br", "PIXGATE_PAYOUT_TOKEN_REQUEST": "xml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadVars(c.vars)
			if err == nil || !strings.HasPrefix(err.Error(), c.variable+":") || strings.Contains(err.Error(), "\n") ||
				strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("err = %v, want one line naming %s", err, c.variable)
			}
		})
	}
}

func TestPayoutSettingsDefaultToTheAcquirersNamesakes(t *testing.T) {
	efiVars := func(more map[string]string) map[string]string {
		v := map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi", "PIXGATE_PAYOUT_API_URL": "https://pix.api.efipay.com.br",
			"PIXGATE_ACQUIRER_CLIENT_ID": "acq-id", "PIXGATE_ACQUIRER_CLIENT_SECRET": "acq-secret",
			"PIXGATE_ACQUIRER_TOKEN_REQUEST": "json", "PIXGATE_ACQUIRER_P12_FILE": "/etc/pixgate/acq.p12",
			"PIXGATE_ACQUIRER_P12_PASSWORD": "acq-p12-password"}
		for k, x := range more {
			v[k] = x
		}
		return v
	}
	t.Run("each unset payout setting takes its namesake", func(t *testing.T) {
		cfg, err := loadVars(efiVars(nil))
		p := cfg.Payouts
		if err != nil || p.ClientID != "acq-id" || p.ClientSecret != "acq-secret" || p.TokenRequest != "json" ||
			p.P12File != "/etc/pixgate/acq.p12" || p.P12Password != "acq-p12-password" || p.TokenURL != "" || len(p.Scopes) != 0 {
			t.Fatalf("payout settings %+v, %v", p, err)
		}
	})
	t.Run("a payout setting of its own wins", func(t *testing.T) {
		cfg, err := loadVars(efiVars(map[string]string{"PIXGATE_PAYOUT_CLIENT_ID": "payout-id", "PIXGATE_PAYOUT_SCOPES": "pix.send gn.pix.send.read"}))
		if err != nil || cfg.Payouts.ClientID != "payout-id" || cfg.Payouts.ClientSecret != "acq-secret" ||
			!slices.Equal(cfg.Payouts.Scopes, []string{"pix.send", "gn.pix.send.read"}) {
			t.Fatalf("payout settings %+v, %v", cfg.Payouts, err)
		}
	})
	t.Run("a payout certificate of its own takes none of the acquirer's", func(t *testing.T) {
		cfg, err := loadVars(efiVars(map[string]string{"PIXGATE_PAYOUT_CERT_FILE": "/etc/pixgate/payout.pem", "PIXGATE_PAYOUT_KEY_FILE": "/etc/pixgate/payout.key"}))
		if err != nil || cfg.Payouts.P12File != "" || cfg.Payouts.P12Password != "" || cfg.Payouts.CertFile != "/etc/pixgate/payout.pem" {
			t.Fatalf("payout settings %+v, %v", cfg.Payouts, err)
		}
	})
	t.Run("nothing is read of the acquirer without Efí", func(t *testing.T) {
		cfg, err := loadVars(map[string]string{"PIXGATE_ACQUIRER_CLIENT_ID": "acq-id"})
		if err != nil || cfg.Payouts.ClientID != "" {
			t.Fatalf("payout settings %+v, %v", cfg.Payouts, err)
		}
	})
}

// TestEfiSettingsThatCannotBeUsedStopTheStartNamingThem builds the app with settings the
// transport refuses: each error names the variable an operator sets, never a secret.
func TestEfiSettingsThatCannotBeUsedStopTheStartNamingThem(t *testing.T) {
	e := efitest.New(t, efitest.Config{})
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"PIXGATE_PAYOUT_PROVIDER": "efi", "PIXGATE_PAYOUT_API_URL": e.URL, "PIXGATE_PIX_KEY": e.Chave,
		"PIXGATE_PAYOUT_CLIENT_ID": e.ClientID, "PIXGATE_PAYOUT_CLIENT_SECRET": e.ClientSecret,
		"PIXGATE_PAYOUT_CERT_FILE": e.Client.CertFile, "PIXGATE_PAYOUT_KEY_FILE": e.Client.KeyFile}
	for _, c := range []struct {
		name  string
		edit  map[string]string
		wants []string
	}{
		{"no client secret", map[string]string{"PIXGATE_PAYOUT_CLIENT_SECRET": ""},
			[]string{"PIXGATE_PAYOUT_CLIENT_SECRET (default PIXGATE_ACQUIRER_CLIENT_SECRET): missing"}},
		{"no certificate", map[string]string{"PIXGATE_PAYOUT_CERT_FILE": "", "PIXGATE_PAYOUT_KEY_FILE": ""},
			[]string{"PIXGATE_PAYOUT_CERT_FILE (default PIXGATE_ACQUIRER_CERT_FILE): missing"}},
		{"a certificate that is not one", map[string]string{"PIXGATE_PAYOUT_CERT_FILE": garbage}, []string{"PIXGATE_PAYOUT_CERT_FILE"}},
		{"a CA file that cannot be read", map[string]string{"PIXGATE_PAYOUT_API_CA_FILE": filepath.Join(dir, "missing.pem")}, []string{"PIXGATE_PAYOUT_API_CA_FILE"}},
		{"two problems at once", map[string]string{"PIXGATE_PAYOUT_CLIENT_ID": "", "PIXGATE_PAYOUT_CLIENT_SECRET": ""},
			[]string{"PIXGATE_PAYOUT_CLIENT_ID", "PIXGATE_PAYOUT_CLIENT_SECRET"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range base {
				vars[k] = v
			}
			for k, v := range c.edit {
				vars[k] = v
			}
			cfg, err := loadVars(vars)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			_, err = newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if err == nil {
				t.Fatal("the app was built")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), e.ClientSecret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q holds the secret or spans lines", err)
			}
		})
	}
	t.Run("settings that work build the Efí adapter", func(t *testing.T) {
		cfg, err := loadVars(base)
		if err != nil {
			t.Fatal(err)
		}
		a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.payoutAPI.(*efi.Payouts); !ok || a.payouts == nil {
			t.Fatalf("payouts through %T, want Efí's", a.payoutAPI)
		}
	})
}

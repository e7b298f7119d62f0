package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestConfigDefaultsAreValid(t *testing.T) {
	cfg, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatalf("the defaults must load: %v", err)
	}
	if cfg.Server.Addr != ":8080" || cfg.Store.Kind != "memory" || cfg.Auth.TokenTTL.Seconds() != 3600 || cfg.Limits.TransactionRPS != 50 || cfg.Limits.TransactionBurst != 100 {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestConfigBadValueStopsWithOneLineNamingTheVariable(t *testing.T) {
	cases := map[string]string{
		"PIXGATE_ADDR":                   "8080",
		"PIXGATE_STORE":                  "postgres",
		"PIXGATE_TOKEN_TTL":              "forever",
		"PIXGATE_RATE_LIMIT_RPS":         "-1",
		"PIXGATE_SANDBOX":                "yes please",
		"PIXGATE_CREDENTIAL_KEY":         "tooshort",
		"PIXGATE_MONGODB_URI":            "postgres://x",
		"PIXGATE_SEED_CLIENTS":           "only-a-name",
		"PIXGATE_ACQUIRER_SECRET":        "short-secret",
		"PIXGATE_SANDBOX_SETTLE_SECONDS": "-3",
		"PIXGATE_MONGODB_TIMEOUT":        "0s",
		"PIXGATE_ACQUIRER_API_URL":       "http://psp.example.com/api/v2",
		"PIXGATE_ACQUIRER_TOKEN_URL":     "ftp://psp.example.com/oauth/token",
		"PIXGATE_ACQUIRER_NAME":          "my-psp",
		"PIXGATE_ACQUIRER_TOKEN_REQUEST": "xml-body",
		"PIXGATE_ACQUIRER_TIMEOUT":       "forever",
		"PIXGATE_TOKEN_RATE_LIMIT_RPS":   "ten",
		"PIXGATE_TOKEN_RATE_LIMIT_BURST": "-20",
		"PIXGATE_TOKEN_FAILURE_LIMIT":    "60/min",
		"PIXGATE_PUBLIC_URL":             "http://pay.shop.example",
		"PIXGATE_PAY_STREAMS_PER_CHARGE": "0",
		"PIXGATE_PAY_RATE_LIMIT_RPS":     "lots",
		"PIXGATE_QR_TIMEOUT":             "100ms",
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string {
				if k == name {
					return value
				}
				return ""
			})
			if err == nil {
				t.Fatalf("%s=%q was accepted", name, value)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, name+":") || strings.Contains(msg, "\n") {
				t.Fatalf("message %q must be one line starting with the variable", msg)
			}
			if len(value) > 6 && strings.Contains(msg, value) {
				t.Fatalf("message %q repeats the value, which may be a secret", msg)
			}
		})
	}
	for name, vars := range map[string]map[string]string{
		"PIXGATE_ACQUIRER_API_URL": {"PIXGATE_ACQUIRER_API_URL": "https://psp.example.com/api/v2",
			"PIXGATE_ACQUIRER_CLIENT_SECRET": "psp-secret-0123456789", "PIXGATE_SANDBOX": "true"},
	} {
		t.Run(name+" in a combination that cannot work", func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return vars[k] })
			if err == nil || !strings.HasPrefix(err.Error(), name+":") || strings.Contains(err.Error(), "psp-secret") {
				t.Fatalf("err = %v", err)
			}
		})
	}
	t.Run("mongo without a credential key", func(t *testing.T) {
		_, err := loadConfig(func(k string) string { return map[string]string{"PIXGATE_STORE": "mongo"}[k] })
		if err == nil || !strings.HasPrefix(err.Error(), "PIXGATE_CREDENTIAL_KEY:") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestPublicURL(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"https://pay.shop.example", "https://pay.shop.example"},
		{"https://pay.shop.example/", "https://pay.shop.example"},
		{"https://shop.example:8443/pixgate/", "https://shop.example:8443/pixgate"},
	} {
		t.Run(c.value+" is a base URL", func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return map[string]string{"PIXGATE_PUBLIC_URL": c.value}[k] })
			if err != nil || cfg.Server.PublicURL != c.want {
				t.Fatalf("PublicURL = %q, %v; want %q", cfg.Server.PublicURL, err, c.want)
			}
		})
	}
	for _, bad := range []string{"pay.shop.example", "ftp://pay.shop.example", "https://", "https://user:pw@pay.shop.example",
		"https://pay.shop.example/?a=1", "https://pay.shop.example/#top", "https:///path"} {
		t.Run(bad+" is refused", func(t *testing.T) {
			if _, err := loadConfig(func(k string) string { return map[string]string{"PIXGATE_PUBLIC_URL": bad}[k] }); err == nil ||
				!strings.HasPrefix(err.Error(), "PIXGATE_PUBLIC_URL:") {
				t.Fatalf("err = %v", err)
			}
		})
	}
	for _, c := range []struct{ listening, want string }{
		{":8080", "http://localhost:8080"},
		{"[::]:8080", "http://localhost:8080"},
		{"0.0.0.0:9000", "http://localhost:9000"},
		{"127.0.0.1:43121", "http://127.0.0.1:43121"},
		{"[::1]:8080", "http://[::1]:8080"},
		{"pix.internal:8080", "http://pix.internal:8080"},
	} {
		t.Run("without it, a server listening on "+c.listening+" links to "+c.want, func(t *testing.T) {
			if got := ownBaseURL(c.listening); got != c.want {
				t.Fatalf("ownBaseURL(%q) = %q", c.listening, got)
			}
		})
	}
}

// TestSettingsTableListsEveryVariable keeps the configuration table of docs/OPERATIONS.md and
// the code's list of variables (settings) the same, names and defaults.
func TestSettingsTableListsEveryVariable(t *testing.T) {
	const table = "docs/OPERATIONS.md"
	raw, err := os.ReadFile("../../" + table)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(PIXGATE_[A-Z0-9_]+)` \\| `([^`]*)` \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		documented[m[1]] = m[2]
	}
	var inCode []string
	for _, s := range settings() {
		inCode = append(inCode, s.name)
		def, ok := documented[s.name]
		if !ok {
			t.Errorf("%s lacks a row for %s (| `%s` | `%s` | %s |)", table, s.name, s.name, s.def, s.doc)
			continue
		}
		if def != s.def {
			t.Errorf("%s gives %s the default %q; the code has %q", table, s.name, def, s.def)
		}
	}
	for name := range documented {
		if !slices.Contains(inCode, name) {
			t.Errorf("%s documents %s, which the code does not read", table, name)
		}
	}
}

func TestAnIncompleteUpstreamProviderIsNamedTheSameEveryRun(t *testing.T) {
	env := map[string]string{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL": "https://idp.example/token"}
	for range 20 {
		_, err := loadConfig(func(k string) string { return env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), "PIXGATE_AUTH_UPSTREAM_JWKS_URL:") {
			t.Fatalf("err = %v, want the first missing setting, PIXGATE_AUTH_UPSTREAM_JWKS_URL", err)
		}
	}
}

package main

import (
	"flag"
	"os"
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

// updateDocs rewrites the generated settings table of docs/OPERATIONS.md instead of comparing
// it (make docs-settings).
var updateDocs = flag.Bool("update-docs", false, "rewrite the settings table of docs/OPERATIONS.md from the code (make docs-settings)")

// The lines around the settings table in docs/OPERATIONS.md: everything between them is
// settingsMarkdown's.
const (
	settingsTableBegin = "<!-- BEGIN settings: generated by `make docs-settings` from the settings of cmd/pixgate; edit them there -->\n"
	settingsTableEnd   = "<!-- END settings -->\n"
)

// TestSettingsTableIsGenerated keeps the configuration table of docs/OPERATIONS.md what the
// code declares (settingsMarkdown, made from the settings of Config's groups): every variable,
// its default and its doc, group by group.
func TestSettingsTableIsGenerated(t *testing.T) {
	const doc = "docs/OPERATIONS.md"
	raw, err := os.ReadFile(repoRoot + "/" + doc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, begun := strings.Cut(string(raw), settingsTableBegin)
	table, after, ended := strings.Cut(rest, settingsTableEnd)
	if !begun || !ended {
		t.Fatalf("%s lacks the lines %q and %q around its settings table", doc, settingsTableBegin, settingsTableEnd)
	}
	want := "\n" + settingsMarkdown() + "\n"
	if *updateDocs {
		if err := os.WriteFile(repoRoot+"/"+doc, []byte(before+settingsTableBegin+want+settingsTableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if table != want {
		got, exp := strings.Split(table, "\n"), strings.Split(want, "\n")
		i := 0
		for i < min(len(got), len(exp)) && got[i] == exp[i] {
			i++
		}
		line := func(lines []string) string {
			if i < len(lines) {
				return lines[i]
			}
			return "(the end)"
		}
		t.Fatalf("the settings table of %s is not what the code declares: run make docs-settings "+
			"(go test ./cmd/pixgate -run '^TestSettingsTableIsGenerated$' -update-docs). First difference, line %d of the table:\n"+
			"has:  %s\nwant: %s", doc, i+1, line(got), line(exp))
	}
}

func TestEverySettingIsDeclaredOnceWithADoc(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range new(Config).groups() {
		if len(g.settings) == 0 || g.about == "" {
			t.Errorf("group %s declares no setting or says nothing about itself", g.name)
		}
		for _, s := range g.settings {
			if !strings.HasPrefix(s.name, "PIXGATE_") || seen[s.name] || s.doc == "" || s.set == nil {
				t.Errorf("%s (group %s): want a PIXGATE_ name declared once, with a doc and a parser", s.name, g.name)
			}
			seen[s.name] = true
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

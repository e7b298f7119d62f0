package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The command line as a user meets it: help, warnings about misspelt settings, refusals that
// say why, and a busy port that stops the start before any credential is printed.

// environ turns vars into the entries os.Environ returns.
func environ(vars map[string]string) []string {
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

func runCLI(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, environ(vars), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestEveryHelpRequestPrintsUsageAndSucceeds(t *testing.T) {
	asks := [][]string{
		{"help"}, {"-h"}, {"--help"}, {"-help"},
		{"serve", "--help"}, {"serve", "-h"},
		{"clients", "--help"}, {"clients", "-h"}, {"clients", "help"},
		{"clients", "create", "--help"}, {"clients", "create", "--name", "Loja", "-h"},
		{"clients", "list", "--help"}, {"clients", "disable", "-h"},
		{"ledger", "--help"}, {"ledger", "help"}, {"ledger", "verify", "-h"},
	}
	// A configuration that would stop any command: help must not need one.
	broken := map[string]string{"PIXGATE_STORE": "postgres"}
	for _, args := range asks {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _, err := runCLI(t, broken, args...)
			if err != nil {
				t.Fatalf("exit with %v", err)
			}
			for _, want := range []string{"pixgate clients create", "pixgate clients list", "pixgate clients disable",
				"pixgate ledger verify", "pixgate [serve]", "pixgate help settings", "Configuration table of\ndocs/OPERATIONS.md"} {
				if !strings.Contains(out, want) {
					t.Fatalf("usage lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestHelpSettingsListsEverySettingWithItsDefault(t *testing.T) {
	out, _, err := runCLI(t, nil, "help", "settings")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings() {
		if !strings.Contains(out, s.name) {
			t.Errorf("help settings lacks %s", s.name)
		}
	}
	if !strings.Contains(out, "PIXGATE_ADDR  ") || !strings.Contains(out, ":8080") {
		t.Fatalf("help settings shows no default:\n%s", out)
	}
}

func TestHelpSettingsGroupsTheSettingsAndPrintsTheDocsTable(t *testing.T) {
	out, _, err := runCLI(t, nil, "help", "settings")
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := runCLI(t, nil, "help", "settings", "-markdown")
	if err != nil || md != settingsMarkdown() {
		t.Fatalf("help settings -markdown = %q, %v; want settingsMarkdown", md, err)
	}
	for _, g := range new(Config).groups() {
		if !strings.Contains(out, "\n"+strings.ToUpper(g.name)+": ") || !strings.Contains("\n"+md, "\n### "+g.name+"\n") {
			t.Errorf("group %s has no heading in help settings or in its -markdown form", g.name)
		}
	}
	if strings.Contains(out, "`") || strings.Contains(out, "](") {
		t.Errorf("help settings prints Markdown:\n%s", out)
	}
	if !strings.Contains(out, "docs/PSP.md, Payouts") || !strings.Contains(md, "[PSP.md, Payouts](PSP.md#payouts)") {
		t.Errorf("a setting's link reads docs/PSP.md, Payouts in help and links in Markdown")
	}
}

func TestHelpTextsFitInAHundredColumns(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "settings"}} {
		out, _, err := runCLI(t, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%s, line %d: %d columns: %s", strings.Join(args, " "), i+1, n, line)
			}
		}
	}
}

func TestHelpOnAnUnknownTopicFailsNamingIt(t *testing.T) {
	for _, args := range [][]string{{"help", "foo"}, {"help", "settings", "extra"}, {"help", "serve"}} {
		out, _, err := runCLI(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), args[1]) || !strings.Contains(err.Error(), "pixgate help settings") {
			t.Errorf("%v: err %v, want a refusal naming the topic and the help there is", args, err)
		}
		if out != "" {
			t.Errorf("%v printed %q", args, out)
		}
	}
}

func TestCommandLineMistakesStillFail(t *testing.T) {
	for _, args := range [][]string{{"serve", "extra"}, {"launch"}, {"clients"}, {"ledger", "check"}} {
		if _, _, err := runCLI(t, nil, args...); err == nil {
			t.Fatalf("%v succeeded", args)
		}
	}
}

func TestUnknownSettingsAreNamedWithASuggestion(t *testing.T) {
	got := unknownSettings([]string{
		"HOME=/root", "PIXGATE_ADDR=:9090", "PIXGATE_ADRR=:9090", "PIXGATE_SANBOX=true",
		"PIXGATE_MONGO_URI=mongodb://x", "PIXGATE_COMPLETELY_DIFFERENT=1", "PIXGATE_ADRR=again",
	})
	want := []string{
		`PIXGATE_ADRR is not a pixgate setting and is ignored; did you mean PIXGATE_ADDR? ("pixgate help settings" lists them)`,
		`PIXGATE_COMPLETELY_DIFFERENT is not a pixgate setting and is ignored ("pixgate help settings" lists them)`,
		`PIXGATE_MONGO_URI is not a pixgate setting and is ignored; did you mean PIXGATE_MONGODB_URI? ("pixgate help settings" lists them)`,
		`PIXGATE_SANBOX is not a pixgate setting and is ignored; did you mean PIXGATE_SANDBOX? ("pixgate help settings" lists them)`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := unknownSettings(environ(map[string]string{"PIXGATE_ADDR": ":1", "PIXGATE_SANDBOX": "true",
		"PIXGATE_TEST_REQUIRE_DOCKER": "1"})); len(w) != 0 {
		t.Fatalf("known settings (or the test suites' own) warned: %v", w)
	}
}

func TestAStartWithAMisspeltSettingLogsAWarning(t *testing.T) {
	// ledger verify on the memory store reads the configuration and stops at once.
	out, logs, err := runCLI(t, map[string]string{"PIXGATE_SANBOX": "secret-looking-value"}, "ledger", "verify")
	if err != nil || !strings.Contains(out, "no ledger") {
		t.Fatalf("ledger verify: %v\n%s", err, out)
	}
	if !strings.Contains(logs, `"level":"WARN"`) || !strings.Contains(logs, "did you mean PIXGATE_SANDBOX?") {
		t.Fatalf("no WARN line naming the setting: %s", logs)
	}
	if strings.Contains(logs, "secret-looking-value") {
		t.Fatalf("the warning shows the value: %s", logs)
	}
}

func TestClientsRefuseTheMemoryStoreBeforePrintingAnySecret(t *testing.T) {
	for _, args := range [][]string{{"clients", "create", "--name", "Loja"}, {"clients", "list"}} {
		out, _, err := runCLI(t, nil, args...)
		if !errors.Is(err, errEphemeralStore) {
			t.Fatalf("%v: err = %v", args, err)
		}
		if out != "" {
			t.Fatalf("%v printed %q", args, out)
		}
		for _, hint := range []string{"PIXGATE_STORE=mongo", "PIXGATE_SEED_CLIENTS"} {
			if !strings.Contains(err.Error(), hint) {
				t.Fatalf("the refusal does not suggest %s: %v", hint, err)
			}
		}
	}
}

func TestConfigurationErrorsNameTheSameVariableEveryTime(t *testing.T) {
	vars := map[string]string{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL": "https://id.example.com/token"}
	first := ""
	for i := range 20 {
		_, err := loadConfig(func(k string) string { return vars[k] })
		if err == nil {
			t.Fatal("an upstream without its JWKS, issuer and audience was accepted")
		}
		if i == 0 {
			first = err.Error()
			if !strings.HasPrefix(first, "PIXGATE_AUTH_UPSTREAM_JWKS_URL:") {
				t.Fatalf("first missing setting in the table's order is the JWKS URL; got %q", first)
			}
		} else if err.Error() != first {
			t.Fatalf("run %d said %q, run 0 said %q", i, err, first)
		}
	}
}

func TestABusyPortStopsTheStartBeforeTheDemoAccountIsPrinted(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	demo := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_SANDBOX_DEMO_ACCOUNT": "true"}
	for name, vars := range map[string]map[string]string{
		"PIXGATE_ADDR":         {"PIXGATE_ADDR": busy.Addr().String()},
		"PIXGATE_METRICS_ADDR": {"PIXGATE_ADDR": "127.0.0.1:0", "PIXGATE_METRICS_ADDR": busy.Addr().String()},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range demo {
				vars[k] = v
			}
			out, _, err := runCLI(t, vars, "serve")
			if err == nil || !strings.HasPrefix(err.Error(), name+":") {
				t.Fatalf("err = %v, want one naming %s", err, name)
			}
			if strings.Contains(out, "client_secret") || out != "" {
				t.Fatalf("printed before failing: %q", out)
			}
		})
	}
}

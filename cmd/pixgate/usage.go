package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

const usage = `pixgate is a PIX payment gateway (its HTTP API: docs/API.md).

usage:
  pixgate [serve]                                   run the API
  pixgate clients create --name NAME [--scopes a,b] create an account in a lasting store
                                                    (PIXGATE_STORE=mongo); prints its client id
                                                    and secret once
  pixgate clients list                              list accounts
  pixgate clients disable ACCOUNT_ID                disable an account: its tokens stop working (on
                                                    running servers within PIXGATE_AUTH_CACHE_TTL)
  pixgate ledger verify [--account ID]              audit the ledger (every ledger, or one
                                                    account's); prints each disagreement and fails
                                                    on any
  pixgate help [settings [-markdown]]               this text, or every setting with its default,
                                                    group by group (-markdown: as the table of
                                                    docs/OPERATIONS.md)
  pixgate qr-worker IN_FLIGHT                       the QR drawing process serve starts by itself
                                                    (PIXGATE_QR_PROCESS); not for direct use

Every command reads its configuration from PIXGATE_* environment variables:
"pixgate help settings" lists them with their defaults, and the Configuration table of
docs/OPERATIONS.md explains them.
`

// helpWidth bounds the lines of every help text, so that they read in a terminal of 100
// columns without wrapping.
const helpWidth = 100

// help answers a request for help: "help", "-h" or "--help" as the command, "help settings",
// or -h/--help among a command's arguments. ok is false when the command line asks for
// something else; err is set when it asks for help on a topic there is none for.
func help(cmd string, args []string) (text string, ok bool, err error) {
	asks := func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }
	switch {
	case cmd == "help" && len(args) == 1 && args[0] == "settings":
		return settingsHelp(), true, nil
	case cmd == "help" && len(args) == 2 && args[0] == "settings" && args[1] == "-markdown":
		return settingsMarkdown(), true, nil
	case cmd == "help" && len(args) > 0 && !slices.ContainsFunc(args, asks):
		return "", true, fmt.Errorf("no help on %q: pixgate help lists the commands, pixgate help settings the settings",
			strings.Join(args, " "))
	case cmd == "help" || asks(cmd):
		return usage, true, nil
	case (cmd == "clients" || cmd == "ledger") && len(args) > 0 && args[0] == "help":
		return usage, true, nil
	case slices.ContainsFunc(args, asks):
		return usage, true, nil
	}
	return "", false, nil
}

// settingsHelp lists every setting, group by group (Config's groups): each group's name and
// what it is about, then each setting's name and default on one line and what it does below,
// wrapped to helpWidth and indented.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString("pixgate settings (environment variables; a bad value stops the start naming\nthe variable), group by group:\n")
	for _, g := range new(Config).groups() {
		b.WriteString("\n")
		for _, line := range wrap(strings.ToUpper(g.name)+": "+g.about, helpWidth) {
			fmt.Fprintf(&b, "%s\n", line)
		}
		for _, s := range g.settings {
			def := s.def
			if def == "" {
				def = "(empty)"
			}
			fmt.Fprintf(&b, "\n%s  default %s\n", s.name, def)
			for _, line := range wrap(plainDoc(s.doc), helpWidth-4) {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	return b.String()
}

// docLink is a Markdown link of a setting's doc: [PSP.md, Payouts](PSP.md#payouts).
var docLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)

// plainDoc is a setting's doc for a terminal: without the backticks around code, and with each
// link to a document of docs/ as that document's path and heading (docs/PSP.md, Payouts).
func plainDoc(doc string) string {
	return strings.ReplaceAll(docLink.ReplaceAllString(doc, "docs/$1"), "`", "")
}

// settingsMarkdown is the configuration table of docs/OPERATIONS.md, which is made from it (make
// docs-settings): a heading per group of Config, what the group is about, and a table of its
// settings, each with its default and its doc (Markdown already, with | escaped).
func settingsMarkdown() string {
	var b strings.Builder
	for i, g := range new(Config).groups() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n\n| variable | default | what it does |\n|---|---|---|\n", g.name, g.about)
		for _, s := range g.settings {
			def := ""
			if s.def != "" {
				def = "`" + s.def + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, def, strings.ReplaceAll(s.doc, "|", `\|`))
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width columns at spaces; a word longer than width
// keeps a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// lookupEnv reads environ ("NAME=value" entries, as os.Environ returns them) the way
// os.Getenv reads the process's: the first entry of a name wins.
func lookupEnv(environ []string) func(string) string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if _, seen := vars[name]; !seen {
			vars[name] = value
		}
	}
	return func(name string) string { return vars[name] }
}

// unknownSettings warns about PIXGATE_* variables that pixgate does not read: a misspelt
// PIXGATE_ADRR would otherwise leave the address at its default without a word. Each warning
// names the variable (never its value) and, when one is close, the setting it probably meant.
func unknownSettings(environ []string) []string {
	known := settings()
	var warnings []string
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		// PIXGATE_TEST_* belong to the test suites (docs/TESTING.md), not to the program.
		if !strings.HasPrefix(name, "PIXGATE_") || strings.HasPrefix(name, "PIXGATE_TEST_") || seen[name] {
			continue
		}
		seen[name] = true
		if slices.ContainsFunc(known, func(s setting) bool { return s.name == name }) {
			continue
		}
		w := fmt.Sprintf("%s is not a pixgate setting and is ignored", name)
		if best := closestSetting(name, known); best != "" {
			w += fmt.Sprintf("; did you mean %s?", best)
		}
		warnings = append(warnings, w+` ("pixgate help settings" lists them)`)
	}
	slices.Sort(warnings)
	return warnings
}

// closestSetting is the known setting nearest to name, when it is near enough to be a typo
// (at most two edits, transpositions included, and fewer than a third of the name's own
// letters); "" otherwise.
func closestSetting(name string, known []setting) string {
	best, bestDist := "", 3
	suffix := strings.TrimPrefix(name, "PIXGATE_")
	for _, s := range known {
		d := editDistance(suffix, strings.TrimPrefix(s.name, "PIXGATE_"))
		if d < bestDist && d*3 < len(suffix) {
			best, bestDist = s.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b: insertions,
// deletions, substitutions and transpositions of neighbours each cost one.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

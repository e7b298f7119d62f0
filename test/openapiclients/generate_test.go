package openapiclients

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// generator is one client generator, run as a tool of this module (the tool directives of
// go.mod), at its default options.
type generator struct {
	name string
	// args are the arguments after `go tool`; doc is the document, dir the output directory.
	args func(doc, dir string) []string
	// method matches the client method of an operation (its id, exported).
	method func(name string) *regexp.Regexp
}

var generators = []generator{
	{
		name: "oapi-codegen",
		args: func(doc, dir string) []string {
			return []string{"oapi-codegen", "-package", "client", "-o", filepath.Join(dir, "client.gen.go"), doc}
		},
		// Operations with a body also get a ...WithBody variant; either proves the operation.
		method: func(name string) *regexp.Regexp {
			return regexp.MustCompile(`func \(c \*Client\) ` + name + `(WithBody)?\(ctx context\.Context`)
		},
	},
	{
		name: "ogen",
		args: func(doc, dir string) []string {
			return []string{"ogen", "-target", dir, "-package", "client", "-clean", doc}
		},
		method: func(name string) *regexp.Regexp {
			return regexp.MustCompile(`func \(c \*Client\) ` + name + `\(ctx context\.Context`)
		},
	},
}

// TestGeneratedClientsCompileWithEveryOperation generates a client from pixgate's OpenAPI
// document with each generator at its default options, compiles it in a module of its own
// (with this module's versions of its dependencies, so that nothing newer is fetched), and
// checks that every operation of the document's paths is a method of the client. The
// document's webhooks are requests pixgate sends, not operations a client calls.
func TestGeneratedClientsCompileWithEveryOperation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	doc := productFile(ctx, t, "adapters/httpapi/openapi.json")
	ops := operationIDs(t, doc)
	if len(ops) < 30 {
		t.Fatalf("only %d operations read from the document", len(ops))
	}
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			dir := t.TempDir()
			clientDir := filepath.Join(dir, "client")
			if err := os.MkdirAll(clientDir, 0o755); err != nil {
				t.Fatal(err)
			}
			goCmd(ctx, t, ".", append([]string{"tool"}, g.args(doc, clientDir)...)...)
			writeModule(ctx, t, dir)
			goCmd(ctx, t, dir, "build", "./...")

			var src strings.Builder
			files, _ := filepath.Glob(filepath.Join(clientDir, "*.go"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				src.Write(b)
			}
			for _, op := range ops {
				if !g.method(exported(op)).MatchString(src.String()) {
					t.Errorf("%s made no client method for operation %s", g.name, op)
				}
			}
		})
	}
}

// productFile is the path of a file of the product module (this module's replace of it).
func productFile(ctx context.Context, t *testing.T, rel string) string {
	t.Helper()
	dir := strings.TrimSpace(goCmd(ctx, t, ".", "list", "-m", "-f", "{{.Dir}}", "github.com/pixgate/pixgate"))
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// operationIDs lists the operationId of every operation under the document's paths.
func operationIDs(t *testing.T, doc string) []string {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	var ids []string
	for path, item := range d.Paths {
		for method, op := range item {
			var o struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(op, &o) != nil || o.OperationID == "" {
				continue // parameters and other members of a path item
			}
			if !regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`).MatchString(o.OperationID) {
				t.Fatalf("%s %s: operationId %q is not a plain camelCase name", method, path, o.OperationID)
			}
			ids = append(ids, o.OperationID)
		}
	}
	return ids
}

func exported(name string) string {
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// writeModule makes dir a module whose requirements are this module's build list and whose
// go.sum is this module's, then tidies it: every version is one this module already uses,
// so the build needs nothing beyond the module cache (GOFLAGS=-mod=mod lets tidy write).
func writeModule(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	var mod strings.Builder
	mod.WriteString("module example.com/pixgateclient\n\ngo 1.26.8\n\nrequire (\n")
	for _, line := range strings.Split(strings.TrimSpace(goCmd(ctx, t, ".", "list", "-m", "-f", "{{if not .Main}}{{if not .Replace}}{{.Path}} {{.Version}}{{end}}{{end}}", "all")), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			mod.WriteString("\t" + line + "\n")
		}
	}
	mod.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd(ctx, t, dir, "mod", "tidy")
}

// goCmd runs the go command in dir and returns its standard output; a failure fails the test
// with everything the command said.
func goCmd(ctx context.Context, t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if dir != "." { // the generated module's go.mod is written by tidy; this module's never
		cmd.Env = append(cmd.Env, "GOFLAGS=-mod=mod")
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, tail(stderr.String(), 4000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

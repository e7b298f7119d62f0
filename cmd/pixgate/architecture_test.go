package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHexagonalImports keeps the house rules of the layout: domain imports the standard library
// only; application imports domain and ports (and the standard library); ports import domain;
// adapters never import each other nor cmd. Only cmd knows every adapter.
func TestHexagonalImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/pixgate/pixgate/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/pixgate/pixgate/"
	stdlib := func(imp string) bool { return !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") }
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := strings.TrimPrefix(fields[0], mod), fields[1:]
		checked++
		for _, imp := range imports {
			own := strings.TrimPrefix(imp, mod)
			internal := strings.HasPrefix(imp, mod)
			switch {
			case pkg == "domain" || strings.HasPrefix(pkg, "domain/"):
				if !stdlib(imp) {
					t.Errorf("domain must import the standard library only: %s imports %s", pkg, imp)
				}
			case pkg == "ports":
				if !stdlib(imp) && own != "domain" {
					t.Errorf("ports may import the domain only: %s imports %s", pkg, imp)
				}
			case pkg == "application":
				if !stdlib(imp) && own != "domain" && own != "ports" {
					t.Errorf("application may import domain and ports only: %s imports %s", pkg, imp)
				}
			case strings.HasPrefix(pkg, "adapters/"):
				mine := strings.Join(strings.SplitN(pkg, "/", 3)[:2], "/")
				if internal && strings.HasPrefix(own, "adapters/") && !strings.HasPrefix(own+"/", mine+"/") {
					t.Errorf("adapters must not import each other: %s imports %s", pkg, imp)
				}
				if internal && strings.HasPrefix(own, "cmd") {
					t.Errorf("adapters must not import cmd: %s imports %s", pkg, imp)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages listed; the check saw too little", checked)
	}
}

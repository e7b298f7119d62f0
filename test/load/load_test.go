package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmokeRunsTheWholeHarness runs every phase of the harness in its -short sizes (a real
// pixgate process, vegeta, both baselines, the in-process store, FerretDB, the MongoDB
// adapter and the ledger phases) so that `make test` proves
// `make load` works. It checks that a report came out, never a figure: timings are printed by
// the harness, not asserted.
func TestSmokeRunsTheWholeHarness(t *testing.T) {
	out := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	handWritten := "# Performance\n\nWritten by hand, kept by the harness.\n"
	if err := os.WriteFile(out, []byte(handWritten), 0o644); err != nil {
		t.Fatal(err)
	}
	// The harness bounds itself (-short: 3 minutes, cold builds included); this only stops a
	// harness that would not.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	start := time.Now()
	if err := run(ctx, []string{"-short", "-out", out}, &stdout); err != nil {
		t.Fatalf("the harness failed: %v\n%s", err, stdout.String())
	}
	t.Logf("the smoke run took %s", time.Since(start).Round(time.Millisecond))
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		handWritten, beginMarker, endMarker, "smoke run",
		"| GET /transaction/{id}, sustained throughput |", "| POST /transaction, sustained throughput |",
		"| GET /transaction, 1% filter", "while POSTs saturate the CPU", "| heap per stored transaction at",
		"MongoDB adapter (FerretDB on SQLite)", "| server memory per open payment page", "| create: POST /transaction vs InsertOne |",
		"| GET /balance p99, in process", "| POST /withdrawal p99, in process", "| GET /balance/entries (first page) p99 at",
		"| GET /balance p99, MongoDB adapter on FerretDB", "| POST /withdrawal p99, MongoDB adapter on FerretDB", "### The ledger", "**mongo POST /transaction**", "(a) bare net/http", "(b) QR renderer alone", "| in process |", "| HTTP |",
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the report lacks %q:\n%s", want, doc)
		}
	}
	if !strings.Contains(stdout.String(), "### Targets") {
		t.Errorf("the table was not printed:\n%s", stdout.String())
	}
}

func TestWriteSectionKeepsWhatIsWrittenByHand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	if err := writeSection(path, "first\n"); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(path)
	edited := strings.Replace(string(doc), "# Performance\n", "# Performance\n\nIntro.\n", 1) + "\n## Profiles\n\nBefore and after.\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, "second\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Performance\n\nIntro.\n\n" + beginMarker + "\nsecond\n" + endMarker + "\n\n## Profiles\n\nBefore and after.\n"
	if string(got) != want {
		t.Errorf("after a second run the file is\n%s\nwant\n%s", got, want)
	}
}

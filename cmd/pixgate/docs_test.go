package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's top directory, seen from this package.
const repoRoot = "../.."

// repoFiles lists the repository's files (both Go modules): the ones git tracks or would add,
// or, without git, every file outside hidden directories.
func repoFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repoRoot
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(repoRoot, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the repository: %v", err)
	}
	return files
}

// textFiles reads every text file of the repository (binary files and go.sum are left out).
func textFiles(t *testing.T) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for _, f := range repoFiles(t) {
		if filepath.Base(f) == "go.sum" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			if os.IsNotExist(err) { // deleted in the work tree, not yet in the index
				continue
			}
			t.Fatalf("%s: %v", f, err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		texts[filepath.ToSlash(f)] = string(b)
	}
	if len(texts) < 50 {
		t.Fatalf("only %d text files found; the check saw too little", len(texts))
	}
	return texts
}

// TestRepositoryCitesOnlyItsOwnDocuments keeps the repository self-contained: a person who
// clones it has no documents beside it, so nothing may send them to one. The product's
// behaviour is stated in docs/API.md; citations name one of its headings.
func TestRepositoryCitesOnlyItsOwnDocuments(t *testing.T) {
	t.Parallel()
	// Spelled in pieces so that this file does not cite them itself.
	outside := []string{"../" + "shared", "CONTRACT" + ".md", "interface" + ".md"}
	texts := textFiles(t)
	for f, text := range texts {
		for _, o := range outside {
			if strings.Contains(strings.ToLower(text), strings.ToLower(o)) {
				t.Errorf("%s mentions %s, a file outside the repository; cite docs/API.md instead", f, o)
			}
		}
	}
}

// TestDocsAPICitationsNameExistingHeadings fails when a citation of docs/API.md (its name, a
// comma, then a section heading) names a heading that docs/API.md does not have (a renamed section leaves its citations dangling).
func TestDocsAPICitationsNameExistingHeadings(t *testing.T) {
	t.Parallel()
	texts := textFiles(t)
	api, ok := texts["docs/API.md"]
	if !ok {
		t.Fatal("docs/API.md is missing")
	}
	var headings []string
	for _, line := range strings.Split(api, "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			headings = append(headings, strings.TrimSpace(strings.TrimLeft(h, "#")))
		}
	}
	if len(headings) < 20 {
		t.Fatalf("docs/API.md has only %d headings", len(headings))
	}
	// A citation may wrap over two lines of a comment or a paragraph.
	wrap := regexp.MustCompile(`[ \t]*\r?\n[ \t]*(//|#)?[ \t]*`)
	const marker = "docs/API.md" + ", " // in two pieces, not to be a citation itself
	citations := 0
	for f, text := range texts {
		flat := wrap.ReplaceAllString(text, " ")
		for rest := flat; ; {
			i := strings.Index(rest, marker)
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			citations++
			found := false
			for _, h := range headings {
				if strings.HasPrefix(rest, h) {
					found = true
					break
				}
			}
			if !found {
				cited := rest[:min(len(rest), 40)]
				t.Errorf("%s cites %q as a section of docs/API.md: it has no such heading", f, cited)
			}
		}
	}
	if citations < 20 {
		t.Fatalf("only %d citations of docs/API.md found; the check saw too little", citations)
	}
}

// markdownDocs reads README.md and every docs/*.md (docs/adr/*.md included), by their paths
// from the repository's top.
func markdownDocs(t *testing.T) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for f, text := range textFiles(t) {
		if f == "README.md" || (strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".md")) {
			docs[f] = text
		}
	}
	if len(docs) < 8 {
		t.Fatalf("only %d markdown documents found; the check saw too little", len(docs))
	}
	return docs
}

// headingAnchors are the anchors GitHub gives a document's headings: lower case, punctuation
// but hyphens and underscores dropped, spaces as hyphens, and -1, -2, ... for repeats.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestMarkdownLinksResolve fails when a relative link of README.md or docs/*.md names a file that
// does not exist, or an anchor that is no heading of the document it points at: a section moved
// from one document to another leaves no link behind.
func TestMarkdownLinksResolve(t *testing.T) {
	t.Parallel()
	docs := markdownDocs(t)
	files := map[string]bool{}
	for _, f := range repoFiles(t) {
		files[filepath.ToSlash(f)] = true
		for d := path.Dir(filepath.ToSlash(f)); d != "."; d = path.Dir(d) {
			files[d] = true
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence := regexp.MustCompile("(?ms)^```.*?^```")
	checked := 0
	for f, text := range docs {
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(f), file))
				if !files[strings.TrimSuffix(dest, "/")] {
					t.Errorf("%s links to %s: no such file", f, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			text, ok := docs[dest]
			if !ok {
				t.Errorf("%s links to %s: an anchor in a file that is not a markdown document", f, target)
				continue
			}
			if !headingAnchors(text)[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", f, target, dest, anchor)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d relative links checked; the check saw too little", checked)
	}
}

// TestREADMEIsANewcomersTenMinutes keeps the README short, its two commands named, and a way
// from it to every document under docs/: the reference lives there, once.
func TestREADMEIsANewcomersTenMinutes(t *testing.T) {
	t.Parallel()
	docs := markdownDocs(t)
	readme := docs["README.md"]
	if n := strings.Count(readme, "\n"); n > 320 {
		t.Errorf("README.md has %d lines; it is a newcomer's ten minutes (about 300): move the detail to docs/", n)
	}
	for _, want := range []string{"make run", "make test", "make test-fast"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not mention %q", want)
		}
	}
	for f := range docs {
		if strings.HasPrefix(f, "docs/") && path.Dir(f) == "docs" && !strings.Contains(readme, "]("+f+")") {
			t.Errorf("README.md has no link to %s (its \"Where to read more\" table lists every document)", f)
		}
	}
}

package testdb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/testcontainers/testcontainers-go"
)

// Image builds, once per test binary, an image FROM scratch holding a static build of a Go
// main package, and returns its tag. No registry is needed: the image has no base, only the
// binary (and an empty /tmp). Docker's build cache makes a rebuild of an unchanged binary in
// another test binary cheap.
//
// dir is the module directory to build in, pkg the package ("./cmd/pixgate"), repo the image
// name ("pixgate-test/pixgate"); args are the image's entrypoint arguments after the binary.
func Image(ctx context.Context, repo, dir, pkg string, args ...string) (string, error) {
	imagesMu.Lock()
	b, ok := images[repo]
	if !ok {
		b = &imageBuild{}
		images[repo] = b
	}
	imagesMu.Unlock()
	b.once.Do(func() { b.tag, b.err = buildImage(ctx, repo, dir, pkg, args) })
	return b.tag, b.err
}

type imageBuild struct {
	once sync.Once
	tag  string
	err  error
}

var (
	imagesMu sync.Mutex
	images   = map[string]*imageBuild{}
)

// FerretDBImage is the image of FerretDB v1.24.0 with its SQLite backend (our own main around
// the embeddable package, test/internal/ferretmain), listening on 27017 and keeping its data in
// /data.
func FerretDBImage(ctx context.Context) (string, error) {
	dir, err := TestModuleDir()
	if err != nil {
		return "", err
	}
	return Image(ctx, "pixgate-test/ferretdb", dir, "./internal/ferretmain", "-listen", ":27017", "-dir", "/data")
}

// TestModuleDir is the directory of the test module (where its go.mod is).
func TestModuleDir() (string, error) {
	out, err := goCommand("env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(mod), nil
}

// RootModuleDir is the directory of the product's module, the parent of the test module.
func RootModuleDir() (string, error) {
	dir, err := TestModuleDir()
	if err != nil {
		return "", err
	}
	return filepath.Dir(dir), nil
}

// goCommand runs the go tool that runs the tests (the one on PATH, or the one of the running
// toolchain when PATH has none).
func goCommand(args ...string) *exec.Cmd {
	tool, err := exec.LookPath("go")
	if err != nil {
		tool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	return exec.Command(tool, args...)
}

func buildImage(ctx context.Context, repo, dir, pkg string, args []string) (string, error) {
	setup()
	work, err := os.MkdirTemp("", "pixgate-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	name := filepath.Base(repo)
	cmd := goCommand("build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(work, name), pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.String())
	}
	if err := os.Mkdir(filepath.Join(work, "tmp"), 0o777); err != nil {
		return "", err
	}
	entry := []string{`"/` + name + `"`}
	for _, a := range args {
		entry = append(entry, fmt.Sprintf("%q", a))
	}
	dockerfile := "FROM scratch\nCOPY " + name + " /" + name + "\nCOPY tmp /tmp\n" +
		"ENTRYPOINT [" + strings.Join(entry, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(work, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", err
	}
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", err
	}
	defer p.Close()
	tag, err := p.BuildImage(ctx, &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: work, Dockerfile: "Dockerfile", Repo: repo, Tag: "latest", KeepImage: true,
		BuildLogWriter: io.Discard,
	}})
	if err != nil {
		return "", fmt.Errorf("build image %s: %w", repo, err)
	}
	return tag, nil
}

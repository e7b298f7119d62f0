package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

const productModule = "github.com/pixgate/pixgate"

// rootModuleDir is the product module's directory: the nearest directory above the working
// directory whose go.mod declares github.com/pixgate/pixgate.
func rootModuleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(first) == "module "+productModule {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no directory above the working directory holds the module " + productModule)
		}
		dir = parent
	}
}

// machine is what the figures were measured on and with.
type machine struct {
	CPU         string // model name from /proc/cpuinfo
	LogicalCPUs int    // processor entries in /proc/cpuinfo
	CoresPerCPU string // "cpu cores" from /proc/cpuinfo
	GOMAXPROCS  int
	MemTotal    string // from /proc/meminfo
	Kernel      string
	Commit      string // git rev-parse HEAD, "+dirty" when the tree has changes
	GoVersion   string // go version of the toolchain that built the server
	// LoadBefore and LoadAfter are /proc/loadavg's 1-minute figure when the run started and
	// ended: anything well above 0 at the start means other work shared the machine.
	LoadBefore, LoadAfter string
	// Nice is the harness's scheduling niceness (its children, the servers, inherit it): below
	// 0 when the run was given priority over other work on the machine.
	Nice int
}

// niceness is the 19th field of /proc/self/stat.
func niceness() int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	// After the command: state is field 3, nice is field 19.
	if f := strings.Fields(s); len(f) > 16 {
		n, _ := strconv.Atoi(f[16])
		return n
	}
	return 0
}

// loadAverage is the 1-minute load average, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func describeMachine(ctx context.Context, root string) (machine, error) {
	m := machine{CPU: "unknown", GOMAXPROCS: runtime.GOMAXPROCS(0), Commit: "unknown", MemTotal: "unknown", LoadBefore: loadAverage(), Nice: niceness()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); k {
			case "processor":
				m.LogicalCPUs++
			case "model name":
				m.CPU = v
			case "cpu cores":
				m.CoresPerCPU = v
			}
		}
		f.Close()
	}
	if m.LogicalCPUs == 0 {
		m.LogicalCPUs = runtime.NumCPU()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if out, err := command(ctx, root, "git", "rev-parse", "HEAD"); err == nil {
		m.Commit = out
		if status, err := command(ctx, root, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
			m.Commit += "+dirty"
		}
	}
	out, err := command(ctx, root, "go", "version")
	if err != nil {
		return machine{}, fmt.Errorf("go version: %w", err)
	}
	m.GoVersion = out
	return m, nil
}

// command runs a program in dir and returns its trimmed standard output.
func command(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

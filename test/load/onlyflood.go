package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/test/internal/childproc"
	"github.com/pixgate/pixgate/test/load/internal/probe"
)

// runOnlyFlood is -only-flood: pixgate serve on the memory store, the POST /transaction
// step-up, then the lookups alone and during creations as in a full run, each window also
// seen from the server (the durations its access log records), in about a minute. It writes
// no report: it is there to study the lookups' tail under a creation flood (with -server-env
// GOGC=..., GODEBUG=gctrace=1 and the like) without the minutes of a full run.
func runOnlyFlood(ctx context.Context, o options, root string, logf func(string, ...any)) error {
	tmp, bin, remove, err := buildPixgate(ctx, root, "pixgate-load-")
	if err != nil {
		return err
	}
	defer remove()
	proberBin, err := build(ctx, filepath.Join(root, "test"), "./load/prober", tmp, "prober")
	if err != nil {
		return err
	}
	acct := newAccount("load")
	srv, err := startServer(ctx, bin, tmp, o.serverEnv, acct)
	if err != nil {
		return err
	}
	defer srv.stop()
	token, err := srv.token(ctx, acct)
	if err != nil {
		return err
	}
	body := loadBody("maria@example.com")
	ids, err := srv.createMany(ctx, token, o.lookups, 4, func(int) []byte { return body })
	if err != nil {
		return err
	}
	urls := lookupURLs(srv.base, ids)
	client := newLoadClient()
	getTargets := staticTargets(srv.process, http.MethodGet, urls, nil, bearer(token))
	postTargets := staticTargets(srv.process, http.MethodPost, []string{srv.base + "/transaction"}, body,
		bearer(token, "Content-Type", "application/json"))
	postRate := o.floodRate
	if postRate == 0 {
		post, err := findSustained(ctx, "POST /transaction", client, postTargets, o, logf)
		if err != nil {
			return err
		}
		postRate = math.Round(busyPostShare * post.Sustained.Offered)
	}
	const lookupRate = 100
	for round := 1; round <= o.floodRounds; round++ {
		time.Sleep(pauseAfterStep)
		from := logSize(srv.logPath)
		pr, err := startProber(ctx, proberBin, tmp, urls, token, lookupRate, o.hold)
		if err != nil {
			return err
		}
		idle := attack(ctx, client, getTargets, lookupRate, o.hold, 0)
		idleProbe, err := pr.wait()
		if err != nil {
			return err
		}
		idleServer, err := loggedDurations(srv.logPath, from, "GET")
		if err != nil {
			return err
		}
		logf("round %d: GET alone at %d/s: %s; in the server p50 %s p99 %s max %s; prober %s", round, lookupRate, idle,
			pct(idleServer, 0.5), pct(idleServer, 0.99), pct(idleServer, 1), idleProbe)
		time.Sleep(pauseAfterStep)
		from = logSize(srv.logPath)
		var busyGet, busyPost measurement
		pr, err = startProber(ctx, proberBin, tmp, urls, token, lookupRate, o.hold)
		if err != nil {
			return err
		}
		busyGet, busyPost = duringFlood(ctx, client, getTargets, postTargets, lookupRate, postRate, o.hold)
		busyProbe, err := pr.wait()
		if err != nil {
			return err
		}
		busyServer, err := loggedDurations(srv.logPath, from, "GET")
		if err != nil {
			return err
		}
		logf("round %d: GET at %d/s during POST at %.0f/s: %s; in the server p50 %s p99 %s max %s; prober %s", round, lookupRate, postRate, busyGet,
			pct(busyServer, 0.5), pct(busyServer, 0.99), pct(busyServer, 1), busyProbe)
		logf("round %d:   the POSTs: %s; collections so far %d", round, busyPost, gcLines.Load())
		logf("round %d: p99 during / alone: %.1f x (harness), %.1f x (prober), %.1f x (server)", round,
			float64(busyGet.P99)/float64(idle.P99), float64(busyProbe.P99)/float64(max(1, idleProbe.P99)),
			float64(pct(busyServer, 0.99))/float64(max(1, pct(idleServer, 0.99))))
	}
	if err := srv.alive(); err != nil {
		return err
	}
	// Keep the server's log (its access log and any GODEBUG trace) for study.
	kept, err := os.CreateTemp("", "pixgate-flood-*.log")
	if err != nil {
		return err
	}
	defer kept.Close()
	log, err := os.Open(srv.logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	if _, err := io.Copy(kept, log); err != nil {
		return err
	}
	logf("the server's log: %s", kept.Name())
	return nil
}

// gcLines counts the collector's trace lines loggedDurations saw (-server-env GODEBUG=gctrace=1).
var gcLines atomic.Int64

// logSize is the length of the server's log so far.
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// loggedDurations reads the access log from offset on and returns the durations of the
// requests of method, sorted.
func loggedDurations(path string, offset int64, method string) ([]time.Duration, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("gc ")) {
			gcLines.Add(1) // GODEBUG=gctrace=1
			continue
		}
		var line struct {
			Msg        string  `json:"msg"`
			Method     string  `json:"method"`
			DurationMs float64 `json:"durationMs"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" || line.Method != method {
			continue
		}
		out = append(out, time.Duration(line.DurationMs*float64(time.Millisecond)))
	}
	slices.Sort(out)
	return out, sc.Err()
}

// pct is the q quantile of sorted durations, 0 for none.
func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return percentile(sorted, q)
}

// prober is a started test/load/prober process, warmed and measuring.
type prober struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// startProber runs the prober at rate for d over urls with token and returns once it measures.
func startProber(ctx context.Context, bin, dir string, urls []string, token string, rate int, d time.Duration) (*prober, error) {
	urlsFile, tokenFile := filepath.Join(dir, "prober-urls"), filepath.Join(dir, "prober-token")
	if err := os.WriteFile(urlsFile, []byte(strings.Join(urls, "\n")), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "-rate", strconv.Itoa(rate), "-for", d.String(), "-urls", urlsFile, "-token", tokenFile)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	childproc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &prober{cmd: cmd, out: bufio.NewReader(stdout)}
	if line, err := p.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the prober did not start: %q %v", line, err)
	}
	return p, nil
}

// wait reads the prober's figures once it has measured.
func (p *prober) wait() (probe.Figures, error) {
	var f probe.Figures
	err := json.NewDecoder(p.out).Decode(&f)
	if werr := p.cmd.Wait(); err == nil {
		err = werr
	}
	return f, err
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// payPageRun is what the payment page phase measured: the server's resident memory before and
// with Open live channels (GET /pay/{token}/events, server-sent events) held open at once.
type payPageRun struct {
	Open              int
	RSSBefore, RSSNow int64 // bytes, from /proc/<pid>/status
	Took              time.Duration
}

// goalBytesPerPage bounds what one open payment page may cost the server.
const goalBytesPerPage = 64 << 10

// measurePaymentPages runs `pixgate serve` (memory store, sandbox), creates one charge and opens
// o's count of live channels to its payment page from this process, all at once, from
// loopback; it reads the server's resident memory before and once every channel has its
// first event, then closes them. The stream caps are raised for the run (one charge, one
// address), so that the figure is what a thousand buyers' pages cost, wherever they come from.
func measurePaymentPages(ctx context.Context, o options, root string, r *report, logf func(string, ...any)) error {
	open := 1000
	if o.short {
		open = 50
	}
	tmp, bin, remove, err := buildPixgate(ctx, root, "pixgate-load-pay-")
	if err != nil {
		return err
	}
	defer remove()
	merchant := newAccount("pay")
	srv, err := startServer(ctx, bin, tmp, []string{"PIXGATE_PAY_RATE_LIMIT_RPS=0",
		"PIXGATE_PAY_STREAMS_PER_CHARGE=" + strconv.Itoa(open), "PIXGATE_PAY_STREAMS_PER_ADDRESS=" + strconv.Itoa(open)}, merchant)
	if err != nil {
		return err
	}
	defer srv.stop()
	token, err := srv.token(ctx, merchant)
	if err != nil {
		return err
	}
	res, raw, err := srv.do(ctx, http.MethodPost, "/transaction", token, loadBody("buyer@example.com"))
	if err != nil {
		return err
	}
	var tx struct {
		PaymentURL string `json:"paymentUrl"`
	}
	if err := json.Unmarshal(raw, &tx); err != nil || res.StatusCode != http.StatusCreated || tx.PaymentURL == "" {
		return fmt.Errorf("creating the charge: %d %.200s", res.StatusCode, raw)
	}
	i := strings.Index(tx.PaymentURL, "/pay/")
	if i < 0 {
		return fmt.Errorf("paymentUrl %q has no /pay/", tx.PaymentURL)
	}
	events := srv.base + tx.PaymentURL[i:] + "/events"

	run := &payPageRun{Open: open}
	time.Sleep(500 * time.Millisecond) // let the server settle after the creation
	if run.RSSBefore, err = srv.rss(); err != nil {
		return err
	}
	start := time.Now()
	streamCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: open, DisableCompression: true}}
	var wg sync.WaitGroup
	ready := make(chan error, open)
	for range open {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, events, nil)
			if err != nil {
				ready <- err
				return
			}
			req.Header.Set("Accept", "text/event-stream")
			res, err := client.Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				ready <- fmt.Errorf("GET %s: %d", "/pay/…/events", res.StatusCode)
				return
			}
			// The first event is the charge's status: the channel is up.
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data:") {
					break
				}
			}
			ready <- sc.Err()
			<-streamCtx.Done() // hold the page open until the figure is read
		})
	}
	for range open {
		if err := <-ready; err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("opening the payment pages: %w", err)
		}
	}
	run.Took = time.Since(start)
	time.Sleep(500 * time.Millisecond)
	run.RSSNow, err = srv.rss()
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	r.payPages = run
	logf("payment page: %d live channels open in %s; server memory %s → %s (%s a page)", open, run.Took.Round(time.Millisecond),
		mib(run.RSSBefore), mib(run.RSSNow), kib(run.perPage()))
	return nil
}

func (p *payPageRun) perPage() float64 {
	return float64(p.RSSNow-p.RSSBefore) / float64(p.Open)
}

// rss is the server's resident memory, VmRSS of /proc/<pid>/status.
func (p *process) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/(1<<10)) }

// payPageTarget writes the payment page's row of the targets table.
func (r *report) payPageTarget(p func(string, ...any)) {
	pp := r.payPages
	if pp == nil {
		p("| server memory per open payment page (live channel) | ≤ 64 KiB | %s | | | |\n", r.payPagesNote)
		return
	}
	per := pp.perPage()
	p("| server memory per open payment page (live channel), %s open at once over HTTP | ≤ 64 KiB | %s (resident memory %s → %s) | | %.2f of the goal | %s |\n",
		thousands(float64(pp.Open)), kib(per), mib(pp.RSSBefore), mib(pp.RSSNow), per/goalBytesPerPage, verdict(per <= goalBytesPerPage))
}

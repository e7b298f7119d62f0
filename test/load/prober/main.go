// Command prober is the lookups' client of the load harness's creation flood: it sends GET
// requests at a fixed rate (the open model: one every 1/rate seconds whether or not earlier ones
// were answered) and reports their latencies. It runs as a process of its own so that the
// lookups it times are not delayed by the harness's process, which is busy sending the flood and
// reading its answers (its collector and its goroutines would otherwise count as the server's
// latency): the lookups and the flood come from different clients, as they do in production.
//
//	prober -rate 100 -for 5s -urls FILE -token FILE
//
// It dials and warms its connections with a few requests, prints "ready" on its standard
// output, then measures for the given duration and prints one JSON object with the figures.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/test/load/internal/probe"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "prober:", err)
		os.Exit(1)
	}
}

func run() error {
	rate := flag.Int("rate", 100, "requests a second")
	d := flag.Duration("for", 5*time.Second, "how long to measure")
	urlsFile := flag.String("urls", "", "file of the URLs to cycle through, one a line")
	tokenFile := flag.String("token", "", "file holding the bearer token")
	flag.Parse()
	if *rate < 1 || *rate > 10_000 || *d <= 0 || *d > 10*time.Minute {
		return fmt.Errorf("-rate must be 1 to 10000 and -for at most 10m")
	}
	urls, err := lines(*urlsFile)
	if err != nil || len(urls) == 0 {
		return fmt.Errorf("reading -urls: %v (%d URLs)", err, len(urls))
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	auth := "Bearer " + strings.TrimSpace(string(token))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256}}
	get := func(url string) (time.Duration, error) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", auth)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took := time.Since(start)
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET answered %d", res.StatusCode)
		}
		return took, err
	}
	// Warm a few connections, as the harness's client is warm.
	var warm sync.WaitGroup
	for i := range 8 {
		warm.Go(func() { _, _ = get(urls[i%len(urls)]) })
	}
	warm.Wait()
	fmt.Println("ready")

	n := int(float64(*rate) * d.Seconds())
	took := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	every := time.Second / time.Duration(*rate)
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * every)); wait > 0 {
			time.Sleep(wait)
		}
		wg.Go(func() { took[i], errs[i] = get(urls[i%len(urls)]) })
	}
	wg.Wait()
	f := probe.Figures{Requests: n}
	var ok []time.Duration
	for i, err := range errs {
		if err != nil {
			if len(f.Errors) < 5 {
				f.Errors = append(f.Errors, err.Error())
			}
			continue
		}
		ok = append(ok, took[i])
	}
	f.OK = len(ok)
	if len(ok) > 0 {
		slices.Sort(ok)
		q := func(p float64) time.Duration { return ok[min(len(ok)-1, int(p*float64(len(ok))))] }
		f.P50, f.P99, f.Max = q(0.5), q(0.99), ok[len(ok)-1]
	}
	return json.NewEncoder(os.Stdout).Encode(f)
}

// lines reads the non-empty lines of a file.
func lines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

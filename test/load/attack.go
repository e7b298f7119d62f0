package main

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// measurement is one vegeta run at one rate.
type measurement struct {
	Offered    float64 // requests a second asked of vegeta; 0 for a closed-model probe
	Sent       float64 // requests a second vegeta actually sent
	Throughput float64 // successful answers a second
	Success    float64 // share of 2xx answers
	P50, P99   time.Duration
	Max        time.Duration
	Requests   uint64
	// ServerCPU and HarnessCPU are the CPU time the server process and the harness (vegeta,
	// mostly) used during the run: what a request costs whatever else shares the machine.
	ServerCPU, HarnessCPU time.Duration
	Codes                 map[string]int
	Errors                []string
	// Verdict is "ok" for a step that held its rate, or why it did not.
	Verdict string
}

// cpuPerRequest is the server's and the harness's CPU time per request.
func (m measurement) cpuPerRequest() (server, harness time.Duration) {
	if m.Requests == 0 {
		return 0, 0
	}
	return m.ServerCPU / time.Duration(m.Requests), m.HarnessCPU / time.Duration(m.Requests)
}

func (m measurement) String() string {
	server, harness := m.cpuPerRequest()
	s := fmt.Sprintf("offered %6.0f/s sent %6.0f/s ok %6.0f/s success %7.3f%% p50 %7s p99 %7s cpu/req server %6s harness %6s",
		m.Offered, m.Sent, m.Throughput, 100*m.Success, round(m.P50), round(m.P99), server.Round(time.Microsecond), harness.Round(time.Microsecond))
	if m.Verdict != "" {
		s += " " + m.Verdict
	}
	if len(m.Errors) > 0 {
		s += fmt.Sprintf(" errors %.200q", m.Errors)
	}
	return s
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// maxOpenWorkers bounds vegeta's workers in open-model runs. vegeta adds a worker whenever every
// worker is waiting for an answer; past this bound it would stop sending at the set rate, which
// the verdict sees as throughput below the offered rate.
const maxOpenWorkers = 4000

// newLoadClient is the HTTP client of every measured request: one for the whole run, so that
// each step starts on the connections the previous one warmed rather than dialling its own. It
// never uses a proxy: the harness talks to loopback only.
func newLoadClient() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: maxOpenWorkers,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// attack sends requests from tr at rate a second (at least 1) for d: the open model. With
// closedWorkers > 0 it ignores rate and sends as fast as that many workers can, each waiting for
// its answer: the closed model of the probe.
func attack(ctx context.Context, client *http.Client, t target, rate float64, d time.Duration, closedWorkers int) measurement {
	opts := []func(*vegeta.Attacker){vegeta.Client(client), vegeta.MaxBody(0), vegeta.MaxWorkers(maxOpenWorkers)}
	pacer := vegeta.ConstantPacer{Freq: int(math.Max(1, math.Round(rate))), Per: time.Second}
	if closedWorkers > 0 {
		rate = 0
		opts = append(opts, vegeta.Workers(uint64(closedWorkers)), vegeta.MaxWorkers(uint64(closedWorkers)))
		pacer = vegeta.ConstantPacer{}
	}
	atk := vegeta.NewAttacker(opts...)
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	var m vegeta.Metrics
	serverBefore, harnessBefore := t.server.cpu(), selfCPU()
	for res := range atk.Attack(t.tr, pacer, d, "") {
		m.Add(res)
	}
	serverCPU, harnessCPU := t.server.cpu()-serverBefore, selfCPU()-harnessBefore
	m.Close()
	return measurement{
		Offered: rate, Sent: m.Rate, Throughput: m.Throughput, Success: m.Success,
		P50: m.Latencies.P50, P99: m.Latencies.P99, Max: m.Latencies.Max,
		Requests: m.Requests, ServerCPU: serverCPU, HarnessCPU: harnessCPU, Codes: m.StatusCodes, Errors: m.Errors,
	}
}

// stepUp is the search for a sustained rate: a closed-model probe estimates the capacity C,
// then the rate steps up through fractions of C until a step fails.
type stepUp struct {
	Probe measurement
	Steps []measurement
	// Sustained is the last step that held; its Throughput is the sustained throughput.
	Sustained measurement
	// Limit says why the search stopped: the first failed step's verdict.
	Limit string
}

// stepFractions of the probed capacity, in order.
var stepFractions = []float64{0.5, 0.65, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4, 1.6}

// A step holds when at least 99.9% of its answers succeed, it delivers at least 95% of the
// offered rate as successful answers a second, and its p99 has not blown up: at most 10 times
// the lowest p99 of the steps that held before it, or 20 ms when that is more.
const (
	minSuccess     = 0.999
	minDelivered   = 0.95
	blowUpFactor   = 10
	blowUpFloor    = 20 * time.Millisecond
	probeWorkers   = 16
	pauseAfterStep = 300 * time.Millisecond
)

func judge(m *measurement, ref time.Duration) bool {
	switch {
	case m.Success < minSuccess:
		m.Verdict = fmt.Sprintf("failed: success %.3f%% < %.1f%%", 100*m.Success, 100*minSuccess)
	case m.Throughput < minDelivered*m.Offered:
		m.Verdict = fmt.Sprintf("failed: delivered %.0f/s < %.0f%% of %.0f/s offered", m.Throughput, 100*minDelivered, m.Offered)
	case ref > 0 && m.P99 > max(blowUpFactor*ref, blowUpFloor):
		m.Verdict = fmt.Sprintf("failed: p99 %s > %s (10 x the lowest held p99, floor 20 ms)", round(m.P99), round(max(blowUpFactor*ref, blowUpFloor)))
	default:
		m.Verdict = "ok"
		return true
	}
	return false
}

// findSustained probes tr's capacity and steps the rate up until a step fails, then bisects the
// gap twice. When even the first step fails, it steps down instead (downFractions) until one
// holds. logf shows each step as it ends. An error means the probe got no answer at all; a
// rate that never held leaves Sustained empty. Sustained is the held step with the highest
// throughput.
func findSustained(ctx context.Context, name string, client *http.Client, tr target, o options, logf func(string, ...any)) (stepUp, error) {
	var s stepUp
	s.Probe = attack(ctx, client, tr, 0, o.probe, probeWorkers)
	logf("%s: probe (closed model, %d workers): %s", name, probeWorkers, s.Probe)
	if s.Probe.Throughput <= 0 {
		return s, fmt.Errorf("%s: the probe got no successful answer (codes %v, errors %.300q)", name, s.Probe.Codes, s.Probe.Errors)
	}
	capacity := s.Probe.Throughput
	var ref time.Duration
	pause := pauseAfterStep
	if o.pause > 0 {
		pause = o.pause
	}
	step := func(f float64) bool {
		time.Sleep(pause)
		m := attack(ctx, client, tr, math.Max(1, math.Round(f*capacity)), o.step, 0)
		held := judge(&m, ref)
		if held && (ref == 0 || m.P99 < ref) {
			ref = m.P99
		}
		s.Steps = append(s.Steps, m)
		logf("%s: step %.2f C: %s", name, f, m)
		if held && m.Throughput > s.Sustained.Throughput {
			s.Sustained = m
		} else if !held && s.Limit == "" {
			s.Limit = m.Verdict
		}
		return held
	}
	lo, hi := stepFractions[0], 0.0 // the last fraction that held, the first that failed
	if !step(lo) {
		lo, hi = 0, stepFractions[0]
		for _, f := range downFractions {
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			if step(f) {
				lo = f
				break
			}
			hi = f
		}
		if lo == 0 {
			return s, ctx.Err()
		}
	} else {
		for _, f := range stepFractions[1:] {
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			if !step(f) {
				hi = f
				break
			}
			lo = f
		}
	}
	if hi == 0 {
		s.Limit = fmt.Sprintf("every step held, up to %g times the probed capacity", lo)
		return s, ctx.Err()
	}
	// Narrow the gap between the last rate that held and the first that failed.
	for range refinements {
		if ctx.Err() != nil {
			break
		}
		mid := (lo + hi) / 2
		if step(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s, ctx.Err()
}

// refinements are the steps that bisect between the last rate that held and the first that
// failed, once the step-up has found both.
const refinements = 2

// downFractions of the probed capacity are tried, in order, when the first step fails.
var downFractions = []float64{0.35, 0.25, 0.15, 0.1}

// target is what an attack sends and to which server process.
type target struct {
	tr     vegeta.Targeter
	server *process
}

// staticTargets cycles through the requests of urls to server; each carries the header given.
func staticTargets(server *process, method string, urls []string, body []byte, header http.Header) target {
	targets := make([]vegeta.Target, len(urls))
	for i, u := range urls {
		targets[i] = vegeta.Target{Method: method, URL: u, Body: body, Header: header}
	}
	return target{tr: vegeta.NewStaticTargeter(targets...), server: server}
}

// selfCPU is the CPU time the harness's process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func bearer(token string, extra ...string) http.Header {
	h := http.Header{"Authorization": {"Bearer " + token}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SIGTERM, as an orchestrator sends it, to the real program under load (docs/API.md, Operational routes: SIGTERM):
// it stops accepting, finishes the requests in flight, stops its background work and exits 0.
// Helpers here start with "sd".

// sdShutdownTimeout is PIXGATE_SHUTDOWN_TIMEOUT of the test: how long the program may take.
const sdShutdownTimeout = 10 * time.Second

// sdHold is how long the slow request stays half sent once the listener has closed: a program
// that cut its requests in flight short of that would cut it.
const sdHold = 300 * time.Millisecond

// sdProgram is the program to run: this test binary, which runs main when started as
// "serve" (TestMain), so that no test waits for a `go build` of its own.
func sdProgram(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func sdFreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// sdProcess is the program running as a process of its own.
type sdProcess struct {
	cmd    *exec.Cmd
	addr   string
	log    *syncBuffer
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

func sdStart(t *testing.T, bin string, env ...string) *sdProcess {
	t.Helper()
	p := &sdProcess{addr: "127.0.0.1:" + sdFreePort(t), log: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve")
	// Only the variables of the test: none of the caller's PIXGATE_* settings leak in. The
	// program is this test binary: built with -cover, it writes its counters as it exits, and
	// warns on stderr (the log, which must be JSON) where GOCOVERDIR names no folder.
	p.cmd.Env = append([]string{"PIXGATE_ADDR=" + p.addr, "GOCOVERDIR=" + t.TempDir()}, env...)
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + p.addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("pixgate exited at start: %v\n%s", p.err, p.log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pixgate did not answer /healthz within 20 s\n%s", p.log)
		}
	}
}

// sdShot is one request of the load and what became of it.
type sdShot struct {
	id        string
	route     string
	started   time.Time
	dialed    time.Time // when the connection was asked for
	ended     time.Time
	status    int   // 0 when no answer came
	err       error // the request's, or reading its answer's
	firstByte bool  // some of the answer arrived
	body      []byte
}

// sdClient sends each request on a connection of its own, so that every failure is about
// that request and never a kept-alive connection the server closed while idle.
var sdClient = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func sdShoot(id, route, method, url, token string, body string) (s sdShot) {
	s = sdShot{id: id, route: route, started: time.Now()}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		s.err = err
		return s
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Request-Id", id)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		ConnectStart:         func(string, string) { s.dialed = time.Now() },
		GotFirstResponseByte: func() { s.firstByte = true },
	}))
	defer func() { s.ended = time.Now() }()
	res, err := sdClient.Do(req)
	if err != nil {
		s.err = err
		return s
	}
	defer res.Body.Close()
	s.status = res.StatusCode
	s.body, s.err = io.ReadAll(res.Body)
	return s
}

// sdSlowCreate is a POST /transaction whose body arrives in two halves, the second after
// SIGTERM: a request certainly in flight when the signal comes. It sends the first half, then
// reports on started, waits for resume, sends the rest and reads the answer.
func sdSlowCreate(addr, token, id string, started chan<- error, resume <-chan struct{}) sdShot {
	s := sdShot{id: id, route: "transaction.create", started: time.Now()}
	body := `{"amount": 4321, "paymentMethod": "PIX", "pix": {"expirationSeconds": 600}}`
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		started <- err
		s.err = err
		return s
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	head := fmt.Sprintf("POST /transaction HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nX-Request-Id: %s\r\nConnection: close\r\n\r\n", addr, token, len(body), id)
	half := len(body) / 2
	if _, err := io.WriteString(conn, head+body[:half]); err != nil {
		started <- err
		s.err = err
		return s
	}
	started <- nil
	<-resume
	if _, err := io.WriteString(conn, body[half:]); err != nil {
		s.err = fmt.Errorf("writing the second half: %w", err)
		return s
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		s.err = err
		return s
	}
	defer res.Body.Close()
	s.firstByte, s.status = true, res.StatusCode
	s.body, s.err = io.ReadAll(res.Body)
	return s
}

func sdRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func TestSIGTERMFinishesRequestsInFlightAndExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program as a process of its own")
	}
	bin := sdProgram(t)
	const clientID, secret = "shutdown-merchant", "shutdown-secret-0123456789-abcdefghijkl"
	p := sdStart(t, bin, "PIXGATE_SANDBOX=true", "PIXGATE_RATE_LIMIT_RPS=0", "PIXGATE_LOG_LEVEL=info",
		"PIXGATE_SHUTDOWN_TIMEOUT="+sdShutdownTimeout.String(), "PIXGATE_SEED_CLIENTS=Shutdown:"+clientID+":"+secret)
	base := "http://" + p.addr

	res, err := http.PostForm(base+"/auth/token", url.Values{"client_id": {clientID}, "client_secret": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	var grant struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(res.Body).Decode(&grant)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || grant.AccessToken == "" {
		t.Fatalf("token: %d %v", res.StatusCode, err)
	}
	tok := grant.AccessToken

	// The load: 8 workers create and read transactions until the program has exited. SIGTERM
	// comes once the load is under way (every worker answered at least once) and a slow
	// request is half sent.
	const workers = 8
	var (
		mu     sync.Mutex
		shots  []sdShot
		termAt time.Time
		going  = make(chan struct{}, workers)
	)
	record := func(s sdShot) {
		mu.Lock()
		shots = append(shots, s)
		mu.Unlock()
	}
	exited := func() bool {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// A last request after the exit, so that every worker has one the listener refused.
			signalled := false
			for n, last := 0, false; !last; n++ {
				last = exited()
				s := sdShoot(fmt.Sprintf("sd-%d-%d-c", w, n), "transaction.create", "POST", base+"/transaction", tok,
					`{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`)
				record(s)
				if s.err != nil {
					time.Sleep(20 * time.Millisecond) // the listener is closed: no use hammering it
					continue
				}
				if !signalled {
					going <- struct{}{}
					signalled = true
				}
				var created struct{ ID string }
				if s.status == http.StatusCreated && json.Unmarshal(s.body, &created) == nil && created.ID != "" {
					record(sdShoot(fmt.Sprintf("sd-%d-%d-g", w, n), "transaction.get", "GET", base+"/transaction/"+created.ID, tok, ""))
				}
			}
		})
	}
	for range workers {
		select {
		case <-going:
		case <-time.After(20 * time.Second):
			t.Fatalf("the load got no answers within 20 s\n%s", p.log)
		}
	}

	slowStarted, resume := make(chan error, 1), make(chan struct{})
	slowDone := make(chan sdShot, 1)
	go func() { slowDone <- sdSlowCreate(p.addr, tok, "sd-slow", slowStarted, resume) }()
	if err := <-slowStarted; err != nil {
		t.Fatalf("the slow request could not start: %v", err)
	}
	// The server accepts connections in the order they came: once a request on a connection
	// dialled after the slow one's is answered, the slow one was accepted and is in flight.
	probe, err := sdClient.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("healthz after the slow request's start: %v", err)
	}
	probe.Body.Close()
	mu.Lock()
	termAt = time.Now()
	mu.Unlock()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes: the program is shutting down, and the slow request is still half
	// sent. It stays so a while longer, which the program must wait out.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			conn.Close()
		} else if sdRefused(err) {
			break
		}
		if exited() || time.Now().After(deadline) {
			t.Fatalf("the listener did not close after SIGTERM while the program ran (exited: %v)\n%s", exited(), p.log)
		}
	}
	time.Sleep(sdHold) // the program must wait for the slow request meanwhile
	close(resume)

	var exitedAfter time.Duration
	select {
	case <-p.exited:
		exitedAfter = time.Since(termAt)
	case <-time.After(sdShutdownTimeout + 5*time.Second):
		t.Fatalf("pixgate still runs %s after SIGTERM\n%s", sdShutdownTimeout+5*time.Second, p.log)
	}
	slow := <-slowDone
	wg.Wait()
	lines := lgLog(t, p.log.String())

	t.Run("the program exits 0 within the shutdown timeout", func(t *testing.T) {
		if p.err != nil {
			t.Fatalf("exit: %v\n%s", p.err, p.log)
		}
		if exitedAfter > sdShutdownTimeout {
			t.Fatalf("exited %s after SIGTERM, over the timeout %s", exitedAfter, sdShutdownTimeout)
		}
	})

	// The request lines of the log, by request id: what the server handled.
	handled := map[string]float64{}
	for _, l := range lines {
		if l.fields["msg"] == "request" {
			id, _ := l.fields["requestId"].(string)
			handled[id], _ = l.fields["status"].(float64)
		}
	}

	t.Run("the request in flight at SIGTERM is finished: 201 and a whole body", func(t *testing.T) {
		var created struct{ ID, Status string }
		if slow.err != nil || slow.status != http.StatusCreated || json.Unmarshal(slow.body, &created) != nil || created.ID == "" {
			t.Fatalf("slow request: status %d err %v body %s\n%s", slow.status, slow.err, slow.body, p.log)
		}
		if handled["sd-slow"] != http.StatusCreated {
			t.Fatalf("the log does not show the slow request answered 201")
		}
	})

	var answered, inFlight, refused, reset int
	t.Run("every answer is whole and not 5xx; every failure is a request the server never took", func(t *testing.T) {
		for _, s := range shots {
			switch {
			case s.err == nil:
				answered++
				if s.started.Before(termAt) && s.ended.After(termAt) {
					inFlight++
				}
				if s.status >= 500 {
					t.Errorf("%s %s answered %d: %s", s.id, s.route, s.status, s.body)
				}
				if s.status == http.StatusCreated && !json.Valid(s.body) {
					t.Errorf("%s answered 201 with a body that is not JSON: %q", s.id, s.body)
				}
				if handled[s.id] != float64(s.status) {
					t.Errorf("%s answered %d but the log shows %v", s.id, s.status, handled[s.id])
				}
			case sdRefused(s.err):
				refused++
				if s.dialed.Before(termAt) {
					t.Errorf("%s was refused when it dialled, before SIGTERM: %v", s.id, s.err)
				}
			default:
				// A connection the kernel completed in the few milliseconds between the
				// signal and the listener's closing, which the server never accepted.
				reset++
				if s.firstByte {
					t.Errorf("%s %s was cut off in the middle of its answer: %v", s.id, s.route, s.err)
				}
				if status, ok := handled[s.id]; ok {
					t.Errorf("%s %s was handled (%v) but its answer never arrived: %v", s.id, s.route, status, s.err)
				}
			}
		}
	})
	t.Logf("load: %d requests: %d answered (%d of them in flight at SIGTERM), %d refused (listener closed), %d reset before the server took them; exited %s after SIGTERM",
		len(shots), answered, inFlight, refused, reset, exitedAfter.Round(time.Millisecond))
	if answered == 0 || refused == 0 {
		t.Errorf("the load did not straddle the shutdown: %d answered, %d refused", answered, refused)
	}

	t.Run("the log tells the shutdown, in order, without errors", func(t *testing.T) {
		order := []string{"pixgate serving", "shutting down: finishing requests in flight", "stopped"}
		next := 0
		for _, l := range lines {
			if l.fields["level"] == "ERROR" {
				t.Errorf("an error was logged: %s", l.text)
			}
			if next < len(order) && l.fields["msg"] == order[next] {
				next++
			}
		}
		if next != len(order) {
			t.Fatalf("the log lacks %q (in this order: %q)\n%s", order[next], order, p.log)
		}
	})
}

package paypage

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// stateView is the answer of GET /pay/{token}/status and each live message: the
// transaction's status and its QR code's expirationDate (null without one).
type stateView struct {
	Status         string  `json:"status"`
	ExpirationDate *string `json:"expirationDate"`
}

func viewState(st application.PaymentState) stateView {
	v := stateView{Status: string(st.Status)}
	if !st.ExpiresAt.IsZero() {
		e := isoString(st.ExpiresAt)
		v.ExpirationDate = &e
	}
	return v
}

// Events is the live channel: a server-sent event with the state at once, then one at
// each change (the store is read every PollEvery), a comment every Heartbeat, and an "end"
// event before it closes: when the charge reaches a final status, or Margin after its
// expirationDate. At most MaxStreamsPerCharge channels per charge and MaxStreamsPerAddress per
// client address are open at once; one more answers 429.
func (h *Handler) Events(w http.ResponseWriter, r *http.Request, token string) {
	if !h.allow(w, r, false) {
		return
	}
	follow := h.deps.Follow
	st, err := follow.Execute(r.Context(), token)
	if err != nil {
		h.deps.Problems.WriteError(w, r, err)
		return
	}
	release, ok := h.streams.acquire(token, peerAddress(r))
	if !ok {
		w.Header().Set("Retry-After", "5")
		h.deps.Problems.WriteProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many live channels open; poll the status route")
		return
	}
	defer release()
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not hold the events back
	if r.Method == http.MethodHead {
		// The headers, and no stream to hold open.
		w.WriteHeader(http.StatusOK)
		return
	}
	cfg := h.cfg
	rc := http.NewResponseController(w)
	// The server's ReadTimeout would fire on the idle connection and cancel the request (its
	// background read fails): the request is read whole, so the read deadline goes.
	_ = rc.SetReadDeadline(time.Time{})
	send := func(chunk string) bool {
		// The server's WriteTimeout would cut a live channel: each write gets its own deadline.
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := w.Write([]byte(chunk)); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	sendState := func(st application.PaymentState) bool {
		body, _ := json.Marshal(viewState(st))
		return send("data: " + string(body) + "\n\n")
	}
	w.WriteHeader(http.StatusOK)
	if !send("retry: 3000\n\n") || !sendState(st) {
		return
	}
	closeAt := st.ExpiresAt
	if closeAt.IsZero() {
		closeAt = time.Now()
	}
	closing := time.NewTimer(time.Until(closeAt.Add(cfg.Margin)))
	defer closing.Stop()
	poll := time.NewTicker(cfg.PollEvery)
	defer poll.Stop()
	lastWrite := time.Now()
	for !st.Final() {
		select {
		case <-r.Context().Done():
			return
		case <-closing.C:
			send("event: end\ndata: {}\n\n")
			return
		case <-poll.C:
			next, err := follow.Execute(r.Context(), token)
			if err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return
				}
				continue // the store hiccuped: try again at the next tick
			}
			if next.Status != st.Status {
				st = next
				if !sendState(st) {
					return
				}
				lastWrite = time.Now()
			} else if time.Since(lastWrite) >= cfg.Heartbeat {
				if !send(": keep-alive\n\n") {
					return
				}
				lastWrite = time.Now()
			}
		}
	}
	send("event: end\ndata: {}\n\n")
}

// streamLimits counts the open live channels per charge and per client address. Entries are
// removed when their count drops to zero, so memory follows the open channels only.
type streamLimits struct {
	perCharge, perAddress int

	mu        sync.Mutex
	byCharge  map[string]int
	byAddress map[string]int
}

func newStreamLimits(cfg Config) *streamLimits {
	return &streamLimits{perCharge: cfg.MaxStreamsPerCharge, perAddress: cfg.MaxStreamsPerAddress,
		byCharge: map[string]int{}, byAddress: map[string]int{}}
}

// acquire takes a place for one channel, or reports that a limit is reached.
func (l *streamLimits) acquire(charge, address string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byCharge[charge] >= l.perCharge || l.byAddress[address] >= l.perAddress {
		return nil, false
	}
	l.byCharge[charge]++
	l.byAddress[address]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.byCharge[charge]--; l.byCharge[charge] <= 0 {
				delete(l.byCharge, charge)
			}
			if l.byAddress[address]--; l.byAddress[address] <= 0 {
				delete(l.byAddress, address)
			}
		})
	}, true
}

// open reports the channels open now (tests and the memory measurement read it).
func (l *streamLimits) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.byCharge {
		n += c
	}
	return n
}

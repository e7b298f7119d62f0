package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/ports"
)

// OWASP API8:2023 (security misconfiguration): a failure inside pixgate answers 500
// internal_error with nothing of its cause (no driver message, address, credential or stack);
// the log line with the answer's request id has it. The store here fails the way a driver does,
// or panics (failingTransactions, in fakes_internal_test.go).

// secDriverLeaks are the pieces of errDriver (and of a Go stack) an answer must not show.
var secDriverLeaks = []string{"db-0.internal", "10.0.3", "27017", "i/o timeout", "mongodb", "s3cr3t", "incomplete read",
	"goroutine", ".go:", "runtime/", "panic", "index out of range"}

func secServer(repo ports.TransactionRepository, emitter ports.PixEmitter) (*Server, *LogBuffer) {
	logs, clock := &LogBuffer{}, NewFakeClock(fakeNow)
	s := New(Config{}, completeDeps(Deps{
		Authenticator:     fakeAuthenticator{},
		CreateTransaction: application.NewCreateTransaction(repo, emitter, fakeRenderer{}, fakeIDs{}, fakeCapabilities{}, clock),
		GetTransaction:    application.NewGetTransaction(repo),
		ListTransactions:  application.NewListTransactions(repo),
		RefundTransaction: application.NewRefundTransaction(repo, fakeDevolutions(repo, clock), fakeIDs{}, clock, func(error) {}),
		Logger:            slog.New(slog.NewJSONHandler(logs, nil)),
	}))
	return s, logs
}

func TestOWASPAPI8InternalErrorsAnswer500WithoutTheirCause(t *testing.T) {
	requests := []struct{ method, path, body string }{
		{"GET", "/transaction/7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", ""},
		{"GET", "/transaction?status=PAID", ""},
		{"POST", "/transaction", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`},
		{"POST", "/transaction", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "idempotencyKey": "key-00000001"}`},
		{"POST", "/transaction/7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f/refund", ""},
	}
	for _, panics := range []bool{false, true} {
		what := "a driver error"
		if panics {
			what = "a panic"
		}
		s, logs := secServer(failingTransactions(panics, false), fakeEmitter{})
		for _, rq := range requests {
			t.Run(what+" in "+rq.method+" "+rq.path, func(t *testing.T) {
				req := httptest.NewRequest(rq.method, rq.path, strings.NewReader(rq.body))
				if rq.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("Authorization", "Bearer good")
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, req)
				if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != problemContentType {
					t.Fatalf("status %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
				}
				var p problem
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code != "internal_error" || p.RequestID == "" {
					t.Fatalf("problem %s: %v", rec.Body, err)
				}
				for _, leak := range secDriverLeaks {
					if strings.Contains(rec.Body.String(), leak) {
						t.Errorf("the answer shows %q: %s", leak, rec.Body)
					}
				}
				// The log line with the answer's request id says what happened.
				var found bool
				for _, line := range strings.Split(logs.String(), "\n") {
					if strings.Contains(line, p.RequestID) && strings.Contains(line, `"level":"ERROR"`) {
						found = strings.Contains(line, "i/o timeout") || panics && strings.Contains(line, "index out of range") && strings.Contains(line, "goroutine")
						if found {
							break
						}
					}
				}
				if !found {
					t.Fatalf("no error log line with request id %s and the cause:\n%s", p.RequestID, logs)
				}
			})
		}
	}
}

func TestOWASPAPI8AFailedEmissionAnswers500WithoutTheEmittersWords(t *testing.T) {
	emitErr := errors.New("acquirer POST https://acq.internal/v2/cob?key=k3y answered 500: java.lang.NullPointerException")
	s, logs := secServer(failingTransactions(false, true), fakeEmitter{err: emitErr})
	req := httptest.NewRequest("POST", "/transaction", strings.NewReader(`{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	for _, leak := range []string{"acq.internal", "k3y", "java.lang", "NullPointer"} {
		if strings.Contains(rec.Body.String(), leak) {
			t.Errorf("the answer shows %q: %s", leak, rec.Body)
		}
	}
	if !strings.Contains(logs.String(), "NullPointerException") {
		t.Errorf("the log lacks the emitter's error:\n%s", logs)
	}
}

package main

import (
	"net/http"
	"strings"
	"testing"
)

func TestOperationalRoutesNeedNoToken(t *testing.T) {
	e := newEnv(t, nil)
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/.well-known/jwks.json"} {
		t.Run(path+" answers 200 without a token", func(t *testing.T) {
			if r := e.do("GET", path, "", nil); r.status != http.StatusOK {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run(path+" ignores a garbage token", func(t *testing.T) {
			if r := e.do("GET", path, "garbage", nil); r.status != http.StatusOK {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}

func TestMetricsCountRequestsCreationsQRAndStoreCalls(t *testing.T) {
	e := newEnv(t, nil)
	_, tok := e.account()
	id := e.do("POST", "/transaction", tok, minimalTransaction()).json(t)["id"].(string)
	e.do("GET", "/transaction/"+id, tok, nil)
	e.do("GET", "/transaction/not-a-uuid", tok, nil)
	body := string(e.do("GET", "/metrics", "", nil).body)
	for _, want := range []string{
		`pixgate_http_requests_total{method="POST",route="transaction.create",status="201"} 1`,
		`pixgate_http_requests_total{method="GET",route="transaction.get",status="200"} 1`,
		`pixgate_http_requests_total{method="GET",route="transaction.get",status="422"} 1`,
		`pixgate_http_request_duration_seconds_bucket{method="GET",route="transaction.get",status="200",le="+Inf"} 1`,
		`pixgate_transactions_created_total{status="PIX_QRCODE_GENERATED"} 1`,
		`pixgate_qr_render_duration_seconds_count 1`,
		`pixgate_store_call_duration_seconds_count{method="Create",outcome="ok",port="transactions"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, id) {
		t.Error("an id reached a metric label")
	}
}

func TestMetricsCanMoveToTheirOwnAddress(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_METRICS_ADDR": "127.0.0.1:0"})
	if r := e.do("GET", "/metrics", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("/metrics on the API answered %d; it moved", r.status)
	}
}

func TestMethodNotAllowedNamesTheAllowedMethods(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("DELETE", "/transaction", "", nil)
	problemOf(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Fatalf("Allow = %q, want GET, HEAD, POST (HEAD is answered wherever GET is)", got)
	}
}

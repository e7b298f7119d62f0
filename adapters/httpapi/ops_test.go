package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestOperationalRoutesNeedNoToken(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/.well-known/jwks.json"} {
		for name, token := range map[string]string{"answers 200 without a token": "", "ignores a garbage token": "garbage"} {
			t.Run(path+" "+name, func(t *testing.T) {
				t.Parallel()
				if r := a.do("GET", path, token, nil); r.status != http.StatusOK {
					t.Fatalf("%d %s", r.status, r.body)
				}
			})
		}
	}
}

func TestMetricsCountRequestsCreationsQRAndStoreCalls(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	id := a.do("POST", "/transaction", tok, minimalTransaction()).json(t)["id"].(string)
	a.do("GET", "/transaction/"+id, tok, nil)
	a.do("GET", "/transaction/not-a-uuid", tok, nil)
	body := string(a.do("GET", "/metrics", "", nil).body)
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

func TestMethodNotAllowedNamesTheAllowedMethods(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	r := a.do("DELETE", "/transaction", "", nil)
	problem(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Fatalf("Allow = %q, want GET, HEAD, POST (HEAD is answered wherever GET is)", got)
	}
}

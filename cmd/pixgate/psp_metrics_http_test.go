package main

import (
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// GET /metrics after calls to the PSP: each transport pixgate builds reports its calls and
// token fetches by operation and outcome, and nothing secret reaches the scrape.

func TestPSPCallsShowInMetricsWithoutSecrets(t *testing.T) {
	t.Parallel()
	efi := efitest.New(t, efitest.Config{})
	e := poEnv(t, efi)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	e.poRunUntil(tok, id, "PROCESSED")
	r := e.do("GET", "/metrics", "", nil)
	body := string(r.body)
	for _, want := range []string{
		`pixgate_acquirer_requests_total{operation="token",outcome="ok"}`,
		`pixgate_acquirer_requests_total{operation="payout_put",outcome="ok"} 1`,
		`pixgate_acquirer_requests_total{operation="payout_get",outcome="ok"}`,
		`pixgate_acquirer_request_duration_seconds_count{operation="payout_put"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{efi.ClientSecret, efi.ClientID + ":", id, strings.ReplaceAll(id, "-", "")} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics carries %q", secret)
		}
	}
}

func TestAPIPixCallsShowInMetricsWithoutSecrets(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := acqEnv(t, dvPSPVars(p))
	_, tok := e.account()
	id, _, e2e := e.dvPaidAt(tok, p)
	e.acqRefund(tok, id, 500)
	body := string(e.do("GET", "/metrics", "", nil).body)
	for _, want := range []string{
		`pixgate_acquirer_requests_total{operation="token",outcome="ok"}`,
		`pixgate_acquirer_requests_total{operation="devolution_put",outcome="ok"} 1`,
		`pixgate_acquirer_request_duration_seconds_count{operation="devolution_put"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{p.ClientSecret, e2e, p.Chave} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics carries %q", secret)
		}
	}
}

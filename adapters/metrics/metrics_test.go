package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestStatusChangesAndStoreOutcomesAreCounted(t *testing.T) {
	m := metrics.New()
	repo := m.Transactions(memory.NewStore().Transactions())
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tx, err := domain.NewTransaction("2b1c8f52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", "payment-token-metrics-0001", "acct", "SANDBOX",
		domain.Order{Amount: 1000, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 1800}, domain.Idempotency{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201", ExpiresAt: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	if err := repo.Create(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Update(ctx, "acct", tx.ID(), func(t *domain.Transaction) error {
		return t.Pay(domain.Payment{AmountPaid: 1000, PaidAt: now, EndToEnd: "E1"}, now)
	}); err != nil {
		t.Fatal(err)
	}
	_, err = repo.Update(ctx, "acct", tx.ID(), func(t *domain.Transaction) error { return t.OpenDispute(now.Add(time.Hour)) })
	if err != nil {
		t.Fatal(err)
	}
	// A refused transition is no status change.
	_, err = repo.Update(ctx, "acct", tx.ID(), func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "r1"}, now.Add(time.Hour))
	})
	if !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("err = %v", err)
	}
	if _, err := repo.Get(ctx, "acct", "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatal(err)
	}
	body := scrape(t, m)
	for _, want := range []string{
		`pixgate_status_changes_total{resource="transaction",status="PAID"} 1`,
		`pixgate_status_changes_total{resource="transaction",status="BLOCKED"} 1`,
		`pixgate_transactions_created_total{status="PIX_QRCODE_GENERATED"} 1`,
		`pixgate_store_call_duration_seconds_count{method="Get",outcome="not_found",port="transactions"} 1`,
		`pixgate_store_call_duration_seconds_count{method="Update",outcome="error",port="transactions"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestDeliveriesAreCountedByOutcome(t *testing.T) {
	m := metrics.New()
	m.ObserveDelivery(domain.Event{}, ports.Attempt{Duration: 30 * time.Millisecond, StatusCode: 204}, ports.DeliveryDelivered)
	m.ObserveDelivery(domain.Event{}, ports.Attempt{Duration: time.Second, StatusCode: 500}, ports.DeliveryPending)
	m.ObserveDelivery(domain.Event{}, ports.Attempt{Error: "refused"}, ports.DeliveryFailed)
	body := scrape(t, m)
	for _, want := range []string{
		`pixgate_webhook_deliveries_total{outcome="delivered"} 1`,
		`pixgate_webhook_deliveries_total{outcome="retry"} 1`,
		`pixgate_webhook_deliveries_total{outcome="failed"} 1`,
		`pixgate_webhook_delivery_duration_seconds_count{outcome="delivered"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestLatePaymentsAreCountedByTheOutcomeOfTheirDevolution(t *testing.T) {
	m := metrics.New()
	m.ObserveLatePayment(ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: "D1"}, nil)
	m.ObserveLatePayment(ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: "D2"}, nil)
	m.ObserveLatePayment(ports.DevolutionResult{Status: ports.DevolutionInProgress}, nil)
	m.ObserveLatePayment(ports.DevolutionResult{Status: ports.DevolutionNotDone}, nil)
	m.ObserveLatePayment(ports.DevolutionResult{}, errors.New("no acquirer API is configured"))
	body := scrape(t, m)
	for _, want := range []string{
		`pixgate_late_payments_total{outcome="returned"} 2`,
		`pixgate_late_payments_total{outcome="in_progress"} 1`,
		`pixgate_late_payments_total{outcome="not_done"} 1`,
		`pixgate_late_payments_total{outcome="error"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestLedgerCallsAreTimed(t *testing.T) {
	m := metrics.New()
	l := m.Ledger(memory.NewStore().Ledger())
	if _, err := l.Balance(context.Background(), "acct"); err != nil {
		t.Fatal(err)
	}
	if body := scrape(t, m); !strings.Contains(body, `pixgate_store_call_duration_seconds_count{method="Balance",outcome="ok",port="ledger"} 1`) {
		t.Errorf("the ledger's Balance is not timed:\n%s", body)
	}
}

// series counts the samples of the request counter.
func series(body string) int {
	n := 0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "pixgate_http_requests_total{") {
			n++
		}
	}
	return n
}

func TestRequestLabelsComeFromAFixedSet(t *testing.T) {
	m := metrics.New()
	m.KnownRoutes("unmatched", "transaction.get")
	m.ObserveRequest("transaction.get", "GET", 200, time.Millisecond)
	m.ObserveRequest("unmatched", "GET", 404, time.Millisecond)
	m.ObserveRequest("unmatched", "BREW", 404, time.Millisecond) // the first garbage method makes "other"
	m.ObserveRequest("/secret/path", "GET", 404, time.Millisecond)
	before := series(scrape(t, m))
	for i := 0; i < 2000; i++ {
		method := strings.Repeat(string(rune('A'+i%26)), 100) + strings.Repeat("X", i)
		m.ObserveRequest("unmatched", method, 404, time.Millisecond)
		m.ObserveRequest("/transaction/"+method, "GET", 404, time.Millisecond)
		m.ObserveRequest("unmatched", "GET", 1000+i, time.Millisecond)
	}
	body := scrape(t, m)
	if after := series(body); after > before+1 { // the status "other" is one series more
		t.Fatalf("2,000 garbage methods, routes and statuses grew the series from %d to %d", before, after)
	}
	for _, want := range []string{
		`pixgate_http_requests_total{method="GET",route="transaction.get",status="200"} 1`,
		`pixgate_http_requests_total{method="other",route="unmatched",status="404"} 2001`,
		`pixgate_http_requests_total{method="GET",route="other",status="404"} 2001`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestReconciledPaymentsAreCountedByOutcomeFromAFixedSet(t *testing.T) {
	m := metrics.New()
	m.ObserveReconciled(metrics.ReconciledPayment)
	m.ObserveReconciled(metrics.ReconciledPayment)
	m.ObserveReconciled(metrics.ReconciledDevolution)
	m.ObserveReconciled("anything else")
	body := scrape(t, m)
	for _, want := range []string{
		`pixgate_acquirer_reconciled_total{outcome="applied"} 2`,
		`pixgate_acquirer_reconciled_total{outcome="devolution_applied"} 1`,
		`pixgate_acquirer_reconciled_total{outcome="other"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestPSPCallsAreCountedAndTimedByOperationAndOutcome(t *testing.T) {
	m := metrics.New()
	m.ObservePSPCall("token", "ok", 20*time.Millisecond)
	m.ObservePSPCall("cob_put", "ok", 80*time.Millisecond)
	m.ObservePSPCall("cob_put", "unavailable", 3*time.Second)
	m.ObservePSPCall("payout_get", "not_found", 10*time.Millisecond)
	// Label values come from fixed sets: nothing a caller passes by mistake (an id, a URL)
	// becomes one.
	m.ObservePSPCall("cob/kk9sPqX2b7Yq3LmN0pQrStUvWxYz01", "Bearer s3cr3t", time.Millisecond)
	body := scrape(t, m)
	for _, want := range []string{
		`pixgate_acquirer_requests_total{operation="token",outcome="ok"} 1`,
		`pixgate_acquirer_requests_total{operation="cob_put",outcome="ok"} 1`,
		`pixgate_acquirer_requests_total{operation="cob_put",outcome="unavailable"} 1`,
		`pixgate_acquirer_requests_total{operation="payout_get",outcome="not_found"} 1`,
		`pixgate_acquirer_requests_total{operation="other",outcome="other"} 1`,
		`pixgate_acquirer_request_duration_seconds_count{operation="cob_put"} 2`,
		`pixgate_acquirer_request_duration_seconds_bucket{operation="token",le="0.025"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, leak := range []string{"s3cr3t", "kk9sPqX2b7Yq3LmN0pQrStUvWxYz01"} {
		if strings.Contains(body, leak) {
			t.Errorf("metrics carry %q", leak)
		}
	}
}

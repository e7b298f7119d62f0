// Package metrics exports pixgate's Prometheus metrics with prometheus/client_golang: requests
// by route template and status, transactions created and status changes by status, webhook
// deliveries by outcome, late payments by the outcome of their devolution, QR rendering time and
// store call latency, and calls to the PSP by operation and outcome. It instruments ports by
// wrapping them (a repository wrapped still is the same port), so neither the application nor
// any other adapter knows metrics exist. Each Metrics has its own registry: no global state.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Metrics holds pixgate's collectors and the registry that serves them.
type Metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	created        *prometheus.CounterVec
	statusChanges  *prometheus.CounterVec
	deliveries     *prometheus.CounterVec
	deliveryTime   *prometheus.HistogramVec
	qrRender       prometheus.Histogram
	storeCallTimes *prometheus.HistogramVec
	latePayments   *prometheus.CounterVec
	reconciled     *prometheus.CounterVec // reconciled.go
	pspCalls       *prometheus.CounterVec
	pspCallTimes   *prometheus.HistogramVec
	// routes are the label values a request's route may take (KnownRoutes); nil lets any
	// through.
	routes map[string]bool

	// The children of requests and latency, and of storeCallTimes, by their label values:
	// WithLabelValues hashes, validates and looks up every value on every call, three times a
	// request, where a map of the few label sets ever used finds them at once.
	requestSeries seriesCache[requestLabels, requestSeries]
	storeSeries   seriesCache[storeLabels, prometheus.Observer]
}

// seriesCache keeps what a vector's children cost to find, by their label values: as many
// entries as the vectors have series, a bounded number (every label takes values of a fixed
// set). Safe for concurrent use.
type seriesCache[K comparable, V any] struct{ m sync.Map }

// get returns the entry of k, made by newEntry(k) the first time.
func (c *seriesCache[K, V]) get(k K, newEntry func(K) V) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v, _ := c.m.LoadOrStore(k, newEntry(k))
	return v.(V)
}

// requestLabels are the label values of a request's series (status "other" outside 100 to
// 599).
type requestLabels struct{ route, method, status string }

// requestSeries are the counter and the histogram of one label set of requestLabels.
type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// storeLabels are the label values of a store call's series.
type storeLabels struct{ port, method, outcome string }

// otherLabel replaces a method or route that is not one of the known ones: label values come
// from a fixed set, so that no client can grow the series (and the scrape) without bound.
const otherLabel = "other"

// knownMethods are the HTTP methods kept as label values.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// New registers every collector, with the Go runtime and process collectors, on a fresh
// registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_http_requests_total", Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pixgate_http_request_duration_seconds", Help: "HTTP request latency, by route template, method and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "status"}),
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_transactions_created_total", Help: "Transactions stored at creation, by the status they were stored in.",
		}, []string{"status"}),
		statusChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_status_changes_total", Help: "Statuses entered by transactions and withdrawals after creation.",
		}, []string{"resource", "status"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_webhook_deliveries_total", Help: "Webhook delivery attempts, by outcome (delivered, retry, failed).",
		}, []string{"outcome"}),
		deliveryTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pixgate_webhook_delivery_duration_seconds", Help: "Webhook delivery attempt latency, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}, []string{"outcome"}),
		qrRender: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "pixgate_qr_render_duration_seconds", Help: "Time to draw one QR code PNG, waiting for a slot included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 12),
		}),
		storeCallTimes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pixgate_store_call_duration_seconds", Help: "Storage port call latency, by port, method and outcome.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5},
		}, []string{"port", "method", "outcome"}),
		latePayments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_late_payments_total",
			Help: "Payments that paid no charge (for a charge not awaiting one, or of another amount than the charge's), kept in suspense and counted once, when their devolution is first asked, by the outcome of that request (returned, in_progress, not_done, error).",
		}, []string{"outcome"}),
		reconciled: newReconciled(),
		pspCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_acquirer_requests_total",
			Help: "Calls to the PSP's APIs (API Pix and the payout API) and token fetches, by operation and outcome (ok, refused, not_found, unauthorized, unavailable, timeout, canceled, bad_answer).",
		}, []string{"operation", "outcome"}),
		pspCallTimes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pixgate_acquirer_request_duration_seconds",
			Help:    "Latency of calls to the PSP's APIs and of token fetches, retries and waits included, by operation.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"operation"}),
	}
	m.registry.MustRegister(m.reconciled)
	m.registry.MustRegister(m.requests, m.latency, m.created, m.statusChanges, m.deliveries, m.deliveryTime,
		m.qrRender, m.storeCallTimes, m.latePayments, m.pspCalls, m.pspCallTimes, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// KnownRoutes names the routes whose names may become label values; any other is counted as
// "other". Call it once, before serving.
func (m *Metrics) KnownRoutes(names ...string) {
	m.routes = make(map[string]bool, len(names))
	for _, n := range names {
		m.routes[n] = true
	}
}

// ObserveRequest records one answered request (httpapi.RequestObserver). A method or route
// outside the known ones is labelled "other", and a status outside 100 to 599 too.
func (m *Metrics) ObserveRequest(route, method string, status int, elapsed time.Duration) {
	if !knownMethods[method] {
		method = otherLabel
	}
	if m.routes != nil && !m.routes[route] {
		route = otherLabel
	}
	s := otherLabel
	if status >= 100 && status <= 599 {
		s = statusLabels[status] // strconv.Itoa(status), without its allocation
	}
	series := m.requestSeries.get(requestLabels{route, method, s}, func(l requestLabels) requestSeries {
		return requestSeries{m.requests.WithLabelValues(l.route, l.method, l.status), m.latency.WithLabelValues(l.route, l.method, l.status)}
	})
	series.count.Inc()
	series.latency.Observe(elapsed.Seconds())
}

// statusLabels are the label values of the statuses 0 to 599.
var statusLabels = func() (labels [600]string) {
	for i := range labels {
		labels[i] = strconv.Itoa(i)
	}
	return labels
}()

// ObserveDelivery records one webhook attempt (application.DispatcherConfig.OnAttempt).
func (m *Metrics) ObserveDelivery(_ domain.Event, a ports.Attempt, status ports.DeliveryStatus) {
	outcome := "retry"
	switch status {
	case ports.DeliveryDelivered:
		outcome = "delivered"
	case ports.DeliveryFailed:
		outcome = "failed"
	}
	m.deliveries.WithLabelValues(outcome).Inc()
	m.deliveryTime.WithLabelValues(outcome).Observe(a.Duration.Seconds())
}

// ObserveLatePayment counts one payment that paid no charge (late, or of another amount), once,
// by what the acquirer answered to its devolution:
// returned (DEVOLVIDO), in_progress (EM_PROCESSAMENTO), not_done (NAO_REALIZADO) or error (no
// answer; the money stays in suspense until the acquirer's callback says more).
func (m *Metrics) ObserveLatePayment(res ports.DevolutionResult, err error) {
	outcome := "error"
	switch {
	case err != nil:
	case res.Status == ports.DevolutionReturned:
		outcome = "returned"
	case res.Status == ports.DevolutionInProgress:
		outcome = "in_progress"
	case res.Status == ports.DevolutionNotDone:
		outcome = "not_done"
	}
	m.latePayments.WithLabelValues(outcome).Inc()
}

// pspOperations are the operation label values of the PSP's calls: the token endpoint, API
// Pix's operations and the payout API's. Any other is counted as "other".
var pspOperations = map[string]bool{
	"token": true, "cob_put": true, "cob_get": true, "cob_patch": true, "webhook_get": true, "webhook_put": true,
	"pix_list": true, "devolution_put": true, "devolution_get": true, "payout_put": true, "payout_get": true,
}

// pspOutcomes are the outcome label values of the PSP's calls (the transport's outcomes).
var pspOutcomes = map[string]bool{
	"ok": true, "refused": true, "not_found": true, "unauthorized": true, "unavailable": true,
	"timeout": true, "canceled": true, "bad_answer": true,
}

// ObservePSPCall records one call to a PSP's API, or one token fetch, as the PSP transport
// reports it (cmd hands it the transport's Observe hook): its operation, how it ended and how
// long it took, retries included. Labels come from fixed sets; nothing else of the call (an
// id, a URL, a token) is recorded.
func (m *Metrics) ObservePSPCall(operation, outcome string, elapsed time.Duration) {
	if !pspOperations[operation] {
		operation = otherLabel
	}
	if !pspOutcomes[outcome] {
		outcome = otherLabel
	}
	m.pspCalls.WithLabelValues(operation, outcome).Inc()
	m.pspCallTimes.WithLabelValues(operation).Observe(elapsed.Seconds())
}

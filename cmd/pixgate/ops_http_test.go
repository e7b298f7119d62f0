package main

import (
	"net/http"
	"testing"
)

// The operational routes' behaviour through the API is tested in adapters/httpapi
// (ops_test.go); this one needs serve's configuration: PIXGATE_METRICS_ADDR moves /metrics to a
// listener of its own, which the command wires.

func TestMetricsCanMoveToTheirOwnAddress(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_METRICS_ADDR": "127.0.0.1:0"})
	if r := e.do("GET", "/metrics", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("/metrics on the API answered %d; it moved", r.status)
	}
}

package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"testing"
	"time"
)

// TestAccessLogLinesAreTheOnesSlogWrites compares the hand-written access log line with the
// line slog's JSON handler writes for the same record, byte for byte, and the lines of values
// the hand-written line leaves to slog with their times left out.
func TestAccessLogLinesAreTheOnesSlogWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 14, 3, 7, 120_000_000, time.FixedZone("BRT", -3*3600))
	times := regexp.MustCompile(`"time":"[^"]*"`)
	for _, c := range []struct {
		id, method, route string
		status            int
		elapsed           time.Duration
		byHand            bool
	}{
		{"4f1c2d3e5a6b4c7d8e9f0a1b2c3d4e5f", "GET", "transaction.get", 200, 412 * time.Microsecond, true},
		{"client-id", "HEAD", "unmatched", 404, 0, true},
		{`quote " and backslash \ and <html> & more ~`, "POST", "transaction.create", 201, 1500 * time.Millisecond, true},
		{"slow", "GET", "transaction.list", 500, 2*time.Hour + 999*time.Nanosecond, true},
		{"very-slow", "GET", "transaction.list", 503, 1<<63 - 1, true},
		{"São Paulo", "GET", "transaction.get", 200, time.Millisecond, false},
		{"tab\there", "GET\n", "transaction.get", 200, time.Millisecond, false},
		{"del\x7f", "GET", "transaction.get", 200, time.Millisecond, false},
	} {
		var hand, ref bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&hand, &slog.HandlerOptions{Level: slog.LevelInfo}))
		(&accessLog{log: log, w: &hand}).request(ctx, now, c.id, c.method, c.route, c.status, c.elapsed)
		rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
		rec.AddAttrs(slog.String("requestId", c.id), slog.String("method", c.method), slog.String("route", c.route),
			slog.Int("status", c.status), slog.Float64("durationMs", float64(c.elapsed.Microseconds())/1000))
		if err := slog.NewJSONHandler(&ref, nil).Handle(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got, want := hand.String(), ref.String()
		if !c.byHand {
			got, want = times.ReplaceAllString(got, ""), times.ReplaceAllString(want, "")
		}
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", c.id, got, want)
		}
	}

	// Below the logger's level, no line.
	var out bytes.Buffer
	quiet := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	(&accessLog{log: quiet, w: &out}).request(ctx, now, "id", "GET", "transaction.get", 200, time.Millisecond)
	if out.Len() != 0 {
		t.Errorf("a line below the level: %s", out.String())
	}
}

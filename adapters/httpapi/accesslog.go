package httpapi

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// The access log writes one line per request, the busiest log of the process. Through slog's
// JSON handler a line cost about a tenth of a lookup's CPU (docs/PERFORMANCE.md, GET
// /transaction/{id}: fixed costs); accessLog writes the same JSON object by hand into a pooled
// buffer when Deps.AccessLog names the Logger's output. Every other line keeps slog.

// accessLog writes the access log's lines: by hand to w, or through log when w is nil.
type accessLog struct {
	log  *slog.Logger
	w    io.Writer
	bufs sync.Pool // *[]byte, one line each
}

// request logs one answered request: the keys, values and order of
//
//	log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("requestId", id),
//		slog.String("method", method), slog.String("route", route), slog.Int("status", status),
//		slog.Float64("durationMs", float64(elapsed.Microseconds())/1000))
//
// which is what it does when there is no writer, or when a value needs what only slog's
// handler writes (a string that is not ASCII, a duration json.Marshal writes with an
// exponent); the hand-written line is byte for byte the one slog's JSON handler writes.
func (l *accessLog) request(ctx context.Context, now time.Time, id, method, route string, status int, elapsed time.Duration) {
	ms := float64(elapsed.Microseconds()) / 1000
	if l.w == nil || !plainASCII(id) || !plainASCII(method) || !plainASCII(route) || (ms != 0 && ms < 1e-6) || ms >= 1e21 {
		l.log.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("requestId", id), slog.String("method", method), slog.String("route", route),
			slog.Int("status", status), slog.Float64("durationMs", ms))
		return
	}
	if !l.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	bp, _ := l.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new(make([]byte, 0, 256))
	}
	b := append((*bp)[:0], `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","requestId":`...)
	b = appendLogString(b, id)
	b = append(b, `,"method":`...)
	b = appendLogString(b, method)
	b = append(b, `,"route":`...)
	b = appendLogString(b, route)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"durationMs":`...)
	b = strconv.AppendFloat(b, ms, 'f', -1, 64) // json.Marshal's form between 1e-6 and 1e21
	b = append(b, "}\n"...)
	_, _ = l.w.Write(b) // one Write a line, as slog's handler does
	*bp = b
	l.bufs.Put(bp)
}

// plainASCII tells whether s is ASCII without control characters: what appendLogString writes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// appendLogString appends a plainASCII string quoted as slog's JSON handler quotes it: only
// the quote and the backslash are escaped (not <, > and &, which encoding/json escapes).
func appendLogString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(append(b, s[start:i]...), '\\', c)
			start = i + 1
		}
	}
	return append(append(b, s[start:]...), '"')
}

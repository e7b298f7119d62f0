package main

// The hand-written encoder of GET /transaction/{id} (adapters/httpapi/transaction_json.go)
// against the JSON libraries that could replace it, in one run, each writing the handler's
// view of one transaction (httpapi.TransactionAnswer) into a reused buffer the way the handler
// does (docs/PERFORMANCE.md, "The transaction encoder against JSON libraries", has the figures
// and the decision):
//
//	cd test && go test -run '^$' -bench JSONCandidates -benchmem -count 5 ./load
//	cd test && GOEXPERIMENT=jsonv2 go test -run '^$' -bench JSONCandidates -benchmem -count 5 ./load
//
// The second line adds the standard library's encoding/json/v2 (json_candidates_v2_test.go),
// which Go 1.26 builds only under that experiment. The libraries are requirements of this
// test module, never of the product's.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	jsonexp "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	segment "github.com/segmentio/encoding/json"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/domain"
)

// jsonCandidate appends the JSON of view (httpapi.TransactionAnswer.View) to b.
type jsonCandidate struct {
	name   string
	append func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error)
}

func jsonCandidates() []jsonCandidate {
	c := []jsonCandidate{
		{"hand-written", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
			b, _ = a.AppendJSON(b)
			return b, nil
		}},
		{"encoding-json", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := json.NewEncoder(w).Encode(a.View())
			return w.Bytes(), err
		}},
		{"go-json-experiment", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := jsonexp.MarshalWrite(w, a.View())
			return w.Bytes(), err
		}},
		{"segmentio-encoding", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
			return segment.Append(b, a.View(), segment.EscapeHTML)
		}},
		{"goccy-go-json", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := goccy.NewEncoder(w).Encode(a.View())
			return w.Bytes(), err
		}},
	}
	return append(c, stdlibJSONv2Candidates()...)
}

// jsonBenchAnswer is the answer the comparison encodes: a transaction with every field of the
// load run's creations (loadOrder), in PIX_QRCODE_GENERATED with a QR image of the size the
// Renderer draws for the longest BR Code the sandbox emits (948 bytes, adapters/qr/BENCHMARKS.md).
func jsonBenchAnswer(tb testing.TB) *httpapi.TransactionAnswer {
	tb.Helper()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	t, err := domain.NewTransaction("3f1c2a9e-8b7d-4c6e-9a5f-0123456789ab", "payment-token-bench-00001", "acc-bench", "SANDBOX",
		loadOrder("joao@example.com.br"), domain.Idempotency{Key: "order-000123-attempt-1"}, now)
	if err != nil {
		tb.Fatal(err)
	}
	png := make([]byte, 948)
	for i := range png {
		png[i] = byte(i * 7)
	}
	const brCode = "00020101021226990014br.gov.bcb.pix0177maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br5204541153039865409100000.005802BR5925Mercearia e Padaria Boa V6015Sao Jose dos Ca622605227RKE2sawAICsEsyZKHWW6r63045676"
	if err := t.AttachPix(domain.PixResponse{URI: brCode, QRCodePNG: png, ExpiresAt: now.Add(10 * time.Minute)}, now.Add(3*time.Millisecond)); err != nil {
		tb.Fatal(err)
	}
	return httpapi.NewTransactionAnswer(t, "https://pay.example.com")
}

// TestJSONCandidatesAgree keeps the comparison fair: every candidate writes the same JSON
// value as the hand-written encoder (bytes may differ in escaping and spacing), and
// encoding/json, which the handler falls back to, the same bytes.
func TestJSONCandidatesAgree(t *testing.T) {
	a := jsonBenchAnswer(t)
	want, ok := a.AppendJSON(nil)
	if !ok {
		t.Fatal("the hand-written encoder refused the answer")
	}
	if std, err := json.Marshal(a.View()); err != nil || !bytes.Equal(std, want) {
		t.Fatalf("encoding/json writes other bytes (%v):\n%s\nwant\n%s", err, std, want)
	}
	var wantValue any
	if err := json.Unmarshal(want, &wantValue); err != nil {
		t.Fatal(err)
	}
	for _, c := range jsonCandidates() {
		got, err := c.append(nil, a)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var gotValue any
		if err := json.Unmarshal(got, &gotValue); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(gotValue, wantValue) {
			t.Errorf("%s writes another value:\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

func BenchmarkJSONCandidates(b *testing.B) {
	a := jsonBenchAnswer(b)
	for _, c := range jsonCandidates() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				var err error
				if buf, err = c.append(buf[:0], a); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf)), "json-bytes/op")
		})
	}
}

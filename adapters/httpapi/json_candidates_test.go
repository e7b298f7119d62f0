package httpapi

// The hand-written encoder of GET /transaction/{id} (transaction_json.go) against the JSON
// libraries that could replace it, in one run, on the transaction BenchmarkTransactionJSON
// encodes, each into a reused buffer the way writeTransaction does (docs/PERFORMANCE.md,
// "The transaction encoder against JSON libraries", has the figures and the decision):
//
//	go test -run '^$' -bench JSONCandidates -benchmem -count 5 ./adapters/httpapi/
//	GOEXPERIMENT=jsonv2 go test -run '^$' -bench JSONCandidates -benchmem -count 5 ./adapters/httpapi/
//
// The second line adds the standard library's encoding/json/v2 (json_candidates_v2_test.go),
// which Go 1.26 builds only under that experiment.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonexp "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	segment "github.com/segmentio/encoding/json"
)

// jsonCandidate appends v's JSON to b.
type jsonCandidate struct {
	name   string
	append func(b []byte, v *transactionView) ([]byte, error)
}

func jsonCandidates() []jsonCandidate {
	c := []jsonCandidate{
		{"hand-written", func(b []byte, v *transactionView) ([]byte, error) {
			b, _ = appendTransactionJSON(b, v)
			return b, nil
		}},
		{"encoding-json", func(b []byte, v *transactionView) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := json.NewEncoder(w).Encode(v)
			return w.Bytes(), err
		}},
		{"go-json-experiment", func(b []byte, v *transactionView) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := jsonexp.MarshalWrite(w, v)
			return w.Bytes(), err
		}},
		{"segmentio-encoding", func(b []byte, v *transactionView) ([]byte, error) {
			return segment.Append(b, v, segment.EscapeHTML)
		}},
		{"goccy-go-json", func(b []byte, v *transactionView) ([]byte, error) {
			w := bytes.NewBuffer(b)
			err := goccy.NewEncoder(w).Encode(v)
			return w.Bytes(), err
		}},
	}
	return append(c, stdlibJSONv2Candidates()...)
}

// TestJSONCandidatesAgree keeps the comparison fair: every candidate writes the same JSON
// value as the hand-written encoder (bytes may differ in escaping and spacing).
func TestJSONCandidatesAgree(t *testing.T) {
	v := viewTransaction(benchTransaction(t), "https://pay.example.com")
	want, _ := appendTransactionJSON(nil, &v)
	var wantValue any
	if err := json.Unmarshal(want, &wantValue); err != nil {
		t.Fatal(err)
	}
	for _, c := range jsonCandidates() {
		got, err := c.append(nil, &v)
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
	v := viewTransaction(benchTransaction(b), "https://pay.example.com")
	for _, c := range jsonCandidates() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				var err error
				if buf, err = c.append(buf[:0], &v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf)), "json-bytes/op")
		})
	}
}

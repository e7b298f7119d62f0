package httpapi

// Micro-benchmarks of the two ends of every transaction request that do not depend on a store:
// reading and checking a POST /transaction body, and writing a Transaction as JSON. They are
// internal so that they time the handlers' own functions rather than a copy of them:
//
//	go test -run '^$' -bench . -benchmem ./adapters/httpapi/

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// benchCreateBody is a POST /transaction body with every field docs/API.md, Creating a transaction defines, as large
// as a merchant usually sends (the load harness, test/load, posts the same shape).
const benchCreateBody = `{
  "amount": 12345, "paymentMethod": "PIX", "externalCode": "order-000123",
  "idempotencyKey": "order-000123-attempt-1",
  "customer": {"ip": "203.0.113.7", "name": "João D'Ávila-Souza", "email": "joao@example.com.br",
    "document": "529.982.247-25", "landline": "+55 (11) 3456-7890", "mobilePhone": "(21) 98765-4321",
    "birthdate": "1990-05-17"},
  "seller": {"name": "Loja Exemplo", "document": "11.222.333/0001-81"},
  "isInfoProduct": false,
  "address": {"zipCode": "01310-100", "number": "1578", "street": "Avenida Paulista",
    "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP", "country": "Brasil",
    "complement": "Conjunto 42"},
  "items": [{"title": "Camiseta", "unitPrice": 5000, "quantity": 2, "description": "Algodão"},
    {"title": "Boné", "unitPrice": 2345}],
  "metadata": {"campaign": "black-friday", "attempt": 1},
  "pix": {"expirationSeconds": 600}
}`

// BenchmarkCreateTransactionRequest times what createTransaction does with a body before it
// calls the use case: strict decoding (decode), the validation rules (validate), and both with
// the mapping to the domain's Order and the idempotency fingerprint (all).
func BenchmarkCreateTransactionRequest(b *testing.B) {
	body := []byte(benchCreateBody)
	decode := func(b *testing.B) (*createTransactionRequest, map[string]any) {
		var req createTransactionRequest
		raw, fields, err := decodeJSONBytes(body, &req)
		if err != nil || len(fields) > 0 {
			b.Fatalf("decoding: %v %v", err, fields)
		}
		return &req, raw
	}
	req, _ := decode(b)
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if _, fields := req.parse(now); len(fields) > 0 {
		b.Fatalf("the benchmark body is invalid: %v", fields)
	}

	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			decode(b)
		}
	})
	// The strict check (checkStrictJSON) is part of decode; decode-unchecked is the decoder
	// without it, as it was before, and strict-check the check alone: the check's cost is
	// their difference (docs/PERFORMANCE.md).
	b.Run("decode-unchecked", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var req createTransactionRequest
			if _, fields, err := decodeCheckedJSON(body, &req); err != nil || len(fields) > 0 {
				b.Fatalf("decoding: %v %v", err, fields)
			}
		}
	})
	b.Run("strict-check", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := checkStrictJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// validate checks and maps the body to the domain's Order, one pass (parse).
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, fields := req.parse(now); len(fields) > 0 {
				b.Fatal(fields)
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		var o domain.Order
		for b.Loop() {
			req, raw := decode(b)
			var fields []FieldError
			if o, fields = req.parse(now); len(fields) > 0 {
				b.Fatal(fields)
			}
			_ = fingerprint(raw)
		}
		if o.Amount != 12345 {
			b.Fatalf("order amount %d", o.Amount)
		}
	})
}

// BenchmarkTransactionJSON times writing a Transaction as GET /transaction/{id} does: the view
// (viewTransaction, base64 of the QR image included) and json.Marshal (marshal), and through
// writeJSON into a recorder (writeJSON). The transaction is the one benchCreateBody creates, in
// PIX_QRCODE_GENERATED with a QR image of the size the Renderer draws for the longest BR Code.
func BenchmarkTransactionJSON(b *testing.B) {
	t := benchTransaction(b)
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = viewTransaction(t, "https://pay.example.com")
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			out, err := json.Marshal(viewTransaction(t, "https://pay.example.com"))
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "json-bytes/op")
	})
	b.Run("writeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			writeJSON(w, http.StatusOK, viewTransaction(t, "https://pay.example.com"))
		}
	})
	// The hand-written encoder GET /transaction/{id} uses (transaction_json.go): appending
	// into a reused buffer (append), and the whole answer into a recorder
	// (writeTransaction), to compare with marshal and writeJSON above.
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			v := viewTransaction(t, "https://pay.example.com")
			var ok bool
			if buf, ok = appendTransactionJSON(buf[:0], &v); !ok {
				b.Fatal("the hand-written encoder refused the view")
			}
		}
		b.ReportMetric(float64(len(buf)), "json-bytes/op")
	})
	b.Run("writeTransaction", func(b *testing.B) {
		b.ReportAllocs()
		var bufs jsonBuffers
		for b.Loop() {
			w := httptest.NewRecorder()
			jb := bufs.get()
			v := viewTransactionInto(t, "https://pay.example.com", &jb.view)
			bufs.writeTransaction(w, http.StatusOK, &v, jb)
		}
	})
	// What writeJSON would cost encoding straight into the writer (json.Encoder reuses its
	// buffer and writes the newline itself): without the copy that append(body, '\n') makes of
	// json.Marshal's exact-length result. A proposal measured, not the product's code.
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			if err := json.NewEncoder(w).Encode(viewTransaction(t, "https://pay.example.com")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchBRCode is the longest BR Code the sandbox emitter writes (adapters/qr's tests).
const benchBRCode = "00020101021226990014br.gov.bcb.pix0177maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br5204541153039865409100000.005802BR5925Mercearia e Padaria Boa V6015Sao Jose dos Ca622605227RKE2sawAICsEsyZKHWW6r63045676"

// benchQRBytes is the size of the PNG the Renderer draws for the longest BR Code
// (adapters/qr/BENCHMARKS.md).
const benchQRBytes = 948

func benchTransaction(b testing.TB) *domain.Transaction {
	b.Helper()
	var req createTransactionRequest
	if _, fields, err := decodeJSONBytes([]byte(benchCreateBody), &req); err != nil || len(fields) > 0 {
		b.Fatalf("decoding: %v %v", err, fields)
	}
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	order, fields := req.parse(now)
	if len(fields) > 0 {
		b.Fatal(fields)
	}
	t, err := domain.NewTransaction("3f1c2a9e-8b7d-4c6e-9a5f-0123456789ab", "payment-token-bench-00001", "acc-bench", "SANDBOX", order,
		domain.Idempotency{Key: *req.IdempotencyKey}, now)
	if err != nil {
		b.Fatal(err)
	}
	png := make([]byte, benchQRBytes)
	for i := range png {
		png[i] = byte(i * 7)
	}
	pix := domain.PixResponse{URI: benchBRCode, QRCodePNG: png, ExpiresAt: now.Add(10 * time.Minute)}
	if err := t.AttachPix(pix, now.Add(3*time.Millisecond)); err != nil {
		b.Fatal(err)
	}
	return t
}

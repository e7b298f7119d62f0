package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// Arbitrary bodies through the whole API (harness_test.go), in process: the real handler with
// its middleware, use cases and memory store, called without a socket so that the fuzzer runs
// fast. The seeds run in every plain `go test`. Helpers start with "fuzz".

// fuzzAPI builds the API with s, and a bearer token of an account with every scope.
func fuzzAPI(f *testing.F, s apiSettings) (*api, string) {
	f.Helper()
	a := newAPI(f, s)
	ctx := context.Background()
	created, err := application.NewCreateAccount(a.accounts, a.ids, a.clock, a.hasher).Execute(ctx, "Loja Fuzz", nil)
	must(f, err)
	tok, err := a.issuer.Issue(ctx, domain.Principal{AccountID: created.Account.ID(), ClientID: created.Credential.ClientID,
		Scopes: created.Account.Scopes()}, 24*time.Hour)
	must(f, err)
	return a, tok.Token
}

// fuzzPost serves one POST in process and returns the recorded answer.
func fuzzPost(a *api, path, auth string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	a.srv.Config.Handler.ServeHTTP(rec, req)
	return rec
}

// fuzzCheckAnswer holds an answer to the statuses allowed and to a JSON body: a problem for
// every error, never a 5xx.
func fuzzCheckAnswer(t *testing.T, rec *httptest.ResponseRecorder, body []byte, allowed ...int) {
	t.Helper()
	if !slices.Contains(allowed, rec.Code) {
		t.Fatalf("body %q answered %d, want one of %v:\n%s", body, rec.Code, allowed, rec.Body)
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("body %q answered %d with a body that is not JSON: %q", body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("body %q answered %d as %q", body, rec.Code, ct)
		}
		var p struct{ Code string }
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" {
			t.Fatalf("body %q answered %d without a problem code: %s", body, rec.Code, rec.Body)
		}
	}
}

func FuzzHTTPCreate(f *testing.F) {
	a, tok := fuzzAPI(f, apiSettings{})
	seeds := []any{
		minimalTransaction(), fullTransaction(),
		map[string]any{"amount": 1000, "paymentMethod": "PIX", "pix": map[string]any{}, "idempotencyKey": "fuzz-key-0001"},
		map[string]any{"amount": 2000, "paymentMethod": "PIX", "pix": map[string]any{}, "idempotencyKey": "fuzz-key-0001"},
		map[string]any{"amount": 1000, "paymentMethod": "PIX", "pix": map[string]any{}, "status": "PAID"},
	}
	for _, s := range seeds {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	for _, s := range []string{
		``, `{`, `[]`, `null`, `{"amount": "1"}`, `{"amount": 1e3, "pix": []}`, `{"": 0}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}} trailing`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"a": [[[[[[[[[[]]]]]]]]]]}}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://127.0.0.1/"}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {"expirationSeconds": 86400}, "isInfoProduct": false}`,
		"{\"amount\": 1000, \"paymentMethod\": \"PIX\", \"pix\": {}, \"externalCode\": \"\xff\xff\xff\xff\xff\xff\xff\xff\"}",
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "items": [` + strings.Repeat(`{"title": "ab", "unitPrice": 1},`, 100) + `{"title": "ab", "unitPrice": 1}]}`,
		// Strict input: repeated members, lone surrogates, NUL.
		`{"amount": 1, "amount": 999, "paymentMethod": "PIX", "pix": {}}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {"expirationSeconds": 600, "expirationSeconds": 60}}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order-\ud800-0001"}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order\u0000-0001"}`,
		`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://loja.пример.рф/hooks"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := fuzzPost(a, "/transaction", "Bearer "+tok, body)
		fuzzCheckAnswer(t, rec, body, http.StatusCreated, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
		if rec.Code == http.StatusCreated && !strings.HasPrefix(rec.Header().Get("Location"), "/transaction/") {
			t.Fatalf("201 without Location: %v", rec.Header())
		}
	})
}

// FuzzHTTPMediaType posts a valid body under arbitrary Content-Type headers: only JSON (with a
// UTF-8 charset, if any) is read; anything else answers 415 and creates nothing.
func FuzzHTTPMediaType(f *testing.F) {
	a, tok := fuzzAPI(f, apiSettings{})
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", "APPLICATION/JSON;charset=UTF-8", "text/plain", "",
		"application/json; charset=latin1", "application/jsonx", "application/problem+json", "multipart/form-data; boundary=x",
		"application/json;", "application/json; charset", "application/x-www-form-urlencoded", "*/*",
	} {
		f.Add(ct)
	}
	body := []byte(`{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`)
	f.Fuzz(func(t *testing.T, contentType string) {
		req := httptest.NewRequest(http.MethodPost, "/transaction", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		a.srv.Config.Handler.ServeHTTP(rec, req)
		fuzzCheckAnswer(t, rec, []byte(contentType), http.StatusCreated, http.StatusUnsupportedMediaType)
		mt, params, err := mime.ParseMediaType(contentType)
		charset, hasCharset := params["charset"]
		isJSON := err == nil && mt == "application/json" && (!hasCharset || strings.EqualFold(charset, "utf-8"))
		if (rec.Code == http.StatusCreated) != isJSON {
			t.Fatalf("Content-Type %q answered %d", contentType, rec.Code)
		}
	})
}

// FuzzHTTPAcquirerCallback posts arbitrary bodies to POST /acquirer/pix with the acquirer's
// secret: a well-formed callback answers 200 (whatever each entry's outcome), anything else 413
// or 422; never 5xx.
func FuzzHTTPAcquirerCallback(f *testing.F) {
	a, tok := fuzzAPI(f, apiSettings{AcquirerSecret: acquirerSecret})
	// A charge the seeds pay, so that the fuzzer starts from a callback that applies.
	rec := fuzzPost(a, "/transaction", "Bearer "+tok, []byte(`{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`))
	var created struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &created); rec.Code != http.StatusCreated || err != nil {
		f.Fatalf("creating the charge: %d %s", rec.Code, rec.Body)
	}
	txid, err := pix.TxIDFromTransactionID(created.ID)
	if err != nil {
		f.Fatal(err)
	}
	// horario must lie between the charge's creation and now plus 5 minutes: a minute from now.
	horario := acquirerHorario(time.Now().Add(time.Minute))
	entry := `{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "txid": "` + txid + `", "valor": "10.00", ` +
		`"horario": "` + horario + `", "infoPagador": "pedido 123"}`
	refund := `{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "txid": "` + txid + `", "valor": "10.00", ` +
		`"horario": "` + horario + `", "devolucoes": [{"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", ` +
		`"valor": "10.00", "natureza": "ORIGINAL", "status": "DEVOLVIDO", "horario": {"solicitacao": "2026-11-22T14:30:00Z"}}]}`
	for _, s := range []string{
		`{"pix": []}`, `{"pix": [` + entry + `]}`, `{"pix": [` + entry + `, ` + entry + `]}`, `{"pix": [` + refund + `]}`,
		`{"pix": [{"valor": "10.001"}]}`, `{"pix": [{"valor": "-1.00"}]}`, `{"pix": [{"valor": 10}]}`,
		`{"pix": [` + strings.ReplaceAll(entry, `"10.00"`, `"99999999999.99"`) + `]}`,
		`{"pix": [` + strings.ReplaceAll(entry, txid, "unknownTxid01") + `]}`,
		`{"pix": {}}`, `{"pix": [null]}`, `[]`, ``, `{"pix": [` + strings.Repeat(`1,`, 1000) + `1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := fuzzPost(a, "/acquirer/pix", "Bearer "+acquirerSecret, body)
		fuzzCheckAnswer(t, rec, body, http.StatusOK, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	})
}

package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The request parsers under arbitrary input (`go test -fuzz`; the seeds run in every plain
// `go test`). Each holds the parser to the API's promise: no panic, and either a
// body-level failure, or field errors that name a field with a documented code, or a valid
// request whose mapping to the domain succeeds (a request the adapter accepts and the domain
// refuses would answer 500).

// apiFieldCodes are the API's field-level codes (docs/API.md, Errors).
var apiFieldCodes = []string{"required", "out_of_range", "too_short", "too_long", "invalid_format",
	"invalid_document", "invalid_enum", "duplicate_value", "unknown_field", "invalid_type"}

// checkFieldErrors holds field errors to docs/API.md, Errors: a known code, a message, and a field
// named as sent. The one field that may be empty is an unknown member named "" (`{"": 1}`),
// which is reported under the name it was sent with.
func checkFieldErrors(t *testing.T, input string, fields []FieldError) {
	t.Helper()
	for _, fe := range fields {
		if !slices.Contains(apiFieldCodes, fe.Code) {
			t.Fatalf("%q: field error %+v has a code outside docs/API.md, Errors", input, fe)
		}
		if fe.Message == "" {
			t.Fatalf("%q: field error %+v has no message", input, fe)
		}
		if fe.Field == "" && fe.Code != "unknown_field" {
			t.Fatalf("%q: field error %+v names no field", input, fe)
		}
	}
	if _, err := json.Marshal(fields); err != nil {
		t.Fatalf("%q: field errors do not marshal: %v", input, err)
	}
}

// createSeeds are bodies of POST /transaction: valid, broken in each way docs/API.md, Creating a transaction names,
// and hostile.
var createSeeds = []string{
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`,
	`{"amount": 12345, "paymentMethod": "PIX", "webhookUrl": "https://merchant.example.com/hooks/pix?source=pixgate",
	  "externalCode": "order-000123", "idempotencyKey": "key-00000001",
	  "customer": {"ip": "2001:db8::1", "name": "João D'Ávila-Souza", "email": "joao@example.com.br",
	    "document": "529.982.247-25", "landline": "+55 (11) 3456-7890", "mobilePhone": "(21) 98765-4321", "birthdate": "1990-05-17"},
	  "seller": {"name": "Loja Exemplo", "document": "12.ABC.345/01DE-35"}, "isInfoProduct": false,
	  "address": {"zipCode": "01310-100", "number": "1578", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
	    "city": "São Paulo", "state": "SP", "country": "Brasil", "complement": "Conjunto 42"},
	  "items": [{"title": "Camiseta", "unitPrice": 5000, "quantity": 2, "description": "Algodão"}, {"title": "Boné", "unitPrice": 2345}],
	  "metadata": {"campaign": "black-friday", "nested": {"a": [1, 2, null]}}, "pix": {"expirationSeconds": 600}}`,
	`{"amount": "100", "paymentMethod": "PIX", "pix": {}}`,
	`{"amount": 100.5, "paymentMethod": "PIX", "pix": {}}`,
	`{"amount": 1e3, "paymentMethod": "PIX", "pix": {}}`,
	`{"amount": -1, "paymentMethod": "pix", "pix": []}`,
	`{"amount": 99999999999999999999999999, "paymentMethod": "PIX", "pix": {"expirationSeconds": 59}}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "status": "PAID", "amountPaid": 1000, "id": "x"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "isInfoProduct": false}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "items": [null, 1, {"title": 1, "unitPrice": "1", "x": 1}]}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "customer": {"name": "<script>", "document": "111.111.111-11", "email": "a@", "document2": 1}}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://127.0.0.1/x#frag"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://user:pw@localhost:99999/"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": []}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "customer": null, "seller": null, "items": null}`,
	`{"": 1, "customer": {"": 2}}`,
	`{"amount": 1000} {}`,
	`[]`, `null`, `"x"`, ``, `{`, `{"amount": 1000, "amount": "x"}`,
	`{"items": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	"{\"externalCode\": \"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\"}",
	`{"externalCode": "\ud800\udc00\ud800\ud800\ud800\ud800\ud800\ud800"}`,
	`{"amount": 1, "amount": 999, "paymentMethod": "PIX", "pix": {}}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "customer": {"name": "Ana", "name": "Bia"}}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "\u0061mount": 2}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order\u0000-0001"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"k\u0000": "v"}}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order-\udbff\udfff-1"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://loja.пример.рф/hooks"}`,
	`{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "webhookUrl": "https://loja.xn--p1ai/hooks"}`,
}

func FuzzCreateTransactionRequest(f *testing.F) {
	for _, s := range createSeeds {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createTransactionRequest
		raw, fields, err := decodeJSONBytes(body, &req)
		if err != nil {
			if !errors.Is(err, errMalformedJSON) || raw != nil || fields != nil {
				t.Fatalf("%q: body-level failure %v with raw %v and fields %v", body, err, raw, fields)
			}
			return
		}
		order, orderErrs := req.parse(now)
		fields = mergeFieldErrors(fields, orderErrs)
		checkFieldErrors(t, string(body), fields)
		if len(fields) > 0 {
			return
		}
		_ = fingerprint(raw)
		tx, err := domain.NewTransaction("7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", "payment-token-fuzz-000001", "account", "SANDBOX", order, domain.Idempotency{}, now)
		if err != nil {
			t.Fatalf("%q: the adapter accepts an order the domain refuses (a 500): %v", body, err)
		}
		if v := viewTransaction(tx, "https://pay.example.com"); v.Amount != int64(order.Amount) {
			t.Fatalf("%q: the view shows amount %d, want %d", body, v.Amount, order.Amount)
		}
		if _, err := json.Marshal(viewTransaction(tx, "https://pay.example.com")); err != nil {
			t.Fatalf("%q: the transaction view does not marshal: %v", body, err)
		}
	})
}

// FuzzStrictJSON holds checkStrictJSON to independent oracles on any input that is JSON:
// encoding/json's token stream for repeated member names, utf8.Valid for the encoding, and a
// decode without U+FFFD for the surrogates (encoding/json replaces a lone one with it). On what
// it accepts, the decoder then sees exactly what was sent.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range createSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"a": {"b": 1}, "b": {"a": 1}}`, `{"a": [{"a": 1}, {"a": 1}]}`, `{"a\"": 1, "a": 2}`, `{"\/": 1, "/": 2}`,
		`{"\ud83d\ude00": 1, "😀": 2}`, `[{"x": 1, "x": 1}]`, `"\udc00"`, `{"a": "\u00e9", "\u00e9": 1, "é": 2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkStrictJSON(body)
		if !json.Valid(body) {
			return // the decoder refuses it whatever the check says
		}
		dup := repeatsAMemberName(body)
		switch {
		case errors.Is(err, errDuplicateMember) && !dup:
			t.Fatalf("%q: refused as repeating a name; the token stream repeats none", body)
		case err == nil && dup:
			t.Fatalf("%q: accepted, but the token stream repeats a name", body)
		case errors.Is(err, errInvalidUTF8) && utf8.Valid(body):
			t.Fatalf("%q: refused as invalid UTF-8, but it is valid", body)
		case err == nil && !utf8.Valid(body):
			t.Fatalf("%q: accepted, but it is not UTF-8", body)
		}
		if err != nil {
			return
		}
		sentFFFD := bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) || bytes.ContainsRune(body, utf8.RuneError)
		var v any
		if json.Unmarshal(body, &v) == nil && holdsReplacement(v) && !sentFFFD {
			t.Fatalf("%q: accepted, but decoding it made a U+FFFD that was not sent", body)
		}
	})
}

// repeatsAMemberName walks encoding/json's token stream and tells whether an object names a
// member twice.
func repeatsAMemberName(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // 1E700 is JSON, though not a float64
	type frame struct {
		object  bool
		names   map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.wantKey = true
				}
				stack = append(stack, &frame{object: tok == '{', names: map[string]bool{}, wantKey: true})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].wantKey = true
				}
			}
		case string:
			if top != nil && top.object && top.wantKey {
				if top.names[tok] {
					return true
				}
				top.names[tok] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.object {
				top.wantKey = true
			}
		default:
			if top != nil && top.object {
				top.wantKey = true
			}
		}
	}
}

func holdsReplacement(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case map[string]any:
		for k, el := range v {
			if strings.ContainsRune(k, utf8.RuneError) || holdsReplacement(el) {
				return true
			}
		}
	case []any:
		for _, el := range v {
			if holdsReplacement(el) {
				return true
			}
		}
	}
	return false
}

func FuzzWithdrawalRequest(f *testing.F) {
	for _, s := range []string{
		`{"amount": 5000, "pixKey": {"key": "maria@example.com", "type": "EMAIL"}}`,
		`{"amount": 5000, "pixKey": {"key": "529.982.247-25", "type": "CPF"}, "externalCode": "payout-0001",
		  "webhookUrl": "https://merchant.example.com/hooks", "idempotencyKey": "payout-key-1"}`,
		`{"amount": 1, "pixKey": {"key": "11.222.333/0001-81", "type": "CNPJ"}}`,
		`{"amount": 1, "pixKey": {"key": "12ABC34501DE35", "type": "CNPJ"}}`,
		`{"amount": 1, "pixKey": {"key": "+5511987654321", "type": "PHONE"}}`,
		`{"amount": 1, "pixKey": {"key": "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", "type": "EVP"}}`,
		`{"amount": 1, "pixKey": {"key": "11.222.333/0001-81", "type": "CPF"}}`,
		`{"amount": 1, "pixKey": {"key": "x", "type": "BANK"}}`,
		`{"amount": 0, "pixKey": {"key": 1, "type": null}, "status": "PROCESSED", "feeAmount": 0}`,
		`{"amount": 10000001, "pixKey": "maria@example.com"}`,
		`{"amount": 1.5}`, `{}`, `[]`, `{"pixKey": {"": ""}}`, `{"amount": 1, "pixKey": {"key": "` + strings.Repeat("a", 80) + `@x.io", "type": "EMAIL"}}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createWithdrawalRequest
		raw, fields, err := decodeJSONBytes(body, &req)
		if err != nil {
			if !errors.Is(err, errMalformedJSON) {
				t.Fatalf("%q: body-level failure %v", body, err)
			}
			return
		}
		key, keyErrs := req.parse()
		fields = mergeFieldErrors(fields, keyErrs)
		checkFieldErrors(t, string(body), fields)
		if len(fields) > 0 {
			return
		}
		_ = fingerprint(raw)
		receiver, err := sandbox.Directory{}.Resolve(context.Background(), key)
		if err != nil {
			t.Fatalf("%q: the adapter accepts a PIX key the directory refuses (a 500): %v", body, err)
		}
		w, err := domain.NewWithdrawal("7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", "account", "SANDBOX", domain.Payout{
			Amount: domain.Cents(*req.Amount), PixKey: key, ExternalCode: str(req.ExternalCode),
			WebhookURL: str(req.WebhookURL), Receiver: &receiver,
		}, domain.Idempotency{}, now)
		if err != nil {
			t.Fatalf("%q: the adapter accepts a payout the domain refuses (a 500): %v", body, err)
		}
		if _, err := json.Marshal(viewCreatedWithdrawal(w)); err != nil {
			t.Fatalf("%q: the withdrawal view does not marshal: %v", body, err)
		}
	})
}

func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"", "page=1&perPage=20", "page=2&perPage=100", "perPage=101", "perPage=0", "page=0", "page=-1",
		"page=99999999999999999999", "perPage=1e2", "perPage=10.0",
		"status=PAID&status=REFUNDED", "status=PAID&status=PAID", "status=paid", "status=",
		"paymentMethod=PIX&paymentMethod=PIX",
		"startDate=2026-01-01T00:00:00Z&endDate=2026-12-31T23:59:59.999-03:00",
		"startDate=2026-12-31T00:00:00Z&endDate=2026-01-01T00:00:00Z", "startDate=2026-01-01",
		"customerEmail=MARIA@Example.com", "customerName=Jo%C3%A3o", "customerName=a;b",
		"customerDocument=529.982.247-25", "customerDocument=12.ABC.345%2F01DE-35", "customerDocument=111",
		"customerPhone=(11)%2098765-4321", "customerPhone=---", "id=7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f",
		"id=7B0E8A52-3C8E-4F0E-9D2A-2F3B4C5D6E7F", "id=nope", "endToEnd=E0036030520261122&endToEndRefund=short",
		"externalCode=order-000123", "minAmount=1&maxAmount=10000000", "minAmount=500&maxAmount=100",
		"minAmount=0", "per_page=10", "page=1&page=2", "=x", "%zz", "a=%", ";", "&&&", "status",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery) // r.URL.Query() also keeps what parsed and drops the error
		filter, page, fields := parseListQuery(q)
		for _, fe := range fields {
			if !slices.Contains(apiFieldCodes, fe.Code) || fe.Message == "" {
				t.Fatalf("%q: field error %+v is outside docs/API.md, Errors", rawQuery, fe)
			}
			if _, sent := q[fe.Field]; !sent {
				t.Fatalf("%q: field error %+v names a parameter that was not sent", rawQuery, fe)
			}
		}
		if len(fields) > 0 {
			return
		}
		if page.Number < 1 || page.Size < 1 || page.Size > maxPerPage {
			t.Fatalf("%q: page %+v is out of bounds", rawQuery, page)
		}
		checkAmount := func(name string, c *domain.Cents) {
			if c != nil && (*c < domain.MinAmount || *c > domain.MaxAmount) {
				t.Fatalf("%q: %s %d accepted", rawQuery, name, *c)
			}
		}
		checkAmount("minAmount", filter.MinAmount)
		checkAmount("maxAmount", filter.MaxAmount)
		if filter.MinAmount != nil && filter.MaxAmount != nil && *filter.MinAmount > *filter.MaxAmount {
			t.Fatalf("%q: minAmount above maxAmount accepted", rawQuery)
		}
		if filter.StartDate != nil && filter.EndDate != nil && filter.StartDate.After(*filter.EndDate) {
			t.Fatalf("%q: startDate after endDate accepted", rawQuery)
		}
		for _, s := range filter.Statuses {
			if _, err := domain.ParseTransactionStatus(string(s)); err != nil {
				t.Fatalf("%q: status %q accepted", rawQuery, s)
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(filter.Statuses)))) != len(filter.Statuses) {
			t.Fatalf("%q: duplicate statuses accepted: %v", rawQuery, filter.Statuses)
		}
		for _, m := range filter.PaymentMethods {
			if m != domain.PaymentPIX {
				t.Fatalf("%q: payment method %q accepted", rawQuery, m)
			}
		}
		if filter.ID != "" && !domain.IsUUIDv4(filter.ID) {
			t.Fatalf("%q: id %q accepted", rawQuery, filter.ID)
		}
		if filter.CustomerDocument != "" {
			if _, err := domain.ParseDocument(filter.CustomerDocument); err != nil {
				t.Fatalf("%q: document %q accepted", rawQuery, filter.CustomerDocument)
			}
		}
		if filter.AccountID != "" {
			t.Fatalf("%q: the query string chose the account %q", rawQuery, filter.AccountID)
		}
	})
}

// FuzzAcquirerCallback drives the parser of POST /acquirer/pix (Banco Central's callback body)
// on its own: a body is refused whole only when it is not strict JSON or has no `pix` array
// of at most 1000 entries; otherwise every entry yields one result, and what an entry is
// accepted as maps to a notification with a positive amount in cents, ids of the right shape
// and a real time, or is invalid with a reason, or is a payout notice with a well-formed id.
func FuzzAcquirerCallback(f *testing.F) {
	for _, s := range []string{
		`{"pix": []}`,
		`{"pix": [{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "txid": "abc123", "valor": "10.00",
		  "chave": "pix@pixgate.example", "horario": "2026-11-22T11:19:32.456-03:00", "infoPagador": "pedido 123"}]}`,
		`{"pix": [{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "txid": "abc123", "valor": "10.00",
		  "horario": "2026-11-22T11:19:32Z", "componentesValor": {"original": {"valor": "10.00"}},
		  "devolucoes": [{"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "10.00", "natureza": "ORIGINAL",
		    "horario": {"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"}, "status": "DEVOLVIDO"}]}]}`,
		`{"pix": [{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "valor": "10.00", "horario": "2026-11-22T11:19:32Z",
		  "gnExtras": {"pagador": {"nome": "Fulano"}, "tarifa": "0.01"},
		  "devolucoes": [{"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "1.00", "natureza": "MED_PIX_AUTOMATICO",
		    "descricao": "estorno", "horario": {"liquidacao": "2026-11-22T14:30:02Z"}, "status": "DEVOLVIDO", "gnExtras": 1}]}], "extra": true}`,
		`{"pix": [{"endToEndId": "E00360305202611221419aBcDeFgHiJk", "valor": "0.01", "horario": "2026-11-22T11:19:32Z",
		  "status": "REALIZADO", "tipo": "SOLICITACAO", "gnExtras": {"idEnvio": "0a1b2c3d4e5f60718293a4b5c6d7e8f9"}}]}`,
		`{"pix": [{"gnExtras": {"idEnvio": "not an id"}}]}`, `{"pix": [{"gnExtras": {"idEnvio": 7}}]}`,
		`{"pix": [{"valor": "10.001"}]}`, `{"pix": [{"valor": "-10.00"}]}`, `{"pix": [{"valor": "1e3"}]}`,
		`{"pix": [{"valor": 10.00}]}`, `{"pix": [{"valor": "99999999999999999999.99"}]}`, `{"pix": [{"valor": "NaN"}]}`,
		`{"pix": [{"valor": "0.00"}]}`, `{"pix": [{"valor": " 10.00"}]}`, `{"pix": [{"valor": "10,00"}]}`,
		`{"pix": {}}`, `{"pix": [null]}`, `{"pix": [1, "a", []]}`, `{"pix": [{"devolucoes": [{"horario": "x"}]}]}`,
		`{"pix": [{"txid": "a\u0000"}]}`, `{"pix": [], "pix": []}`,
		`{"pix": [], "extra": true}`, `[]`, `{"pix": [` + strings.Repeat(`{},`, 1001) + `{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, _, err := decodeJSONBytes(body, &acquirerEnvelope{})
		if err != nil {
			if !errors.Is(err, errMalformedJSON) {
				t.Fatalf("%q: body-level failure %v", body, err)
			}
			return
		}
		entries, err := parseAcquirerEntries(obj)
		if err != nil {
			var noPix errNoPixArray
			if !errors.As(err, &noPix) || noPix.field.Field != "pix" {
				t.Fatalf("%q: refused whole with %v", body, err)
			}
			if arr, isArray := obj["pix"].([]any); isArray && len(arr) <= maxAcquirerEntries {
				t.Fatalf("%q: a pix array of %d entries refused whole", body, len(arr))
			}
			return
		}
		if arr, _ := obj["pix"].([]any); len(entries) != len(arr) || len(entries) > maxAcquirerEntries {
			t.Fatalf("%q: %d entries parsed from %d", body, len(entries), len(arr))
		}
		for _, e := range entries {
			n := e.pix
			switch {
			case e.payoutID != "":
				if !acquirerAlnumOK(e.payoutID, 1, 35) || n.Invalid != "" || n.TxID != "" {
					t.Fatalf("%q: payout notice %+v", body, e)
				}
				continue
			case n.Invalid != "":
				if !utf8.ValidString(n.Invalid) || strings.IndexByte(n.Invalid, 0) >= 0 || len(n.Invalid) > 2000 ||
					(n.EndToEndID != "" && len(n.EndToEndID) != 32) || len(n.TxID) > 35 {
					t.Fatalf("%q: invalid entry %+v", body, n)
				}
				continue
			}
			if n.Amount < 1 || n.PaidAt.IsZero() || len(n.EndToEndID) != 32 || len(n.TxID) > 35 {
				t.Fatalf("%q: accepted notification %+v", body, n)
			}
			for _, r := range n.Refunds {
				if r.Amount < 1 || len(r.ReturnID) != 32 || r.ID == "" {
					t.Fatalf("%q: accepted refund %+v", body, r)
				}
				switch r.Status {
				case application.PixRefundInProgress, application.PixRefundReturned, application.PixRefundNotDone:
				default:
					t.Fatalf("%q: accepted refund status %q", body, r.Status)
				}
				if r.Nature != "" && !slices.Contains(application.PixRefundNatures(), r.Nature) {
					t.Fatalf("%q: accepted natureza %q", body, r.Nature)
				}
			}
		}
	})
}

package httpapi_test

// POST /transaction and GET /transaction/{id} over HTTP: the created and the looked-up
// resource, every validation rule of the request, the body-level failures, lookups by id,
// authentication and scopes, and the request id. Its helpers are the shared ones
// (api_helpers_test.go).

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestCreateTransaction201ReturnsExactlyTheDocumentFields(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]map[string]any{"minimal": minimalTransaction(), "full": fullTransaction()} {
		t.Run("a "+name+" request is created", func(t *testing.T) {
			t.Parallel()
			a := newAPI(t)
			_, tok := a.account()
			before := time.Now().UTC().Truncate(time.Millisecond)
			r := a.do("POST", "/transaction", tok, body)
			if r.status != http.StatusCreated {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			got := r.json(t)
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			// The document's fields, and paymentUrl, the one extension.
			want := []string{"amount", "id", "paymentUrl", "pixResponse", "status", "type"}
			if body["externalCode"] != nil {
				want = []string{"amount", "externalCode", "id", "paymentUrl", "pixResponse", "status", "type"}
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("fields = %v, want %v", keys, want)
			}
			id := got["id"].(string)
			payURL, _ := got["paymentUrl"].(string)
			token, ok := strings.CutPrefix(payURL, a.srv.URL+"/pay/")
			if !ok || !domain.ValidPaymentToken(token) || strings.Contains(payURL, id) ||
				strings.Contains(token, strings.ReplaceAll(id, "-", "")) {
				t.Fatalf("paymentUrl %q: want this server's /pay/<token>, a token that is not the id", payURL)
			}
			if !domain.IsUUIDv4(id) || strings.ToLower(id) != id {
				t.Fatalf("id %q is not a lowercase UUID v4", id)
			}
			if r.header.Get("Location") != "/transaction/"+id {
				t.Fatalf("Location = %q", r.header.Get("Location"))
			}
			if got["type"] != "TRANSACTION" || got["status"] != "PIX_QRCODE_GENERATED" || fmt.Sprint(got["amount"]) != fmt.Sprint(body["amount"]) {
				t.Fatalf("body = %v", got)
			}
			pix := got["pixResponse"].(map[string]any)
			uri := pix["uri"].(string)
			if !strings.HasPrefix(uri, "000201") || !strings.Contains(uri, "br.gov.bcb.pix") {
				t.Fatalf("uri %q is not a BR Code", uri)
			}
			img := pix["qrCodeBase64"].(string)
			png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(img, "data:image/png;base64,"))
			if !strings.HasPrefix(img, "data:image/png;base64,") || err != nil || string(png[1:4]) != "PNG" {
				t.Fatalf("qrCodeBase64 is not a PNG data URI: %.40s", img)
			}
			exp, err := time.Parse(time.RFC3339, pix["expirationDate"].(string))
			if err != nil {
				t.Fatal(err)
			}
			lifetime := 1800 * time.Second
			if name == "full" {
				lifetime = 600 * time.Second
			}
			if exp.Before(before.Add(lifetime)) || exp.After(time.Now().Add(lifetime)) {
				t.Fatalf("expirationDate %v is not creation + %v", exp, lifetime)
			}
		})
	}
}

func TestGetTransaction200ShowsTheResourceMaskedAndShaped(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	created := a.do("POST", "/transaction", tok, fullTransaction()).json(t)
	r := a.do("GET", "/transaction/"+created["id"].(string), tok, nil)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := r.json(t)
	customer := got["customer"].(map[string]any)
	seller := got["seller"].(map[string]any)
	address := got["address"].(map[string]any)
	items := got["items"].([]any)
	history := got["statusHistory"].([]any)
	checks := []struct {
		what      string
		got, want any
	}{
		{"acquirer", got["acquirer"], "SANDBOX"},
		{"paymentMethod", got["paymentMethod"], "PIX"},
		{"isInfoProduct", got["isInfoProduct"], false},
		{"status", got["status"], "PIX_QRCODE_GENERATED"},
		{"customer document is a masked CPF", customer["document"], map[string]any{"value": "***.982.247-**", "type": "CPF"}},
		{"seller document is a full CNPJ", seller["document"], map[string]any{"value": "11.222.333/0001-81", "type": "CNPJ"}},
		{"landline as national digits", customer["landline"], "1134567890"},
		{"mobile as national digits", customer["mobilePhone"], "21987654321"},
		{"birthdate never returned", customer["birthdate"], nil},
		{"zip code as 8 digits", address["zipCode"], "01310100"},
		{"item quantity defaults to 1", items[1].(map[string]any)["quantity"], float64(1)},
		{"metadata returned", got["metadata"], map[string]any{"campaign": "black-friday", "attempt": float64(1)}},
		{"paymentDate null", got["paymentDate"], nil},
		{"errorMessage null", got["errorMessage"], nil},
		{"nothing refunded", got["amountRefunded"], float64(0)},
		{"no refunds, an empty list", fmt.Sprintf("%#v", got["refunds"]), "[]interface {}{}"},
		{"webhookUrl", got["webhookUrl"], "https://merchant.example.com/hooks/pix?source=pixgate"},
		{"history length", len(history), 2},
		{"history starts PENDING", history[0].(map[string]any)["status"], "PENDING"},
		{"current status has null duration", history[1].(map[string]any)["durationInMilliseconds"], nil},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	for _, k := range []string{"paymentDate", "infractionDate", "errorMessage"} {
		if _, present := got[k]; !present {
			t.Errorf("%s must be present (null)", k)
		}
	}
	for _, k := range []string{"amountPaid", "payer", "receiver", "feeAmount", "endToEnd"} {
		if _, present := got[k]; present {
			t.Errorf("%s must be left out before payment", k)
		}
	}
	if d := history[0].(map[string]any)["durationInMilliseconds"]; d == nil || d.(float64) < 0 {
		t.Errorf("PENDING duration = %v", d)
	}
	if got["updatedAt"] != history[1].(map[string]any)["date"] {
		t.Errorf("updatedAt %v is not the last history date", got["updatedAt"])
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		s := got[k].(string)
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", s); err != nil {
			t.Errorf("%s %q is not RFC 3339 UTC with milliseconds", k, s)
		}
	}
	if strings.Contains(string(r.body), "52998224725") || strings.Contains(string(r.body), "1990-05-17") {
		t.Error("the full CPF or the birthdate leaked into the response")
	}
}

func TestCreateTransaction422ReportsEveryBrokenRule(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	long := func(n int) string { return strings.Repeat("ã", n) } // multi-byte: lengths count characters
	with := func(mut func(m map[string]any)) map[string]any {
		m := fullTransaction()
		mut(m)
		return m
	}
	cust := func(k string, v any) map[string]any {
		return with(func(m map[string]any) { m["customer"].(map[string]any)[k] = v })
	}
	addr := func(k string, v any) map[string]any {
		return with(func(m map[string]any) { m["address"].(map[string]any)[k] = v })
	}
	item := func(k string, v any) map[string]any {
		return with(func(m map[string]any) { m["items"].([]any)[0].(map[string]any)[k] = v })
	}
	set := func(k string, v any) map[string]any { return with(func(m map[string]any) { m[k] = v }) }
	del := func(k string) map[string]any { return with(func(m map[string]any) { delete(m, k) }) }

	cases := []struct {
		name string
		body map[string]any
		want string // "field code"; empty: accepted
	}{
		{"amount 0 is below the minimum", set("amount", 0), "amount out_of_range"},
		{"amount 1 is the minimum", set("amount", 1), ""},
		{"amount 10000000 is the maximum", set("amount", 10000000), ""},
		{"amount 10000001 is above the maximum", set("amount", 10000001), "amount out_of_range"},
		{"a negative amount is out of range", set("amount", -1), "amount out_of_range"},
		{"a decimal amount is not an integer", set("amount", 100.5), "amount invalid_type"},
		{"an amount as a string is the wrong type", set("amount", "100"), "amount invalid_type"},
		{"a missing amount is required", del("amount"), "amount required"},
		{"a null amount is required", set("amount", nil), "amount required"},
		{"paymentMethod other than PIX", set("paymentMethod", "CARD"), "paymentMethod invalid_enum"},
		{"paymentMethod in lower case", set("paymentMethod", "pix"), "paymentMethod invalid_enum"},
		{"missing paymentMethod", del("paymentMethod"), "paymentMethod required"},
		{"missing pix", del("pix"), "pix required"},
		{"webhook over http", set("webhookUrl", "http://merchant.example.com/h"), "webhookUrl invalid_format"},
		{"webhook with a fragment", set("webhookUrl", "https://merchant.example.com/h#x"), "webhookUrl invalid_format"},
		{"webhook to localhost", set("webhookUrl", "https://localhost/h"), "webhookUrl invalid_format"},
		{"webhook to an IP literal", set("webhookUrl", "https://10.0.0.1/h"), "webhookUrl invalid_format"},
		{"webhook with user info", set("webhookUrl", "https://u:p@merchant.example.com/h"), "webhookUrl invalid_format"},
		{"webhook with a numeric TLD", set("webhookUrl", "https://merchant.example.123/h"), "webhookUrl invalid_format"},
		{"webhook of 2049 characters", set("webhookUrl", "https://merchant.example.com/"+strings.Repeat("a", 2049-29)), "webhookUrl too_long"},
		{"externalCode of 7 characters", set("externalCode", long(7)), "externalCode too_short"},
		{"externalCode of 8 characters", set("externalCode", long(8)), ""},
		{"externalCode of 255 characters", set("externalCode", long(255)), ""},
		{"externalCode of 256 characters", set("externalCode", long(256)), "externalCode too_long"},
		{"idempotencyKey of 7 characters", set("idempotencyKey", long(7)), "idempotencyKey too_short"},
		{"idempotencyKey of 256 characters", set("idempotencyKey", long(256)), "idempotencyKey too_long"},
		{"customer without a name", cust("name", nil), "customer.name required"},
		{"customer name of 1 character", cust("name", "J"), "customer.name too_short"},
		{"customer name of 150 characters", cust("name", long(150)), ""},
		{"customer name of 151 characters", cust("name", long(151)), "customer.name too_long"},
		{"customer name with markup", cust("name", "<script>"), "customer.name invalid_format"},
		{"customer name with a semicolon", cust("name", "a;b"), "customer.name invalid_format"},
		{"customer name in another script", cust("name", "Владимир Путин-Ørsted"), ""},
		{"customer document with bad check digits", cust("document", "529.982.247-26"), "customer.document invalid_document"},
		{"customer document of repeated digits", cust("document", "111.111.111-11"), "customer.document invalid_document"},
		{"customer document as an alphanumeric CNPJ", cust("document", "12.ABC.345/01DE-35"), ""},
		{"customer without a document", cust("document", nil), "customer.document required"},
		{"customer e-mail without a domain dot", cust("email", "joao@example"), "customer.email invalid_format"},
		{"customer e-mail with a display name", cust("email", "João <joao@example.com>"), "customer.email invalid_format"},
		{"customer without an e-mail", cust("email", nil), "customer.email required"},
		{"customer ip that is not an address", cust("ip", "300.1.1.1"), "customer.ip invalid_format"},
		{"customer ipv6", cust("ip", "2001:db8::1"), ""},
		{"landline starting with 9", cust("landline", "11 93456-7890"), "customer.landline invalid_format"},
		{"landline with area code 10", cust("landline", "10 3456-7890"), "customer.landline invalid_format"},
		{"mobile without the leading 9", cust("mobilePhone", "21 8765-43210"), "customer.mobilePhone invalid_format"},
		{"birthdate with a time", cust("birthdate", "1990-05-17T10:00:00Z"), "customer.birthdate invalid_format"},
		{"birthdate that does not exist", cust("birthdate", "2023-02-29"), "customer.birthdate invalid_format"},
		{"birthdate in the future", cust("birthdate", time.Now().AddDate(1, 0, 0).Format(time.DateOnly)), "customer.birthdate invalid_format"},
		{"seller document invalid", with(func(m map[string]any) { m["seller"].(map[string]any)["document"] = "11.222.333/0001-82" }), "seller.document invalid_document"},
		{"physical product without address", del("address"), "address required"},
		{"info product without address", with(func(m map[string]any) { delete(m, "address"); m["isInfoProduct"] = true }), ""},
		{"zip code with letters", addr("zipCode", "0131A-100"), "address.zipCode invalid_format"},
		{"zip code without dash", addr("zipCode", "01310100"), ""},
		{"number with letters", addr("number", "12A"), "address.number invalid_format"},
		{"number of 11 digits", addr("number", "12345678901"), "address.number too_long"},
		{"number empty", addr("number", ""), "address.number too_short"},
		{"street of 1 character", addr("street", "R"), "address.street too_short"},
		{"street of 201 characters", addr("street", long(201)), "address.street too_long"},
		{"neighborhood of 101 characters", addr("neighborhood", long(101)), "address.neighborhood too_long"},
		{"city of 1 character", addr("city", "X"), "address.city too_short"},
		{"state of 51 characters", addr("state", long(51)), "address.state too_long"},
		{"country of 61 characters", addr("country", long(61)), "address.country too_long"},
		{"complement of 1 character", addr("complement", "A"), "address.complement too_short"},
		{"complement of 151 characters", addr("complement", long(151)), "address.complement too_long"},
		{"item title of 1 character", item("title", "A"), "items[0].title too_short"},
		{"item title of 151 characters", item("title", long(151)), "items[0].title too_long"},
		{"item description of 256 characters", item("description", long(256)), "items[0].description too_long"},
		{"item unit price 0", item("unitPrice", 0), "items[0].unitPrice out_of_range"},
		{"item unit price with exponent", item("unitPrice", "1e3"), "items[0].unitPrice invalid_type"},
		{"item quantity 0", item("quantity", 0), "items[0].quantity out_of_range"},
		{"item quantity 100", item("quantity", 100), ""},
		{"item quantity 101", item("quantity", 101), "items[0].quantity out_of_range"},
		{"item without title", item("title", nil), "items[0].title required"},
		{"expiration 59 seconds", set("pix", map[string]any{"expirationSeconds": 59}), "pix.expirationSeconds out_of_range"},
		{"expiration 60 seconds", set("pix", map[string]any{"expirationSeconds": 60}), ""},
		{"expiration 86400 seconds", set("pix", map[string]any{"expirationSeconds": 86400}), ""},
		{"expiration 86401 seconds", set("pix", map[string]any{"expirationSeconds": 86401}), "pix.expirationSeconds out_of_range"},
		{"metadata that is an array", set("metadata", []any{1}), "metadata invalid_type"},
		{"isInfoProduct as a string", set("isInfoProduct", "yes"), "isInfoProduct invalid_type"},
		{"customer as a string", set("customer", "João"), "customer invalid_type"},
		{"an unknown field", set("status", "PAID"), "status unknown_field"},
		{"an unknown nested field", cust("cpf", "x"), "customer.cpf unknown_field"},
	}
	for _, c := range cases {
		name := c.name + " answers 422 " + c.want
		if c.want == "" {
			name = c.name + " answers 201"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := a.do("POST", "/transaction", tok, c.body)
			if c.want == "" {
				if r.status != http.StatusCreated {
					t.Fatalf("status %d, want 201: %s", r.status, r.body)
				}
				return
			}
			fields := problem(t, r, http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{c.want}) {
				t.Fatalf("errors = %v, want [%s]", fields, c.want)
			}
		})
	}
}

func TestCreateTransaction422ListsEveryFieldAtOnce(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	body := map[string]any{
		"amount": "10", "paymentMethod": "BOLETO", "externalCode": "short", "isInfoProduct": false,
		"customer": map[string]any{"name": "<b>", "document": "123", "email": "x"},
		"items":    []any{map[string]any{"title": "ok title", "unitPrice": 0}, nil},
		"metadata": map[string]any{}, "extra": true,
	}
	r := a.do("POST", "/transaction", tok, body)
	fields := problem(t, r, http.StatusUnprocessableEntity, "validation_failed")
	want := []string{"address required", "amount invalid_type", "customer.document invalid_document",
		"customer.email invalid_format", "customer.name invalid_format", "externalCode too_short", "extra unknown_field",
		"items[0].unitPrice out_of_range", "items[1] invalid_type", "paymentMethod invalid_enum", "pix required"}
	if !slices.Equal(fields, want) {
		t.Fatalf("errors =\n%v\nwant\n%v", fields, want)
	}
	if d := r.json(t)["detail"]; d != fmt.Sprintf("%d fields are invalid", len(want)) {
		t.Fatalf("detail = %v", d)
	}
}

func TestCreateTransactionBodyLevelFailures(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	for _, c := range []struct{ name, body string }{
		{"not JSON", `{"amount": 10,`},
		{"a JSON array", `[{"amount": 10}]`},
		{"a JSON string", `"hello"`},
		{"trailing data after the object", `{"amount": 10} {}`},
		{"empty", ``},
	} {
		t.Run(c.name+" answers 422 malformed_json", func(t *testing.T) {
			t.Parallel()
			problem(t, a.do("POST", "/transaction", tok, c.body), http.StatusUnprocessableEntity, "malformed_json")
		})
	}
	t.Run("a body over 1 MiB answers 413", func(t *testing.T) {
		t.Parallel()
		big := `{"amount": 10, "metadata": {"x": "` + strings.Repeat("a", 1<<20) + `"}}`
		problem(t, a.do("POST", "/transaction", tok, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	})
	tooLong := func(t *testing.T, m map[string]any, want string) {
		t.Helper()
		fields := problem(t, a.do("POST", "/transaction", tok, m), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{want}) {
			t.Fatal(fields)
		}
	}
	t.Run("metadata over 8 KiB answers 422 metadata too_long", func(t *testing.T) {
		t.Parallel()
		m := minimalTransaction()
		m["metadata"] = map[string]any{"x": strings.Repeat("a", 8<<10)}
		tooLong(t, m, "metadata too_long")
	})
	t.Run("metadata with 51 keys answers 422 metadata too_long", func(t *testing.T) {
		t.Parallel()
		m := minimalTransaction()
		meta := map[string]any{}
		for i := 0; i < 51; i++ {
			meta[fmt.Sprint("k", i)] = i
		}
		m["metadata"] = meta
		tooLong(t, m, "metadata too_long")
	})
	t.Run("101 items answer 422 items too_long", func(t *testing.T) {
		t.Parallel()
		m := minimalTransaction()
		var items []any
		for i := 0; i < 101; i++ {
			items = append(items, map[string]any{"title": "item", "unitPrice": 1})
		}
		m["items"] = items
		tooLong(t, m, "items too_long")
	})
}

func TestGetTransactionByID(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	_, otherTok := a.account()
	id := a.do("POST", "/transaction", tok, minimalTransaction()).json(t)["id"].(string)

	t.Run("404 for an unknown id", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/transaction/"+unknownID, tok, nil), http.StatusNotFound, "not_found")
	})
	t.Run("404 for another account's charge, exactly like an unknown id", func(t *testing.T) {
		t.Parallel()
		theirs := a.do("GET", "/transaction/"+id, otherTok, nil)
		missing := a.do("GET", "/transaction/"+unknownID, otherTok, nil)
		problem(t, theirs, http.StatusNotFound, "not_found")
		if x, y := problemBody(t, theirs), problemBody(t, missing); x != y {
			t.Fatalf("bodies differ:\n%s\n%s", x, y)
		}
	})
	t.Run("422 naming id for a malformed id", func(t *testing.T) {
		t.Parallel()
		fields := problem(t, a.do("GET", "/transaction/not-a-uuid", tok, nil), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{"id invalid_format"}) {
			t.Fatal(fields)
		}
	})
	t.Run("200 for an upper-case spelling of the id", func(t *testing.T) {
		t.Parallel()
		if r := a.do("GET", "/transaction/"+strings.ToUpper(id), tok, nil); r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
	})
}

func TestTransactionRoutesAuthenticationAndScopes(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, readOnly := a.account(domain.ScopeTransactionRead)
	_, writeOnly := a.account(domain.ScopeTransactionWrite)
	t.Run("401 with a Bearer challenge without a token", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/transaction", "", nil)
		problem(t, r, http.StatusUnauthorized, "unauthorized")
		if r.header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
		}
	})
	t.Run("401 invalid_token for a garbage token", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/transaction", "not.a.jwt", nil)
		problem(t, r, http.StatusUnauthorized, "unauthorized")
		if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
		}
	})
	t.Run("401 for Bearer without a token", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/transaction", "", nil, "Authorization", "Bearer "), http.StatusUnauthorized, "unauthorized")
	})
	t.Run("200 for a lower-case scheme", func(t *testing.T) {
		t.Parallel()
		if r := a.do("GET", "/transaction", "", nil, "Authorization", "bearer "+readOnly); r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
	})
	t.Run("401 for two tokens", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/transaction", "", nil, "Authorization", "Bearer "+readOnly+" "+readOnly), http.StatusUnauthorized, "unauthorized")
	})
	t.Run("403 insufficient_scope creating without transaction:write", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("POST", "/transaction", readOnly, minimalTransaction()), http.StatusForbidden, "insufficient_scope")
	})
	t.Run("403 insufficient_scope listing without transaction:read", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/transaction", writeOnly, nil), http.StatusForbidden, "insufficient_scope")
	})
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	t.Run("a client's request id is echoed", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/healthz", "", nil, "X-Request-Id", "merchant-trace-42")
		if r.header.Get("X-Request-Id") != "merchant-trace-42" {
			t.Fatalf("X-Request-Id = %q", r.header.Get("X-Request-Id"))
		}
	})
	t.Run("an unprintable or overlong one is replaced", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/healthz", "", nil, "X-Request-Id", strings.Repeat("a", 129))
		if got := r.header.Get("X-Request-Id"); got == "" || len(got) > 128 {
			t.Fatalf("X-Request-Id = %q", got)
		}
	})
	t.Run("a problem carries the answer's request id", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/transaction", "", nil)
		if r.json(t)["requestId"] != r.header.Get("X-Request-Id") {
			t.Fatal("requestId differs from X-Request-Id")
		}
	})
}

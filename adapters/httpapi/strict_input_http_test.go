package httpapi_test

// Strict input at the HTTP boundary, with real JSON over real HTTP: what encoding/json and
// net/url forgive, the API refuses (docs/API.md, Strict input). Helpers here start with
// "strict".

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// strictCount is how many transactions the token's account has.
func (a *api) strictCount(tok string) float64 {
	a.t.Helper()
	r := a.do("GET", "/transaction", tok, nil)
	if r.status != http.StatusOK {
		a.t.Fatalf("listing: %d %s", r.status, r.body)
	}
	return r.json(a.t)["total"].(float64)
}

func TestStrictJSONBodiesThatEncodingJSONWouldForgiveAnswer422MalformedJSONAndStoreNothing(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct{ name, body string }{
			{"a repeated amount (the last would win)", `{"amount": 1, "amount": 999, "paymentMethod": "PIX", "pix": {}}`},
			{"a repeated member deep inside", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "items": [{"title": "ab", "unitPrice": 1, "title": "cd"}]}`},
			{"a repeated member in metadata", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"a": 1, "a": 2}}`},
			{"a repeated member spelt with an escape", `{"amount": 1000, "\u0061mount": 999, "paymentMethod": "PIX", "pix": {}}`},
			{"invalid UTF-8 in a string", "{\"amount\": 1000, \"paymentMethod\": \"PIX\", \"pix\": {}, \"externalCode\": \"order-\xff\xfe-0001\"}"},
			{"an escaped lone surrogate", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order-\ud800-0001"}`},
			{"an escaped lone low surrogate", `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order-\udc00-0001"}`},
		} {
			t.Run(c.name+" answers 422 malformed_json", func(t *testing.T) {
				t.Parallel()
				problem(t, a.do("POST", "/transaction", tok, c.body), http.StatusUnprocessableEntity, "malformed_json")
			})
		}
		t.Run("a repeated member in POST /withdrawal answers 422 malformed_json", func(t *testing.T) {
			t.Parallel()
			problem(t, a.do("POST", "/withdrawal", tok, `{"amount": 1, "amount": 5000, "pixKey": {"key": "maria@example.com", "type": "EMAIL"}}`),
				http.StatusUnprocessableEntity, "malformed_json")
		})
		t.Run("a repeated member in the acquirer's callback answers 422 malformed_json", func(t *testing.T) {
			t.Parallel()
			acq := newAPI(t, apiSettings{AcquirerSecret: acquirerSecret, SettleNow: true})
			r := acq.do("POST", "/acquirer/pix", "", `{"pix": [], "pix": []}`, "Authorization", "Bearer "+acquirerSecret)
			problem(t, r, http.StatusUnprocessableEntity, "malformed_json")
		})
	})
	if n := a.strictCount(tok); n != 0 {
		t.Fatalf("%v transactions stored from refused bodies", n)
	}
	t.Run("control: a surrogate pair and one name in sibling objects answer 201", func(t *testing.T) {
		t.Parallel()
		r := a.do("POST", "/transaction", tok, `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order-\ud83d\ude00-1",
			"items": [{"title": "ab", "unitPrice": 1}, {"title": "cd", "unitPrice": 2}]}`)
		if r.status != http.StatusCreated {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

func TestAStringHoldingNULIsInvalidFormatOnItsField(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	r := a.do("POST", "/transaction", tok, `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "externalCode": "order\u0000-0001",
		"customer": {"name": "Maria\u0000", "email": "maria@example.com", "document": "`+validCPF+`"}, "metadata": {"note": "a\u0000b"}}`)
	got := problem(t, r, http.StatusUnprocessableEntity, "validation_failed")
	want := []string{"customer.name invalid_format", "externalCode invalid_format", "metadata invalid_format"}
	if !slices.Equal(got, want) {
		t.Fatalf("errors = %v, want %v", got, want)
	}
	r = a.do("POST", "/withdrawal", tok, `{"amount": 100, "pixKey": {"key": "maria@example.com\u0000", "type": "EMAIL"}}`)
	if got := problem(t, r, http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(got, []string{"pixKey.key invalid_format"}) {
		t.Fatalf("errors = %v", got)
	}
	r = a.do("GET", "/transaction?externalCode=order%00-0001", tok, nil)
	if got := problem(t, r, http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(got, []string{"externalCode invalid_format"}) {
		t.Fatalf("errors = %v", got)
	}
	if n := a.strictCount(tok); n != 0 {
		t.Fatalf("%v transactions stored", n)
	}
}

func TestABusinessPOSTWithABodyThatIsNotJSONAnswers415(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	body := `{"amount": 1000, "paymentMethod": "PIX", "pix": {}}`
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct{ path, contentType string }{
			{"/transaction", "text/plain"},
			{"/transaction", ""},
			{"/transaction", "application/x-www-form-urlencoded"},
			{"/transaction", "application/json; charset=latin1"},
			{"/transaction", "application/jsonp"},
			{"/withdrawal", "text/plain"},
			{"/transaction/" + unknownID + "/refund", "text/plain"},
		} {
			t.Run("POST "+c.path+" as "+c.contentType+" answers 415", func(t *testing.T) {
				t.Parallel()
				problem(t, a.do("POST", c.path, tok, body, "Content-Type", c.contentType), http.StatusUnsupportedMediaType, "unsupported_media_type")
			})
		}
	})
	if n := a.strictCount(tok); n != 0 {
		t.Fatalf("%v transactions stored", n)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; charset=UTF-8"} {
		t.Run("POST /transaction as "+ct+" answers 201", func(t *testing.T) {
			t.Parallel()
			if r := a.do("POST", "/transaction", tok, body, "Content-Type", ct); r.status != http.StatusCreated {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
		})
	}
	t.Run("a POST whose body is optional may come with neither body nor Content-Type", func(t *testing.T) {
		t.Parallel()
		id := a.webhookCharge(t, tok)
		if r := a.do("POST", "/sandbox/transaction/"+id+"/pay", tok, nil); r.status != http.StatusOK {
			t.Fatalf("pay: %d %s", r.status, r.body)
		}
		// The refund reaches the use case (the balance is still pending): the request passed.
		problem(t, a.do("POST", "/transaction/"+id+"/refund", tok, nil), http.StatusUnprocessableEntity, "insufficient_balance")
	})
}

func TestAQueryStringThatDoesNotParseAnswers422RatherThanDroppingTheFilter(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	a.webhookCharge(t, tok) // one transaction that is not PAID: a dropped filter would list it
	for _, q := range []string{"status=PAID;", "status=PAID;status=REFUNDED", "status=%zz", "status=PAID&x=%", "customerName=Jo%C3"} {
		t.Run("?"+q+" answers 422", func(t *testing.T) {
			t.Parallel()
			got := problem(t, a.do("GET", "/transaction?"+q, tok, nil), http.StatusUnprocessableEntity, "validation_failed")
			if len(got) != 1 || !strings.HasSuffix(got[0], "invalid_format") {
				t.Fatalf("errors = %v", got)
			}
		})
	}
	t.Run("a route that takes no parameter answers 422 for an unparsable query too", func(t *testing.T) {
		t.Parallel()
		problem(t, a.do("GET", "/balance?a;b", tok, nil), http.StatusUnprocessableEntity, "validation_failed")
	})
	t.Run("control: ?status=PAID lists nothing", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/transaction?status=PAID", tok, nil)
		if r.status != http.StatusOK || r.json(t)["total"] != float64(0) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestAnAcquirerHorarioOutsideTheChargesLifeIsInvalidTimeAndChangesNothing(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{AcquirerSecret: acquirerSecret, SettleNow: true})
	_, tok := a.account()
	id := a.webhookCharge(t, tok)
	before := a.getTransaction(t, tok, id).body
	balance := a.do("GET", "/balance", tok, nil).body
	for i, horario := range []string{
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", acquirerHorario(time.Now().Add(-time.Hour)), acquirerHorario(time.Now().Add(10 * time.Minute)),
	} {
		res := a.acquirerNotify(t, map[string]any{"pix": []any{pixPaymentAt(pixTxID(t, id), acquirerE2E, horario)}})
		if len(res) != 1 || res[0].Outcome != "invalid_time" || res[0].Status != "PIX_QRCODE_GENERATED" || res[0].Detail == "" {
			t.Fatalf("horario %s (%d): results %+v, want invalid_time", horario, i, res)
		}
	}
	if after := a.getTransaction(t, tok, id).body; string(after) != string(before) {
		t.Fatalf("the charge changed:\n%s\n%s", before, after)
	}
	if after := a.do("GET", "/balance", tok, nil).body; string(after) != string(balance) {
		t.Fatalf("the balance changed: %s, then %s", balance, after)
	}
	// Nothing was claimed either: the same end-to-end id with a true time pays the charge.
	if res := a.acquirerNotify(t, map[string]any{"pix": []any{pixPaymentAt(pixTxID(t, id), acquirerE2E, acquirerHorario(time.Now()))}}); res[0].Outcome != "applied" {
		t.Fatalf("results %+v, want applied", res)
	}
}

func TestWebhookURLsOnInternationalisedTopLevelDomainsAreAcceptedAsPunycode(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	for _, c := range []struct{ sent, stored string }{
		{"https://loja.example.xn--p1ai/hooks/pix", "https://loja.example.xn--p1ai/hooks/pix"},
		{"https://loja.пример.рф/hooks/pix?x=1", "https://loja.xn--e1afmkfd.xn--p1ai/hooks/pix?x=1"},
		{"https://ЛОЖА.рф:8443/hooks", "https://xn--80alom.xn--p1ai:8443/hooks"},
		{"https://shop.example.xn--fiqs8s/pix", "https://shop.example.xn--fiqs8s/pix"},
	} {
		t.Run(c.sent+" answers 201 and is stored as "+c.stored, func(t *testing.T) {
			t.Parallel()
			body := minimalTransaction()
			body["webhookUrl"] = c.sent
			r := a.do("POST", "/transaction", tok, body)
			if r.status != http.StatusCreated {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			id := r.json(t)["id"].(string)
			if got := a.getTransaction(t, tok, id).json(t)["webhookUrl"]; got != c.stored {
				t.Fatalf("webhookUrl = %v, want %s", got, c.stored)
			}
		})
	}
	for _, bad := range []string{"https://loja.xn--zz/hooks", "https://loja.xn--p1ai-/hooks", "https://loja.example.xn--80ak6aa92e1/x"} {
		t.Run(bad+" answers 422", func(t *testing.T) {
			t.Parallel()
			body := minimalTransaction()
			body["webhookUrl"] = bad
			if got := problem(t, a.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(got, []string{"webhookUrl invalid_format"}) {
				t.Fatalf("errors = %v", got)
			}
		})
	}
}

func TestHEADIsAnsweredWhereverGETIsWithTheSameStatusAndHeadersAndNoBody(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	id := a.webhookCharge(t, tok)
	for _, path := range []string{
		"/transaction/" + id, "/transaction", "/transaction/" + unknownID, "/transaction/nope",
		"/transaction/" + id + "/events", "/balance", "/healthz", "/openapi.json", "/.well-known/jwks.json",
	} {
		t.Run("HEAD "+path, func(t *testing.T) {
			t.Parallel()
			get := a.do("GET", path, tok, nil)
			head := a.do("HEAD", path, tok, nil)
			if head.status != get.status || len(head.body) != 0 {
				t.Fatalf("HEAD answered %d with %d bytes; GET answered %d", head.status, len(head.body), get.status)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "Content-Length"} {
				if head.header.Get(h) != get.header.Get(h) {
					t.Errorf("%s: HEAD %q, GET %q", h, head.header.Get(h), get.header.Get(h))
				}
			}
		})
	}
	t.Run("HEAD without a token answers 401 like GET", func(t *testing.T) {
		t.Parallel()
		if r := a.do("HEAD", "/transaction/"+id, "", nil); r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	t.Run("HEAD of a route without GET answers what GET answers", func(t *testing.T) {
		t.Parallel()
		get, head := a.do("GET", "/transaction/"+id+"/refund", tok, nil), a.do("HEAD", "/transaction/"+id+"/refund", tok, nil)
		if head.status != get.status || head.status < 400 || len(head.body) != 0 {
			t.Fatalf("HEAD %d, GET %d", head.status, get.status)
		}
	})
	t.Run("a 405 names HEAD beside GET", func(t *testing.T) {
		t.Parallel()
		if r := a.do("PUT", "/transaction", tok, nil); r.header.Get("Allow") != "GET, HEAD, POST" {
			t.Fatalf("Allow %q", r.header.Get("Allow"))
		}
	})
}

// strictRequestSeries counts the series of the request counter /metrics shows.
func (a *api) strictRequestSeries() int {
	a.t.Helper()
	r := a.do("GET", "/metrics", "", nil)
	n := 0
	for _, line := range strings.Split(string(r.body), "\n") {
		if strings.HasPrefix(line, "pixgate_http_requests_total{") {
			n++
		}
	}
	return n
}

func TestGarbageMethodsAndPathsDoNotGrowTheMetricsSeries(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	// The first garbage requests make the series every later one falls into: method "other"
	// on an unknown path (404) and on a known path (405), an unknown path with GET, /metrics.
	a.do("BREW", "/coffee", "", nil)
	a.do("BREW", "/transaction/x", "", nil)
	a.do("GET", "/nowhere", "", nil)
	a.strictRequestSeries()
	before := a.strictRequestSeries()
	for i := range 2000 {
		method := strings.Repeat(string(rune('A'+i%26)), 8000-4) + string(rune('A'+i/26%26)) + string(rune('A'+i/676)) + "XY"
		r := a.do(method, "/transaction/"+strings.Repeat("x", i%50), "", nil)
		if r.status < 400 {
			t.Fatalf("method %d answered %d", i, r.status)
		}
		if i%10 == 0 {
			a.do("GET", "/unknown/"+strings.Repeat("p", i), "", nil)
		}
	}
	if after := a.strictRequestSeries(); after != before {
		t.Fatalf("2,000 garbage methods and 200 unknown paths grew the request series from %d to %d", before, after)
	}
	r := a.do("GET", "/metrics", "", nil)
	if len(r.body) > 1<<20 {
		t.Fatalf("/metrics is %d bytes", len(r.body))
	}
	if !strings.Contains(string(r.body), `method="other"`) {
		t.Fatal("garbage methods are not counted as other")
	}
}

func TestARouteThatIgnoresItsBodyStillRefusesOneThatIsNotJSON(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	for _, path := range []string{"/webhook/secret/rotate", "/auth/credentials"} {
		t.Run("POST "+path+" with a text/plain body answers 415", func(t *testing.T) {
			t.Parallel()
			problem(t, a.do("POST", path, tok, "rotate please", "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "unsupported_media_type")
		})
	}
	t.Run("control: POST /webhook/secret/rotate without a body answers 200", func(t *testing.T) {
		t.Parallel()
		if r := a.do("POST", "/webhook/secret/rotate", tok, nil); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

package httpapi_test

// The payer-facing page (adapters/paypage) as the API mounts it: the page of a charge made
// through POST /transaction, followed through the sandbox's payment and the expiry job.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	stdhtml "html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// pageCharge creates a charge with fullTransaction's payer data and returns its id and the
// path of its payment page.
func (a *api) pageCharge(t *testing.T, tok string, expirationSeconds int) (id, pagePath string) {
	t.Helper()
	body := fullTransaction()
	body["pix"] = map[string]any{"expirationSeconds": expirationSeconds}
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	m := r.json(t)
	path, ok := strings.CutPrefix(m["paymentUrl"].(string), a.srv.URL)
	if !ok {
		t.Fatalf("paymentUrl %q is not on this server %s", m["paymentUrl"], a.srv.URL)
	}
	return m["id"].(string), path
}

func TestPaymentPage(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	accountID, tok := a.account()
	id, page := a.pageCharge(t, tok, 600)
	token := strings.TrimPrefix(page, "/pay/")

	t.Run("paymentUrl is the same on the 201, the GET and the list, and its token is a capability", func(t *testing.T) {
		t.Parallel()
		got := a.do("GET", "/transaction/"+id, tok, nil).json(t)["paymentUrl"]
		list := a.do("GET", "/transaction?id="+id, tok, nil).json(t)["data"].([]any)[0].(map[string]any)["paymentUrl"]
		if got != a.srv.URL+page || list != got {
			t.Fatalf("GET %v, list %v, 201 %s", got, list, a.srv.URL+page)
		}
		if !domain.ValidPaymentToken(token) || len(token) < 22 || strings.Contains(token, strings.ReplaceAll(id, "-", "")) {
			t.Fatalf("token %q", token)
		}
	})

	r := a.do("GET", page, "", nil)
	html := stdhtml.UnescapeString(string(r.body))
	t.Run("the page answers 200 HTML in pt-BR with the merchant, the amount, the QR code, the code and the status", func(t *testing.T) {
		t.Parallel()
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%d %s", r.status, r.header.Get("Content-Type"))
		}
		pix := a.do("GET", "/transaction/"+id, tok, nil).json(t)["pixResponse"].(map[string]any)
		for _, want := range []string{`<html lang="pt-BR">`, "Loja Teste", "R$ 123,45", pix["uri"].(string),
			`src="` + pix["qrCodeBase64"].(string) + `"`, "Aguardando pagamento", `<label for="code">`, `id="countdown"`, "Copiar código", "se atualiza sozinha"} {
			if !strings.Contains(html, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})
	t.Run("the page shows no payer data, no id and nothing of the order but the amount", func(t *testing.T) {
		t.Parallel()
		for _, leak := range []string{"João", "Ávila", "joao@example.com.br", "529.982.247", "52998224725", "982.247",
			"3456-7890", "98765", "1990-05-17", "Paulista", "01310", "Camiseta", "black-friday", "order-000123",
			"merchant.example.com", "203.0.113.7", "Loja Exemplo", id, accountID} {
			if strings.Contains(html, leak) {
				t.Errorf("the page shows %q", leak)
			}
		}
	})
	t.Run("the page is served with a strict policy that allows exactly its inline style and script", func(t *testing.T) {
		t.Parallel()
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "img-src data:", "connect-src 'self'",
			"base-uri 'none'", "form-action 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") || strings.Contains(csp, "*") {
			t.Errorf("CSP %q allows too much", csp)
		}
		for _, tag := range []string{"script", "style"} {
			m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(html, -1)
			if len(m) != 1 {
				t.Fatalf("%d inline %s elements, want 1", len(m), tag)
			}
			sum := sha256.Sum256([]byte(m[0][1]))
			if want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, want) {
				t.Errorf("CSP %q does not allow the page's %s (%s)", csp, tag, want)
			}
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(html) || strings.Contains(html, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(html) {
			t.Error("the page loads from another host or has an inline event handler")
		}
		for h, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
			"Cache-Control": "no-store", "X-Frame-Options": "DENY"} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
	})
	t.Run("Accept-Language en answers the page in English", func(t *testing.T) {
		t.Parallel()
		en := string(a.do("GET", page, "", nil, "Accept-Language", "en-US,en;q=0.9,pt;q=0.5").body)
		for _, want := range []string{`<html lang="en">`, "Awaiting payment", "R$ 123.45", "Copy code"} {
			if !strings.Contains(en, want) {
				t.Errorf("the English page lacks %q", want)
			}
		}
		if pt := string(a.do("GET", page, "", nil, "Accept-Language", "fr-FR,pt-BR;q=0.8,en;q=0.5").body); !strings.Contains(pt, `lang="pt-BR"`) {
			t.Error("a payer preferring pt-BR over en gets another language")
		}
	})
	t.Run("HEAD answers the page's status and headers without a body", func(t *testing.T) {
		t.Parallel()
		h := a.do("HEAD", page, "", nil)
		if h.status != http.StatusOK || len(h.body) != 0 || h.header.Get("Content-Security-Policy") != r.header.Get("Content-Security-Policy") {
			t.Fatalf("HEAD %d, %d bytes, CSP %q", h.status, len(h.body), h.header.Get("Content-Security-Policy"))
		}
		if s := a.do("HEAD", page+"/status", "", nil); s.status != http.StatusOK || len(s.body) != 0 {
			t.Fatalf("HEAD status route %d", s.status)
		}
		if s := a.do("HEAD", page+"/events", "", nil); s.status != http.StatusOK || len(s.body) != 0 ||
			s.header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("HEAD of the live channel: %d %q (it must answer at once, holding nothing open)", s.status, s.header.Get("Content-Type"))
		}
		if s := a.do("HEAD", "/pay/"+strings.Repeat("x", 32), "", nil); s.status != http.StatusNotFound {
			t.Fatalf("HEAD of an unknown page %d", s.status)
		}
	})
	t.Run("the status route answers the status and the expiry, and the page follows the payment", func(t *testing.T) {
		t.Parallel()
		// A charge of its own: the others' page stays unpaid.
		id, page := a.pageCharge(t, tok, 600)
		st := a.do("GET", page+"/status", "", nil)
		var body map[string]any
		if err := json.Unmarshal(st.body, &body); err != nil || st.status != http.StatusOK || len(body) != 2 ||
			body["status"] != "PIX_QRCODE_GENERATED" || body["expirationDate"] == nil {
			t.Fatalf("%d %s", st.status, st.body)
		}
		if r := a.do("POST", "/sandbox/transaction/"+id+"/pay", tok, nil); r.status != http.StatusOK {
			t.Fatalf("pay: %d %s", r.status, r.body)
		}
		if st := a.do("GET", page+"/status", "", nil).json(t); st["status"] != "PAID" {
			t.Fatalf("status after payment %v", st)
		}
		paid := string(a.do("GET", page, "", nil).body)
		if !strings.Contains(paid, ">Pago<") || strings.Contains(paid, "Pagador") {
			t.Fatal("the paid page does not say Pago, or shows the payer")
		}
		// What is only true while the charge awaits payment goes away with the code.
		charge := regexp.MustCompile(`(?s)<section id="charge"[^>]*>.*?</section>`)
		if c := charge.FindString(paid); !strings.Contains(c, " hidden>") || !strings.Contains(c, "se atualiza sozinha") {
			t.Fatalf("the paid page's charge section is not hidden, or lacks the note it hides:\n%s", c)
		}
		if rest := charge.ReplaceAllString(paid, ""); strings.Contains(rest, "se atualiza sozinha") {
			t.Fatal("the paid page still says it updates itself when the payment is confirmed")
		}
	})
}

func TestPaymentPageUnknownTokens(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	id, page := a.pageCharge(t, tok, 600)
	token := strings.TrimPrefix(page, "/pay/")
	flipped := []byte(token)
	flipped[len(flipped)-1] ^= 1
	for name, path := range map[string]string{
		"an unknown token":             "/pay/" + strings.Repeat("A", len(token)),
		"a token one character off":    "/pay/" + string(flipped),
		"a token too short":            "/pay/" + token[:10],
		"a token with a bad character": "/pay/" + token[:len(token)-1] + "!",
		"the transaction id":           "/pay/" + id,
	} {
		t.Run(name+" answers the same 404 page", func(t *testing.T) {
			t.Parallel()
			r := a.do("GET", path, "", nil)
			if r.status != http.StatusNotFound || !strings.Contains(string(r.body), "Cobrança não encontrada") ||
				!strings.Contains(string(r.body), `lang="pt-BR"`) || r.header.Get("Content-Security-Policy") == "" {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if s := a.do("GET", path+"/status", "", nil); s.status != http.StatusNotFound || s.json(t)["code"] != "not_found" {
				t.Fatalf("status route %d %s", s.status, s.body)
			}
		})
	}
	t.Run("the 404 page of a malformed and of an unknown token is the same page", func(t *testing.T) {
		t.Parallel()
		malformed := a.do("GET", "/pay/"+token[:10], "", nil).body
		unknown := a.do("GET", "/pay/"+strings.Repeat("A", len(token)), "", nil).body
		if string(malformed) != string(unknown) {
			t.Fatal("the two 404 pages differ")
		}
	})
}

func TestPaymentPageRateLimitPerAddress(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{PayRPS: 0.01, PayBurst: 3})
	_, tok := a.account()
	_, page := a.pageCharge(t, tok, 600)
	for i := range 3 {
		if r := a.do("GET", page, "", nil); r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, r.status)
		}
	}
	r := a.do("GET", page, "", nil)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "Muitas tentativas") {
		t.Fatalf("over the limit: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if s := a.do("GET", page+"/status", "", nil); s.status != http.StatusTooManyRequests || s.json(t)["code"] != "rate_limited" {
		t.Fatalf("status route over the limit: %d %s", s.status, s.body)
	}
	if a := a.do("GET", "/transaction", tok, nil); a.status != http.StatusOK {
		t.Fatalf("the API is limited with the page: %d", a.status)
	}
}

// pageStream reads the data lines and named events of a live channel.
type pageStream struct {
	res    *http.Response
	events chan string // "data:<json>" or "event:<name>"
	cancel context.CancelFunc
}

// openPageStream opens the live channel at path; a nil stream and the status when it is refused.
func (a *api) openPageStream(t *testing.T, path string) (*pageStream, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", a.srv.URL+path, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		return nil, res.StatusCode
	}
	s := &pageStream{res: res, events: make(chan string, 16), cancel: cancel}
	t.Cleanup(func() { cancel(); res.Body.Close() })
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				s.events <- "data:" + v
			} else if v, ok := strings.CutPrefix(line, "event: "); ok {
				s.events <- "event:" + v
			}
		}
	}()
	return s, res.StatusCode
}

// next waits at most d for the next data or event: "" when the stream closed, "timeout" when
// d passed.
func (s *pageStream) next(d time.Duration) string {
	select {
	case v, ok := <-s.events:
		if !ok {
			return ""
		}
		return v
	case <-time.After(d):
		return "timeout"
	}
}

// waitPageStreams waits (5 s at most) until n live channels are open.
func (a *api) waitPageStreams(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for a.payPage.OpenStreams() != n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := a.payPage.OpenStreams(); got != n {
		t.Fatalf("%d channels open, want %d", got, n)
	}
}

// Each subtest has an API of its own: the caps count every channel from this address.
func TestPaymentPageLiveChannel(t *testing.T) {
	t.Parallel()
	newLive := func(t *testing.T) (*api, *fakeClock, string) {
		clock := newFakeClock(time.Now().UTC())
		a := newAPI(t, apiSettings{PayStreamsPerCharge: 2, PayStreamsPerAddress: 3, Clock: clock})
		_, tok := a.account()
		return a, clock, tok
	}

	t.Run("a payment reaches an open channel within 2 s", func(t *testing.T) {
		t.Parallel()
		a, _, tok := newLive(t)
		id, page := a.pageCharge(t, tok, 600)
		s, status := a.openPageStream(t, page+"/events")
		if status != http.StatusOK || s.res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d", status)
		}
		if first := s.next(5 * time.Second); !strings.Contains(first, `"status":"PIX_QRCODE_GENERATED"`) {
			t.Fatalf("first message %q", first)
		}
		paidAt := time.Now()
		if r := a.do("POST", "/sandbox/transaction/"+id+"/pay", tok, nil); r.status != http.StatusOK {
			t.Fatal(r.status)
		}
		if got := s.next(3 * time.Second); !strings.Contains(got, `"status":"PAID"`) || time.Since(paidAt) > 2*time.Second {
			t.Fatalf("after the payment %q, %s later", got, time.Since(paidAt))
		}
		s.cancel()
		a.waitPageStreams(t, 0)
	})

	t.Run("channels are limited per charge and per address, and a closed one frees its place", func(t *testing.T) {
		t.Parallel()
		a, _, tok := newLive(t)
		_, page := a.pageCharge(t, tok, 600)
		x, _ := a.openPageStream(t, page+"/events")
		y, _ := a.openPageStream(t, page+"/events")
		x.next(5 * time.Second)
		y.next(5 * time.Second)
		if _, status := a.openPageStream(t, page+"/events"); status != http.StatusTooManyRequests {
			t.Fatalf("a third channel to one charge: %d", status)
		}
		_, other := a.pageCharge(t, tok, 600)
		z, _ := a.openPageStream(t, other+"/events")
		z.next(5 * time.Second)
		if _, status := a.openPageStream(t, other+"/events"); status != http.StatusTooManyRequests {
			t.Fatalf("a fourth channel from one address: %d", status)
		}
		for _, s := range []*pageStream{x, y, z} {
			s.cancel()
		}
		a.waitPageStreams(t, 0)
	})

	t.Run("an expired charge ends its channel, and its page says Expirado", func(t *testing.T) {
		t.Parallel()
		a, clock, tok := newLive(t)
		_, page := a.pageCharge(t, tok, 60)
		s, _ := a.openPageStream(t, page+"/events")
		s.next(5 * time.Second)
		clock.Advance(61 * time.Second)
		if html := string(a.do("GET", page, "", nil).body); !strings.Contains(html, ">Expirado<") {
			t.Fatal("the page of an expired charge does not say Expirado before the sweeper ran")
		}
		a.expire()
		var got []string
		for v := s.next(5 * time.Second); v != "" && v != "timeout"; v = s.next(5 * time.Second) {
			got = append(got, v)
		}
		if !slices.Contains(got, `data:{"status":"FAILED","expirationDate":`+jsonText(t, a.do("GET", page+"/status", "", nil).json(t)["expirationDate"])+`}`) ||
			len(got) < 2 || !slices.Equal(got[len(got)-2:], []string{"event:end", "data:{}"}) {
			t.Fatalf("the channel sent %q; want FAILED, then end, then close", got)
		}
		if html := string(a.do("GET", page, "", nil).body); !strings.Contains(html, ">Expirado<") {
			t.Fatal("the failed page does not say Expirado")
		}
	})
}

package psp

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestParseProblemReadsAPIPixProblems(t *testing.T) {
	raw := `{"type":"https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida","title":"Cobrança inválida.","status":400,
		"detail":"A requisição não respeita o _schema_.","correlationId":"abc","extra":{"vendor":true},
		"violacoes":[{"razao":"O campo cob.valor.original não respeita o _schema_.","propriedade":"cob.valor.original","valor":"12345678909"}]}`
	p := parseProblem([]byte(raw), nil)
	want := Problem{Type: "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida", Title: "Cobrança inválida.", Status: 400,
		Detail: "A requisição não respeita o _schema_.", Violations: []Violation{{Reason: "O campo cob.valor.original não respeita o _schema_.", Property: "cob.valor.original"}}}
	if p.String() != want.String() || p.Type != want.Type || p.Status != 400 {
		t.Fatalf("parsed %+v", p)
	}
	if strings.Contains(p.String(), "12345678909") {
		t.Fatal("a violation's value, which may be a document, was kept")
	}
	for name, body := range map[string]string{
		"HTML":            "<html>502</html>",
		"a JSON array":    `[1,2]`,
		"members of type": `{"title": 7, "status": "400"}`,
		"empty":           "",
	} {
		if p := parseProblem([]byte(body), nil); p.String() != "" {
			t.Errorf("%s: parsed %+v", name, p)
		}
	}
}

func TestParseProblemReadsAPSPsNameAndMessage(t *testing.T) {
	raw := `{"nome":"chave_invalida","mensagem":"A chave informada não existe\n s3cr3t"}`
	p := parseProblem([]byte(raw), []string{"s3cr3t"})
	if p.Name != "chave_invalida" || p.Message != "A chave informada não existe [redacted]" {
		t.Fatalf("parsed %+v", p)
	}
	if got := p.String(); got != "chave_invalida: A chave informada não existe [redacted]" {
		t.Fatalf("String() = %q", got)
	}
}

func TestCleanScrubsSecretsControlsAndLength(t *testing.T) {
	got := clean("token abc123\n\x1b[31mred\u202e and abc123 again "+strings.Repeat("é", 400), []string{"abc123", ""})
	if strings.Contains(got, "abc123") || strings.ContainsAny(got, "\n\x1b\u202e") || utf8.RuneCountInString(got) > maxText+1 {
		t.Fatalf("clean = %q", got)
	}
	if !strings.HasPrefix(got, "token [redacted] [31mred and [redacted] again éé") {
		t.Fatalf("clean = %q", got)
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for value, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0":                             0,
		"-5":                            0,
		"99999999999999999999":          0,
		"86400":                         time.Hour,
		"Sun, 22 Nov 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 22 Nov 2026 11:00:00 GMT": 0,
		"soon":                          0,
	} {
		h := http.Header{}
		if value != "" {
			h.Set("Retry-After", value)
		}
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %s, want %s", value, got, want)
		}
	}
}

func TestBackoffDoublesWithJitterUpToItsBound(t *testing.T) {
	for n := 1; n <= 40; n++ {
		whole := min(backoffBase<<min(n-1, 20), backoffMax)
		for range 50 {
			if d := backoff(n); d < whole/2 || d > whole {
				t.Fatalf("backoff(%d) = %s, want %s to %s", n, d, whole/2, whole)
			}
		}
	}
}

func TestTokensAreRenewedAFifthOfTheirLifeAhead(t *testing.T) {
	asked := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for lifetime, renew := range map[time.Duration]time.Duration{
		time.Second:     800 * time.Millisecond,
		time.Hour:       59 * time.Minute,
		0:               4 * time.Minute, // no expires_in: five minutes assumed
		2 * time.Minute: 96 * time.Second,
	} {
		if got := newToken("t", asked, lifetime).renewAt.Sub(asked); got != renew {
			t.Errorf("a token of %s is renewed after %s, want %s", lifetime, got, renew)
		}
	}
}

// FuzzParseProblem: whatever a PSP answers, the parser neither panics nor lets a control
// character, a secret or an unbounded text into an error.
func FuzzParseProblem(f *testing.F) {
	f.Add([]byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/NaoEncontrado","title":"Não Encontrado","status":404,"detail":"Entidade não encontrada."}`), "s3cret")
	f.Add([]byte(`{"title":"s3cret\u0000","violacoes":[{"razao":"x","propriedade":"y"},{}]}`), "s3cret")
	f.Add([]byte("\xff\xfe"), "")
	f.Fuzz(func(t *testing.T, raw []byte, secret string) {
		p := parseProblem(raw, []string{secret})
		for _, field := range append([]string{p.Type, p.Title, p.Detail}, violationTexts(p)...) {
			if !utf8.ValidString(field) || utf8.RuneCountInString(field) > maxText+1 {
				t.Fatalf("field %q", field)
			}
			if strings.IndexFunc(field, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0 {
				t.Fatalf("control character in %q", field)
			}
			if credentialLike(secret) && strings.Contains(field, secret) {
				t.Fatalf("secret %q in %q", secret, field)
			}
		}
		if len(p.Violations) > maxViolations {
			t.Fatalf("%d violations", len(p.Violations))
		}
	})
}

// credentialLike is a secret as tokens and encoded credentials are: at least 4 characters of
// an alphabet that neither the "[redacted]" marker nor the cleaning of spaces can complete.
func credentialLike(s string) bool {
	return len(s) >= 4 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_.~-") == ""
}

func violationTexts(p Problem) []string {
	var out []string
	for _, v := range p.Violations {
		out = append(out, v.Reason, v.Property)
	}
	return out
}

// FuzzDecodeAnswer: a success answer of any shape and label decodes or is an error, never a
// panic.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add("application/json", []byte(`{"txid":"abc","valor":{"original":"1.00"},"loc":{"id":7}}`))
	f.Add("application/problem+json; charset=utf-8", []byte(`{"txid":1}`))
	f.Add("text/html", []byte(`<html>`))
	f.Add("", []byte(``))
	f.Fuzz(func(t *testing.T, contentType string, raw []byte) {
		var out struct {
			TxID  string `json:"txid"`
			Valor struct {
				Original string `json:"original"`
			} `json:"valor"`
			Loc struct {
				ID int64 `json:"id"`
			} `json:"loc"`
		}
		err := decodeAnswer(contentType, raw, &out)
		if err == nil && !isJSON(contentType) {
			t.Fatalf("%q accepted as JSON", contentType)
		}
		if err != nil && strings.IndexFunc(err.Error(), unicode.IsControl) >= 0 {
			t.Fatalf("error %q holds a control character", err)
		}
	})
}

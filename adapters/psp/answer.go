package psp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what an answer may put into an error.
const (
	maxText       = 300 // runes of a title, a detail, a reason
	maxViolations = 10
)

// errTooLarge is an answer longer than the configured maximum.
var errTooLarge = errors.New("the answer is larger than allowed")

// readBody reads at most limit bytes of r; a longer body is errTooLarge.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return raw, err
	}
	if int64(len(raw)) > limit {
		return raw[:limit], fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
	}
	return raw, nil
}

// isJSON tells whether a Content-Type is JSON (application/json, application/problem+json and
// the like).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// decodeAnswer decodes a successful answer into out. Members out does not know are ignored, as
// API Pix asks of its clients.
func decodeAnswer(contentType string, raw []byte, out any) error {
	if !isJSON(contentType) {
		if contentType == "" {
			contentType = "none"
		}
		return fmt.Errorf("the answer's content type is %s, not JSON", clean(contentType, nil))
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return errors.New("the answer is empty")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return nil
}

// parseProblem reads an RFC 7807 answer (or a PSP's {"nome", "mensagem"}) whatever its content type (PSPs label them
// application/json or application/problem+json); anything else is a zero Problem. Every text is
// scrubbed of secrets and control characters, and cut short.
func parseProblem(raw []byte, secrets []string) Problem {
	var p Problem
	if json.Unmarshal(raw, &p) != nil {
		return Problem{}
	}
	p.Type = clean(p.Type, secrets)
	p.Title = clean(p.Title, secrets)
	p.Detail = clean(p.Detail, secrets)
	p.Name = clean(p.Name, secrets)
	p.Message = clean(p.Message, secrets)
	if p.Status < 100 || p.Status > 599 {
		p.Status = 0
	}
	var vs []Violation
	for _, v := range p.Violations {
		if len(vs) == maxViolations {
			break
		}
		v = Violation{Reason: clean(v.Reason, secrets), Property: clean(v.Property, secrets)}
		if v != (Violation{}) {
			vs = append(vs, v)
		}
	}
	p.Violations = vs
	return p
}

// CleanText makes a text the PSP answered safe to keep, show or put in an error, as clean does
// with no secret: the adapters built on the transport clean the texts of their answers with it.
func CleanText(s string) string { return clean(s, nil) }

// clean makes a text from the PSP safe for an error: each secret replaced, control and format
// characters (a bidi override could disguise a log line) and runs of spaces made one space, invalid UTF-8 replaced, at most maxText runes.
func clean(s string, secrets []string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }), " ")
	if utf8.RuneCountInString(s) > maxText {
		s = string([]rune(s)[:maxText]) + "…"
	}
	return s
}

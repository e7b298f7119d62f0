package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	validation "github.com/go-ozzo/ozzo-validation/v4"
	"golang.org/x/net/idna"

	"github.com/pixgate/pixgate/domain"
)

// The ozzo-validation rules of the API. Each works on the pointer fields of a request
// (nil means absent and passes: presence is the job of required) and fails with a
// validation.Error whose code is one of the API's field-level codes (docs/API.md, Errors).

func fieldErr(code, format string, args ...any) validation.Error {
	return validation.NewError(code, fmt.Sprintf(format, args...))
}

// required fails when the field was absent or null.
var required = validation.NotNil.ErrorObject(validation.NewError("required", "is required"))

func deref[T any](v any) (T, bool) {
	p, ok := v.(*T)
	if !ok || p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

// length counts characters (runes), not bytes.
func length(min, max int) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		n := utf8.RuneCountInString(s)
		if n < min {
			return fieldErr("too_short", "must have at least %d characters", min)
		}
		if n > max {
			return fieldErr("too_long", "must have at most %d characters", max)
		}
		return nil
	})
}

func intRange(min, max int64) validation.Rule {
	return validation.By(func(v any) error {
		n, ok := deref[int64](v)
		if ok && (n < min || n > max) {
			return fieldErr("out_of_range", "must be between %d and %d", min, max)
		}
		return nil
	})
}

var cents = intRange(int64(domain.MinAmount), int64(domain.MaxAmount))

func oneOf(values ...string) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		for _, x := range values {
			if s == x {
				return nil
			}
		}
		return fieldErr("invalid_enum", "must be one of %s", strings.Join(values, ", "))
	})
}

// parsed applies a domain parser; its error becomes code with message.
func parsed(parse func(string) error, code, message string) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if ok && parse(s) != nil {
			return validation.NewError(code, message)
		}
		return nil
	})
}

// into applies a domain parser to a string field, failing with code and message, and keeps
// what it parsed in *dst: the rule that checks a field also maps it, so nothing after
// validation parses again.
func into[T any](dst *T, parse func(string) (T, error), code, message string) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		got, err := parse(s)
		if err != nil {
			return validation.NewError(code, message)
		}
		*dst = got
		return nil
	})
}

// eachInto parses every element of a slice into the matching element of out (as long as in),
// reporting each element's field errors under its index, as ozzo-validation does for a slice
// of Validatable values.
func eachInto[In, Out any](in []In, out []Out, parse func(*In, *Out) error) validation.Rule {
	return validation.By(func(any) error {
		errs := validation.Errors{}
		for i := range in {
			if err := parse(&in[i], &out[i]); err != nil {
				errs[strconv.Itoa(i)] = err
			}
		}
		if len(errs) > 0 {
			return errs
		}
		return nil
	})
}

// documentInto checks a CPF or CNPJ and keeps it in *dst.
func documentInto(dst *domain.Document) validation.Rule {
	return into(dst, domain.ParseDocument, "invalid_document", "must be a valid CPF or CNPJ")
}

// nested parses a nested object that was present (a nil one passes: presence is the job of
// required); parse reports the object's field errors under the field's own name.
func nested[T any](v *T, parse func(*T) error) validation.Rule {
	return validation.By(func(any) error {
		if v == nil {
			return nil
		}
		return parse(v)
	})
}

const (
	landlineMessage = "must be a Brazilian landline: area code and 8 digits starting 2 to 5"
	mobileMessage   = "must be a Brazilian mobile number: area code and 9 digits starting with 9"
	zipMessage      = "must be a CEP: NNNNN-NNN or NNNNNNNN"
)

var (
	documentRule = parsed(func(s string) error { _, err := domain.ParseDocument(s); return err },
		"invalid_document", "must be a valid CPF or CNPJ")
	emailRule = parsed(func(s string) error { _, err := domain.ParseEmail(s); return err },
		"invalid_format", "must be a valid e-mail address")
	ipRule = parsed(func(s string) error {
		if net.ParseIP(s) == nil {
			return errors.New("bad ip")
		}
		return nil
	}, "invalid_format", "must be an IPv4 or IPv6 address")
	uuidV4Rule = parsed(func(s string) error {
		if !domain.IsUUIDv4(s) {
			return errors.New("bad uuid")
		}
		return nil
	}, "invalid_format", "must be a UUID v4")
	digitsRule = parsed(func(s string) error {
		for _, r := range s {
			if r < '0' || r > '9' {
				return errors.New("not digits")
			}
		}
		return nil
	}, "invalid_format", "must contain digits only")
)

// personNameRule: 2 to 150 letters of any script with their combining marks, digits, spaces
// and . ' - ("international alphanumeric").
var personNameRule = validation.By(func(v any) error {
	s, ok := deref[string](v)
	if !ok {
		return nil
	}
	if err := length(2, 150).Validate(v); err != nil {
		return err
	}
	if !isInternationalName(s) {
		return validation.NewError("invalid_format", "may contain letters, digits, spaces and . ' - only")
	}
	return nil
})

func isInternationalName(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Mc, r), unicode.IsDigit(r):
		case r == ' ', r == '.', r == '\'', r == '-':
		default:
			return false
		}
	}
	return true
}

// webhookURLRule: an absolute https URL of at most 2048 characters, no fragment, no user info,
// a DNS host with a dot and an alphabetic top-level domain; a query string is allowed.
var webhookURLRule = validation.By(func(v any) error {
	s, ok := deref[string](v)
	if !ok {
		return nil
	}
	if len(s) > 2048 {
		return validation.NewError("too_long", "must have at most 2048 characters")
	}
	if err := checkWebhookURL(s); err != nil {
		return validation.NewError("invalid_format", err.Error())
	}
	return nil
})

func checkWebhookURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return errors.New("must be an absolute https URL")
	case u.Scheme != "https":
		return errors.New("must use https")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("must not have a fragment")
	case u.User != nil:
		return errors.New("must not carry user information")
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil || strings.HasPrefix(host, "[") {
		return errors.New("host must be a DNS name, not an IP address")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errors.New("port must be 1 to 65535")
		}
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(labels) < 2 {
		return errors.New("host must have a top-level domain")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("host is not a valid DNS name")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return errors.New("host is not a valid DNS name")
			}
		}
	}
	if _, err := idna.Lookup.ToASCII(host); err != nil {
		return errors.New("host is not a valid DNS name") // an xn-- label that is not punycode
	}
	tld := labels[len(labels)-1]
	if len(tld) > 4 && strings.EqualFold(tld[:4], "xn--") {
		// An internationalised top-level domain (.рф is xn--p1ai): letters of its script.
		u, err := idna.Lookup.ToUnicode(tld)
		if err != nil || !isLetters(u) {
			return errors.New("top-level domain must be alphabetic")
		}
		return nil
	}
	if len(tld) < 2 || !isLetters(tld) {
		return errors.New("top-level domain must be alphabetic")
	}
	return nil
}

// isLetters: letters of any script (with their combining marks) and nothing else.
func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
			return false
		}
	}
	return s != ""
}

// normalizeWebhookURL writes a webhook URL's internationalised host name in its ASCII
// (punycode) form, the one DNS and certificates use, so that https://loja.example.рф/hook is
// stored, shown and called as https://loja.example.xn--p1ai/hook. Anything it cannot read
// it leaves as sent, for webhookURLRule to judge.
func normalizeWebhookURL(p *string) {
	if p == nil || isASCII(*p) {
		return
	}
	u, err := url.Parse(*p)
	if err != nil || u.Host == "" || isASCII(u.Hostname()) {
		return
	}
	host, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		return
	}
	if port := u.Port(); port != "" {
		host = net.JoinHostPort(host, port)
	}
	u.Host = host
	*p = u.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// fieldErrors flattens ozzo-validation's nested errors into the API's field paths:
// dotted, with [i] for slice elements.
func fieldErrors(prefix string, err error) []FieldError {
	if err == nil {
		return nil
	}
	var errs validation.Errors
	if errors.As(err, &errs) {
		var out []FieldError
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := joinPath(prefix, k)
			if _, numErr := strconv.Atoi(k); numErr == nil {
				path = prefix + "[" + k + "]"
			}
			out = append(out, fieldErrors(path, errs[k])...)
		}
		return out
	}
	var ve validation.Error
	if errors.As(err, &ve) {
		return []FieldError{{Field: prefix, Code: ve.Code(), Message: ve.Message()}}
	}
	// An ozzo InternalError is a bug in a rule; it must surface as one, not as bad input.
	panic(fmt.Sprintf("httpapi: validation of %q failed internally: %v", prefix, err))
}

// mergeFieldErrors drops validation errors of fields that already failed decoding (and of
// what lies inside them), so one field is reported once, with the decoding error.
func mergeFieldErrors(decoding, validating []FieldError) []FieldError {
	bad := make(map[string]bool, len(decoding))
	for _, e := range decoding {
		bad[e.Field] = true
	}
	out := decoding
	for _, e := range validating {
		if !bad[e.Field] && !underBad(e.Field, bad) {
			out = append(out, e)
		}
	}
	return out
}

// underBad tells whether field lies inside a field that failed decoding ("items[1].title"
// inside "items[1]"): what is inside a value of the wrong type was never read.
func underBad(field string, bad map[string]bool) bool {
	for i := len(field) - 1; i > 0; i-- {
		if (field[i] == '.' || field[i] == '[') && bad[field[:i]] {
			return true
		}
	}
	return false
}

package domain

import (
	"errors"
	"strings"
)

// DocumentKind is the kind of a Brazilian tax document.
type DocumentKind string

const (
	// CPF identifies an individual: 11 digits, the last two check digits.
	CPF DocumentKind = "CPF"
	// CNPJ identifies a legal entity: 12 characters [0-9A-Z] (alphanumeric since July 2026)
	// and 2 numeric check digits.
	CNPJ DocumentKind = "CNPJ"
)

// ErrInvalidDocument reports a value that is neither a valid CPF nor a valid CNPJ.
var ErrInvalidDocument = errors.New("must be a valid CPF or CNPJ")

// Document is a validated, normalised CPF or CNPJ: punctuation removed, letters upper case.
type Document struct {
	kind  DocumentKind
	value string
}

// ParseDocument accepts a CPF or CNPJ with or without its usual punctuation
// ("123.456.789-09", "12.345.678/0001-95", "12ABC34501DE35") and checks its check digits.
// Strings made of one repeated character are refused even when their digits check.
func ParseDocument(s string) (Document, error) {
	if len(s) > 32 {
		return Document{}, ErrInvalidDocument
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r == '.' || r == '-' || r == '/' || r == ' ':
		default:
			return Document{}, ErrInvalidDocument
		}
	}
	v := b.String()
	switch {
	case len(v) == 11 && validCPF(v):
		return Document{kind: CPF, value: v}, nil
	case len(v) == 14 && validCNPJ(v):
		return Document{kind: CNPJ, value: v}, nil
	}
	return Document{}, ErrInvalidDocument
}

// MustParseDocument is ParseDocument for values known to be valid (tests, fixtures). It panics
// on an invalid document.
func MustParseDocument(s string) Document {
	d, err := ParseDocument(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Kind is CPF or CNPJ; empty for the zero Document.
func (d Document) Kind() DocumentKind { return d.kind }

// Value is the normalised document: digits (and CNPJ letters), no punctuation.
func (d Document) Value() string { return d.value }

// IsZero tells whether d holds no document.
func (d Document) IsZero() bool { return d.value == "" }

// Masked is the document as responses show it: a CPF keeps only its digits 4 to 9
// ("***.456.789-**"); a CNPJ, a public registry number, is shown in full and punctuated.
func (d Document) Masked() string {
	v := d.value
	switch d.kind {
	case CPF:
		return "***." + v[3:6] + "." + v[6:9] + "-**"
	case CNPJ:
		return v[0:2] + "." + v[2:5] + "." + v[5:8] + "/" + v[8:12] + "-" + v[12:14]
	}
	return ""
}

func allSame(s string) bool {
	return strings.Count(s, s[:1]) == len(s)
}

func validCPF(v string) bool {
	for i := 0; i < 11; i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	if allSame(v) {
		return false
	}
	check := func(n int) byte {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(v[i]-'0') * (n + 1 - i)
		}
		r := sum % 11
		if r < 2 {
			return '0'
		}
		return byte('0' + 11 - r)
	}
	return check(9) == v[9] && check(10) == v[10]
}

// validCNPJ checks both the numeric and the alphanumeric CNPJ: each of the first 12 characters
// is worth its ASCII code minus 48, weighted 2..9 from the right, modulo 11.
func validCNPJ(v string) bool {
	for i := 0; i < 12; i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	if v[12] < '0' || v[12] > '9' || v[13] < '0' || v[13] > '9' || allSame(v) {
		return false
	}
	check := func(n int) byte {
		sum, w := 0, 2
		for i := n - 1; i >= 0; i-- {
			sum += int(v[i]-'0') * w
			if w++; w > 9 {
				w = 2
			}
		}
		r := sum % 11
		if r < 2 {
			return '0'
		}
		return byte('0' + 11 - r)
	}
	return check(12) == v[12] && check(13) == v[13]
}

package domain

import (
	"errors"
	"net/mail"
	"strings"
	"time"
)

// Errors of the contact parsers; the HTTP adapter turns them into field errors.
var (
	ErrInvalidPhone     = errors.New("invalid phone number")
	ErrInvalidEmail     = errors.New("invalid e-mail address")
	ErrInvalidZipCode   = errors.New("invalid postal code")
	ErrInvalidBirthdate = errors.New("invalid birthdate")
)

// phoneDigits strips an optional +55 and the usual punctuation and returns the national digits.
func phoneDigits(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 32 {
		return "", false
	}
	s = strings.TrimPrefix(s, "+55")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return "", false
		}
	}
	return b.String(), true
}

// validAreaCode accepts the two-digit area codes 11 to 99 (the area codes of Brazil's numbering plan).
func validAreaCode(d string) bool {
	n := int(d[0]-'0')*10 + int(d[1]-'0')
	return d[0] >= '0' && d[0] <= '9' && d[1] >= '0' && d[1] <= '9' && n >= 11 && n <= 99
}

// ParseLandline reads a Brazilian fixed-line number: area code 11 to 99 and 8 digits starting
// with 2 to 5, with an optional +55 and punctuation. It returns the 10 national digits.
func ParseLandline(s string) (string, error) {
	d, ok := phoneDigits(s)
	if !ok || len(d) != 10 || !validAreaCode(d) || d[2] < '2' || d[2] > '5' {
		return "", ErrInvalidPhone
	}
	return d, nil
}

// ParseMobile reads a Brazilian mobile number: area code 11 to 99 and 9 digits starting with
// 9, with an optional +55 and punctuation. It returns the 11 national digits.
func ParseMobile(s string) (string, error) {
	d, ok := phoneDigits(s)
	if !ok || len(d) != 11 || !validAreaCode(d) || d[2] != '9' {
		return "", ErrInvalidPhone
	}
	return d, nil
}

// PhoneDigits returns the digits of s (any punctuation and a leading +55 dropped), for
// matching the customerPhone filter against stored national digits.
func PhoneDigits(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+55")
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseEmail accepts an RFC 5322 addr-spec of at most 254 characters whose domain is a DNS
// name with a dot. No display name, no angle brackets, no DNS look-up.
func ParseEmail(s string) (string, error) {
	if len(s) == 0 || len(s) > 254 || strings.TrimSpace(s) != s {
		return "", ErrInvalidEmail
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", ErrInvalidEmail
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", ErrInvalidEmail
	}
	return s, nil
}

// ParseZipCode accepts a CEP as NNNNN-NNN or NNNNNNNN and returns its 8 digits.
func ParseZipCode(s string) (string, error) {
	if len(s) == 9 && s[5] == '-' {
		s = s[:5] + s[6:]
	}
	if len(s) != 8 {
		return "", ErrInvalidZipCode
	}
	for i := 0; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", ErrInvalidZipCode
		}
	}
	return s, nil
}

// ParseBirthdate accepts YYYY-MM-DD, a real calendar date not after today (UTC).
func ParseBirthdate(s string, now time.Time) (string, error) {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Format(time.DateOnly) != s || d.After(now.UTC()) {
		return "", ErrInvalidBirthdate
	}
	return s, nil
}

// IsUUID tells whether s is a UUID in its canonical 8-4-4-4-12 hexadecimal form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// IsUUIDv4 tells whether s is a canonical UUID of version 4 and the RFC 4122 variant.
func IsUUIDv4(s string) bool {
	if !IsUUID(s) || s[14] != '4' {
		return false
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
		return true
	}
	return false
}

package memory

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// matcher applies every field of a filter but the account and the dates, which List applies
// by choosing the part of the account's sorted list it scans.
type matcher struct {
	f                *ports.TransactionFilter
	email, doc       uint32
	name, codes      uint64
	customer, record bool // whether some field needs the customer, or the record at all
}

func newMatcher(f *ports.TransactionFilter) *matcher {
	m := &matcher{f: f, email: foldHash(f.CustomerEmail), doc: foldHash(f.CustomerDocument), name: gramMask(f.CustomerName),
		codes: codeMask(f.CustomerPhone, f.ExternalCode, f.EndToEnd, f.EndToEndRefund)}
	m.customer = f.CustomerEmail != "" || f.CustomerName != "" || f.CustomerDocument != "" || f.CustomerPhone != ""
	m.record = m.customer || f.ID != "" || f.ExternalCode != "" || f.EndToEnd != "" || f.EndToEndRefund != ""
	return m
}

// matches tests the row's own fields first, so that most rows are refused without reading
// their record.
func (m *matcher) matches(row *txRow) bool {
	f := m.f
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, row.status) ||
		len(f.PaymentMethods) > 0 && !slices.Contains(f.PaymentMethods, row.method) ||
		f.MinAmount != nil && row.amount < *f.MinAmount || f.MaxAmount != nil && row.amount > *f.MaxAmount ||
		f.CustomerEmail != "" && row.email != m.email || f.CustomerDocument != "" && row.doc != m.doc ||
		row.name&m.name != m.name || row.codes&m.codes != m.codes {
		return false
	}
	if !m.record {
		return true
	}
	r := row.rec
	if f.ID != "" && r.ID != f.ID ||
		f.ExternalCode != "" && r.Order.ExternalCode != f.ExternalCode ||
		f.EndToEnd != "" && r.EndToEnd != f.EndToEnd ||
		f.EndToEndRefund != "" && r.EndToEndRefund != f.EndToEndRefund {
		return false
	}
	if !m.customer {
		return true
	}
	c := r.Order.Customer
	return c != nil &&
		(f.CustomerDocument == "" || c.Document.Value() == f.CustomerDocument) &&
		(f.CustomerPhone == "" || c.MobilePhone == f.CustomerPhone || c.Landline == f.CustomerPhone) &&
		(f.CustomerEmail == "" || strings.EqualFold(c.Email, f.CustomerEmail)) &&
		(f.CustomerName == "" || containsFold(c.Name, f.CustomerName))
}

// foldHash is an FNV-1a hash of s under simple case folding, so that strings
// strings.EqualFold calls equal hash alike. Equal hashes are a necessary condition, never a
// sufficient one: matches compares the strings after.
func foldHash(s string) uint32 {
	h := uint32(2166136261)
	for _, r := range s {
		h = (h ^ uint32(foldRune(r))) * 16777619
	}
	return h
}

// gramMask sets one of 64 bits for every folded character of s and one for every pair of
// consecutive ones. When sub occurs in s whatever the case, all of sub's characters and pairs
// occur in s, so gramMask(sub) has no bit that gramMask(s) lacks: the name filter refuses most
// names on their mask alone, without reading them. The empty string sets no bit.
func gramMask(s string) uint64 {
	var mask uint64
	prev := rune(-1)
	for _, r := range s {
		r = foldRune(r)
		mask |= 1 << (uint32(r) * 0x85EBCA6B >> 26)
		if prev >= 0 {
			mask |= 1 << ((uint32(prev)<<16 ^ uint32(r)) * 0x9E3779B1 >> 26)
		}
		prev = r
	}
	return mask
}

// codeMask sets two of 64 bits for each non-empty value, from its FNV-1a hash. A row's mask
// holds the bits of its phones, external code and end-to-end ids; a filter on any of them
// needs its value's bits in the row's mask before the record is read. The empty string sets
// no bit.
func codeMask(values ...string) uint64 {
	var mask uint64
	for _, v := range values {
		if v == "" {
			continue
		}
		h := uint32(2166136261)
		for i := 0; i < len(v); i++ {
			h = (h ^ uint32(v[i])) * 16777619
		}
		mask |= 1<<(h&63) | 1<<(h>>6&63)
	}
	return mask
}

// foldRune is the smallest rune of r's simple folding orbit: runes equal under
// strings.EqualFold fold to the same rune.
func foldRune(r rune) rune {
	switch {
	case 'a' <= r && r <= 'z':
		return r - ('a' - 'A') // the smallest of {A, a}, and of {K, k, K} and {S, s, ſ} too
	case r < utf8.RuneSelf:
		return r
	}
	return foldMin(r)
}

// foldMin is the smallest rune of r's simple folding orbit.
func foldMin(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// filterFields mirrors ports.TransactionFilter. Converting one into the other compiles only
// while their fields are the same, so a field added to the port stops the build here until
// matches and unfiltered know it.
type filterFields struct {
	AccountID        string
	StartDate        *time.Time
	EndDate          *time.Time
	Statuses         []domain.TransactionStatus
	PaymentMethods   []domain.PaymentMethod
	CustomerEmail    string
	CustomerName     string
	CustomerDocument string
	CustomerPhone    string
	ID               string
	EndToEnd         string
	EndToEndRefund   string
	ExternalCode     string
	MinAmount        *domain.Cents
	MaxAmount        *domain.Cents
}

var _ = ports.TransactionFilter(filterFields{})

// unfiltered tells whether f selects on nothing but the account and the dates.
func unfiltered(f *ports.TransactionFilter) bool {
	return len(f.Statuses) == 0 && len(f.PaymentMethods) == 0 && f.MinAmount == nil && f.MaxAmount == nil &&
		f.ID == "" && f.ExternalCode == "" && f.EndToEnd == "" && f.EndToEndRefund == "" &&
		f.CustomerEmail == "" && f.CustomerName == "" && f.CustomerDocument == "" && f.CustomerPhone == ""
}

// containsFold tells whether sub occurs in s under Unicode simple case folding, as
// strings.EqualFold compares, without allocating: List calls it for every transaction it scans.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	for i := 0; i < len(s); {
		if hasPrefixFold(s[i:], sub) {
			return true
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		if a, b := s[0], prefix[0]; a < utf8.RuneSelf && b < utf8.RuneSelf {
			if a != b && lowerASCII(a) != lowerASCII(b) {
				return false
			}
			s, prefix = s[1:], prefix[1:]
			continue
		}
		a, n := utf8.DecodeRuneInString(s)
		b, m := utf8.DecodeRuneInString(prefix)
		if !equalFoldRune(a, b) {
			return false
		}
		s, prefix = s[n:], prefix[m:]
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFoldRune walks a's case-folding orbit looking for b, as strings.EqualFold does.
func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

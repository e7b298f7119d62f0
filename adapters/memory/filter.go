package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// matches tells whether r passes every field of f but the account and the dates, which List
// applies by choosing the part of the account's sorted list it scans. The cheap comparisons
// come first: most transactions fail one of them.
func matches(f *ports.TransactionFilter, r *domain.TransactionRecord) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, r.Status) {
		return false
	}
	if f.MinAmount != nil && r.Order.Amount < *f.MinAmount || f.MaxAmount != nil && r.Order.Amount > *f.MaxAmount {
		return false
	}
	if len(f.PaymentMethods) > 0 && !slices.Contains(f.PaymentMethods, r.Order.PaymentMethod) {
		return false
	}
	if f.ID != "" && r.ID != f.ID ||
		f.ExternalCode != "" && r.Order.ExternalCode != f.ExternalCode ||
		f.EndToEnd != "" && r.EndToEnd != f.EndToEnd ||
		f.EndToEndRefund != "" && r.EndToEndRefund != f.EndToEndRefund {
		return false
	}
	if f.CustomerEmail == "" && f.CustomerName == "" && f.CustomerDocument == "" && f.CustomerPhone == "" {
		return true
	}
	c := r.Order.Customer
	if c == nil {
		return false
	}
	return (f.CustomerDocument == "" || c.Document.Value() == f.CustomerDocument) &&
		(f.CustomerPhone == "" || c.MobilePhone == f.CustomerPhone || c.Landline == f.CustomerPhone) &&
		(f.CustomerEmail == "" || strings.EqualFold(c.Email, f.CustomerEmail)) &&
		(f.CustomerName == "" || containsFold(c.Name, f.CustomerName))
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

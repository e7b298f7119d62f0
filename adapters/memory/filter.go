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

// matches applies every field of a filter but the account and the dates, which List applies
// by choosing the part of the account's sorted list it scans. It tests the row's copies first,
// so that most rows are refused without reading their record.
func matches(f *ports.TransactionFilter, row *txRow) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, row.status) ||
		f.MinAmount != nil && row.amount < *f.MinAmount || f.MaxAmount != nil && row.amount > *f.MaxAmount ||
		f.CustomerEmail != "" && !strings.EqualFold(row.email, f.CustomerEmail) ||
		f.CustomerName != "" && !containsFold(row.name, f.CustomerName) {
		return false
	}
	r := row.rec
	if len(f.PaymentMethods) > 0 && !slices.Contains(f.PaymentMethods, r.Order.PaymentMethod) ||
		f.ID != "" && r.ID != f.ID ||
		f.ExternalCode != "" && r.Order.ExternalCode != f.ExternalCode ||
		f.EndToEnd != "" && r.EndToEnd != f.EndToEnd ||
		f.EndToEndRefund != "" && r.EndToEndRefund != f.EndToEndRefund {
		return false
	}
	if f.CustomerEmail == "" && f.CustomerName == "" && f.CustomerDocument == "" && f.CustomerPhone == "" {
		return true
	}
	c := r.Order.Customer
	return c != nil &&
		(f.CustomerDocument == "" || c.Document.Value() == f.CustomerDocument) &&
		(f.CustomerPhone == "" || c.MobilePhone == f.CustomerPhone || c.Landline == f.CustomerPhone)
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

package httpapi

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	validation "github.com/go-ozzo/ozzo-validation/v4"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Paging of GET /transaction (docs/API.md, Listing).
const (
	defaultPerPage = 20
	maxPerPage     = 100
)

// listQuery holds the query parameters of GET /transaction as sent, before validation.
type listQuery struct {
	Page             *string  `json:"page"`
	PerPage          *string  `json:"perPage"`
	StartDate        *string  `json:"startDate"`
	EndDate          *string  `json:"endDate"`
	Status           []string `json:"status"`
	CustomerEmail    *string  `json:"customerEmail"`
	CustomerName     *string  `json:"customerName"`
	CustomerDocument *string  `json:"customerDocument"`
	CustomerPhone    *string  `json:"customerPhone"`
	ID               *string  `json:"id"`
	EndToEnd         *string  `json:"endToEnd"`
	EndToEndRefund   *string  `json:"endToEndRefund"`
	ExternalCode     *string  `json:"externalCode"`
	PaymentMethod    []string `json:"paymentMethod"`
	MinAmount        *string  `json:"minAmount"`
	MaxAmount        *string  `json:"maxAmount"`
}

// repeatable names the parameters sent as repeated values; every other one at most once.
var repeatable = map[string]bool{"status": true, "paymentMethod": true}

func parseIntParam(s string) (int64, bool) {
	if !isIntegerLiteral(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// intInto checks an integer parameter within [min, max] and keeps it in *dst (left nil when
// the parameter is absent).
func intInto(dst **int64, min, max int64) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		n, ok := parseIntParam(s)
		if !ok {
			return validation.NewError("invalid_type", "must be an integer")
		}
		if n < min || n > max {
			return fieldErr("out_of_range", "must be between %d and %d", min, max)
		}
		*dst = &n
		return nil
	})
}

// dateTimeInto checks an RFC 3339 date-time with a time and an offset and keeps it in *dst
// (left nil when the parameter is absent).
func dateTimeInto(dst **time.Time) validation.Rule {
	return validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return validation.NewError("invalid_format", "must be an RFC 3339 date-time with a time and an offset")
		}
		*dst = &t
		return nil
	})
}

// readQuery copies each parameter named in single into its field and each named in lists into
// its slice; a repeated single parameter, or one of neither kind, is a field error (of at most
// maxFieldErrors). what names the resource in the unknown parameter's message.
func readQuery(q url.Values, single map[string]**string, lists map[string]*[]string, what string) []FieldError {
	var errs []FieldError
	for name, values := range q {
		if len(errs) >= maxFieldErrors {
			break
		}
		switch {
		case lists[name] != nil:
			*lists[name] = values
		case single[name] != nil:
			if len(values) > 1 {
				errs = append(errs, FieldError{Field: name, Code: "duplicate_value", Message: "must be given at most once"})
				continue
			}
			v := values[0]
			*single[name] = &v
		default:
			errs = append(errs, FieldError{Field: name, Code: "unknown_field", Message: "is not a parameter of " + what})
		}
	}
	return errs
}

func enumList(values ...string) validation.Rule {
	return validation.By(func(v any) error {
		list, _ := v.([]string)
		seen := map[string]bool{}
		for _, s := range list {
			ok := false
			for _, x := range values {
				ok = ok || s == x
			}
			if !ok {
				return fieldErr("invalid_enum", "each value must be one of %s", strings.Join(values, ", "))
			}
			if seen[s] {
				return fieldErr("duplicate_value", "%s is given more than once", s)
			}
			seen[s] = true
		}
		return nil
	})
}

var searchNameRule = validation.By(func(v any) error {
	s, ok := deref[string](v)
	if !ok {
		return nil
	}
	if err := length(1, 150).Validate(v); err != nil {
		return err
	}
	if !isInternationalName(s) {
		return validation.NewError("invalid_format", "may contain letters, digits, spaces and . ' - only")
	}
	return nil
})

func transactionStatusNames() []string {
	var out []string
	for _, s := range domain.TransactionStatuses() {
		out = append(out, string(s))
	}
	return out
}

// parseListQuery reads and validates the query string of GET /transaction; every broken rule
// is reported, unknown parameters included.
func parseListQuery(q url.Values) (ports.TransactionFilter, ports.Page, []FieldError) {
	var lq listQuery
	errs := readQuery(q, map[string]**string{
		"page": &lq.Page, "perPage": &lq.PerPage, "startDate": &lq.StartDate, "endDate": &lq.EndDate,
		"customerEmail": &lq.CustomerEmail, "customerName": &lq.CustomerName,
		"customerDocument": &lq.CustomerDocument, "customerPhone": &lq.CustomerPhone, "id": &lq.ID,
		"endToEnd": &lq.EndToEnd, "endToEndRefund": &lq.EndToEndRefund, "externalCode": &lq.ExternalCode,
		"minAmount": &lq.MinAmount, "maxAmount": &lq.MaxAmount,
	}, map[string]*[]string{"status": &lq.Status, "paymentMethod": &lq.PaymentMethod}, "this list")

	f := ports.TransactionFilter{
		CustomerName: str(lq.CustomerName), ID: strings.ToLower(str(lq.ID)), EndToEnd: str(lq.EndToEnd),
		EndToEndRefund: str(lq.EndToEndRefund), ExternalCode: str(lq.ExternalCode),
	}
	var number, size, minAmount, maxAmount *int64
	var doc domain.Document
	err := validation.ValidateStruct(&lq,
		validation.Field(&lq.Page, intInto(&number, 1, 1<<31-1)),
		validation.Field(&lq.PerPage, intInto(&size, 1, maxPerPage)),
		validation.Field(&lq.StartDate, dateTimeInto(&f.StartDate)),
		validation.Field(&lq.EndDate, dateTimeInto(&f.EndDate)),
		validation.Field(&lq.Status, enumList(transactionStatusNames()...)),
		validation.Field(&lq.CustomerEmail, emailRule),
		validation.Field(&lq.CustomerName, searchNameRule),
		validation.Field(&lq.CustomerDocument, documentInto(&doc)),
		validation.Field(&lq.CustomerPhone, length(1, 32)),
		validation.Field(&lq.ID, uuidV4Rule),
		validation.Field(&lq.EndToEnd, length(8, 255)),
		validation.Field(&lq.EndToEndRefund, length(8, 255)),
		validation.Field(&lq.ExternalCode, length(8, 255)),
		validation.Field(&lq.PaymentMethod, enumList(string(domain.PaymentPIX))),
		validation.Field(&lq.MinAmount, intInto(&minAmount, int64(domain.MinAmount), int64(domain.MaxAmount))),
		validation.Field(&lq.MaxAmount, intInto(&maxAmount, int64(domain.MinAmount), int64(domain.MaxAmount))),
	)
	errs = append(errs, fieldErrors("", err)...)
	if f.StartDate != nil && f.EndDate != nil && f.StartDate.After(*f.EndDate) {
		errs = append(errs, FieldError{Field: "startDate", Code: "out_of_range", Message: "must not be after endDate"})
	}
	if minAmount != nil && maxAmount != nil && *minAmount > *maxAmount {
		errs = append(errs, FieldError{Field: "minAmount", Code: "out_of_range", Message: "must not be above maxAmount"})
	}
	page := ports.Page{Number: 1, Size: defaultPerPage}
	if number != nil {
		page.Number = int(*number)
	}
	if size != nil {
		page.Size = int(*size)
	}
	for _, s := range lq.Status {
		f.Statuses = append(f.Statuses, domain.TransactionStatus(s))
	}
	for _, m := range lq.PaymentMethod {
		f.PaymentMethods = append(f.PaymentMethods, domain.PaymentMethod(m))
	}
	if lq.CustomerEmail != nil {
		f.CustomerEmail = strings.ToLower(*lq.CustomerEmail)
	}
	if lq.CustomerDocument != nil {
		f.CustomerDocument = doc.Value()
	}
	if lq.CustomerPhone != nil {
		f.CustomerPhone = domain.PhoneDigits(*lq.CustomerPhone)
		if f.CustomerPhone == "" {
			f.CustomerPhone = "-" // no digits: matches nothing, rather than everything
		}
	}
	f.MinAmount, f.MaxAmount = (*domain.Cents)(minAmount), (*domain.Cents)(maxAmount)
	return f, page, errs
}

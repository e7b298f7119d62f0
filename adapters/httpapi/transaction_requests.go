package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	validation "github.com/go-ozzo/ozzo-validation/v4"

	"github.com/pixgate/pixgate/domain"
)

// The body of POST /transaction. Pointer fields are nil when absent or null.
type createTransactionRequest struct {
	Amount         *int64         `json:"amount"`
	PaymentMethod  *string        `json:"paymentMethod"`
	WebhookURL     *string        `json:"webhookUrl"`
	ExternalCode   *string        `json:"externalCode"`
	IdempotencyKey *string        `json:"idempotencyKey"`
	Customer       *customerInput `json:"customer"`
	Seller         *sellerInput   `json:"seller"`
	IsInfoProduct  *bool          `json:"isInfoProduct"`
	Address        *addressInput  `json:"address"`
	Items          []itemInput    `json:"items"`
	Metadata       rawObject      `json:"metadata"`
	Pix            *pixInput      `json:"pix"`
}

type customerInput struct {
	IP          *string `json:"ip"`
	Name        *string `json:"name"`
	Email       *string `json:"email"`
	Document    *string `json:"document"`
	Landline    *string `json:"landline"`
	MobilePhone *string `json:"mobilePhone"`
	Birthdate   *string `json:"birthdate"`
}

type sellerInput struct {
	Name     *string `json:"name"`
	Document *string `json:"document"`
}

type addressInput struct {
	ZipCode      *string `json:"zipCode"`
	Number       *string `json:"number"`
	Street       *string `json:"street"`
	Neighborhood *string `json:"neighborhood"`
	City         *string `json:"city"`
	State        *string `json:"state"`
	Country      *string `json:"country"`
	Complement   *string `json:"complement"`
}

type itemInput struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	UnitPrice   *int64  `json:"unitPrice"`
	Quantity    *int64  `json:"quantity"`
}

type pixInput struct {
	ExpirationSeconds *int64 `json:"expirationSeconds"`
}

// Limits of metadata (docs/API.md, Limits).
const (
	maxMetadataKeys  = 50
	maxMetadataBytes = 8 << 10
)

// parse checks a customer and maps it in the same pass: the parsers that check the document
// and the phones give the values the customer keeps. now judges the birthdate.
func (c *customerInput) parse(now time.Time) (*domain.Customer, error) {
	out := &domain.Customer{IP: str(c.IP), Name: str(c.Name), Email: str(c.Email), Birthdate: str(c.Birthdate)}
	return out, validation.ValidateStruct(c,
		validation.Field(&c.IP, ipRule),
		validation.Field(&c.Name, required, personNameRule),
		validation.Field(&c.Email, required, emailRule),
		validation.Field(&c.Document, required, documentInto(&out.Document)),
		validation.Field(&c.Landline, into(&out.Landline, domain.ParseLandline, "invalid_format", landlineMessage)),
		validation.Field(&c.MobilePhone, into(&out.MobilePhone, domain.ParseMobile, "invalid_format", mobileMessage)),
		validation.Field(&c.Birthdate, birthdateRule(now)),
	)
}

// birthdateRule accepts a date YYYY-MM-DD that is not after now.
func birthdateRule(now time.Time) validation.Rule {
	return parsed(func(s string) error {
		_, err := domain.ParseBirthdate(s, now)
		return err
	}, "invalid_format", "must be a date YYYY-MM-DD, not in the future")
}

func (s *sellerInput) parse() (*domain.Seller, error) {
	out := &domain.Seller{Name: str(s.Name)}
	return out, validation.ValidateStruct(s,
		validation.Field(&s.Name, required, personNameRule),
		validation.Field(&s.Document, required, documentInto(&out.Document)),
	)
}

func (a *addressInput) parse() (*domain.Address, error) {
	out := &domain.Address{Number: str(a.Number), Street: str(a.Street), Neighborhood: str(a.Neighborhood),
		City: str(a.City), State: str(a.State), Country: str(a.Country), Complement: str(a.Complement)}
	return out, validation.ValidateStruct(a,
		validation.Field(&a.ZipCode, required, into(&out.ZipCode, domain.ParseZipCode, "invalid_format", zipMessage)),
		validation.Field(&a.Number, required, length(1, 10), digitsRule),
		validation.Field(&a.Street, required, length(2, 200)),
		validation.Field(&a.Neighborhood, required, length(2, 100)),
		validation.Field(&a.City, required, length(2, 100)),
		validation.Field(&a.State, required, length(2, 50)),
		validation.Field(&a.Country, required, length(2, 60)),
		validation.Field(&a.Complement, length(2, 150)),
	)
}

func (i *itemInput) parse() (domain.Item, error) {
	out := domain.Item{Title: str(i.Title), Description: str(i.Description), Quantity: 1}
	if i.UnitPrice != nil {
		out.UnitPrice = domain.Cents(*i.UnitPrice)
	}
	if i.Quantity != nil {
		out.Quantity = int(*i.Quantity)
	}
	return out, validation.ValidateStruct(i,
		validation.Field(&i.Title, required, length(2, 150)),
		validation.Field(&i.Description, length(2, 255)),
		validation.Field(&i.UnitPrice, required, cents),
		validation.Field(&i.Quantity, intRange(1, 100)),
	)
}

// metadataRule: a JSON object of at most 50 keys, at most 8 KiB serialised.
var metadataRule = validation.By(func(v any) error {
	raw, _ := v.(rawObject)
	if raw == nil {
		return nil
	}
	if len(raw) > maxMetadataBytes {
		return fieldErr("too_long", "must serialise to at most %d bytes", maxMetadataBytes)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err == nil && len(m) > maxMetadataKeys {
		return fieldErr("too_long", "must have at most %d keys", maxMetadataKeys)
	}
	return nil
})

var itemsRule = validation.By(func(v any) error {
	if items, _ := v.([]itemInput); len(items) > domain.MaxItems {
		return fieldErr("too_long", "must have at most %d items", domain.MaxItems)
	}
	return nil
})

// parse checks every rule of POST /transaction (docs/API.md, Creating a transaction), all at once, and
// maps the request to the domain's Order in the same pass: each nested object is parsed by the
// rule that checks it, so nothing parses twice and no parser's error can be lost. now judges
// the customer's birthdate. The order is meaningful only when no field error is returned.
func (req *createTransactionRequest) parse(now time.Time) (domain.Order, []FieldError) {
	normalizeWebhookURL(req.WebhookURL)
	o := domain.Order{
		WebhookURL: str(req.WebhookURL), ExternalCode: str(req.ExternalCode), Metadata: []byte(req.Metadata),
		IsInfoProduct: req.IsInfoProduct == nil || *req.IsInfoProduct, ExpirationSeconds: domain.DefaultExpirationSeconds,
	}
	err := validation.ValidateStruct(req,
		validation.Field(&req.Amount, required, cents),
		validation.Field(&req.PaymentMethod, required, oneOf(string(domain.PaymentPIX))),
		validation.Field(&req.WebhookURL, webhookURLRule),
		validation.Field(&req.ExternalCode, length(8, 255)),
		validation.Field(&req.IdempotencyKey, length(8, 255)),
		validation.Field(&req.Customer, nested(req.Customer, func(c *customerInput) (err error) {
			o.Customer, err = c.parse(now)
			return err
		})),
		validation.Field(&req.Seller, nested(req.Seller, func(s *sellerInput) (err error) {
			o.Seller, err = s.parse()
			return err
		})),
		validation.Field(&req.Address, validation.When(!o.IsInfoProduct, required), nested(req.Address, func(a *addressInput) (err error) {
			o.Address, err = a.parse()
			return err
		})),
		validation.Field(&req.Items, itemsRule, validation.By(func(any) error {
			o.Items = nil
			errs := validation.Errors{}
			for i := range req.Items {
				it, err := req.Items[i].parse()
				if err != nil {
					errs[strconv.Itoa(i)] = err
				}
				o.Items = append(o.Items, it)
			}
			return errs.Filter()
		})),
		validation.Field(&req.Metadata, metadataRule),
		validation.Field(&req.Pix, required, nested(req.Pix, func(p *pixInput) error {
			if p.ExpirationSeconds != nil {
				o.ExpirationSeconds = int(*p.ExpirationSeconds)
			}
			return validation.ValidateStruct(p,
				validation.Field(&p.ExpirationSeconds, intRange(domain.MinExpirationSeconds, domain.MaxExpirationSeconds)))
		})),
	)
	if fields := fieldErrors("", err); len(fields) > 0 {
		return domain.Order{}, fields
	}
	o.Amount, o.PaymentMethod = domain.Cents(*req.Amount), domain.PaymentMethod(*req.PaymentMethod)
	return o, nil
}

// The body of POST /transaction/{id}/refund, every field optional: no body refunds everything
// still refundable.
type refundRequest struct {
	Amount         *int64  `json:"amount"`
	Reason         *string `json:"reason"`
	IdempotencyKey *string `json:"idempotencyKey"`
}

func (req *refundRequest) validate() []FieldError {
	err := validation.ValidateStruct(req,
		validation.Field(&req.Amount, cents),
		validation.Field(&req.Reason, length(1, domain.MaxRefundReason)),
		validation.Field(&req.IdempotencyKey, length(8, 255)),
	)
	return fieldErrors("", err)
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// fingerprint identifies a request's content whatever its key order and white space: the
// SHA-256 of its canonical JSON (encoding/json writes map keys sorted), without the
// idempotency key itself, which may travel in the body or in the header.
func fingerprint(body map[string]any) string {
	canon := make(map[string]any, len(body))
	for k, v := range body {
		if k != "idempotencyKey" {
			canon[k] = v
		}
	}
	b, _ := json.Marshal(canon)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

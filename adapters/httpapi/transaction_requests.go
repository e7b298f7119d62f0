package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

func (c customerInput) Validate() error {
	return validation.ValidateStruct(&c,
		validation.Field(&c.IP, ipRule),
		validation.Field(&c.Name, required, personNameRule),
		validation.Field(&c.Email, required, emailRule),
		validation.Field(&c.Document, required, documentRule),
		validation.Field(&c.Landline, landlineRule),
		validation.Field(&c.MobilePhone, mobileRule),
		validation.Field(&c.Birthdate, birthdateRule),
	)
}

var birthdateRule = parsed(func(s string) error {
	_, err := domain.ParseBirthdate(s, time.Now())
	return err
}, "invalid_format", "must be a date YYYY-MM-DD, not in the future")

func (s sellerInput) Validate() error {
	return validation.ValidateStruct(&s,
		validation.Field(&s.Name, required, personNameRule),
		validation.Field(&s.Document, required, documentRule),
	)
}

func (a addressInput) Validate() error {
	return validation.ValidateStruct(&a,
		validation.Field(&a.ZipCode, required, zipRule),
		validation.Field(&a.Number, required, length(1, 10), digitsRule),
		validation.Field(&a.Street, required, length(2, 200)),
		validation.Field(&a.Neighborhood, required, length(2, 100)),
		validation.Field(&a.City, required, length(2, 100)),
		validation.Field(&a.State, required, length(2, 50)),
		validation.Field(&a.Country, required, length(2, 60)),
		validation.Field(&a.Complement, length(2, 150)),
	)
}

func (i itemInput) Validate() error {
	return validation.ValidateStruct(&i,
		validation.Field(&i.Title, required, length(2, 150)),
		validation.Field(&i.Description, length(2, 255)),
		validation.Field(&i.UnitPrice, required, cents),
		validation.Field(&i.Quantity, intRange(1, 100)),
	)
}

func (p pixInput) Validate() error {
	return validation.ValidateStruct(&p,
		validation.Field(&p.ExpirationSeconds, intRange(domain.MinExpirationSeconds, domain.MaxExpirationSeconds)),
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

// validate checks every rule of POST /transaction (README, OpenAPI document), all at once.
func (req *createTransactionRequest) validate() []FieldError {
	normalizeWebhookURL(req.WebhookURL)
	isInfo := req.IsInfoProduct == nil || *req.IsInfoProduct
	err := validation.ValidateStruct(req,
		validation.Field(&req.Amount, required, cents),
		validation.Field(&req.PaymentMethod, required, oneOf(string(domain.PaymentPIX))),
		validation.Field(&req.WebhookURL, webhookURLRule),
		validation.Field(&req.ExternalCode, length(8, 255)),
		validation.Field(&req.IdempotencyKey, length(8, 255)),
		validation.Field(&req.Customer),
		validation.Field(&req.Seller),
		validation.Field(&req.Address, validation.When(!isInfo, required)),
		validation.Field(&req.Items, itemsRule),
		validation.Field(&req.Metadata, metadataRule),
		validation.Field(&req.Pix, required),
	)
	return fieldErrors("", err)
}

// order maps a valid request to the domain's Order. Call it only after validate passed.
func (req *createTransactionRequest) order() domain.Order {
	o := domain.Order{
		Amount:            domain.Cents(*req.Amount),
		PaymentMethod:     domain.PaymentMethod(*req.PaymentMethod),
		WebhookURL:        str(req.WebhookURL),
		ExternalCode:      str(req.ExternalCode),
		IsInfoProduct:     req.IsInfoProduct == nil || *req.IsInfoProduct,
		Metadata:          []byte(req.Metadata),
		ExpirationSeconds: domain.DefaultExpirationSeconds,
	}
	if req.Pix != nil && req.Pix.ExpirationSeconds != nil {
		o.ExpirationSeconds = int(*req.Pix.ExpirationSeconds)
	}
	if c := req.Customer; c != nil {
		doc, _ := domain.ParseDocument(*c.Document)
		cust := &domain.Customer{IP: str(c.IP), Name: *c.Name, Email: *c.Email, Document: doc, Birthdate: str(c.Birthdate)}
		if c.Landline != nil {
			cust.Landline, _ = domain.ParseLandline(*c.Landline)
		}
		if c.MobilePhone != nil {
			cust.MobilePhone, _ = domain.ParseMobile(*c.MobilePhone)
		}
		o.Customer = cust
	}
	if s := req.Seller; s != nil {
		doc, _ := domain.ParseDocument(*s.Document)
		o.Seller = &domain.Seller{Name: *s.Name, Document: doc}
	}
	if a := req.Address; a != nil {
		zip, _ := domain.ParseZipCode(*a.ZipCode)
		o.Address = &domain.Address{ZipCode: zip, Number: *a.Number, Street: *a.Street,
			Neighborhood: *a.Neighborhood, City: *a.City, State: *a.State, Country: *a.Country,
			Complement: str(a.Complement)}
	}
	for _, it := range req.Items {
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		o.Items = append(o.Items, domain.Item{Title: *it.Title, Description: str(it.Description),
			UnitPrice: domain.Cents(*it.UnitPrice), Quantity: int(q)})
	}
	return o
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

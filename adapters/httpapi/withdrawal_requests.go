package httpapi

import (
	validation "github.com/go-ozzo/ozzo-validation/v4"

	"github.com/pixgate/pixgate/domain"
)

// The body of POST /withdrawal. Pointer fields are nil when absent or null.
type createWithdrawalRequest struct {
	Amount         *int64       `json:"amount"`
	PixKey         *pixKeyInput `json:"pixKey"`
	ExternalCode   *string      `json:"externalCode"`
	WebhookURL     *string      `json:"webhookUrl"`
	IdempotencyKey *string      `json:"idempotencyKey"`
}

type pixKeyInput struct {
	Key  *string `json:"key"`
	Type *string `json:"type"`
}

// pixKeyMessages say what a key of each type looks like, for the merchant who sent another.
var pixKeyMessages = map[domain.PixKeyType]string{
	domain.PixKeyCPF:   "must be a valid CPF, as the key type says",
	domain.PixKeyCNPJ:  "must be a valid CNPJ, as the key type says",
	domain.PixKeyEmail: "must be an e-mail address of at most 77 characters, as the key type says",
	domain.PixKeyPhone: "must be +55 followed by 10 or 11 digits, as the key type says",
	domain.PixKeyEVP:   "must be a UUID, as the key type says",
}

func pixKeyTypeNames() []string {
	var out []string
	for _, t := range domain.PixKeyTypes() {
		out = append(out, string(t))
	}
	return out
}

// Validate checks the type against the enumeration, then the key against its type; a key of an
// unknown type is not judged (the type's error says what is wrong).
func (k pixKeyInput) Validate() error {
	return validation.ValidateStruct(&k,
		validation.Field(&k.Type, required, oneOf(pixKeyTypeNames()...)),
		validation.Field(&k.Key, required, validation.By(func(v any) error {
			key, ok := deref[string](v)
			if !ok || k.Type == nil {
				return nil
			}
			typ := domain.PixKeyType(*k.Type)
			msg, known := pixKeyMessages[typ]
			if !known {
				return nil
			}
			if _, err := domain.NewPixKey(typ, key); err != nil {
				return validation.NewError("invalid_format", msg)
			}
			return nil
		})),
	)
}

// validate checks every rule of POST /withdrawal (each field as in POST /transaction), all at once.
func (req *createWithdrawalRequest) validate() []FieldError {
	normalizeWebhookURL(req.WebhookURL)
	err := validation.ValidateStruct(req,
		validation.Field(&req.Amount, required, cents),
		validation.Field(&req.PixKey, required),
		validation.Field(&req.ExternalCode, length(8, 255)),
		validation.Field(&req.WebhookURL, webhookURLRule),
		validation.Field(&req.IdempotencyKey, length(8, 255)),
	)
	return fieldErrors("", err)
}

// pixKey is the request's key, normalised by the domain. Call it only after validate passed.
func (req *createWithdrawalRequest) pixKey() domain.PixKey {
	k, _ := domain.NewPixKey(domain.PixKeyType(*req.PixKey.Type), *req.PixKey.Key)
	return k
}

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

// parse checks the type against the enumeration, then the key against its type, and keeps
// the key as the domain normalised it; a key of an unknown type is not judged (the type's
// error says what is wrong).
func (k *pixKeyInput) parse() (domain.PixKey, error) {
	var out domain.PixKey
	return out, validation.ValidateStruct(k,
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
			parsed, err := domain.NewPixKey(typ, key)
			if err != nil {
				return validation.NewError("invalid_format", msg)
			}
			out = parsed
			return nil
		})),
	)
}

// parse checks every rule of POST /withdrawal (each field as in POST /transaction), all at
// once, and returns the PIX key as the domain normalised it, in the same pass. The key is
// meaningful only when no field error is returned.
func (req *createWithdrawalRequest) parse() (domain.PixKey, []FieldError) {
	normalizeWebhookURL(req.WebhookURL)
	var key domain.PixKey
	err := validation.ValidateStruct(req,
		validation.Field(&req.Amount, required, cents),
		validation.Field(&req.PixKey, required, nested(req.PixKey, func(k *pixKeyInput) (err error) {
			key, err = k.parse()
			return err
		})),
		validation.Field(&req.ExternalCode, length(8, 255)),
		validation.Field(&req.WebhookURL, webhookURLRule),
		validation.Field(&req.IdempotencyKey, length(8, 255)),
	)
	if fields := fieldErrors("", err); len(fields) > 0 {
		return domain.PixKey{}, fields
	}
	return key, nil
}

package domain

import (
	"errors"
	"strings"
)

// PixKeyType is the kind of a PIX key.
type PixKeyType string

const (
	PixKeyCPF   PixKeyType = "CPF"
	PixKeyCNPJ  PixKeyType = "CNPJ"
	PixKeyEmail PixKeyType = "EMAIL"
	PixKeyPhone PixKeyType = "PHONE"
	PixKeyEVP   PixKeyType = "EVP" // random key: a UUID
)

// PixKeyTypes lists every key type.
func PixKeyTypes() []PixKeyType {
	return []PixKeyType{PixKeyCPF, PixKeyCNPJ, PixKeyEmail, PixKeyPhone, PixKeyEVP}
}

// ErrInvalidPixKey reports a key that does not match its type.
var ErrInvalidPixKey = errors.New("PIX key does not match its type")

// ErrInvalidPixKeyType reports a key type outside PixKeyTypes.
var ErrInvalidPixKeyType = errors.New("unknown PIX key type")

// PixKey is a validated PIX key with its type (docs/API.md, Response shapes).
type PixKey struct {
	Type PixKeyType
	Key  string
}

// NewPixKey validates key by its type and normalises it: CPF and CNPJ lose their punctuation,
// an e-mail is lower-cased, a phone is +55 followed by 10 or 11 digits, an EVP is a lowercase
// UUID.
func NewPixKey(typ PixKeyType, key string) (PixKey, error) {
	switch typ {
	case PixKeyCPF, PixKeyCNPJ:
		d, err := ParseDocument(key)
		if err != nil || string(d.Kind()) != string(typ) {
			return PixKey{}, ErrInvalidPixKey
		}
		return PixKey{Type: typ, Key: d.Value()}, nil
	case PixKeyEmail:
		e, err := ParseEmail(key)
		if err != nil || len(e) > 77 {
			return PixKey{}, ErrInvalidPixKey
		}
		return PixKey{Type: typ, Key: strings.ToLower(e)}, nil
	case PixKeyPhone:
		if !strings.HasPrefix(key, "+55") || len(key) != 13 && len(key) != 14 {
			return PixKey{}, ErrInvalidPixKey
		}
		for _, r := range key[3:] {
			if r < '0' || r > '9' {
				return PixKey{}, ErrInvalidPixKey
			}
		}
		return PixKey{Type: typ, Key: key}, nil
	case PixKeyEVP:
		if !IsUUID(key) {
			return PixKey{}, ErrInvalidPixKey
		}
		return PixKey{Type: typ, Key: strings.ToLower(key)}, nil
	}
	return PixKey{}, ErrInvalidPixKeyType
}

// ErrUnknownPixKeyType: a PIX key written without its type matches none of the key types.
var ErrUnknownPixKeyType = errors.New("is not a CPF, CNPJ, e-mail, +55 phone or EVP (UUID) PIX key")

// ParsePixKey finds the type of a PIX key written without one (PIXGATE_PIX_KEY), trying each
// type's rule; the rules never overlap (a phone starts with +55, an EVP has dashes, a CPF has 11
// characters and a CNPJ 14).
func ParsePixKey(key string) (PixKey, error) {
	for _, typ := range []PixKeyType{PixKeyEVP, PixKeyPhone, PixKeyEmail, PixKeyCPF, PixKeyCNPJ} {
		if k, err := NewPixKey(typ, key); err == nil {
			return k, nil
		}
	}
	return PixKey{}, ErrUnknownPixKeyType
}

// HolderType tells an individual (PF) from a legal entity (PJ).
type HolderType string

const (
	HolderPF HolderType = "PF"
	HolderPJ HolderType = "PJ"
)

// BankAccount is the bank data of an account holder, as answers show it (docs/API.md, Response shapes).
type BankAccount struct {
	Type  string // e.g. "CACC" (checking), "SVGS" (savings), "TRAN" (payment)
	Digit string
	ISPB  string // 8-digit participant code
}

// AccountHolder is a party of a payment: the payer of a transaction, the receiver of a
// withdrawal.
type AccountHolder struct {
	Type        HolderType
	Name        string
	Document    Document
	BankAccount BankAccount
	Pix         PixKey
}

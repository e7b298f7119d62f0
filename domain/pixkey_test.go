package domain_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestPixKeyTypes(t *testing.T) {
	want := []domain.PixKeyType{"CPF", "CNPJ", "EMAIL", "PHONE", "EVP"}
	if got := domain.PixKeyTypes(); !sameElements(got, want) {
		t.Fatalf("PixKeyTypes() = %v, want %v", got, want)
	}
}

func TestNewPixKey(t *testing.T) {
	email77 := strings.Repeat("a", 65) + "@example.com"
	if len(email77) != 77 {
		t.Fatalf("fixture has %d characters", len(email77))
	}
	for _, c := range []struct {
		name string
		typ  domain.PixKeyType
		in   string
		want string
	}{
		{"a CPF key loses its punctuation", domain.PixKeyCPF, "529.982.247-25", "52998224725"},
		{"a plain CPF key is kept", domain.PixKeyCPF, "52998224725", "52998224725"},
		{"a CNPJ key loses its punctuation", domain.PixKeyCNPJ, "11.222.333/0001-81", "11222333000181"},
		{"an alphanumeric CNPJ key is upper-cased", domain.PixKeyCNPJ, "12.abc.345/01de-35", "12ABC34501DE35"},
		{"an e-mail key is lower-cased", domain.PixKeyEmail, "Fulano.Tal@Example.COM", "fulano.tal@example.com"},
		{"an e-mail key of 77 characters is accepted", domain.PixKeyEmail, email77, email77},
		{"a mobile phone key is +55 and 11 digits", domain.PixKeyPhone, "+5511987654321", "+5511987654321"},
		{"a landline phone key is +55 and 10 digits", domain.PixKeyPhone, "+551123456789", "+551123456789"},
		{"a random key is lower-cased", domain.PixKeyEVP, "123E4567-E89B-42D3-A456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
		{"a lowercase random key is kept", domain.PixKeyEVP, "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := domain.NewPixKey(c.typ, c.in)
			if err != nil || k.Type != c.typ || k.Key != c.want {
				t.Fatalf("NewPixKey(%s, %q) = %+v, %v; want %q", c.typ, c.in, k, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		typ  domain.PixKeyType
		in   string
	}{
		{"a CNPJ under the CPF type is refused", domain.PixKeyCPF, "11.222.333/0001-81"},
		{"a CPF under the CNPJ type is refused", domain.PixKeyCNPJ, "529.982.247-25"},
		{"an invalid CPF is refused", domain.PixKeyCPF, "529.982.247-24"},
		{"a repeated-digit CPF is refused", domain.PixKeyCPF, "11111111111"},
		{"an invalid CNPJ is refused", domain.PixKeyCNPJ, "11.222.333/0001-82"},
		{"an e-mail under the CPF type is refused", domain.PixKeyCPF, "fulano@example.com"},
		{"an invalid e-mail is refused", domain.PixKeyEmail, "fulano@localhost"},
		{"an e-mail with a display name is refused", domain.PixKeyEmail, "Fulano <fulano@example.com>"},
		{"an e-mail of 78 characters is refused", domain.PixKeyEmail, "a" + email77},
		{"a phone without +55 is refused", domain.PixKeyPhone, "11987654321"},
		{"a phone with 55 but no plus is refused", domain.PixKeyPhone, "5511987654321"},
		{"a phone with 9 national digits is refused", domain.PixKeyPhone, "+55119876543"},
		{"a phone with 12 national digits is refused", domain.PixKeyPhone, "+55119876543210"},
		{"a punctuated phone is refused", domain.PixKeyPhone, "+55 11 98765-4321"},
		{"a phone with a letter is refused", domain.PixKeyPhone, "+5511a87654321"},
		{"a phone of another country is refused", domain.PixKeyPhone, "+14155552671"},
		{"a random key that is not a UUID is refused", domain.PixKeyEVP, "not-a-uuid"},
		{"a random key without dashes is refused", domain.PixKeyEVP, "123e4567e89b42d3a456426614174000"},
		{"an e-mail under the random type is refused", domain.PixKeyEVP, "fulano@example.com"},
		{"an empty CPF key is refused", domain.PixKeyCPF, ""},
		{"an empty e-mail key is refused", domain.PixKeyEmail, ""},
		{"an empty phone key is refused", domain.PixKeyPhone, ""},
		{"an empty random key is refused", domain.PixKeyEVP, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := domain.NewPixKey(c.typ, c.in)
			if !errors.Is(err, domain.ErrInvalidPixKey) || errors.Is(err, domain.ErrInvalidPixKeyType) || k != (domain.PixKey{}) {
				t.Fatalf("NewPixKey(%s, %q) = %+v, %v; want ErrInvalidPixKey", c.typ, c.in, k, err)
			}
		})
	}
	for _, typ := range []domain.PixKeyType{"", "cpf", "Email", "RANDOM", "IBAN", "EVP "} {
		t.Run("the key type "+strconvQuote(string(typ))+" is unknown", func(t *testing.T) {
			k, err := domain.NewPixKey(typ, "fulano@example.com")
			if !errors.Is(err, domain.ErrInvalidPixKeyType) || errors.Is(err, domain.ErrInvalidPixKey) || k != (domain.PixKey{}) {
				t.Fatalf("NewPixKey(%q) = %+v, %v; want ErrInvalidPixKeyType", typ, k, err)
			}
		})
	}
}

var endToEndFormat = regexp.MustCompile(`^[ED][0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$`)

func TestNewEndToEndID(t *testing.T) {
	at := time.Date(2026, 11, 22, 21, 5, 59, 999_000_000, saoPaulo) // 2026-11-23 00:05 UTC
	for _, prefix := range []byte{'E', 'D'} {
		t.Run("an id with prefix "+string(prefix)+" has the Banco Central format", func(t *testing.T) {
			id := domain.NewEndToEndID(prefix, domain.SandboxISPB, at)
			if len(id) != 32 || !endToEndFormat.MatchString(id) {
				t.Fatalf("NewEndToEndID = %q, want 32 characters of the end-to-end format", id)
			}
			if id[0] != prefix || id[1:9] != domain.SandboxISPB || id[9:21] != "202611230005" {
				t.Fatalf("NewEndToEndID = %q: prefix %q, ISPB %q, minute %q; want %q, %q, 202611230005 (UTC)",
					id, id[0], id[1:9], id[9:21], prefix, domain.SandboxISPB)
			}
		})
	}
	t.Run("another ISPB is carried as given", func(t *testing.T) {
		if id := domain.NewEndToEndID('E', "00000000", at); id[1:9] != "00000000" {
			t.Fatalf("NewEndToEndID = %q", id)
		}
	})
	t.Run("ids are distinct", func(t *testing.T) {
		seen := map[string]bool{}
		for range 1000 {
			id := domain.NewEndToEndID('E', domain.SandboxISPB, at)
			if seen[id] {
				t.Fatalf("id %q repeated", id)
			}
			seen[id] = true
		}
	})
	if domain.SandboxISPB != "99999999" {
		t.Fatalf("SandboxISPB = %q", domain.SandboxISPB)
	}
}

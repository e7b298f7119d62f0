package sandbox_test

import (
	"context"
	"testing"

	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/domain"
)

func TestSandboxPixDirectoryNamesTheOwnerOfAKey(t *testing.T) {
	cases := []struct {
		name     string
		key      domain.PixKey
		holder   domain.HolderType
		document string
	}{
		{"a CPF key belongs to an individual with that CPF", domain.PixKey{Type: domain.PixKeyCPF, Key: "52998224725"}, domain.HolderPF, "52998224725"},
		{"a CNPJ key belongs to a company with that CNPJ", domain.PixKey{Type: domain.PixKeyCNPJ, Key: "11222333000181"}, domain.HolderPJ, "11222333000181"},
		{"an e-mail key belongs to an individual with the sandbox CPF", domain.PixKey{Type: domain.PixKeyEmail, Key: "ana@example.com"}, domain.HolderPF, "52998224725"},
		{"a random key belongs to an individual with the sandbox CPF", domain.PixKey{Type: domain.PixKeyEVP, Key: "123e4567-e89b-42d3-a456-426614174000"}, domain.HolderPF, "52998224725"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := sandbox.Directory{}.Resolve(context.Background(), c.key)
			if err != nil {
				t.Fatal(err)
			}
			if h.Type != c.holder || h.Document.Value() != c.document || h.Name != sandbox.PayoutReceiver ||
				h.Pix != c.key || h.BankAccount.ISPB != domain.SandboxISPB {
				t.Fatalf("holder %+v", h)
			}
		})
	}
}

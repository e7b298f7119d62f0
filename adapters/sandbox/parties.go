package sandbox

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Fixed parties of the sandbox: the payer of a payment made without one, the documents of the
// gateway's receiving account, and the owner of every payout's key. The documents are
// fictitious with right check digits, so that every consumer of the API can parse them.
const (
	PayerCPF          = "98765432100"
	ReceiverDocument  = "99999999000191" // a CNPJ whose root is the sandbox ISPB
	PayoutReceiver    = "Sandbox Receiver"
	payoutReceiverCPF = "52998224725"
)

// Payer is the payer of a sandbox payment made without one.
func Payer() domain.AccountHolder {
	doc := domain.MustParseDocument(PayerCPF)
	return domain.AccountHolder{
		Type: domain.HolderPF, Name: "Pagador Sandbox", Document: doc,
		BankAccount: domain.BankAccount{Type: "TRAN", Digit: "0", ISPB: domain.SandboxISPB},
		Pix:         domain.PixKey{Type: domain.PixKeyCPF, Key: doc.Value()},
	}
}

// ReceivingAccount is the gateway's account in the sandbox, which receives the payments and
// pays the withdrawals out: the configured PIX key and merchant name, held at the sandbox ISPB
// under a fixed CNPJ.
func ReceivingAccount(pixKey, merchantName string) (domain.AccountHolder, error) {
	key, err := domain.ParsePixKey(pixKey)
	if err != nil {
		return domain.AccountHolder{}, err
	}
	return domain.AccountHolder{
		Type: domain.HolderPJ, Name: merchantName, Document: domain.MustParseDocument(ReceiverDocument),
		BankAccount: domain.BankAccount{Type: "CACC", Digit: "1", ISPB: domain.SandboxISPB},
		Pix:         key,
	}, nil
}

// Directory is the sandbox's PIX directory: every key belongs to "Sandbox Receiver", a
// checking account at the sandbox ISPB, an individual or a company holding the key's document
// when the key is a CPF or a CNPJ, otherwise an individual with a fixed sandbox CPF.
type Directory struct{}

var _ ports.PixDirectory = Directory{}

// Resolve names the owner of key.
func (Directory) Resolve(_ context.Context, key domain.PixKey) (domain.AccountHolder, error) {
	h := domain.AccountHolder{
		Type: domain.HolderPF, Name: PayoutReceiver, Document: domain.MustParseDocument(payoutReceiverCPF),
		BankAccount: domain.BankAccount{Type: "CACC", Digit: "1", ISPB: domain.SandboxISPB},
		Pix:         key,
	}
	if key.Type == domain.PixKeyCPF || key.Type == domain.PixKeyCNPJ {
		doc, err := domain.ParseDocument(key.Key)
		if err != nil {
			return domain.AccountHolder{}, fmt.Errorf("%w: %w", domain.ErrInvalidPixKey, err)
		}
		h.Document = doc
		if doc.Kind() == domain.CNPJ {
			h.Type = domain.HolderPJ
		}
	}
	return h, nil
}

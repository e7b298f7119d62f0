package httpapi

import (
	"net/http"
	"slices"
	"strings"

	validation "github.com/go-ozzo/ozzo-validation/v4"
	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// SandboxDeps are the use cases of the /sandbox routes, which steer transactions and
// withdrawals as the payers' banks and the acquirer would (adapters/sandbox builds them). The
// routes exist only with Config.Sandbox, which requires every one of them.
type SandboxDeps struct {
	PayTransaction   *application.Transition[*domain.Transaction, *domain.AccountHolder]
	OpenDispute      *application.TransactionStep
	AcceptDispute    *application.TransactionStep
	RejectDispute    *application.TransactionStep
	FailRefund       *application.TransactionStep
	FailWithdrawal   *application.WithdrawalStep
	RejectWithdrawal *application.WithdrawalStep
	RefundWithdrawal *application.WithdrawalStep
}

// complete tells whether every use case is set.
func (d SandboxDeps) complete() bool {
	return d.PayTransaction != nil && d.OpenDispute != nil && d.AcceptDispute != nil && d.RejectDispute != nil &&
		d.FailRefund != nil && d.FailWithdrawal != nil && d.RejectWithdrawal != nil && d.RefundWithdrawal != nil
}

// sandboxRoutes registers the /sandbox routes. Each answers 200 with the resource as its GET
// shows it afterwards, 409 invalid_transition from a status the step does not leave, 404 for
// an unknown or another account's id.
func (s *Server) sandboxRoutes(r *mux.Router) {
	d := s.deps.Sandbox
	route := func(name, path string, scope domain.Scope, h http.HandlerFunc) {
		route(r, name, http.MethodPost, path).Handler(s.authed(scope, h))
	}
	tx, wd := domain.ScopeTransactionWrite, domain.ScopeWithdrawalWrite
	route("sandbox.transaction.pay", "/sandbox/transaction/{id}/pay", tx, transitionHandler(s, d.PayTransaction, sandboxPayer, s.transactionView))
	route("sandbox.transaction.med.open", "/sandbox/transaction/{id}/med/open", tx, transitionHandler(s, d.OpenDispute, noInput, s.transactionView))
	route("sandbox.transaction.med.accept", "/sandbox/transaction/{id}/med/accept", tx, transitionHandler(s, d.AcceptDispute, noInput, s.transactionView))
	route("sandbox.transaction.med.reject", "/sandbox/transaction/{id}/med/reject", tx, transitionHandler(s, d.RejectDispute, noInput, s.transactionView))
	route("sandbox.transaction.refund.fail", "/sandbox/transaction/{id}/refund/fail", tx, transitionHandler(s, d.FailRefund, noInput, s.transactionView))
	route("sandbox.withdrawal.fail", "/sandbox/withdrawal/{id}/fail", wd, transitionHandler(s, d.FailWithdrawal, noInput, s.withdrawalView))
	route("sandbox.withdrawal.reject", "/sandbox/withdrawal/{id}/reject", wd, transitionHandler(s, d.RejectWithdrawal, noInput, s.withdrawalView))
	route("sandbox.withdrawal.refund", "/sandbox/withdrawal/{id}/refund", wd, transitionHandler(s, d.RefundWithdrawal, noInput, s.withdrawalView))
}

// The optional body of POST /sandbox/transaction/{id}/pay: the payer, an account holder
// (docs/API.md, Response shapes). Without a body (or without payer) the sandbox's fixed payer pays.
type sandboxPayRequest struct {
	Payer *sandboxPayerInput `json:"payer"`
}

type sandboxPayerInput struct {
	Type        *string                  `json:"type"`
	Name        *string                  `json:"name"`
	Document    *string                  `json:"document"`
	BankAccount *sandboxBankAccountInput `json:"bankAccount"`
	Pix         *sandboxPixKeyInput      `json:"pix"`
}

type sandboxBankAccountInput struct {
	Type  *string `json:"type"`
	Digit *string `json:"digit"`
	ISPB  *string `json:"ispb"`
}

type sandboxPixKeyInput struct {
	Key  *string `json:"key"`
	Type *string `json:"type"`
}

// Bank account types of the SPI (ISO 20022 names): checking, savings, payment and salary
// accounts.
var sandboxAccountTypes = []string{"CACC", "SVGS", "TRAN", "SLRY"}

var (
	sandboxISPBRule = validation.By(func(v any) error {
		s, ok := deref[string](v)
		if !ok {
			return nil
		}
		if len(s) != 8 || strings.Trim(s, "0123456789") != "" {
			return validation.NewError("invalid_format", "must be an ISPB: 8 digits")
		}
		return nil
	})
	sandboxDigitRule = validation.By(func(v any) error {
		s, ok := deref[string](v)
		if ok && strings.Trim(s, "0123456789Xx") != "" {
			return validation.NewError("invalid_format", "must be check digits: 0 to 9 or X")
		}
		return nil
	})
)

// parse checks every rule of the payer and maps it to the domain's AccountHolder in the same
// pass: the document and the PIX key are kept as their rules parsed them. The holder is
// meaningful only when no error is returned.
func (p *sandboxPayerInput) parse(out *domain.AccountHolder) error {
	docRules := []validation.Rule{required, documentInto(&out.Document)}
	if p.Type != nil && p.Document != nil {
		docRules = append(docRules, holderDocumentRule(*p.Type))
	}
	err := validation.ValidateStruct(p,
		validation.Field(&p.Type, required, oneOf(string(domain.HolderPF), string(domain.HolderPJ))),
		validation.Field(&p.Name, required, personNameRule),
		validation.Field(&p.Document, docRules...),
		validation.Field(&p.BankAccount, required),
		validation.Field(&p.Pix, required, nested(p.Pix, func(k *sandboxPixKeyInput) error { return k.parse(&out.Pix) })),
	)
	if err == nil {
		out.Type, out.Name = domain.HolderType(*p.Type), *p.Name
		out.BankAccount = domain.BankAccount{Type: *p.BankAccount.Type, Digit: *p.BankAccount.Digit, ISPB: *p.BankAccount.ISPB}
	}
	return err
}

// holderDocumentRule: an individual (PF) has a CPF, a legal entity (PJ) a CNPJ.
func holderDocumentRule(holderType string) validation.Rule {
	return validation.By(func(v any) error {
		s, _ := deref[string](v)
		d, err := domain.ParseDocument(s)
		if err != nil {
			return nil // documentInto reports it
		}
		switch {
		case holderType == string(domain.HolderPF) && d.Kind() != domain.CPF:
			return validation.NewError("invalid_document", "must be a CPF for a holder of type PF")
		case holderType == string(domain.HolderPJ) && d.Kind() != domain.CNPJ:
			return validation.NewError("invalid_document", "must be a CNPJ for a holder of type PJ")
		}
		return nil
	})
}

func (b sandboxBankAccountInput) Validate() error {
	return validation.ValidateStruct(&b,
		validation.Field(&b.Type, required, oneOf(sandboxAccountTypes...)),
		validation.Field(&b.Digit, required, length(1, 2), sandboxDigitRule),
		validation.Field(&b.ISPB, required, sandboxISPBRule),
	)
}

// parse checks the key's type, then the key against its type, and keeps the key as the domain
// normalised it in *dst.
func (k *sandboxPixKeyInput) parse(dst *domain.PixKey) error {
	types := make([]string, 0, 5)
	for _, t := range domain.PixKeyTypes() {
		types = append(types, string(t))
	}
	keyRules := []validation.Rule{required}
	if k.Type != nil && slices.Contains(types, *k.Type) {
		typ := domain.PixKeyType(*k.Type)
		keyRules = append(keyRules, into(dst, func(s string) (domain.PixKey, error) { return domain.NewPixKey(typ, s) },
			"invalid_format", "must be a PIX key of its type"))
	}
	return validation.ValidateStruct(k,
		validation.Field(&k.Type, required, oneOf(types...)),
		validation.Field(&k.Key, keyRules...),
	)
}

// sandboxPayer reads the optional body of POST /sandbox/transaction/{id}/pay: the payer, nil
// when the body or its payer is absent.
func sandboxPayer(w http.ResponseWriter, r *http.Request) (*domain.AccountHolder, bool) {
	if !hasBody(r) {
		return nil, true
	}
	var req sandboxPayRequest
	_, fields, ok := decodeBody(w, r, &req)
	if !ok {
		return nil, false
	}
	var payer domain.AccountHolder
	fields = mergeFieldErrors(fields, fieldErrors("", validation.ValidateStruct(&req,
		validation.Field(&req.Payer, nested(req.Payer, func(p *sandboxPayerInput) error { return p.parse(&payer) })))))
	if len(fields) > 0 {
		validationFailed(w, r, fields)
		return nil, false
	}
	if req.Payer == nil {
		return nil, true
	}
	return &payer, true
}

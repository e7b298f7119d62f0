package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	validation "github.com/go-ozzo/ozzo-validation/v4"
	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// SandboxDeps are the use cases of the /sandbox routes that steer transactions. The routes exist
// only with Config.Sandbox and these use cases set.
type SandboxDeps struct {
	Pay           *application.PaySandboxTransaction
	OpenDispute   *application.OpenSandboxDispute
	AcceptDispute *application.AcceptSandboxDispute
	RejectDispute *application.RejectSandboxDispute
	FailRefund    *application.FailSandboxRefund
}

// sandboxTransactionStep is a sandbox use case that moves one transaction of the caller's
// account and takes nothing else.
type sandboxTransactionStep interface {
	Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error)
}

// sandboxRoutes registers the /sandbox routes that steer transactions. Each answers 200 with
// the transaction as its GET shows it afterwards, 409 invalid_transition from a status the step
// does not leave, 404 for an unknown or another account's id.
func (s *Server) sandboxRoutes(r *mux.Router) {
	d := s.deps.Sandbox
	if d.Pay == nil || d.OpenDispute == nil || d.AcceptDispute == nil || d.RejectDispute == nil || d.FailRefund == nil {
		return
	}
	write := domain.ScopeTransactionWrite
	r.Name("sandbox.transaction.pay").Methods(http.MethodPost).Path("/sandbox/transaction/{id}/pay").
		Handler(s.authed(write, s.sandboxPay))
	steps := []struct {
		name, path string
		step       sandboxTransactionStep
	}{
		{"sandbox.transaction.med.open", "/sandbox/transaction/{id}/med/open", d.OpenDispute},
		{"sandbox.transaction.med.accept", "/sandbox/transaction/{id}/med/accept", d.AcceptDispute},
		{"sandbox.transaction.med.reject", "/sandbox/transaction/{id}/med/reject", d.RejectDispute},
		{"sandbox.transaction.refund.fail", "/sandbox/transaction/{id}/refund/fail", d.FailRefund},
	}
	for _, st := range steps {
		r.Name(st.name).Methods(http.MethodPost).Path(st.path).Handler(s.authed(write, s.sandboxStep(st.step)))
	}
}

func (s *Server) sandboxStep(step sandboxTransactionStep) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok || !emptyBody(w, r) {
			return
		}
		t, err := step.Execute(r.Context(), principalFrom(r.Context()), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, viewTransaction(t, s.cfg.PublicURL))
	}
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

func (p sandboxPayerInput) Validate() error {
	docRules := []validation.Rule{required, documentRule}
	if p.Type != nil && p.Document != nil {
		docRules = append(docRules, holderDocumentRule(*p.Type))
	}
	return validation.ValidateStruct(&p,
		validation.Field(&p.Type, required, oneOf(string(domain.HolderPF), string(domain.HolderPJ))),
		validation.Field(&p.Name, required, personNameRule),
		validation.Field(&p.Document, docRules...),
		validation.Field(&p.BankAccount, required),
		validation.Field(&p.Pix, required),
	)
}

// holderDocumentRule: an individual (PF) has a CPF, a legal entity (PJ) a CNPJ.
func holderDocumentRule(holderType string) validation.Rule {
	return validation.By(func(v any) error {
		s, _ := deref[string](v)
		d, err := domain.ParseDocument(s)
		if err != nil {
			return nil // documentRule reports it
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

func (k sandboxPixKeyInput) Validate() error {
	types := make([]string, 0, 5)
	for _, t := range domain.PixKeyTypes() {
		types = append(types, string(t))
	}
	keyRules := []validation.Rule{required}
	if k.Type != nil && slices.Contains(types, *k.Type) {
		typ := domain.PixKeyType(*k.Type)
		keyRules = append(keyRules, parsed(func(s string) error { _, err := domain.NewPixKey(typ, s); return err },
			"invalid_format", "must be a PIX key of its type"))
	}
	return validation.ValidateStruct(&k,
		validation.Field(&k.Type, required, oneOf(types...)),
		validation.Field(&k.Key, keyRules...),
	)
}

// holder maps a valid payer to the domain's AccountHolder. Call it only after validation.
func (p sandboxPayerInput) holder() *domain.AccountHolder {
	doc, _ := domain.ParseDocument(*p.Document)
	key, _ := domain.NewPixKey(domain.PixKeyType(*p.Pix.Type), *p.Pix.Key)
	return &domain.AccountHolder{
		Type: domain.HolderType(*p.Type), Name: *p.Name, Document: doc,
		BankAccount: domain.BankAccount{Type: *p.BankAccount.Type, Digit: *p.BankAccount.Digit, ISPB: *p.BankAccount.ISPB},
		Pix:         key,
	}
}

func (s *Server) sandboxPay(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var payer *domain.AccountHolder
	if hasBody(r) {
		var req sandboxPayRequest
		_, fields, ok := decodeBody(w, r, &req)
		if !ok {
			return
		}
		fields = mergeFieldErrors(fields, fieldErrors("", validation.ValidateStruct(&req, validation.Field(&req.Payer))))
		if len(fields) > 0 {
			validationFailed(w, r, fields)
			return
		}
		if req.Payer != nil {
			payer = req.Payer.holder()
		}
	}
	t, err := s.deps.Sandbox.Pay.Execute(r.Context(), principalFrom(r.Context()), id, payer)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewTransaction(t, s.cfg.PublicURL))
}

package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.ChargeIssuer = (*Client)(nil)

// Bounds on what a cob's answer may hold for pixgate to keep it.
const (
	maxCopyPaste = 1024 // a BR Code is a few hundred characters
	maxLocation  = 77   // a payload location, without scheme, as a BR Code holds it
)

// cobBody is API Pix's CobSolicitada, the body of PUT /cob/{txid}.
type cobBody struct {
	Calendario         cobCalendario `json:"calendario"`
	Devedor            *cobDevedor   `json:"devedor,omitempty"`
	Valor              cobValor      `json:"valor"`
	Chave              string        `json:"chave"`
	SolicitacaoPagador string        `json:"solicitacaoPagador,omitempty"`
}

type cobCalendario struct {
	Expiracao int `json:"expiracao"`
}

type cobDevedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

type cobValor struct {
	Original string `json:"original"`
}

// cobAnswer is API Pix's CobGerada and CobCompleta, as far as pixgate reads them; every other
// member is ignored, as the specification asks of clients.
type cobAnswer struct {
	Calendario struct {
		Criacao   string `json:"criacao"`
		Expiracao int    `json:"expiracao"`
	} `json:"calendario"`
	TxID    string `json:"txid"`
	Revisao int    `json:"revisao"`
	Loc     struct {
		ID       int64  `json:"id"`
		Location string `json:"location"`
	} `json:"loc"`
	Location      string   `json:"location"`
	Status        string   `json:"status"`
	Valor         cobValor `json:"valor"`
	Chave         string   `json:"chave"`
	PixCopiaECola string   `json:"pixCopiaECola"`
}

// removal is the body of PATCH /cob/{txid} that ends a charge.
type removal struct {
	Status string `json:"status"`
}

// Name is the acquirer's name, each transaction's `acquirer`.
func (c *Client) Name() string { return c.name }

// Create is PUT /cob/{txid}. The transport repeats it while its outcome is unknown (429, 5xx, a
// lost connection), always under the same txid. A PUT answered 4xx is followed by GET
// /cob/{txid}: when an earlier PUT under the txid (a repeat of this call's, or a merchant's
// retry) made the charge, the PSP refuses the txid as used, and the cob found there, active
// and of the same amount and key, is this charge. Otherwise the refusal stands, as a
// *ports.ChargeRefusedError with the PSP's title and detail. A PUT whose answer cannot be read
// is read back the same way. Any other end (no answer in time, 401 with a fresh token) is
// ports.ErrChargeUnavailable.
func (c *Client) Create(ctx context.Context, r ports.ChargeRequest) (ports.Charge, error) {
	if err := checkRequest(r); err != nil {
		return ports.Charge{}, err
	}
	var ans cobAnswer
	err := c.client.Do(ctx, psp.Request{
		Operation: OpCobPut, Method: http.MethodPut, Path: []string{"cob", r.TxID}, Body: c.cobBody(r),
		// The txid is the charge's identity at the PSP: a repeat never makes a second one.
		Retryable: true,
	}, &ans)
	var pe *psp.Error
	errors.As(err, &pe)
	switch {
	case err == nil:
		ch, err := c.charge(r.TxID, ans)
		if err == nil && (ch.Amount != r.Amount || ch.Key != c.key) {
			err = fmt.Errorf("the PSP answered a charge of %s for key %q", ch.Amount.Reais(), clean(ch.Key))
		}
		if err != nil {
			return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", r.TxID, ports.ErrChargeUnavailable, err)
		}
		return ch, nil
	case errors.Is(err, psp.ErrRefused) || pe != nil && pe.Outcome == psp.OutcomeBadAnswer:
		ch, found, rerr := c.readBack(ctx, r)
		switch {
		case found:
			return ch, nil
		case rerr != nil:
			return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v (read back: %v)", r.TxID, ports.ErrChargeUnavailable, err, rerr)
		case errors.Is(err, psp.ErrRefused):
			return ports.Charge{}, refusal(pe)
		}
	}
	return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", r.TxID, ports.ErrChargeUnavailable, err)
}

// readBack is GET /cob/{txid} after a PUT that did not answer the charge: found when the PSP
// holds an active cob of r's amount for pixgate's key under the txid. A GET the PSP refuses
// (403 to a client without cob.read, say) finds nothing, so that the PUT's refusal stands; an
// error is a GET that did not say whether there is one.
func (c *Client) readBack(ctx context.Context, r ports.ChargeRequest) (ports.Charge, bool, error) {
	ch, err := c.Get(ctx, r.TxID)
	switch {
	case errors.Is(err, ports.ErrChargeNotFound) || errors.Is(err, ports.ErrChargeRefused):
		return ports.Charge{}, false, nil
	case err != nil:
		return ports.Charge{}, false, err
	}
	return ch, ch.Status == ports.ChargeActive && ch.Amount == r.Amount && ch.Key == c.key, nil
}

// Get is GET /cob/{txid}.
func (c *Client) Get(ctx context.Context, txid string) (ports.Charge, error) {
	if !domain.ValidCobTxID(txid) {
		return ports.Charge{}, fmt.Errorf("apipix: %q is not a txid of 26 to 35 characters [A-Za-z0-9]", txid)
	}
	var ans cobAnswer
	err := c.client.Do(ctx, psp.Request{Operation: OpCobGet, Method: http.MethodGet, Path: []string{"cob", txid}, Retryable: true}, &ans)
	var pe *psp.Error
	switch {
	case errors.Is(err, psp.ErrNotFound):
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w", txid, ports.ErrChargeNotFound)
	case errors.Is(err, psp.ErrRefused) && errors.As(err, &pe):
		return ports.Charge{}, refusal(pe)
	case err != nil:
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", txid, ports.ErrChargeUnavailable, err)
	}
	ch, err := c.charge(txid, ans)
	if err != nil {
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", txid, ports.ErrChargeUnavailable, err)
	}
	return ch, nil
}

// Remove is PATCH /cob/{txid} {"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}, sent again while
// its outcome is unknown. A PATCH refused (API Pix refuses to change a cob that is no longer
// ATIVA, which is what a repeat after a PATCH carried out meets) is read back: a cob removed by
// pixgate is the answer, one paid or removed by the PSP a *ports.ChargeRefusedError.
func (c *Client) Remove(ctx context.Context, txid string) (ports.Charge, error) {
	if !domain.ValidCobTxID(txid) {
		return ports.Charge{}, fmt.Errorf("apipix: %q is not a txid of 26 to 35 characters [A-Za-z0-9]", txid)
	}
	var ans cobAnswer
	err := c.client.Do(ctx, psp.Request{
		Operation: OpCobPatch, Method: http.MethodPatch, Path: []string{"cob", txid},
		Body: removal{Status: string(ports.ChargeRemovedByUs)}, Retryable: true,
	}, &ans)
	var pe *psp.Error
	switch {
	case errors.Is(err, psp.ErrNotFound):
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w", txid, ports.ErrChargeNotFound)
	case errors.Is(err, psp.ErrRefused) && errors.As(err, &pe):
		ch, gerr := c.Get(ctx, txid)
		switch {
		case gerr == nil && ch.Status == ports.ChargeRemovedByUs:
			return ch, nil
		case gerr == nil || errors.Is(gerr, ports.ErrChargeNotFound):
			return ports.Charge{}, refusal(pe)
		}
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v (read back: %v)", txid, ports.ErrChargeUnavailable, err, gerr)
	case err != nil:
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", txid, ports.ErrChargeUnavailable, err)
	}
	ch, err := c.charge(txid, ans)
	if err != nil {
		return ports.Charge{}, fmt.Errorf("apipix: cob %s: %w: %v", txid, ports.ErrChargeUnavailable, err)
	}
	return ch, nil
}

// checkRequest refuses, before anything is sent, a request the PSP could only refuse: a
// caller's bug, not the PSP's answer.
func checkRequest(r ports.ChargeRequest) error {
	switch {
	case !domain.ValidCobTxID(r.TxID):
		return fmt.Errorf("apipix: %q is not a txid of 26 to 35 characters [A-Za-z0-9]", r.TxID)
	case r.Amount < 1:
		return fmt.Errorf("apipix: cob %s: the amount must be positive", r.TxID)
	case r.ExpirationSeconds < 1:
		return fmt.Errorf("apipix: cob %s: the expiration must be positive", r.TxID)
	}
	return nil
}

// cobBody is r as API Pix takes it.
func (c *Client) cobBody(r ports.ChargeRequest) cobBody {
	b := cobBody{
		Calendario:         cobCalendario{Expiracao: r.ExpirationSeconds},
		Valor:              cobValor{Original: r.Amount.Reais()},
		Chave:              c.key,
		SolicitacaoPagador: description(r.PayerRequest),
	}
	if name := strings.TrimSpace(r.Debtor.Name); name != "" && !r.Debtor.Document.IsZero() {
		name = string([]rune(name)[:min(utf8.RuneCountInString(name), 200)])
		switch r.Debtor.Document.Kind() {
		case domain.CPF:
			b.Devedor = &cobDevedor{CPF: r.Debtor.Document.Value(), Nome: name}
		case domain.CNPJ:
			b.Devedor = &cobDevedor{CNPJ: r.Debtor.Document.Value(), Nome: name}
		}
	}
	return b
}

// charge reads a cob the PSP answered for txid; an answer that is not one is an error.
func (c *Client) charge(txid string, a cobAnswer) (ports.Charge, error) {
	if a.TxID != "" && a.TxID != txid {
		return ports.Charge{}, fmt.Errorf("the answer is about the cob %q", clean(a.TxID))
	}
	created, err := time.Parse(time.RFC3339Nano, a.Calendario.Criacao)
	if err != nil {
		return ports.Charge{}, fmt.Errorf("the cob's calendario.criacao %q is not a time", clean(a.Calendario.Criacao))
	}
	amount, err := domain.ParseReais(a.Valor.Original)
	if err != nil {
		return ports.Charge{}, fmt.Errorf("the cob's valor.original %q is not an amount", clean(a.Valor.Original))
	}
	if a.Calendario.Expiracao < 1 {
		// The specification's default, when the PSP leaves it out.
		a.Calendario.Expiracao = 86400
	}
	location := a.Location
	if location == "" {
		location = a.Loc.Location
	}
	if len(location) > maxLocation || !printable(location) {
		return ports.Charge{}, fmt.Errorf("the cob's location is not a payload location")
	}
	if len(a.PixCopiaECola) > maxCopyPaste || !printable(a.PixCopiaECola) {
		return ports.Charge{}, fmt.Errorf("the cob's pixCopiaECola is not a BR Code")
	}
	if a.PixCopiaECola == "" && location == "" {
		return ports.Charge{}, fmt.Errorf("the cob has neither pixCopiaECola nor a location")
	}
	return ports.Charge{
		TxID: txid, Status: ports.ChargeStatus(a.Status), CreatedAt: created.UTC(), ExpirationSeconds: a.Calendario.Expiracao,
		Amount: amount, Key: a.Chave, Revision: a.Revisao, LocationID: a.Loc.ID, Location: location,
		CopyPaste: a.PixCopiaECola,
	}, nil
}

// refusal is the PSP's refusal in its words.
func refusal(e *psp.Error) *ports.ChargeRefusedError {
	detail := e.Problem.Detail
	var vs []string
	for _, v := range e.Problem.Violations {
		vs = append(vs, strings.TrimPrefix(v.Property+": "+v.Reason, ": "))
	}
	if len(vs) > 0 {
		detail = strings.TrimPrefix(detail+" ["+strings.Join(vs, "; ")+"]", " ")
	}
	return &ports.ChargeRefusedError{Status: e.Status, Title: e.Problem.Title, Detail: detail}
}

// printable tells whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

package efi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/ports"
)

// The transport's operations, as metrics and errors name them.
const (
	OpPayoutPut = "payout_put"
	OpPayoutGet = "payout_get"
)

// Config is what the adapter needs: the transport to Efí and the key that pays.
type Config struct {
	// Transport reaches Efí's payout API: its APIURL is the API's base
	// (https://pix.api.efipay.com.br), below which /v3/gn/pix/... is joined.
	Transport psp.Config
	// PayerKey is pixgate's PIX key at Efí (pagador.chave): the account the payouts leave.
	PayerKey string
}

// Payouts is Efí's payout API as a ports.Payouts. Build it with New; safe for concurrent use.
type Payouts struct {
	client *psp.Client
	payer  string
}

var _ ports.Payouts = (*Payouts)(nil)

// New checks cfg and builds the adapter; its errors are the transport's *psp.SettingError
// values (joined), and one for a missing payer key.
func New(cfg Config) (*Payouts, error) {
	if strings.TrimSpace(cfg.PayerKey) == "" {
		return nil, errors.New("efi: the paying PIX key is required")
	}
	c, err := psp.New(cfg.Transport)
	if err != nil {
		return nil, err
	}
	return &Payouts{client: c, payer: cfg.PayerKey}, nil
}

// CloseIdleConnections closes the connections kept for later calls (at shutdown).
func (p *Payouts) CloseIdleConnections() { p.client.CloseIdleConnections() }

// sendBody is the PUT's body.
type sendBody struct {
	Valor      string    `json:"valor"`
	Pagador    party     `json:"pagador"`
	Favorecido recipient `json:"favorecido"`
}

type party struct {
	Chave string `json:"chave"`
}

type recipient struct {
	Chave string `json:"chave"`
}

// sendAnswer is what a PUT answers; statusAnswer what a GET does. Members not named here are
// ignored.
type sendAnswer struct {
	IDEnvio string `json:"idEnvio"`
	E2EID   string `json:"e2eId"`
	Status  string `json:"status"`
}

type statusAnswer struct {
	EndToEndID string `json:"endToEndId"`
	IDEnvio    string `json:"idEnvio"`
	Status     string `json:"status"`
	Motivo     string `json:"motivo"`
	GnExtras   struct {
		Erro struct {
			Codigo string `json:"codigo"`
			Motivo string `json:"motivo"`
		} `json:"erro"`
	} `json:"gnExtras"`
}

// Send is PUT /v3/gn/pix/{idEnvio}. The transport repeats it when its outcome is unknown: a
// repeat after Efí carried the first out answers 409, ErrPayoutIDTaken.
func (p *Payouts) Send(ctx context.Context, o ports.PayoutOrder) (ports.PayoutResult, error) {
	if err := checkID(o.ID); err != nil {
		return ports.PayoutResult{}, err
	}
	if o.Amount <= 0 || o.Key.Key == "" {
		return ports.PayoutResult{}, fmt.Errorf("efi send %s: an amount and a key are required", o.ID)
	}
	var ans sendAnswer
	err := p.client.Do(ctx, psp.Request{
		Operation: OpPayoutPut, Method: http.MethodPut, Path: []string{"v3", "gn", "pix", o.ID},
		Body: sendBody{Valor: o.Amount.Reais(), Pagador: party{Chave: p.payer}, Favorecido: recipient{Chave: o.Key.Key}},
		// Efí keeps the idEnvio: a repeat never makes a second payout.
		Retryable: true,
	}, &ans)
	var pe *psp.Error
	switch {
	case err == nil:
		return ports.PayoutResult{Status: ports.PayoutStatus(ans.Status), EndToEndID: ans.E2EID}, nil
	case errors.As(err, &pe) && pe.Status == http.StatusConflict:
		return ports.PayoutResult{}, fmt.Errorf("efi send %s: %w (%v)", o.ID, ports.ErrPayoutIDTaken, err)
	case errors.Is(err, psp.ErrRefused) && pe != nil:
		return ports.PayoutResult{}, &ports.PayoutRefusedError{Reason: reason(pe)}
	}
	// Unknown, or credentials Efí did not accept (it did nothing then, and the payout is read
	// back and sent once they work again).
	return ports.PayoutResult{}, fmt.Errorf("efi send %s: %w", o.ID, err)
}

// Status is GET /v2/gn/pix/enviados/id-envio/{idEnvio}.
func (p *Payouts) Status(ctx context.Context, id string) (ports.PayoutResult, error) {
	if err := checkID(id); err != nil {
		return ports.PayoutResult{}, err
	}
	var ans statusAnswer
	err := p.client.Do(ctx, psp.Request{
		Operation: OpPayoutGet, Method: http.MethodGet, Path: []string{"v2", "gn", "pix", "enviados", "id-envio", id},
		Retryable: true,
	}, &ans)
	switch {
	case errors.Is(err, psp.ErrNotFound):
		return ports.PayoutResult{}, fmt.Errorf("efi payout %s: %w", id, ports.ErrPayoutNotFound)
	case err != nil:
		// Never a refusal: reading does not make or unmake a payout.
		return ports.PayoutResult{}, fmt.Errorf("efi payout %s: %v", id, err)
	case ans.IDEnvio != "" && ans.IDEnvio != id:
		return ports.PayoutResult{}, fmt.Errorf("efi payout %s: the answer is about %q", id, clean(ans.IDEnvio))
	}
	res := ports.PayoutResult{Status: ports.PayoutStatus(ans.Status), EndToEndID: ans.EndToEndID}
	if res.Status == ports.PayoutNotDone {
		res.Reason = clean(firstOf(ans.GnExtras.Erro.Motivo, ans.Motivo))
		if code := clean(ans.GnExtras.Erro.Codigo); code != "" && res.Reason != "" {
			res.Reason += " (" + code + ")"
		}
	}
	return res, nil
}

// reason is Efí's reason for a refusal, in its words: its mensagem and nome, or an API Pix
// problem's title and detail, or the status.
func reason(e *psp.Error) string {
	pr := e.Problem
	switch {
	case pr.Message != "" && pr.Name != "":
		return pr.Message + " (" + pr.Name + ")"
	case pr.Message != "" || pr.Name != "":
		return firstOf(pr.Message, pr.Name)
	case pr.String() != "":
		return pr.String()
	}
	return fmt.Sprintf("refused by the PSP (HTTP %d)", e.Status)
}

// checkID refuses an idEnvio Efí would not take (1 to 35 characters [a-zA-Z0-9]) before
// anything is sent: a caller's bug, not the PSP's answer.
func checkID(id string) error {
	if len(id) < 1 || len(id) > 35 || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return fmt.Errorf("efi: %q is not an idEnvio (1 to 35 letters and digits)", id)
	}
	return nil
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// clean bounds a text Efí answered that pixgate keeps (psp.CleanText).
func clean(s string) string { return psp.CleanText(s) }

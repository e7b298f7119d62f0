package apipix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// receivedPerPage is what a page of the listing asks for: the specification's largest.
const receivedPerPage = 1000

var _ ports.ReceivedPixLister = (*Client)(nil)

// ListReceivedPix is GET {API}/pix?inicio&fim&paginacao.paginaAtual&paginacao.itensPorPagina:
// one page of the PIX the PSP received from q.Start to q.End. It is a read, retried on 429,
// 5xx and lost connections like every read; an outcome still unknown after the retries is
// ports.ErrAcquirerUnavailable. Each listed PIX is read as leniently as a callback's entry:
// members the specification does not define are ignored, and an entry that breaks it is
// answered Invalid, never failing the page.
func (c *Client) ListReceivedPix(ctx context.Context, q ports.ReceivedPixQuery) (ports.ReceivedPixPage, error) {
	query := url.Values{
		"inicio":                   {q.Start.UTC().Format(time.RFC3339Nano)},
		"fim":                      {q.End.UTC().Format(time.RFC3339Nano)},
		"paginacao.paginaAtual":    {strconv.Itoa(q.Page)},
		"paginacao.itensPorPagina": {strconv.Itoa(receivedPerPage)},
	}
	var answer struct {
		Parametros struct {
			Paginacao struct {
				PaginaAtual         int `json:"paginaAtual"`
				QuantidadeDePaginas int `json:"quantidadeDePaginas"`
			} `json:"paginacao"`
		} `json:"parametros"`
		Pix []json.RawMessage `json:"pix"`
	}
	err := c.client.Do(ctx, psp.Request{Operation: OpPixList, Method: http.MethodGet, Path: []string{"pix"}, Query: query, Retryable: true}, &answer)
	switch {
	case errors.Is(err, psp.ErrOutcomeUnknown):
		return ports.ReceivedPixPage{}, fmt.Errorf("%w: %w", ports.ErrAcquirerUnavailable, err)
	case err != nil:
		return ports.ReceivedPixPage{}, err
	}
	page := ports.ReceivedPixPage{Page: q.Page, Pages: max(1, answer.Parametros.Paginacao.QuantidadeDePaginas)}
	if p := answer.Parametros.Paginacao.PaginaAtual; p != q.Page {
		return ports.ReceivedPixPage{}, fmt.Errorf("apipix: asked for page %d of the received PIX, the PSP answered page %d", q.Page, p)
	}
	for _, raw := range answer.Pix {
		page.Pix = append(page.Pix, receivedOf(raw))
	}
	return page, nil
}

// receivedOf reads one listed PIX (the specification's Pix schema) member by member, so that
// every broken member is named: members the specification does not define are ignored, and
// one that breaks it makes the entry Invalid, with why.
func receivedOf(raw json.RawMessage) ports.ReceivedPix {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return ports.ReceivedPix{Invalid: "the entry is not an object"}
	}
	var why []string
	bad := func(field, reason string) { why = append(why, field+" "+reason) }
	p := ports.ReceivedPix{}
	if s, _ := receivedString(m, "endToEndId"); receivedAlnum(s, 32, 32) {
		p.EndToEndID = s
	} else {
		bad("endToEndId", "must be an end-to-end id: 32 letters and digits")
	}
	if s, present := receivedString(m, "txid"); present {
		if receivedAlnum(s, 1, 35) {
			p.TxID = s
		} else {
			bad("txid", "must have 1 to 35 letters and digits")
		}
	}
	var err error
	s, _ := receivedString(m, "valor")
	if p.Amount, err = receivedValor(s); err != nil {
		bad("valor", "must be a positive amount in reais with two decimals")
	}
	s, _ = receivedString(m, "horario")
	if p.PaidAt, err = time.Parse(time.RFC3339Nano, s); err != nil {
		bad("horario", "must be an RFC 3339 date-time")
	}
	var devs []json.RawMessage
	if raw, ok := m["devolucoes"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &devs) != nil {
			bad("devolucoes", "must be an array")
		}
	}
	for i, rawDev := range devs {
		at := fmt.Sprintf("devolucoes[%d]", i)
		var d map[string]json.RawMessage
		if json.Unmarshal(rawDev, &d) != nil {
			bad(at, "must be an object")
			continue
		}
		r := ports.ReceivedDevolution{}
		r.ID, _ = receivedString(d, "id")
		r.ReturnID, _ = receivedString(d, "rtrId")
		r.Nature, _ = receivedString(d, "natureza")
		status, _ := receivedString(d, "status")
		r.Status = ports.DevolutionStatus(status)
		motivo, _ := receivedString(d, "motivo")
		r.Reason = strings.TrimSpace(motivo)
		if !receivedAlnum(r.ID, 1, 35) {
			bad(at+".id", "must have 1 to 35 letters and digits")
		}
		if !receivedAlnum(r.ReturnID, 32, 32) {
			bad(at+".rtrId", "must be an end-to-end id: 32 letters and digits")
		}
		valor, _ := receivedString(d, "valor")
		if r.Amount, err = receivedValor(valor); err != nil {
			bad(at+".valor", "must be a positive amount in reais with two decimals")
		}
		switch r.Status {
		case ports.DevolutionInProgress, ports.DevolutionReturned, ports.DevolutionNotDone:
		default:
			bad(at+".status", "must be EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO")
		}
		p.Devolutions = append(p.Devolutions, r)
	}
	if len(why) > 0 {
		return ports.ReceivedPix{EndToEndID: p.EndToEndID, TxID: p.TxID, Invalid: strings.Join(why, "; ")}
	}
	return p
}

// receivedString reads the string member key of m: "" when absent, null or not a string;
// present tells whether it was there and not null.
func receivedString(m map[string]json.RawMessage, key string) (s string, present bool) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", false
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", true
	}
	return s, true
}

func receivedValor(s string) (domain.Cents, error) {
	c, err := domain.ParseReais(s)
	if err == nil && c < 1 {
		err = fmt.Errorf("valor %q is not positive", s)
	}
	return c, err
}

func receivedAlnum(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

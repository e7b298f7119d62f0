package apipix

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.Acquirer = (*Client)(nil)

// MaxDescription is API Pix's limit on a devolution's descricao, in characters.
const MaxDescription = 140

// devolutionRequest is the body of PUT /pix/{e2eid}/devolucao/{id}.
type devolutionRequest struct {
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza"`
	Descricao string `json:"descricao,omitempty"`
}

// devolutionAnswer is API Pix's devolution; members not named here are ignored.
type devolutionAnswer struct {
	ID     string `json:"id"`
	RtrID  string `json:"rtrId"`
	Valor  string `json:"valor"`
	Status string `json:"status"`
	Motivo string `json:"motivo"`
}

// RequestDevolution asks for the devolution d, nature ORIGINAL (the payment itself is
// returned), with one PUT /pix/{e2eid}/devolucao/{id}. The PUT is not repeated by the
// transport: API Pix refuses an id already used (400), so a repeat after a PUT the PSP carried
// out would read as a refusal; a caller that must know reads the devolution back (Devolution)
// instead. The answer's status maps one to one. A 4xx answer is ports.ErrDevolutionRefused
// (devolution_read.go); an answer that does not name the devolution asked, or says DEVOLVIDO
// without its rtrId, is an error, as is every other end: the outcome is then unknown, as
// ports.Acquirer says.
func (c *Client) RequestDevolution(ctx context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	if !alphanumeric(d.EndToEndID, 64) || !alphanumeric(d.ID, 35) || d.Amount < 1 {
		return ports.DevolutionResult{}, fmt.Errorf("apipix: a devolution needs a payment's endToEndId, an id of 1 to 35 characters [A-Za-z0-9] and an amount")
	}
	var ans devolutionAnswer
	err := c.client.Do(ctx, psp.Request{
		Operation: OpDevolutionPut, Method: http.MethodPut, Path: []string{"pix", d.EndToEndID, "devolucao", d.ID},
		Body: devolutionRequest{Valor: d.Amount.Reais(), Natureza: "ORIGINAL", Descricao: description(d.Reason)},
	}, &ans)
	if err != nil {
		return ports.DevolutionResult{}, devolutionError("devolution "+d.ID+" of "+d.EndToEndID, err, true)
	}
	return devolutionResult(d, ans)
}

// devolutionResult maps the PSP's answer to d onto the port's.
func devolutionResult(d ports.Devolution, ans devolutionAnswer) (ports.DevolutionResult, error) {
	if ans.ID != "" && ans.ID != d.ID {
		return ports.DevolutionResult{}, fmt.Errorf("apipix: asked for devolution %s, answered devolution %q", d.ID, clean(ans.ID))
	}
	if ans.Valor != "" {
		if v, err := domain.ParseReais(ans.Valor); err != nil || v != d.Amount {
			return ports.DevolutionResult{}, fmt.Errorf("apipix: devolution %s of %s answered valor %q", d.ID, d.Amount.Reais(), clean(ans.Valor))
		}
	}
	switch status := ports.DevolutionStatus(ans.Status); status {
	case ports.DevolutionInProgress:
		return ports.DevolutionResult{Status: status}, nil
	case ports.DevolutionReturned:
		if ans.RtrID == "" {
			return ports.DevolutionResult{}, fmt.Errorf("apipix: devolution %s answered DEVOLVIDO without its rtrId", d.ID)
		}
		return ports.DevolutionResult{Status: status, ReturnID: clean(ans.RtrID)}, nil
	case ports.DevolutionNotDone:
		return ports.DevolutionResult{Status: status, Reason: clean(ans.Motivo)}, nil
	}
	return ports.DevolutionResult{}, fmt.Errorf("apipix: devolution %s answered the unknown status %q", d.ID, clean(ans.Status))
}

// alphanumeric tells whether s is 1 to max characters [A-Za-z0-9], as API Pix's ids are: it
// keeps them whole path segments.
func alphanumeric(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// description is a text as API Pix takes it: at most 140 characters.
func description(reason string) string {
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) <= MaxDescription {
		return reason
	}
	return string([]rune(reason)[:MaxDescription])
}

// clean bounds a text the PSP answered that pixgate keeps or shows (psp.CleanText).
func clean(s string) string { return psp.CleanText(s) }

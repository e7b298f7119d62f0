package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/ports"
)

// Devolution reads back the devolution id of the payment endToEndID with GET
// /pix/{e2eid}/devolucao/{id}. A 404 is ports.ErrDevolutionNotFound (the PSP never made it);
// any other failure means the PSP could not tell now. The answer's valor is not checked here
// (the caller knows the amount), its id and status are, as RequestDevolution checks them.
func (c *Client) Devolution(ctx context.Context, endToEndID, id string) (ports.DevolutionResult, error) {
	if !alphanumeric(endToEndID, 64) || !alphanumeric(id, 35) {
		return ports.DevolutionResult{}, fmt.Errorf("apipix: a devolution is read by a payment's endToEndId and an id of 1 to 35 characters [A-Za-z0-9]")
	}
	var ans devolutionAnswer
	err := c.client.Do(ctx, psp.Request{
		Operation: OpDevolutionGet, Method: http.MethodGet, Path: []string{"pix", endToEndID, "devolucao", id},
	}, &ans)
	if err != nil {
		return ports.DevolutionResult{}, devolutionError("reading devolution "+id+" of "+endToEndID, err, false)
	}
	ans.Valor = ""
	return devolutionResult(ports.Devolution{EndToEndID: endToEndID, ID: id}, ans)
}

// devolutionError is the transport's error err as the port's: for a PUT (send), a refusal
// (any 4xx but 401: API Pix answers 400 for an id already used too) is a
// *ports.DevolutionRefusedError with the PSP's problem as its reason; for a GET, a 404 is
// ports.ErrDevolutionNotFound. Everything else (5xx, 429, timeouts, credentials refused) is an
// unknown outcome, which the caller reads back later.
func devolutionError(what string, err error, send bool) error {
	var pe *psp.Error
	switch {
	case !send && errors.Is(err, psp.ErrNotFound):
		return fmt.Errorf("apipix: %s: %w", what, ports.ErrDevolutionNotFound)
	case send && errors.Is(err, psp.ErrRefused) && errors.As(err, &pe):
		reason := clean(pe.Problem.String())
		if reason == "" {
			reason = fmt.Sprintf("HTTP %d", pe.Status)
		}
		return &ports.DevolutionRefusedError{Reason: reason}
	}
	return fmt.Errorf("apipix: %s: %w", what, err)
}

package apipix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/pixgate/pixgate/ports"
)

// Devolution reads back the devolution id of the payment endToEndID with GET
// /pix/{e2eid}/devolucao/{id}: a 404 is ports.ErrDevolutionNotFound, any other failure an
// unknown outcome.
func (a *Acquirer) Devolution(ctx context.Context, endToEndID, id string) (ports.DevolutionResult, error) {
	if !alphanumeric(endToEndID) || !alphanumeric(id) || len(id) > 35 {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: a devolution is read by a payment's endToEndId and an id of 1 to 35 characters [A-Za-z0-9]")
	}
	what := "GET /pix/" + endToEndID + "/devolucao/" + id
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base.JoinPath("pix", endToEndID, "devolucao", id).String(), nil)
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	res, err := a.client.Do(req)
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: %w", what, unwrapURLError(err))
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: reading the answer: %w", what, unwrapURLError(err))
	}
	if res.StatusCode == http.StatusNotFound {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: %w", what, ports.ErrDevolutionNotFound)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s answered %d%s", what, res.StatusCode, problem(raw, a.token))
	}
	var ans devolutionAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: the answer is no devolution: %w", what, err)
	}
	ans.Valor = "" // the amount is not known here; the caller compares it
	return result(ports.Devolution{ID: id}, ans)
}

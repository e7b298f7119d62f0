package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// The acquirer's callback, POST /acquirer/pix, with Banco Central's callback bodies
// (docs/API.md, Acquirer notifications).

// AcquirerSecret is a shared secret for the acquirer's callback (PIXGATE_ACQUIRER_SECRET) long
// enough to be accepted.
const AcquirerSecret = "acquirer-shared-secret-of-at-least-32-characters"

// AcquirerE2E is an end-to-end id of a payment.
const AcquirerE2E = "E00360305202611221419aBcDeFgHiJk"

// AcquirerHorario writes at as acquirers do: Brasília's offset, milliseconds.
func AcquirerHorario(at time.Time) string {
	return at.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02T15:04:05.000-07:00")
}

// PixPayment is one `pix` entry of a callback paying 10.00, the amount of MinimalTransaction,
// to txid at horario, written as given (a horario must lie between the charge's creation and
// the API's now plus 5 minutes).
func PixPayment(txid, e2e, horario string) map[string]any {
	return map[string]any{
		"endToEndId": e2e, "txid": txid, "valor": "10.00", "chave": "pix@pixgate.example",
		"horario": horario, "infoPagador": "pedido 123",
	}
}

// Devolucao is a `devolucoes` entry returning 10.00 (DEVOLVIDO, refund id D0001), with
// changes set over it.
func Devolucao(changes map[string]any) map[string]any {
	d := map[string]any{
		"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "10.00", "status": "DEVOLVIDO",
		"natureza": "ORIGINAL", "horario": map[string]any{"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"},
	}
	for k, v := range changes {
		d[k] = v
	}
	return d
}

// AcquirerResult is one result of the callback's answer.
type AcquirerResult struct {
	EndToEndID string `json:"endToEndId"`
	TxID       string `json:"txid"`
	IDEnvio    string `json:"idEnvio"`
	Outcome    string `json:"outcome"`
	Status     string `json:"status"`
	Detail     string `json:"detail"`
	Devolucoes []struct {
		ID      string `json:"id"`
		RtrID   string `json:"rtrId"`
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
	} `json:"devolucoes"`
}

// AcquirerResults wants r to be a 200 answer of the callback holding nothing but its results,
// and returns them.
func AcquirerResults(t testing.TB, r Response) []AcquirerResult {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d, want 200\n%s", r.Status, r.Body)
	}
	var out struct {
		Results []AcquirerResult `json:"results"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("answer %s: %v", r.Body, err)
	}
	return out.Results
}

package apitest

import (
	"slices"
	"testing"
	"time"
)

// ValidCPF and ValidCNPJ are documents with correct check digits.
const (
	ValidCPF  = "529.982.247-25"
	ValidCNPJ = "11.222.333/0001-81"
)

// MinimalTransaction is the smallest valid body of POST /transaction: 10.00 by PIX. Each call
// returns a new map, which the caller may change.
func MinimalTransaction() map[string]any {
	return map[string]any{"amount": 1000, "paymentMethod": "PIX", "pix": map[string]any{}}
}

// FullTransaction is a body of POST /transaction that uses every field of the request. Each
// call returns a new map, which the caller may change.
func FullTransaction() map[string]any {
	return map[string]any{
		"amount":        12345,
		"paymentMethod": "PIX",
		"webhookUrl":    "https://merchant.example.com/hooks/pix?source=pixgate",
		"externalCode":  "order-000123",
		"customer": map[string]any{
			"ip": "203.0.113.7", "name": "João D'Ávila-Souza", "email": "joao@example.com.br",
			"document": ValidCPF, "landline": "+55 (11) 3456-7890", "mobilePhone": "(21) 98765-4321",
			"birthdate": "1990-05-17",
		},
		"seller":        map[string]any{"name": "Loja Exemplo", "document": ValidCNPJ},
		"isInfoProduct": false,
		"address": map[string]any{
			"zipCode": "01310-100", "number": "1578", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
			"city": "São Paulo", "state": "SP", "country": "Brasil", "complement": "Conjunto 42",
		},
		"items": []any{
			map[string]any{"title": "Camiseta", "unitPrice": 5000, "quantity": 2, "description": "Algodão"},
			map[string]any{"title": "Boné", "unitPrice": 2345},
		},
		"metadata": map[string]any{"campaign": "black-friday", "attempt": 1},
		"pix":      map[string]any{"expirationSeconds": 600},
	}
}

// StatusHistory checks the statusHistory of a transaction body: its statuses are want, each
// duration is the next entry's date minus its own, the last is null, updatedAt is the last
// date and status the last status (docs/API.md, Status history). It returns the durations in milliseconds.
func StatusHistory(t testing.TB, got map[string]any, want ...string) []int64 {
	t.Helper()
	const layout = "2006-01-02T15:04:05.000Z"
	entries := got["statusHistory"].([]any)
	var statuses []string
	var dates []time.Time
	for _, raw := range entries {
		e := raw.(map[string]any)
		statuses = append(statuses, e["status"].(string))
		d, err := time.Parse(layout, e["date"].(string))
		if err != nil {
			t.Fatalf("history date %v: %v", e["date"], err)
		}
		dates = append(dates, d)
	}
	if !slices.Equal(statuses, want) {
		t.Fatalf("statusHistory %v, want %v", statuses, want)
	}
	var durations []int64
	for i, raw := range entries {
		d := raw.(map[string]any)["durationInMilliseconds"]
		if i == len(entries)-1 {
			if d != nil {
				t.Fatalf("the current status has duration %v, want null", d)
			}
			break
		}
		ms, ok := d.(float64)
		if want := dates[i+1].Sub(dates[i]).Milliseconds(); !ok || int64(ms) != want || ms < 0 {
			t.Fatalf("%s lasted %v ms, want %d (next date minus its own)", statuses[i], d, want)
		}
		durations = append(durations, int64(ms))
	}
	if got["updatedAt"] != entries[len(entries)-1].(map[string]any)["date"] || got["status"] != want[len(want)-1] {
		t.Fatalf("status %v updatedAt %v do not match the last history entry", got["status"], got["updatedAt"])
	}
	return durations
}

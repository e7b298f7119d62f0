package httpapi

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func parseBody(t *testing.T, body string, now time.Time) (domain.Order, []FieldError) {
	t.Helper()
	var req createTransactionRequest
	if _, fields, err := decodeJSONBytes([]byte(body), &req); err != nil || len(fields) > 0 {
		t.Fatalf("decoding: %v %v", err, fields)
	}
	return req.parse(now)
}

func TestCreateTransactionRequestMapsWhatItChecked(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)
	o, fields := parseBody(t, benchCreateBody, now)
	if len(fields) > 0 {
		t.Fatalf("field errors: %v", fields)
	}
	want := domain.Order{
		Amount: 12345, PaymentMethod: domain.PaymentPIX, ExternalCode: "order-000123",
		Customer: &domain.Customer{IP: "203.0.113.7", Name: "João D'Ávila-Souza", Email: "joao@example.com.br",
			Document: domain.MustParseDocument("52998224725"), Landline: "1134567890", MobilePhone: "21987654321",
			Birthdate: "1990-05-17"},
		Seller: &domain.Seller{Name: "Loja Exemplo", Document: domain.MustParseDocument("11222333000181")},
		Address: &domain.Address{ZipCode: "01310100", Number: "1578", Street: "Avenida Paulista",
			Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", Country: "Brasil", Complement: "Conjunto 42"},
		Items: []domain.Item{{Title: "Camiseta", Description: "Algodão", UnitPrice: 5000, Quantity: 2},
			{Title: "Boné", UnitPrice: 2345, Quantity: 1}},
		Metadata:          []byte(`{"attempt":1,"campaign":"black-friday"}`),
		ExpirationSeconds: 600,
	}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("order:\n got %+v\nwant %+v", o, want)
	}
}

func TestCreateTransactionRequestJudgesTheBirthdateByTheGivenClock(t *testing.T) {
	body := strings.Replace(benchCreateBody, `"1990-05-17"`, `"2026-11-23"`, 1)
	if _, fields := parseBody(t, body, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)); len(fields) > 0 {
		t.Fatalf("a birthdate of today refused: %v", fields)
	}
	_, fields := parseBody(t, body, time.Date(2026, 11, 22, 23, 59, 59, 0, time.UTC))
	if len(fields) != 1 || fields[0].Field != "customer.birthdate" || fields[0].Code != "invalid_format" {
		t.Fatalf("a birthdate after the clock's day: %v, want invalid_format on customer.birthdate", fields)
	}
}

func TestCreateTransactionRequestReportsEveryNestedErrorAtOnce(t *testing.T) {
	body := strings.NewReplacer(`"529.982.247-25"`, `"529.982.247-26"`, `"01310-100"`, `"0131"`,
		`"(21) 98765-4321"`, `"12345"`, `"unitPrice": 2345`, `"unitPrice": 0`, `"expirationSeconds": 600`, `"expirationSeconds": 5`).
		Replace(benchCreateBody)
	o, fields := parseBody(t, body, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	var got []string
	for _, f := range fields {
		got = append(got, f.Field+" "+f.Code)
	}
	want := []string{"address.zipCode invalid_format", "customer.document invalid_document",
		"customer.mobilePhone invalid_format", "items[1].unitPrice out_of_range", "pix.expirationSeconds out_of_range"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	if !reflect.DeepEqual(o, domain.Order{}) {
		t.Fatalf("an invalid request mapped to %+v", o)
	}
}

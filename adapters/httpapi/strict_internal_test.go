package httpapi

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckStrictJSON(t *testing.T) {
	many := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString(`{`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(`,`)
			}
			b.WriteString(`"k` + strings.Repeat("x", i) + `": 1`)
		}
		if dup {
			b.WriteString(`, "k": 2`)
		}
		b.WriteString(`}`)
		return b.String()
	}
	cases := []struct {
		name string
		body string
		want error
	}{
		{"a plain object passes", `{"amount": 1, "customer": {"name": "João"}, "items": [{"title": "a"}, {"title": "b"}]}`, nil},
		{"one name in two sibling objects passes", `{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 1}]}`, nil},
		{"a name reused after its object closed passes", `{"a": {"a": {"a": 1}}, "b": 1}`, nil},
		{"a string value equal to a name passes", `{"a": "a", "b": ["a", "a"]}`, nil},
		{"a surrogate pair passes", `{"a": "\ud83d\ude00"}`, nil},
		{"escaped quotes and backslashes pass", `{"a\"b": "c\\", "a\\b": "\"", "a\/": 1}`, nil},
		{"a repeated name at the top is refused", `{"amount": 1, "amount": 999}`, errDuplicateMember},
		{"a repeated name deep inside is refused", `{"a": [{"b": {"c": 1, "c": 2}}]}`, errDuplicateMember},
		{"a repeated name spelt with an escape is refused", `{"amount": 1, "\u0061mount": 2}`, errDuplicateMember},
		{"a repeated name past the inline names is refused", many(40, true), errDuplicateMember},
		{"forty distinct names pass", many(40, false), nil},
		{"invalid UTF-8 in a string is refused", "{\"a\": \"\xff\"}", errInvalidUTF8},
		{"invalid UTF-8 in a name is refused", "{\"\xc3\": 1}", errInvalidUTF8},
		{"a byte above ASCII outside strings is refused", "{\"a\": 1\xa0}", errInvalidUTF8},
		{"a lone high surrogate is refused", `{"a": "\ud800"}`, errLoneSurrogate},
		{"a high surrogate before another escape is refused", `{"a": "\ud800\n"}`, errLoneSurrogate},
		{"two high surrogates are refused", `{"a": "\ud800\ud800"}`, errLoneSurrogate},
		{"a lone low surrogate is refused", `{"a": "\uDC00"}`, errLoneSurrogate},
		{"a lone surrogate in a name is refused", `{"\ud800": 1}`, errLoneSurrogate},
		{"what is not JSON is left to the decoder", `{"a": "\u12`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := checkStrictJSON([]byte(c.body)); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("checkStrictJSON(%q) = %v, want %v", c.body, err, c.want)
			}
		})
	}
}

func TestDecodeRefusesNULPerField(t *testing.T) {
	var req createTransactionRequest
	_, fields, err := decodeJSONBytes([]byte(`{"externalCode": "order\u0000123", "customer": {"name": "A\u0000"},
		"metadata": {"k": ["x\u0000"]}, "paymentMethod": "PIX"}`), &req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fields {
		got[f.Field] = f.Code
	}
	for _, f := range []string{"externalCode", "customer.name", "metadata"} {
		if got[f] != "invalid_format" {
			t.Errorf("%s: %q, want invalid_format (all: %+v)", f, got[f], fields)
		}
	}
	if req.PaymentMethod == nil || *req.PaymentMethod != "PIX" {
		t.Errorf("the other fields were not decoded: %+v", req)
	}
}

package pix_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
)

// Published examples: the first two from Banco Central's "Manual de Padrões para Iniciação do
// Pix", the third from the widely used pix-payload examples; each must come out byte for byte.
var published = []struct {
	name    string
	payload pix.Payload
	want    string
}{
	{
		name: "a static code with a key and no amount",
		payload: pix.Payload{
			Key:          "123e4567-e12b-12d1-a456-426655440000",
			MerchantName: "Fulano de Tal",
			MerchantCity: "BRASILIA",
		},
		want: "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D",
	},
	{
		name: "a dynamic single-use code with a payload URL",
		payload: pix.Payload{
			Initiation:   pix.SingleUse,
			URL:          "pix.example.com/8b3da2f39a4140d1a91abd93113bd441",
			MerchantName: "Fulano de Tal",
			MerchantCity: "BRASILIA",
		},
		want: "00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4",
	},
	{
		name: "a static code with an amount and a description",
		payload: pix.Payload{
			Key:          "thalesog@me.com",
			Description:  "Pedido 123",
			Amount:       1000,
			MerchantName: "Thales Ogliari",
			MerchantCity: "SAO MIGUEL DO O",
		},
		want: "00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914Thales Ogliari6015SAO MIGUEL DO O62070503***63044367",
	},
}

func TestEncodeReproducesPublishedExamples(t *testing.T) {
	for _, tc := range published {
		t.Run(tc.name+" is encoded byte for byte", func(t *testing.T) {
			got, err := tc.payload.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Encode:\n got %s\nwant %s", got, tc.want)
			}
			if _, err := parseBRCode(got); err != nil {
				t.Fatalf("our parser refuses it: %v", err)
			}
		})
	}
}

func TestParserRejectsAWrongCRC(t *testing.T) {
	for _, tc := range published {
		body, crc := tc.want[:len(tc.want)-4], tc.want[len(tc.want)-4:]
		wrongCRC := crc[:3] + string("0123456789ABCDEF"[(strings.IndexByte("0123456789ABCDEF", crc[3])+1)%16])
		name := strings.Index(body, "5802BR59") + len("5802BR59nn") // first letter of the name
		cases := []struct {
			name, payload string
		}{
			{"whose last CRC digit is changed", body + wrongCRC},
			{"whose merchant name has one letter changed", body[:name] + "x" + body[name+1:] + crc},
			{"whose txid is changed", strings.Replace(body, "0503***", "0503**A", 1) + crc},
		}
		for _, c := range cases {
			t.Run(tc.name+" "+c.name+" is refused for its CRC", func(t *testing.T) {
				_, err := parseBRCode(c.payload)
				if !errors.Is(err, errBadCRC) {
					t.Fatalf("parseBRCode: %v, want errBadCRC", err)
				}
			})
		}
	}
	t.Run("a CRC in lowercase hexadecimal is refused", func(t *testing.T) {
		p := published[1].want // ends in 64E4
		if _, err := parseBRCode(p[:len(p)-4] + strings.ToLower(p[len(p)-4:])); err == nil {
			t.Fatal("parseBRCode accepted a lowercase CRC")
		}
	})
	t.Run("a payload without its CRC is refused", func(t *testing.T) {
		p := published[0].want
		if _, err := parseBRCode(p[:len(p)-8]); err == nil {
			t.Fatal("parseBRCode accepted a payload without field 63")
		}
	})
}

func TestEncodeFillsDefaults(t *testing.T) {
	p := pix.Payload{Key: "+5511999998888", MerchantName: "Loja", MerchantCity: "Recife"}
	got, err := p.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	c, err := parseBRCode(got)
	if err != nil {
		t.Fatalf("parseBRCode: %v", err)
	}
	checks := []struct {
		name, id, sub, want string
		present             bool
	}{
		{"the merchant category code defaults to 0000", "52", "", "0000", true},
		{"the txid defaults to ***", "62", "05", "***", true},
		{"the point of initiation is left out unless set", "01", "", "", false},
		{"the amount is left out when zero", "54", "", "", false},
		{"the description is left out when empty", "26", "02", "", false},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			var v string
			var ok bool
			if ch.sub == "" {
				v, ok = c.get(ch.id)
			} else {
				v, ok = c.sub(ch.id, ch.sub)
			}
			if ok != ch.present || v != ch.want {
				t.Fatalf("field %s %s = %q (present %v), want %q (present %v)", ch.id, ch.sub, v, ok, ch.want, ch.present)
			}
		})
	}
}

func TestEncodeReducesTextToPlainASCII(t *testing.T) {
	cases := []struct {
		name, in, field, want string
	}{
		{"accents are stripped and the case is kept", "São Miguel do Ó", "60", "Sao Miguel do O"},
		{"a cedilla and a tilde become their letters", "Açaí & Pão Ltda", "59", "Acai & Pao Ltda"},
		{"Latin Extended-A letters lose their marks", "Łódź Ŝkœ", "59", "Lodz Skoe"},
		{"a decomposed accent is dropped with its mark", "Jose\u0301", "59", "Jose"},
		{"ordinal indicators become letters", "Nº 1ª", "59", "No 1a"},
		{"runs of white space become one space", "  Loja\t\u00A0 do\nZé  ", "59", "Loja do Ze"},
		{"characters outside printable ASCII are dropped", "Café ☕ 北京", "59", "Cafe"},
		{"a long name is cut at 25 characters", "Comércio de Alimentos Naturais Ltda", "59", "Comercio de Alimentos Nat"},
		{"a long city is cut at 15 characters", "Santa Rita do Passa Quatro", "60", "Santa Rita do P"},
		{"a space left at the cut is trimmed", "Mercado Municipal do Sul Norte", "59", "Mercado Municipal do Sul"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pix.Payload{Key: "a@b.co", MerchantName: "Loja", MerchantCity: "Recife"}
			if tc.field == "59" {
				p.MerchantName = tc.in
			} else {
				p.MerchantCity = tc.in
			}
			got, err := p.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			c, err := parseBRCode(got)
			if err != nil {
				t.Fatalf("parseBRCode: %v", err)
			}
			if v, _ := c.get(tc.field); v != tc.want {
				t.Fatalf("field %s = %q, want %q", tc.field, v, tc.want)
			}
		})
	}
}

func TestEncodeRefusesWhatItCannotWrite(t *testing.T) {
	valid := func(edit func(*pix.Payload)) pix.Payload {
		p := pix.Payload{Key: "a@b.co", MerchantName: "Loja", MerchantCity: "Recife"}
		edit(&p)
		return p
	}
	cases := []struct {
		name    string
		payload pix.Payload
		field   string
	}{
		{"a code with neither key nor URL is refused", valid(func(p *pix.Payload) { p.Key = "" }), "merchant account information (26)"},
		{"a code with both key and URL is refused", valid(func(p *pix.Payload) { p.URL = "pix.example.com/x" }), "merchant account information (26)"},
		{"a key longer than 77 characters is refused", valid(func(p *pix.Payload) { p.Key = strings.Repeat("a", 70) + "@b.co.br" }), "PIX key (26-01)"},
		{"a key with a space is refused", valid(func(p *pix.Payload) { p.Key = "a b@c.co" }), "PIX key (26-01)"},
		{"a key with an accent is refused", valid(func(p *pix.Payload) { p.Key = "joão@b.co" }), "PIX key (26-01)"},
		{"a key and description over 99 characters together are refused", valid(func(p *pix.Payload) {
			p.Key = strings.Repeat("a", 60) + "@b.co"
			p.Description = strings.Repeat("d", 20)
		}), "merchant account information (26)"},
		{"a description over 99 characters is refused", valid(func(p *pix.Payload) { p.Description = strings.Repeat("d", 100) }), "description (26-02)"},
		{"a dynamic code with a description is refused", valid(func(p *pix.Payload) {
			p.Key, p.URL, p.Description = "", "pix.example.com/x", "Pedido 1"
		}), "description (26-02)"},
		{"a URL with a scheme is refused", valid(func(p *pix.Payload) { p.Key, p.URL = "", "https://pix.example.com/x" }), "URL (26-25)"},
		{"a URL over 99 characters is refused", valid(func(p *pix.Payload) { p.Key, p.URL = "", strings.Repeat("u", 100) }), "URL (26-25)"},
		{"an unknown point of initiation is refused", valid(func(p *pix.Payload) { p.Initiation = "13" }), "point of initiation method (01)"},
		{"a merchant category code of three digits is refused", valid(func(p *pix.Payload) { p.MCC = "123" }), "merchant category code (52)"},
		{"a merchant category code with a letter is refused", valid(func(p *pix.Payload) { p.MCC = "12a4" }), "merchant category code (52)"},
		{"a negative amount is refused", valid(func(p *pix.Payload) { p.Amount = -1 }), "transaction amount (54)"},
		{"an amount over 13 characters is refused", valid(func(p *pix.Payload) { p.Amount = 1e13 }), "transaction amount (54)"},
		{"an empty merchant name is refused", valid(func(p *pix.Payload) { p.MerchantName = "" }), "merchant name (59)"},
		{"a merchant name with no ASCII left is refused", valid(func(p *pix.Payload) { p.MerchantName = "北京 ☕" }), "merchant name (59)"},
		{"an empty merchant city is refused", valid(func(p *pix.Payload) { p.MerchantCity = " \t" }), "merchant city (60)"},
		{"a txid of 26 characters is refused", valid(func(p *pix.Payload) { p.TxID = strings.Repeat("a", 26) }), "txid (62-05)"},
		{"a txid with a dash is refused", valid(func(p *pix.Payload) { p.TxID = "abc-def" }), "txid (62-05)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.payload.Encode()
			var fe *pix.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Encode = %q, %v; want a *pix.FieldError", got, err)
			}
			if fe.Field != tc.field {
				t.Fatalf("FieldError.Field = %q, want %q (%v)", fe.Field, tc.field, err)
			}
		})
	}
}

func TestEncodeAcceptsTheLimits(t *testing.T) {
	cases := []struct {
		name    string
		payload pix.Payload
	}{
		{"a key of exactly 77 characters fits", pix.Payload{Key: strings.Repeat("a", 71) + "@b.com", MerchantName: "L", MerchantCity: "R"}},
		{"a txid of exactly 25 characters fits", pix.Payload{Key: "a@b.co", MerchantName: "L", MerchantCity: "R", TxID: strings.Repeat("Z", 25)}},
		{"an amount of 13 characters fits", pix.Payload{Key: "a@b.co", MerchantName: "L", MerchantCity: "R", Amount: 999999999999}},
		{"a URL of 77 characters fits", pix.Payload{URL: strings.Repeat("u", 77), MerchantName: "L", MerchantCity: "R"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.payload.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if _, err := parseBRCode(got); err != nil {
				t.Fatalf("parseBRCode(%q): %v", got, err)
			}
		})
	}
}

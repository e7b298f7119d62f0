package domain_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/domain"
)

// withCPFCheckDigits completes 9 digits into a CPF, by the Receita Federal rule written out
// here independently: each check digit is 11 minus the weighted sum modulo 11, 0 when that
// gives 10 or 11; weights 10..2 for the first digit and 11..2 for the second.
func withCPFCheckDigits(base9 string) string {
	v := []byte(base9)
	for _, n := range []int{9, 10} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(v[i]-'0') * (n + 1 - i)
		}
		d := 11 - sum%11
		if d >= 10 {
			d = 0
		}
		v = append(v, byte('0'+d))
	}
	return string(v)
}

// withCNPJCheckDigits completes 12 characters [0-9A-Z] into a CNPJ: each character is worth
// its ASCII code minus 48, the weights are the Receita Federal tables below, and a check digit
// is 11 minus the sum modulo 11, 0 when that gives 10 or 11.
func withCNPJCheckDigits(base12 string) string {
	weights := [][]int{
		{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2},
		{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2},
	}
	v := []byte(base12)
	for _, w := range weights {
		sum := 0
		for i, weight := range w {
			sum += (int(v[i]) - 48) * weight
		}
		d := 11 - sum%11
		if d >= 10 {
			d = 0
		}
		v = append(v, byte('0'+d))
	}
	return string(v)
}

func TestCheckDigitHelpersAgreeWithPublishedExamples(t *testing.T) {
	for base, want := range map[string]string{
		"529982247":    "52998224725",
		"123456789":    "12345678909",
		"111444777":    "11144477735",
		"112223330001": "11222333000181",
		"123456780001": "12345678000195",
		"12ABC34501DE": "12ABC34501DE35", // Receita Federal's alphanumeric example
	} {
		var got string
		if len(base) == 9 {
			got = withCPFCheckDigits(base)
		} else {
			got = withCNPJCheckDigits(base)
		}
		if got != want {
			t.Fatalf("check digits of %s: got %s, want %s", base, got, want)
		}
	}
}

func TestParseDocumentAcceptsValidCPFs(t *testing.T) {
	inputs := map[string]string{ // input: normalised value
		"529.982.247-25": "52998224725",
		"52998224725":    "52998224725",
		"123.456.789-09": "12345678909",
		"111.444.777-35": "11144477735",
		"529 982 247 25": "52998224725",
		"529982247-25":   "52998224725",
	}
	for _, base := range []string{"000000001", "100000000", "987654321", "314159265", "271828182", "999999998", "012345678", "246813579"} {
		v := withCPFCheckDigits(base)
		inputs[v] = v
		inputs[v[0:3]+"."+v[3:6]+"."+v[6:9]+"-"+v[9:11]] = v
	}
	for in, want := range inputs {
		t.Run("the CPF "+in+" is accepted", func(t *testing.T) {
			d, err := domain.ParseDocument(in)
			if err != nil {
				t.Fatalf("ParseDocument(%q): %v", in, err)
			}
			if d.Kind() != domain.CPF || d.Value() != want || d.IsZero() {
				t.Fatalf("ParseDocument(%q) = %s %q, want CPF %q", in, d.Kind(), d.Value(), want)
			}
		})
	}
}

func TestParseDocumentAcceptsValidCNPJs(t *testing.T) {
	inputs := map[string]string{
		"11.222.333/0001-81": "11222333000181",
		"11222333000181":     "11222333000181",
		"12.345.678/0001-95": "12345678000195",
		"12.ABC.345/01DE-35": "12ABC34501DE35",
		"12ABC34501DE35":     "12ABC34501DE35",
		"12.abc.345/01de-35": "12ABC34501DE35", // lower case is normalised to upper
		"12aBc34501dE35":     "12ABC34501DE35",
	}
	for _, base := range []string{"AB12CD34EF56", "ZZZZZZZZZZZY", "A1B2C3D4E5F6", "000000000001", "98765432000", "QWERTY000199", "0000ABCD0001"} {
		if len(base) != 12 {
			base += "1"
		}
		v := withCNPJCheckDigits(base)
		inputs[v] = v
		inputs[v[0:2]+"."+v[2:5]+"."+v[5:8]+"/"+v[8:12]+"-"+v[12:14]] = v
		inputs[strings.ToLower(v)] = v
	}
	for in, want := range inputs {
		t.Run("the CNPJ "+in+" is accepted", func(t *testing.T) {
			d, err := domain.ParseDocument(in)
			if err != nil {
				t.Fatalf("ParseDocument(%q): %v", in, err)
			}
			if d.Kind() != domain.CNPJ || d.Value() != want {
				t.Fatalf("ParseDocument(%q) = %s %q, want CNPJ %q", in, d.Kind(), d.Value(), want)
			}
		})
	}
}

func TestParseDocumentRefusesInvalidDocuments(t *testing.T) {
	cases := map[string]string{
		"a CPF with a wrong first check digit":              "529.982.247-15",
		"a CPF with a wrong second check digit":             "529.982.247-24",
		"a CPF with swapped check digits":                   "529.982.247-52",
		"another CPF with a wrong check digit":              "123.456.789-00",
		"a CPF of one repeated digit (checks otherwise)":    "111.111.111-11",
		"a CPF of zeros":                                    "000.000.000-00",
		"a CPF of nines":                                    "999.999.999-99",
		"a CPF of 10 digits":                                "5299822472",
		"a CPF of 12 digits":                                "529982247250",
		"a CPF with a letter":                               "529.982.24A-25",
		"a CPF with a letter in a check digit":              "529.982.247-2A",
		"a CPF in full-width digits":                        "５２９９８２２４７２５",
		"a CPF with an underscore":                          "529_982_247_25",
		"a CPF with a trailing newline":                     "52998224725\n",
		"a CPF with a tab":                                  "529\t98224725",
		"a CNPJ with a wrong first check digit":             "11.222.333/0001-71",
		"a CNPJ with a wrong second check digit":            "11.222.333/0001-82",
		"an alphanumeric CNPJ with a wrong check digit":     "12.ABC.345/01DE-36",
		"an alphanumeric CNPJ with a letter as check digit": "12.ABC.345/01DE-3A",
		"an alphanumeric CNPJ with letters as check digits": "12ABC34501DEAB",
		"a lower-case letter in a check digit position":     "12abc34501de3a",
		"a CNPJ of zeros":                                   "00.000.000/0000-00",
		"a CNPJ of 13 characters":                           "1122233300018",
		"a CNPJ of 15 characters":                           "112223330001810",
		"a CNPJ with an accented letter":                    "12ÁBC34501DE35",
		"a CNPJ with a symbol":                              "12ABC34501D#35",
		"an empty string":                                   "",
		"punctuation only":                                  "...-/",
		"spaces only":                                       "           ",
		"a string over 32 characters":                       strings.Repeat(" ", 30) + "52998224725",
		"13 digits":                                         "5299822472500",
	}
	for name, in := range cases {
		t.Run(name+" is refused", func(t *testing.T) {
			d, err := domain.ParseDocument(in)
			if !errors.Is(err, domain.ErrInvalidDocument) {
				t.Fatalf("ParseDocument(%q) = %+v, %v; want ErrInvalidDocument", in, d, err)
			}
			if !d.IsZero() || d.Kind() != "" {
				t.Fatalf("a refused document is not zero: %+v", d)
			}
		})
	}
	t.Run("every wrong pair of CPF check digits is refused", func(t *testing.T) {
		valid := withCPFCheckDigits("529982247")
		for d1 := '0'; d1 <= '9'; d1++ {
			for d2 := '0'; d2 <= '9'; d2++ {
				v := valid[:9] + string(d1) + string(d2)
				_, err := domain.ParseDocument(v)
				if (err == nil) != (v == valid) {
					t.Fatalf("ParseDocument(%s): %v", v, err)
				}
			}
		}
	})
	t.Run("every wrong pair of alphanumeric CNPJ check digits is refused", func(t *testing.T) {
		valid := withCNPJCheckDigits("12ABC34501DE")
		for d1 := '0'; d1 <= '9'; d1++ {
			for d2 := '0'; d2 <= '9'; d2++ {
				v := valid[:12] + string(d1) + string(d2)
				_, err := domain.ParseDocument(v)
				if (err == nil) != (v == valid) {
					t.Fatalf("ParseDocument(%s): %v", v, err)
				}
			}
		}
	})
}

func TestDocumentMasked(t *testing.T) {
	for _, c := range []struct{ in, kind, want string }{
		{"529.982.247-25", "CPF", "***.982.247-**"},
		{"123.456.789-09", "CPF", "***.456.789-**"},
		{"11222333000181", "CNPJ", "11.222.333/0001-81"},
		{"12.345.678/0001-95", "CNPJ", "12.345.678/0001-95"},
		{"12abc34501de35", "CNPJ", "12.ABC.345/01DE-35"},
	} {
		t.Run("the "+c.kind+" "+c.in+" is shown as "+c.want, func(t *testing.T) {
			d := domain.MustParseDocument(c.in)
			if string(d.Kind()) != c.kind || d.Masked() != c.want {
				t.Fatalf("%s %q, want %s %q", d.Kind(), d.Masked(), c.kind, c.want)
			}
		})
	}
	t.Run("the zero document is shown as nothing", func(t *testing.T) {
		var d domain.Document
		if d.Masked() != "" || !d.IsZero() || d.Kind() != "" || d.Value() != "" {
			t.Fatalf("%+v", d)
		}
	})
}

func TestMustParseDocumentPanicsOnAnInvalidDocument(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, domain.ErrInvalidDocument) {
			t.Fatalf("recovered %v, want ErrInvalidDocument", r)
		}
	}()
	domain.MustParseDocument("111.111.111-11")
}

var maskedCPF = regexp.MustCompile(`^\*\*\*\.[0-9]{3}\.[0-9]{3}-\*\*$`)

func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{
		"529.982.247-25", "52998224725", "111.111.111-11", "123.456.789-09", "11.222.333/0001-81",
		"12.ABC.345/01DE-35", "12abc34501de35", "12ABC34501DE3A", "00000000000000", "", "...",
		"5299822472", "529982247250", "12.345.678/0001-95", "ÿ", "\x00", strings.Repeat("9", 40),
		withCNPJCheckDigits("ZZZZZZZZZZZZ"), withCPFCheckDigits("000000001"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := domain.ParseDocument(s)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalidDocument) || !d.IsZero() {
				t.Fatalf("ParseDocument(%q) = %+v, %v", s, d, err)
			}
			return
		}
		v := d.Value()
		switch d.Kind() {
		case domain.CPF:
			if len(v) != 11 || strings.Trim(v, "0123456789") != "" {
				t.Fatalf("CPF %q from %q is not 11 digits", v, s)
			}
			if v != withCPFCheckDigits(v[:9]) {
				t.Fatalf("CPF %q from %q has wrong check digits", v, s)
			}
			m := d.Masked()
			// The first 3 and last 2 digits are replaced, so only digits 4 to 9 show.
			if !maskedCPF.MatchString(m) || m[4:7]+m[8:11] != v[3:9] {
				t.Fatalf("CPF %q masked as %q", v, m)
			}
		case domain.CNPJ:
			if len(v) != 14 || strings.Trim(v[:12], "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" ||
				strings.Trim(v[12:], "0123456789") != "" {
				t.Fatalf("CNPJ %q from %q is not 12 [0-9A-Z] and 2 digits", v, s)
			}
			if v != withCNPJCheckDigits(v[:12]) {
				t.Fatalf("CNPJ %q from %q has wrong check digits", v, s)
			}
			if m := d.Masked(); strings.NewReplacer(".", "", "/", "", "-", "").Replace(m) != v || len(m) != 18 {
				t.Fatalf("CNPJ %q shown as %q", v, m)
			}
		default:
			t.Fatalf("ParseDocument(%q) accepted kind %q", s, d.Kind())
		}
		if strings.Count(v, v[:1]) == len(v) {
			t.Fatalf("ParseDocument(%q) accepted one repeated character", s)
		}
		again, err := domain.ParseDocument(v)
		if err != nil || again != d {
			t.Fatalf("re-parsing %q gave %+v, %v; want %+v", v, again, err, d)
		}
		if again, err := domain.ParseDocument(d.Masked()); d.Kind() == domain.CNPJ && (err != nil || again != d) {
			t.Fatalf("re-parsing the shown CNPJ %q gave %+v, %v", d.Masked(), again, err)
		}
	})
}

package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestParseLandline(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain national digits are accepted", "1123456789", "1123456789"},
		{"a punctuated number is accepted", "(11) 2345-6789", "1123456789"},
		{"a number with +55 is accepted", "+55 (11) 2345-6789", "1123456789"},
		{"+55 glued to the digits is accepted", "+551123456789", "1123456789"},
		{"dots and spaces are accepted", "11 2345.6789", "1123456789"},
		{"surrounding spaces are accepted", "  1123456789 ", "1123456789"},
		{"area code 11, the lowest, is accepted", "1122345678", "1122345678"},
		{"area code 99, the highest, is accepted", "9955556789", "9955556789"},
		{"a number starting with 2 is accepted", "2122223333", "2122223333"},
		{"a number starting with 5 is accepted", "2159998888", "2159998888"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseLandline(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseLandline(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"area code 10 is refused", "1023456789"},
		{"area code 00 is refused", "0023456789"},
		{"area code 01 is refused", "0123456789"},
		{"a number starting with 6 is refused", "1163456789"},
		{"a number starting with 1 is refused", "1113456789"},
		{"a number starting with 9 is refused", "1193456789"},
		{"a number starting with 0 is refused", "1103456789"},
		{"9 digits are refused", "112345678"},
		{"11 digits are refused", "11234567890"},
		{"a mobile number is refused", "11987654321"},
		{"55 without the plus is refused", "551123456789"},
		{"another country code is refused", "+1 (11) 2345-6789"},
		{"a letter is refused", "11 2345-678a"},
		{"a slash is refused", "11/2345-6789"},
		{"an empty string is refused", ""},
		{"over 32 characters of punctuation and digits are refused", strings.Repeat("-", 30) + "1123456789"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := domain.ParseLandline(c.in); !errors.Is(err, domain.ErrInvalidPhone) || got != "" {
				t.Fatalf("ParseLandline(%q) = %q, %v; want ErrInvalidPhone", c.in, got, err)
			}
		})
	}
}

func TestParseMobile(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain national digits are accepted", "11987654321", "11987654321"},
		{"a punctuated number is accepted", "(11) 98765-4321", "11987654321"},
		{"a number with +55 is accepted", "+55 (21) 99876-5432", "21998765432"},
		{"+55 glued to the digits is accepted", "+5511987654321", "11987654321"},
		{"area code 99 is accepted", "99912345678", "99912345678"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseMobile(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseMobile(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"a mobile without the leading 9 is refused", "1187654321"},
		{"11 digits not starting with 9 are refused", "11887654321"},
		{"area code 10 is refused", "10987654321"},
		{"area code 00 is refused", "00987654321"},
		{"a landline is refused", "1123456789"},
		{"12 digits are refused", "119876543210"},
		{"a letter is refused", "1198765432a"},
		{"an empty string is refused", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := domain.ParseMobile(c.in); !errors.Is(err, domain.ErrInvalidPhone) || got != "" {
				t.Fatalf("ParseMobile(%q) = %q, %v; want ErrInvalidPhone", c.in, got, err)
			}
		})
	}
}

// Area codes are two digits from 11 to 99 (Brazil's numbering plan): those ending in 0 lie in that range.
func TestParsePhoneAcceptsEveryAreaCodeFrom11To99(t *testing.T) {
	for area := 11; area <= 99; area++ {
		code := string(rune('0'+area/10)) + string(rune('0'+area%10))
		if _, err := domain.ParseLandline(code + "23456789"); err != nil {
			t.Errorf("ParseLandline with area code %s: %v", code, err)
		}
		if _, err := domain.ParseMobile(code + "987654321"); err != nil {
			t.Errorf("ParseMobile with area code %s: %v", code, err)
		}
	}
}

func TestPhoneDigits(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"+55 (11) 98765-4321", "11987654321"},
		{"(11) 2345-6789", "1123456789"},
		{"  +5511987654321", "11987654321"},
		{"11.2345.6789", "1123456789"},
		{"5511987654321", "5511987654321"}, // 55 without + is not the country code
		{"abc", ""},
		{"", ""},
	} {
		t.Run("the digits of "+strconvQuote(c.in)+" are "+strconvQuote(c.want), func(t *testing.T) {
			if got := domain.PhoneDigits(c.in); got != c.want {
				t.Fatalf("PhoneDigits(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseEmail(t *testing.T) {
	local64 := strings.Repeat("a", 64)
	domain189 := strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	email254 := local64 + "@" + domain189
	if len(email254) != 254 {
		t.Fatalf("fixture has %d characters", len(email254))
	}
	for _, c := range []struct{ name, in string }{
		{"a plain address is accepted", "fulano@example.com"},
		{"a sub-addressed address is accepted", "first.last+tag@sub.example.com.br"},
		{"upper case is accepted as given", "Fulano@Example.COM"},
		{"an address of 254 characters is accepted", email254},
		{"digits and hyphens are accepted", "user-1@my-domain1.io"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseEmail(c.in)
			if err != nil || got != c.in {
				t.Fatalf("ParseEmail(%q) = %q, %v", c.in, got, err)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"an empty string is refused", ""},
		{"a string without @ is refused", "plainaddress"},
		{"a display name is refused", "Fulano <fulano@example.com>"},
		{"angle brackets are refused", "<fulano@example.com>"},
		{"a comment is refused", "fulano@example.com (Fulano)"},
		{"a domain without a dot is refused", "fulano@localhost"},
		{"a domain ending in a dot is refused", "fulano@example.com."},
		{"a domain with two dots in a row is refused", "fulano@example..com"},
		{"a domain literal is refused", "fulano@[192.0.2.1]"},
		{"two @ are refused", "a@b@example.com"},
		{"a leading space is refused", " fulano@example.com"},
		{"a trailing space is refused", "fulano@example.com "},
		{"a space inside is refused", "ful ano@example.com"},
		{"a missing local part is refused", "@example.com"},
		{"a missing domain is refused", "fulano@"},
		{"two addresses are refused", "a@example.com, b@example.com"},
		{"an address of 255 characters is refused", "a" + email254},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := domain.ParseEmail(c.in); !errors.Is(err, domain.ErrInvalidEmail) || got != "" {
				t.Fatalf("ParseEmail(%q) = %q, %v; want ErrInvalidEmail", c.in, got, err)
			}
		})
	}
}

func TestParseZipCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"01310-100", "01310100"},
		{"01310100", "01310100"},
		{"99999-999", "99999999"},
	} {
		t.Run(c.in+" is accepted as "+c.want, func(t *testing.T) {
			got, err := domain.ParseZipCode(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseZipCode(%q) = %q, %v", c.in, got, err)
			}
		})
	}
	for _, in := range []string{"", "0131010", "013101000", "01310-10", "01310-1000", "0131-0100", "01310 100",
		"01.310-100", "01310-10a", "0131O100", "-01310100", "01310100-", "01310--100", "０1310100"} {
		t.Run(strconvQuote(in)+" is refused", func(t *testing.T) {
			if got, err := domain.ParseZipCode(in); !errors.Is(err, domain.ErrInvalidZipCode) || got != "" {
				t.Fatalf("ParseZipCode(%q) = %q, %v", in, got, err)
			}
		})
	}
}

func TestParseBirthdate(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		in   string
		now  time.Time
	}{
		{"a leap day of a leap year is accepted", "2024-02-29", now},
		{"an old date is accepted", "1900-01-01", now},
		{"today is accepted", "2026-11-22", now},
		{"today in UTC is accepted while it is still yesterday in Brazil", "2026-11-23", time.Date(2026, 11, 22, 23, 30, 0, 0, saoPaulo)},
		{"the last day of a 31-day month is accepted", "1990-12-31", now},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseBirthdate(c.in, c.now)
			if err != nil || got != c.in {
				t.Fatalf("ParseBirthdate(%q) = %q, %v", c.in, got, err)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"a leap day of a common year is refused", "2023-02-29"},
		{"the 31st of a 30-day month is refused", "1990-04-31"},
		{"month 13 is refused", "2000-13-01"},
		{"day 0 is refused", "2000-01-00"},
		{"tomorrow is refused", "2026-11-23"},
		{"a future year is refused", "2030-01-01"},
		{"a date with a time is refused", "2000-01-01T00:00:00Z"},
		{"a date with a trailing space is refused", "2000-01-01 "},
		{"a month without its leading zero is refused", "2000-1-01"},
		{"a day without its leading zero is refused", "2000-01-1"},
		{"a Brazilian-style date is refused", "01/01/2000"},
		{"slashes are refused", "2000/01/01"},
		{"an empty string is refused", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := domain.ParseBirthdate(c.in, now); !errors.Is(err, domain.ErrInvalidBirthdate) || got != "" {
				t.Fatalf("ParseBirthdate(%q) = %q, %v; want ErrInvalidBirthdate", c.in, got, err)
			}
		})
	}
}

func TestIsUUID(t *testing.T) {
	for _, c := range []struct {
		in       string
		uuid, v4 bool
	}{
		{"123e4567-e89b-42d3-a456-426614174000", true, true},
		{"123E4567-E89B-42D3-A456-426614174000", true, true},
		{"123e4567-e89b-42d3-8456-426614174000", true, true},
		{"123e4567-e89b-42d3-9456-426614174000", true, true},
		{"123e4567-e89b-42d3-b456-426614174000", true, true},
		{"123e4567-e89b-42d3-B456-426614174000", true, true},
		{"123e4567-e89b-12d3-a456-426614174000", true, false}, // version 1
		{"123e4567-e89b-72d3-a456-426614174000", true, false}, // version 7
		{"123e4567-e89b-42d3-c456-426614174000", true, false}, // Microsoft variant
		{"123e4567-e89b-42d3-7456-426614174000", true, false}, // NCS variant
		{"00000000-0000-0000-0000-000000000000", true, false},
		{"123e4567e89b42d3a456426614174000", false, false},
		{"{123e4567-e89b-42d3-a456-426614174000}", false, false},
		{"123e4567-e89b-42d3-a456-42661417400", false, false},
		{"123e4567-e89b-42d3-a456-4266141740000", false, false},
		{"123e4567-e89b-42d3-a456_426614174000", false, false},
		{"123e4567-e89b-42d3a-456-426614174000", false, false},
		{"g23e4567-e89b-42d3-a456-426614174000", false, false},
		{"", false, false},
	} {
		t.Run(strconvQuote(c.in)+" is classified", func(t *testing.T) {
			if got := domain.IsUUID(c.in); got != c.uuid {
				t.Fatalf("IsUUID(%q) = %v, want %v", c.in, got, c.uuid)
			}
			if got := domain.IsUUIDv4(c.in); got != c.v4 {
				t.Fatalf("IsUUIDv4(%q) = %v, want %v", c.in, got, c.v4)
			}
		})
	}
}

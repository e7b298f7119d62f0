package pix

import (
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/domain"
)

// Initiation is the BR Code's point of initiation method (ID 01).
type Initiation string

// The two values the manual defines. The zero value leaves field 01 out, which apps read as
// reusable.
const (
	Reusable  Initiation = "11"
	SingleUse Initiation = "12"
)

// Limits the BCB manual sets on the fields this package fills.
const (
	MaxMerchantName = 25 // ID 59
	MaxMerchantCity = 15 // ID 60
	MaxKey          = 77 // 26-01: the longest key DICT accepts (an e-mail address)
	MaxTxID         = 25 // 62-05 of a static code
	maxValue        = 99 // any field: the length is written with two digits
	maxAmount       = 13 // ID 54
)

// gui identifies the PIX arrangement inside the merchant account information (26-00).
const gui = "br.gov.bcb.pix"

// Payload is one BR Code ("Pix copia e cola") before encoding. It is a plain value: fill the
// fields, call Encode. Exactly one of Key (a static code) and URL (a dynamic code) is set.
//
// MerchantName, MerchantCity and Description are reduced to the printable ASCII that bank apps
// accept: accented Latin letters lose their accents ("São" becomes "Sao"), any white space
// becomes one space, anything else outside printable ASCII is dropped, and the name and city are
// then cut to MaxMerchantName and MaxMerchantCity characters. The case is kept as given. Key,
// URL, MCC and TxID are never rewritten: a value that does not fit is an error, because a
// silently changed key or txid would send the money, or its notification, somewhere else.
type Payload struct {
	Initiation   Initiation   // ID 01; zero value: field left out
	Key          string       // 26-01, static code: the receiver's PIX key
	Description  string       // 26-02, static code only, optional: shown to the payer
	URL          string       // 26-25, dynamic code: the payload location, without "https://"
	MCC          string       // ID 52, four digits; zero value: "0000"
	Amount       domain.Cents // ID 54; zero value: field left out (the payer types the amount)
	MerchantName string       // ID 59, required
	MerchantCity string       // ID 60, required
	TxID         string       // 62-05, [A-Za-z0-9] up to MaxTxID; zero value: "***" (none)
}

// FieldError reports a payload field Encode refused, naming the field so that whoever set it
// (usually the emitter's configuration) knows what to fix.
type FieldError struct {
	Field  string // the field's name and EMV ID, e.g. "merchant name (59)"
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("BR Code field %s %s", e.Field, e.Reason)
}

// Encode writes the payload as a BR Code: each field as ID, two-digit length and value, in
// ascending ID order, ending with the CRC16 field 63.
func (p Payload) Encode() (string, error) {
	w := tlvWriter{}
	w.field("00", "payload format indicator (00)", "01")
	switch p.Initiation {
	case "":
	case Reusable, SingleUse:
		w.field("01", "point of initiation method (01)", string(p.Initiation))
	default:
		return "", &FieldError{"point of initiation method (01)", fmt.Sprintf("is %q, want 11 or 12", p.Initiation)}
	}

	account, err := p.merchantAccount()
	if err != nil {
		return "", err
	}
	w.field("26", "merchant account information (26)", account)

	mcc := p.MCC
	if mcc == "" {
		mcc = "0000"
	}
	if !isDigits(mcc) || len(mcc) != 4 {
		return "", &FieldError{"merchant category code (52)", "must be four digits"}
	}
	w.field("52", "merchant category code (52)", mcc)
	w.field("53", "transaction currency (53)", "986") // ISO 4217: BRL

	switch {
	case p.Amount < 0:
		return "", &FieldError{"transaction amount (54)", "must not be negative"}
	case p.Amount > 0:
		amount := p.Amount.Reais()
		if len(amount) > maxAmount {
			return "", &FieldError{"transaction amount (54)", fmt.Sprintf("is longer than %d characters", maxAmount)}
		}
		w.field("54", "transaction amount (54)", amount)
	}

	w.field("58", "country code (58)", "BR")
	name := cut(plainASCII(p.MerchantName), MaxMerchantName)
	if name == "" {
		return "", &FieldError{"merchant name (59)", "is empty once reduced to plain ASCII"}
	}
	w.field("59", "merchant name (59)", name)
	city := cut(plainASCII(p.MerchantCity), MaxMerchantCity)
	if city == "" {
		return "", &FieldError{"merchant city (60)", "is empty once reduced to plain ASCII"}
	}
	w.field("60", "merchant city (60)", city)

	txid := p.TxID
	if txid == "" {
		txid = "***"
	}
	if txid != "***" && (len(txid) > MaxTxID || !isAlphanumeric(txid)) {
		return "", &FieldError{"txid (62-05)", fmt.Sprintf("must be 1 to %d characters [A-Za-z0-9]", MaxTxID)}
	}
	var additional tlvWriter
	additional.field("05", "txid (62-05)", txid)
	if additional.err != nil {
		return "", additional.err
	}
	w.field("62", "additional data field (62)", additional.String())
	if w.err != nil {
		return "", w.err
	}

	// The CRC covers its own ID and length, so they are written before it is computed.
	w.b.WriteString("6304")
	crc := crc16(w.b.String())
	const hex = "0123456789ABCDEF"
	for shift := 12; shift >= 0; shift -= 4 {
		w.b.WriteByte(hex[crc>>shift&0xF])
	}
	return w.b.String(), nil
}

// merchantAccount builds template 26: the GUI, then the key and description of a static code
// or the URL of a dynamic one.
func (p Payload) merchantAccount() (string, error) {
	var w tlvWriter
	w.field("00", "GUI (26-00)", gui)
	switch {
	case p.Key != "" && p.URL != "":
		return "", &FieldError{"merchant account information (26)", "holds a key (static code) and a URL (dynamic code): want one"}
	case p.Key != "":
		if len(p.Key) > MaxKey || !isVisibleASCII(p.Key) {
			return "", &FieldError{"PIX key (26-01)", fmt.Sprintf("must be 1 to %d printable ASCII characters without spaces", MaxKey)}
		}
		w.field("01", "PIX key (26-01)", p.Key)
		if d := plainASCII(p.Description); d != "" {
			w.field("02", "description (26-02)", d)
		}
	case p.URL != "":
		if p.Description != "" {
			return "", &FieldError{"description (26-02)", "belongs to static codes; a dynamic code carries it at its URL"}
		}
		// Apps always fetch the location over HTTPS and the manual writes it without a scheme.
		if strings.Contains(p.URL, "://") || !isVisibleASCII(p.URL) {
			return "", &FieldError{"URL (26-25)", "must be printable ASCII without spaces and without a scheme"}
		}
		w.field("25", "URL (26-25)", p.URL)
	default:
		return "", &FieldError{"merchant account information (26)", "needs a PIX key (static code) or a URL (dynamic code)"}
	}
	if w.err != nil {
		return "", w.err
	}
	if len(w.String()) > maxValue {
		return "", &FieldError{"merchant account information (26)", fmt.Sprintf("is longer than %d characters: shorten the key or the description", maxValue)}
	}
	return w.String(), nil
}

// tlvWriter writes EMV fields and keeps the first error, so that Encode reads as the list of
// fields it writes.
type tlvWriter struct {
	b   strings.Builder
	err error
}

func (w *tlvWriter) field(id, label, value string) {
	if w.err != nil {
		return
	}
	if len(value) > maxValue {
		w.err = &FieldError{label, fmt.Sprintf("is longer than %d characters", maxValue)}
		return
	}
	w.b.WriteString(id)
	w.b.WriteByte('0' + byte(len(value)/10))
	w.b.WriteByte('0' + byte(len(value)%10))
	w.b.WriteString(value)
}

func (w *tlvWriter) String() string { return w.b.String() }

// crc16 is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final
// XOR), the checksum the BR Code's field 63 carries.
func crc16(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAlphanumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return s != ""
}

// isVisibleASCII reports whether s is non-empty printable ASCII without spaces: no PIX key type
// and no URL contains a space, so one is a mistake better refused than sent.
func isVisibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}

package pix_test

import (
	"errors"
	"fmt"
	"strconv"
)

// This is our own BR Code reader, written from the manual rather than from the builder, so the
// tests check the builder against an independent reading. It is strict where bank apps are
// strict: printable ASCII only, well-formed TLV, IDs in ascending order and none twice, 00 first
// with "01", a CRC that matches as field 63, last.

// errBadCRC reports a payload whose field 63 does not match its content.
var errBadCRC = errors.New("CRC does not match")

type tlv struct{ id, value string }

// brCode is a parsed BR Code: its top-level fields in payload order.
type brCode struct{ fields []tlv }

// get returns the value of a top-level field.
func (c brCode) get(id string) (string, bool) { return lookup(c.fields, id) }

// sub returns the value of field subID inside the template id (26 or 62).
func (c brCode) sub(id, subID string) (string, bool) {
	tmpl, ok := c.get(id)
	if !ok {
		return "", false
	}
	fields, err := parseTLV(tmpl)
	if err != nil {
		return "", false
	}
	return lookup(fields, subID)
}

func lookup(fields []tlv, id string) (string, bool) {
	for _, f := range fields {
		if f.id == id {
			return f.value, true
		}
	}
	return "", false
}

// parseTLV splits s into EMV fields: two-digit ID, two-digit length, value.
func parseTLV(s string) ([]tlv, error) {
	var fields []tlv
	for i := 0; i < len(s); {
		if len(s)-i < 4 {
			return nil, fmt.Errorf("truncated field header at %d", i)
		}
		id := s[i : i+2]
		if _, err := strconv.ParseUint(id, 10, 8); err != nil {
			return nil, fmt.Errorf("field ID %q at %d is not two digits", id, i)
		}
		n, err := strconv.ParseUint(s[i+2:i+4], 10, 8)
		if err != nil {
			return nil, fmt.Errorf("field %s: length %q is not two digits", id, s[i+2:i+4])
		}
		if n == 0 {
			return nil, fmt.Errorf("field %s is empty", id)
		}
		start, end := i+4, i+4+int(n)
		if end > len(s) {
			return nil, fmt.Errorf("field %s: length %d runs past the end", id, n)
		}
		if len(fields) > 0 && fields[len(fields)-1].id >= id {
			return nil, fmt.Errorf("field %s comes after %s: want ascending IDs, none twice", id, fields[len(fields)-1].id)
		}
		fields = append(fields, tlv{id, s[start:end]})
		i = end
	}
	return fields, nil
}

// parseBRCode reads a payload, checks its structure and CRC, and checks the fields the manual
// makes mandatory. It returns errBadCRC (wrapped) when only the checksum is wrong.
func parseBRCode(payload string) (brCode, error) {
	for i := 0; i < len(payload); i++ {
		if payload[i] < 0x20 || payload[i] > 0x7E {
			return brCode{}, fmt.Errorf("byte %d (0x%02X) is not printable ASCII", i, payload[i])
		}
	}
	fields, err := parseTLV(payload)
	if err != nil {
		return brCode{}, err
	}
	if len(fields) < 2 || fields[0] != (tlv{"00", "01"}) {
		return brCode{}, errors.New("payload format indicator 00 = 01 is not first")
	}
	last := fields[len(fields)-1]
	if last.id != "63" || len(last.value) != 4 {
		return brCode{}, errors.New("CRC field 63 with 4 characters is not last")
	}
	want, err := strconv.ParseUint(last.value, 16, 16)
	if err != nil || fmt.Sprintf("%04X", want) != last.value {
		return brCode{}, fmt.Errorf("CRC %q is not 4 uppercase hexadecimal digits", last.value)
	}
	if got := crc16CCITTFalse(payload[:len(payload)-4]); got != uint16(want) {
		return brCode{}, fmt.Errorf("%w: field 63 says %04X, content gives %04X", errBadCRC, want, got)
	}

	c := brCode{fields: fields}
	for _, id := range []string{"26", "62"} {
		if v, ok := c.get(id); ok {
			if _, err := parseTLV(v); err != nil {
				return brCode{}, fmt.Errorf("template %s: %w", id, err)
			}
		}
	}
	if gui, _ := c.sub("26", "00"); gui != "br.gov.bcb.pix" {
		return brCode{}, fmt.Errorf("merchant account GUI is %q", gui)
	}
	_, static := c.sub("26", "01")
	_, dynamic := c.sub("26", "25")
	if static == dynamic {
		return brCode{}, errors.New("want exactly one of 26-01 (key) and 26-25 (URL)")
	}
	checks := []struct {
		id  string
		max int
	}{{"52", 4}, {"53", 3}, {"58", 2}, {"59", 25}, {"60", 15}, {"62", 99}}
	for _, ch := range checks {
		v, ok := c.get(ch.id)
		if !ok || len(v) > ch.max {
			return brCode{}, fmt.Errorf("field %s is missing or longer than %d", ch.id, ch.max)
		}
	}
	if v, _ := c.get("53"); v != "986" {
		return brCode{}, fmt.Errorf("currency is %q, want 986", v)
	}
	if v, _ := c.get("58"); v != "BR" {
		return brCode{}, fmt.Errorf("country is %q, want BR", v)
	}
	if v, ok := c.get("01"); ok && v != "11" && v != "12" {
		return brCode{}, fmt.Errorf("point of initiation is %q", v)
	}
	if txid, ok := c.sub("62", "05"); !ok || len(txid) > 25 {
		return brCode{}, errors.New("txid 62-05 is missing or longer than 25")
	}
	return c, nil
}

// crc16CCITTFalse is written again here, bit by bit as the manual's annex describes it, so a
// mistake in the builder's CRC cannot hide behind the same mistake in the reader.
func crc16CCITTFalse(s string) uint16 {
	crc := 0xFFFF
	for _, b := range []byte(s) {
		for bit := 7; bit >= 0; bit-- {
			in := int(b>>bit) & 1
			top := crc >> 15 & 1
			crc = crc << 1 & 0xFFFF
			if in^top == 1 {
				crc ^= 0x1021
			}
		}
	}
	return uint16(crc)
}

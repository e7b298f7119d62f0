package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// GET /transaction/{id} is the busiest answer of the API, and encoding/json's reflection was
// its largest cost (docs/PERFORMANCE.md). appendTransactionJSON writes a transactionView by
// hand, byte for byte as encoding/json writes it (HTML-sensitive characters, U+2028/U+2029 and
// invalid UTF-8 escaped the same way, fields in the struct's order with the same omitempty
// rules); transaction_json_test.go proves the equality over transactions in every status and a
// fuzz target over arbitrary strings. Every other answer keeps encoding/json (writeJSON).

// jsonBuffers lends the buffers of hand-encoded answers (a few kilobytes each); the Server
// keeps one.
type jsonBuffers struct{ p sync.Pool }

// jsonBuffer is one loan: out for the answer, view for what its view points at (viewStore).
type jsonBuffer struct {
	out  []byte
	view viewStore
}

// jsonBufMax is the largest buffer given back, so that one huge answer does not pin its
// memory.
const jsonBufMax = 64 << 10

// get lends a buffer, empty; put gives it back once nothing points into it.
func (bufs *jsonBuffers) get() *jsonBuffer {
	if b, _ := bufs.p.Get().(*jsonBuffer); b != nil {
		return b
	}
	return &jsonBuffer{out: make([]byte, 0, 4096), view: viewStore{scratch: make([]byte, 0, 2048)}}
}

func (bufs *jsonBuffers) put(b *jsonBuffer) {
	if cap(b.out) > jsonBufMax || cap(b.view.scratch) > jsonBufMax {
		return
	}
	b.out = b.out[:0]
	b.view.reset()
	bufs.p.Put(b)
}

// writeTransaction answers status with v as writeJSON would, newline included, encoding into
// b.out; v may point into b.view. Metadata that encoding/json would refuse (never stored:
// it is checked on the way in) goes through writeJSON so that even that answer stays the
// same. The answer is whole before it is sent, so it carries its Content-Length.
func (bufs *jsonBuffers) writeTransaction(w http.ResponseWriter, status int, v *transactionView, b *jsonBuffer) {
	defer bufs.put(b)
	buf, ok := appendTransactionJSON(b.out[:0], v)
	if !ok {
		writeJSON(w, status, *v) // a copy: v itself does not escape, and the caller's view stays on its stack
		return
	}
	buf = append(buf, '\n')
	b.out = buf
	h := w.Header()
	vals := make([]string, 2) // one allocation for both headers; each value's slice is full, so an Add copies
	vals[0], vals[1] = "application/json", strconv.Itoa(len(buf))
	h["Content-Type"], h["Content-Length"] = vals[0:1:1], vals[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(buf)
}

// appendTransactionJSON appends v as json.Marshal writes it; false when its metadata is not
// valid JSON (json.Marshal fails then).
func appendTransactionJSON(b []byte, v *transactionView) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, v.ID)
	b = append(b, `,"acquirer":`...)
	b = appendJSONString(b, v.Acquirer)
	b = append(b, `,"amount":`...)
	b = strconv.AppendInt(b, v.Amount, 10)
	b = append(b, `,"paymentMethod":`...)
	b = appendJSONString(b, v.PaymentMethod)
	if v.WebhookURL != "" {
		b = append(b, `,"webhookUrl":`...)
		b = appendJSONString(b, v.WebhookURL)
	}
	if v.ExternalCode != "" {
		b = append(b, `,"externalCode":`...)
		b = appendJSONString(b, v.ExternalCode)
	}
	if v.Customer != nil {
		b = appendCustomerJSON(append(b, `,"customer":`...), v.Customer)
	}
	if s := v.Seller; s != nil {
		b = append(b, `,"seller":{"name":`...)
		b = appendJSONString(b, s.Name)
		b = append(b, `,"document":`...)
		b = appendDocumentJSON(b, s.Document)
		b = append(b, '}')
	}
	b = append(b, `,"isInfoProduct":`...)
	b = strconv.AppendBool(b, v.IsInfoProduct)
	if v.Address != nil {
		b = appendAddressJSON(append(b, `,"address":`...), v.Address)
	}
	if len(v.Items) > 0 {
		b = appendItemsJSON(append(b, `,"items":`...), v.Items)
	}
	if len(v.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		var ok bool
		if b, ok = appendRawJSON(b, v.Metadata); !ok {
			return b, false
		}
	}
	b = append(b, `,"createdAt":`...)
	b = appendISOTime(b, v.CreatedAt)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, v.Status)
	b = append(b, `,"statusHistory":`...)
	b = appendHistoryJSON(b, v.StatusHistory)
	b = append(b, `,"updatedAt":`...)
	b = appendISOTime(b, v.UpdatedAt)
	if v.AmountPaid != nil {
		b = append(b, `,"amountPaid":`...)
		b = strconv.AppendInt(b, *v.AmountPaid, 10)
	}
	b = append(b, `,"paymentDate":`...)
	b = appendISOTimePtr(b, v.PaymentDate)
	b = append(b, `,"infractionDate":`...)
	b = appendISOTimePtr(b, v.InfractionDate)
	if v.PixResponse != nil {
		b = appendPixResponseJSON(append(b, `,"pixResponse":`...), v.PixResponse)
	}
	if v.PaymentURL != "" {
		b = append(b, `,"paymentUrl":`...)
		b = appendJSONString(b, v.PaymentURL)
	}
	b = append(b, `,"errorMessage":`...)
	b = appendStringPtr(b, v.ErrorMessage)
	if v.EndToEnd != "" {
		b = append(b, `,"endToEnd":`...)
		b = appendJSONString(b, v.EndToEnd)
	}
	if v.EndToEndRefund != "" {
		b = append(b, `,"endToEndRefund":`...)
		b = appendJSONString(b, v.EndToEndRefund)
	}
	if v.Payer != nil {
		b = append(b, `,"payer":`...)
		b = appendHolderJSON(b, v.Payer)
	}
	if v.Receiver != nil {
		b = append(b, `,"receiver":`...)
		b = appendHolderJSON(b, v.Receiver)
	}
	if v.FeeAmount != nil {
		b = append(b, `,"feeAmount":`...)
		b = strconv.AppendInt(b, *v.FeeAmount, 10)
	}
	b = append(b, `,"amountRefunded":`...)
	b = strconv.AppendInt(b, v.AmountRefunded, 10)
	b = append(b, `,"refunds":`...)
	b = appendRefundsJSON(b, v.Refunds)
	return append(b, '}'), true
}

func appendCustomerJSON(b []byte, c *customerView) []byte {
	b = append(b, '{')
	if c.IP != "" {
		b = append(b, `"ip":`...)
		b = appendJSONString(b, c.IP)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"email":`...)
	b = appendJSONString(b, c.Email)
	b = append(b, `,"document":`...)
	b = appendDocumentJSON(b, c.Document)
	if c.Landline != "" {
		b = append(b, `,"landline":`...)
		b = appendJSONString(b, c.Landline)
	}
	if c.MobilePhone != "" {
		b = append(b, `,"mobilePhone":`...)
		b = appendJSONString(b, c.MobilePhone)
	}
	b = append(b, '}')
	return b
}

func appendAddressJSON(b []byte, a *addressView) []byte {
	b = append(b, `{"zipCode":`...)
	b = appendJSONString(b, a.ZipCode)
	b = append(b, `,"number":`...)
	b = appendJSONString(b, a.Number)
	b = append(b, `,"street":`...)
	b = appendJSONString(b, a.Street)
	b = append(b, `,"neighborhood":`...)
	b = appendJSONString(b, a.Neighborhood)
	b = append(b, `,"city":`...)
	b = appendJSONString(b, a.City)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, a.State)
	b = append(b, `,"country":`...)
	b = appendJSONString(b, a.Country)
	if a.Complement != "" {
		b = append(b, `,"complement":`...)
		b = appendJSONString(b, a.Complement)
	}
	b = append(b, '}')
	return b
}

func appendItemsJSON(b []byte, items []itemView) []byte {
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"title":`...)
		b = appendJSONString(b, it.Title)
		b = append(b, `,"unitPrice":`...)
		b = strconv.AppendInt(b, it.UnitPrice, 10)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(it.Quantity), 10)
		if it.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONString(b, it.Description)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	return b
}

// appendHistoryJSON writes a history as encoding/json does: null when nil.
func appendHistoryJSON(b []byte, history []statusEntryView) []byte {
	if history == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range history {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"status":`...)
			b = appendJSONString(b, e.Status)
			b = append(b, `,"date":`...)
			b = appendISOTime(b, e.Date)
			b = append(b, `,"durationInMilliseconds":`...)
			b = appendInt64Ptr(b, e.DurationInMilliseconds)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return b
}

func appendPixResponseJSON(b []byte, p *pixResponseView) []byte {
	b = append(b, `{"uri":`...)
	b = appendJSONString(b, p.URI)
	b = append(b, `,"qrCodeBase64":`...)
	// The data URI is ASCII with nothing to escape (the prefix and the base64 alphabet).
	b = append(appendDataURI(append(b, '"'), p.QRCodeBase64), '"')
	b = append(b, `,"expirationDate":`...)
	b = appendISOTime(b, p.ExpirationDate)
	b = append(b, '}')
	return b
}

// appendRefundsJSON writes refunds as encoding/json does: null when nil.
func appendRefundsJSON(b []byte, refunds []refundView) []byte {
	if refunds == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range refunds {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, r.ID)
			b = append(b, `,"amount":`...)
			b = strconv.AppendInt(b, r.Amount, 10)
			b = append(b, `,"reason":`...)
			b = appendStringPtr(b, r.Reason)
			b = append(b, `,"status":`...)
			b = appendJSONString(b, r.Status)
			b = append(b, `,"endToEndRefund":`...)
			b = appendStringPtr(b, r.EndToEndRefund)
			b = append(b, `,"errorMessage":`...)
			b = appendStringPtr(b, r.ErrorMessage)
			b = append(b, `,"createdAt":`...)
			b = appendISOTime(b, r.CreatedAt)
			b = append(b, `,"completedAt":`...)
			b = appendISOTimePtr(b, r.CompletedAt)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return b
}

func appendDocumentJSON(b []byte, d documentView) []byte {
	b = append(b, `{"value":`...)
	b = appendJSONString(b, d.Value)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, d.Type)
	return append(b, '}')
}

func appendHolderJSON(b []byte, h *accountHolderView) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, h.Type)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, h.Name)
	b = append(b, `,"document":`...)
	b = appendJSONString(b, h.Document)
	b = append(b, `,"bankAccount":{"type":`...)
	b = appendJSONString(b, h.BankAccount.Type)
	b = append(b, `,"digit":`...)
	b = appendJSONString(b, h.BankAccount.Digit)
	b = append(b, `,"ispb":`...)
	b = appendJSONString(b, h.BankAccount.ISPB)
	b = append(b, `},"pix":{"key":`...)
	b = appendJSONString(b, h.Pix.Key)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, h.Pix.Type)
	return append(b, "}}"...)
}

func appendInt64Ptr(b []byte, p *int64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *p, 10)
}

func appendStringPtr(b []byte, p *string) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *p)
}

func appendISOTimePtr(b []byte, p *isoTime) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return appendISOTime(b, *p)
}

// appendISOTime writes t as isoTime.MarshalText does, quoted, without Format's reading of
// the layout for the years 0 to 9999 (Format's own path writes the others). Nothing in the text
// ever needs escaping: it is digits and punctuation.
func appendISOTime(b []byte, t isoTime) []byte {
	u := time.Time(t).UTC()
	year, month, day := u.Date()
	if year < 0 || year > 9999 {
		var tmp [40]byte
		return appendJSONString(b, u.AppendFormat(tmp[:0], "2006-01-02T15:04:05.000Z"))
	}
	hour, minute, sec := u.Clock()
	ms := u.Nanosecond() / 1e6 // truncated, as Format's .000
	b = append(b, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return b
}

// appendRawJSON appends a json.RawMessage as encoding/json does: compacted, with <, >, &,
// U+2028 and U+2029 escaped. Metadata is stored compact and usually has none of them, so the
// common case is a copy.
func appendRawJSON(b []byte, raw []byte) ([]byte, bool) {
	plain := true
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2: // 0xE2 starts U+2028 and U+2029
			plain = false
		}
		if !plain {
			break
		}
	}
	if plain && json.Valid(raw) {
		return append(b, raw...), true
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return b, false
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, compact.Bytes())
	return append(b, escaped.Bytes()...), true
}

const jsonHex = "0123456789abcdef"

// jsonSafe tells the ASCII bytes written as they are inside a JSON string with HTML escaping.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// appendJSONString is encoding/json's string encoder with HTML escaping on, as json.Marshal
// and json.Encoder use it: ", \ and control characters escaped (\b \f \n \r \t by name, the
// others as \u00XX), <, > and & as \u003c \u003e \u0026, U+2028 and U+2029 as \u2028 and
// \u2029, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString[S []byte | string](dst []byte, src S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(src)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(src[i : i+n]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}

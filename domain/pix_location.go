package domain

import (
	"fmt"
	"time"
)

// A dynamic BR Code holds no amount and no key: it holds a URL, the charge's payload location,
// from which the payer's bank reads a signed description of the charge (docs/API.md,
// Dynamic charges). The location id is the capability in that URL, random and never derived from the
// transaction id; the cob txid is the charge's txid at the acquirer, by which the acquirer's
// callback names the payment. Both are set once, when the charge is emitted, and never change.

// Bounds of the location id and the cob txid, in characters of [A-Za-z0-9]. The location id
// carries at least 128 random bits; the cob txid follows Banco Central's API Pix (26 to 35).
const (
	MinPixLocationIDLength = 25
	MaxPixLocationIDLength = 32
	MinCobTxIDLength       = 26
	MaxCobTxIDLength       = 35
	// MaxPayerRequest bounds solicitacaoPagador, the text shown to the payer (API Pix: 140).
	MaxPayerRequest = 140
)

// PixLocation is the payload location of a dynamic charge. The zero value means a static
// charge (no location).
type PixLocation struct {
	ID      string // the location id, the last segment of the URL in the BR Code
	CobTxID string // the charge's txid, named by the payload and by the acquirer's callback
}

// Dynamic tells whether l is the location of a dynamic charge.
func (l PixLocation) Dynamic() bool { return l != PixLocation{} }

// validate refuses a location that is half set, malformed, or the transaction id itself.
func (l PixLocation) validate(transactionID string) error {
	if !l.Dynamic() {
		return nil
	}
	if !ValidPixLocationID(l.ID) || !ValidCobTxID(l.CobTxID) || l.ID == transactionID {
		return fmt.Errorf("%w: a PIX location needs an id of %d to %d and a txid of %d to %d characters [A-Za-z0-9]",
			ErrInvalidOrder, MinPixLocationIDLength, MaxPixLocationIDLength, MinCobTxIDLength, MaxCobTxIDLength)
	}
	return nil
}

// ValidPixLocationID tells whether s has the shape of a location id. It says nothing about
// whether one exists; the location route refuses malformed ids before any look-up.
func ValidPixLocationID(s string) bool {
	return len(s) >= MinPixLocationIDLength && len(s) <= MaxPixLocationIDLength && alphanumeric(s)
}

// ValidCobTxID tells whether s has the shape of a dynamic charge's txid. A static code's txid
// (at most 25 characters) never has it, so the two never mix.
func ValidCobTxID(s string) bool {
	return len(s) >= MinCobTxIDLength && len(s) <= MaxCobTxIDLength && alphanumeric(s)
}

func alphanumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// CobStatus is the status of a dynamic charge as its payload states it (API Pix's
// StatusCobranca, less the merchant's own removal, which pixgate does not offer).
type CobStatus string

const (
	CobActive    CobStatus = "ATIVA"             // awaiting payment
	CobCompleted CobStatus = "CONCLUIDA"         // paid, and whatever came after (refunds, disputes)
	CobRemoved   CobStatus = "REMOVIDA_PELO_PSP" // expired or failed: it accepts no payment
)

// cobStatusOf maps a transaction status to the charge's. Only transactions with a QR code have
// a charge, so PENDING never reaches here; FAILED after a QR code means expired.
func cobStatusOf(s TransactionStatus) CobStatus {
	switch s {
	case TxPending, TxPixQRCodeGenerated:
		return CobActive
	case TxFailed:
		return CobRemoved
	}
	return CobCompleted
}

// Cob is a dynamic charge as a payer's bank reads it at its location, at one moment.
type Cob struct {
	Location PixLocation
	Status   CobStatus
	// Revision starts at 0 and grows by one each time Status changes. It is derived from the
	// status history (and the clock, for a charge that expired before the sweeper failed it),
	// so every instance computes the same one.
	Revision          int
	CreatedAt         time.Time // calendario.criacao: the transaction's creation
	ExpirationSeconds int       // calendario.expiracao, counted from CreatedAt
	Amount            Cents
	// PayerRequest is solicitacaoPagador: the description of the order's first item that has
	// one, cut at MaxPayerRequest characters; "" when the merchant gave none. Nothing else of
	// the order, and nothing of the payer, is ever part of a Cob.
	PayerRequest string
}

// Cob returns the dynamic charge of the transaction as it stands at now, or false when the
// transaction has no dynamic charge of pixgate's own (a static code, a charge its PSP made and
// serves, or no code at all). A charge still
// awaiting payment whose QR code expired at now is REMOVIDA_PELO_PSP already: the payer's
// bank must refuse it even before the sweeper fails the transaction.
func (t *Transaction) Cob(now time.Time) (Cob, bool) {
	if t.pix == nil || t.pix.Location.ID == "" {
		return Cob{}, false
	}
	c := Cob{
		Location: t.pix.Location, Status: CobActive, CreatedAt: t.createdAt,
		ExpirationSeconds: t.order.ExpirationSeconds, Amount: t.order.Amount,
		PayerRequest: payerRequest(t.order.Items),
	}
	for _, e := range t.history {
		if s := cobStatusOf(e.Status); s != c.Status {
			c.Status = s
			c.Revision++
		}
	}
	if t.Expired(now) {
		c.Status = CobRemoved
		c.Revision++
	}
	return c, true
}

// PayerRequest is the text a charge shows its payer (API Pix's solicitacaoPagador): the
// description of the order's first item that has one, cut at MaxPayerRequest characters; ""
// when none has.
func (o Order) PayerRequest() string { return payerRequest(o.Items) }

func payerRequest(items []Item) string {
	for _, it := range items {
		if it.Description != "" {
			r := []rune(it.Description)
			return string(r[:min(len(r), MaxPayerRequest)])
		}
	}
	return ""
}

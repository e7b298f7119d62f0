package pix

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.PixEmitter = (*Emitter)(nil)

// EmitterConfig is what the sandbox emitter writes into every code besides the charge itself.
type EmitterConfig struct {
	PixKey       string // the receiver's PIX key, required (26-01)
	MerchantName string // required; reduced to plain ASCII and cut to MaxMerchantName (59)
	MerchantCity string // required; reduced to plain ASCII and cut to MaxMerchantCity (60)
	MCC          string // merchant category code, four digits; "" means "0000" (52)
	// LocationPrefix turns the emitter dynamic (emitter_dynamic.go): the address of the
	// payload locations without scheme, up to the location id ("pay.example.com/pix/qr/").
	// Empty: static codes.
	LocationPrefix string
}

// Emitter is the built-in sandbox acquirer. It writes a static, single-use BR Code for the
// configured key with the charge's amount and a txid derived from the transaction id, and calls
// nobody. The code carries no expiry (static codes have no field for one): the transaction's
// expiration is pixgate's to enforce. Given a location prefix, it writes dynamic codes instead
// (emitter_dynamic.go), whose location states the expiry to the payer's bank. It is safe for
// concurrent use.
type Emitter struct {
	base     Payload
	location string // LocationPrefix; "" for static codes
}

// NewEmitter checks the configuration once, by encoding the longest code it can be asked for,
// so that Emit can fail only because of the charge it is given.
func NewEmitter(cfg EmitterConfig) (*Emitter, error) {
	var missing []string
	if cfg.PixKey == "" {
		missing = append(missing, "PIX key")
	}
	if strings.TrimSpace(cfg.MerchantName) == "" {
		missing = append(missing, "merchant name")
	}
	if strings.TrimSpace(cfg.MerchantCity) == "" {
		missing = append(missing, "merchant city")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("pix: emitter configuration: %s required", strings.Join(missing, ", "))
	}
	e := &Emitter{base: Payload{
		Initiation:   SingleUse,
		Key:          cfg.PixKey,
		MCC:          cfg.MCC,
		MerchantName: cfg.MerchantName,
		MerchantCity: cfg.MerchantCity,
	}}
	if cfg.LocationPrefix != "" {
		return newDynamicEmitter(e, cfg.LocationPrefix)
	}
	probe := e.base
	probe.Amount = domain.MaxAmount
	probe.TxID = strings.Repeat("z", TxIDLen)
	if _, err := probe.Encode(); err != nil {
		return nil, fmt.Errorf("pix: emitter configuration: %w", err)
	}
	return e, nil
}

// Acquirer names the sandbox, as the transaction's `acquirer` field shows it.
func (e *Emitter) Acquirer() string { return "SANDBOX" }

// Emit writes the BR Code of one charge. Its errors name the offending input in words a
// merchant can read: an amount outside the bounds of docs/API.md, Limits
// (domain.ErrAmountOutOfRange) or a transaction id that is not a UUID (ErrInvalidTransactionID). It returns ctx.Err() when the
// context has already ended.
func (e *Emitter) Emit(ctx context.Context, charge domain.PixCharge) (domain.PixCode, error) {
	if err := ctx.Err(); err != nil {
		return domain.PixCode{}, err
	}
	// A code without an amount lets the payer type any amount; never emit one by accident.
	if charge.Amount < domain.MinAmount || charge.Amount > domain.MaxAmount {
		return domain.PixCode{}, fmt.Errorf("pix: %w", domain.ErrAmountOutOfRange{Amount: charge.Amount})
	}
	txid, err := TxIDFromTransactionID(charge.TransactionID)
	if err != nil {
		return domain.PixCode{}, fmt.Errorf("pix: %w", err)
	}
	if e.location != "" {
		// A dynamic code's txid is random, never this one; the id was checked all the same, so
		// that both kinds of code refuse the same charges.
		return e.emitDynamic()
	}
	p := e.base
	p.Amount = charge.Amount
	p.TxID = txid
	uri, err := p.Encode()
	if err != nil {
		// NewEmitter encoded the longest possible code, so this is a bug, not bad input.
		return domain.PixCode{}, fmt.Errorf("pix: could not write the BR Code: %w", err)
	}
	return domain.PixCode{URI: uri}, nil
}

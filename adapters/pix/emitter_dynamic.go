package pix

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// A dynamic BR Code names no key and no amount: merchant account information (26) holds the
// GUI and, in 26-25, the charge's payload location without "https://"; the amount (54) is left
// out and the txid (62-05) is "***". The payer's bank fetches the location and reads the
// amount, the expiry, the status and the charge's txid from the signed answer there (docs/API.md,
// Dynamic charges).
//
// The location id and the cob txid are each 26 characters from crypto/rand.Text: 130 random
// bits in the base32 alphabet (A-Z, 2-7), which lies within the [A-Za-z0-9] both must use.
// Neither is derived from the transaction id, and neither can be guessed from the other.
const (
	// LocationIDLength is the length of every location id this emitter writes.
	LocationIDLength = 26
	// MaxLocationPrefix is the longest LocationPrefix: the whole of 26-25, prefix and id,
	// must fit its 77 characters.
	MaxLocationPrefix = 77 - LocationIDLength
)

// newDynamicEmitter checks the location prefix by encoding the longest code it can write.
func newDynamicEmitter(e *Emitter, prefix string) (*Emitter, error) {
	if strings.Contains(prefix, "://") || !isVisibleASCII(prefix) {
		return nil, fmt.Errorf("pix: emitter configuration: the location prefix %q must be printable ASCII without a scheme", prefix)
	}
	if len(prefix) > MaxLocationPrefix {
		return nil, fmt.Errorf("pix: emitter configuration: the location prefix %q has %d characters; a dynamic code's location holds at most %d before its id",
			prefix, len(prefix), MaxLocationPrefix)
	}
	e.location = prefix
	probe := e.dynamicPayload(strings.Repeat("Z", LocationIDLength))
	if _, err := probe.Encode(); err != nil {
		return nil, fmt.Errorf("pix: emitter configuration: %w", err)
	}
	return e, nil
}

func (e *Emitter) dynamicPayload(locationID string) Payload {
	p := e.base
	p.Key = ""
	p.URL = e.location + locationID
	return p // no Amount (54) and no TxID: 62-05 is "***"
}

// emitDynamic writes a dynamic code with a fresh location id and cob txid.
func (e *Emitter) emitDynamic() (domain.PixCode, error) {
	loc := domain.PixLocation{ID: rand.Text(), CobTxID: rand.Text()}
	uri, err := e.dynamicPayload(loc.ID).Encode()
	if err != nil {
		// NewEmitter encoded the longest possible code, so this is a bug, not bad input.
		return domain.PixCode{}, fmt.Errorf("pix: could not write the BR Code: %w", err)
	}
	return domain.PixCode{URI: uri, Location: loc}, nil
}

var _ ports.LocationCoder = (*Emitter)(nil)

// CodeForLocation writes the dynamic code of a charge another party made and serves at
// location (a PSP's payload location, without scheme), with this emitter's merchant name and
// city: for a PSP whose answer holds no BR Code of its own.
func (e *Emitter) CodeForLocation(location string) (string, error) {
	p := e.base
	p.Key = ""
	p.URL = location
	uri, err := p.Encode()
	if err != nil {
		return "", fmt.Errorf("pix: the payload location %q cannot be written in a BR Code: %w", location, err)
	}
	return uri, nil
}

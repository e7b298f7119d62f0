package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// EventEncoder writes the body of a webhook notification (docs/API.md, Webhooks):
// {"id", "type", "createdAt", "data"}, where data is the resource exactly as its GET answers
// it, masking included, paymentUrl included, as it was right after the transition (the event's
// snapshot). It lives here because the resource's JSON shape is this adapter's to define.
type EventEncoder struct {
	// PublicURL is the base of payment page addresses, as Config.PublicURL.
	PublicURL string
}

var _ ports.EventEncoder = EventEncoder{}

type eventBody struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	CreatedAt isoTime `json:"createdAt"`
	Data      any     `json:"data"`
}

// EncodeEvent implements ports.EventEncoder.
func (enc EventEncoder) EncodeEvent(e domain.Event) ([]byte, error) {
	body := eventBody{ID: e.ID, Type: e.Type, CreatedAt: isoTime(e.CreatedAt)}
	switch {
	case e.Kind == domain.ResourceTransaction && e.Transaction != nil:
		body.Data = viewTransaction(e.Transaction, enc.PublicURL)
	case e.Kind == domain.ResourceWithdrawal && e.Withdrawal != nil:
		body.Data = viewWithdrawal(e.Withdrawal)
	default:
		return nil, fmt.Errorf("event %s of kind %q carries no snapshot of its resource", e.ID, e.Kind)
	}
	return json.Marshal(body)
}

package ports

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// PixLocationPayload is what the payload location of a dynamic charge states, in Banco
// Central's API Pix terms, at the moment it is presented.
type PixLocationPayload struct {
	Cob         domain.Cob
	PresentedAt time.Time // calendario.apresentacao
	Key         string    // chave: the receiver's PIX key
}

// PixLocationSigner writes the signed answer of a payload location: a compact JWS whose header
// names the key (kid) and the address of the key set (jku).
//
// Sign is safe for concurrent use; it fails only when signing itself fails (the random source),
// never because of the payload. KeySet is the public key set (RFC 7517 JSON) that verifies
// every JWS Sign wrote and still may verify: the current key and the earlier ones kept for a
// rotation.
type PixLocationSigner interface {
	Sign(ctx context.Context, p PixLocationPayload) (string, error)
	KeySet() []byte
}

package ports

import (
	"context"

	"github.com/pixgate/pixgate/domain"
)

// PixDirectory resolves a PIX key to the account that owns it, as Banco Central's directory
// (DICT) does for a PSP: a withdrawal records its receiver from it. The sandbox has one
// (adapters/sandbox); production has none built in, and a withdrawal then records no
// receiver until an acquirer resolves the key.
//
// Resolve is safe for concurrent use. A key that cannot be resolved answers an error wrapping
// domain.ErrInvalidPixKey.
type PixDirectory interface {
	Resolve(ctx context.Context, key domain.PixKey) (domain.AccountHolder, error)
}

package application

import (
	"context"
	"errors"

	"github.com/pixgate/pixgate/domain"
)

// keyedRecords finds a record of an account by the idempotency key it was created with
// (domain.ErrNotFound when none was); the transaction and withdrawal repositories both do.
type keyedRecords[R any] interface {
	GetByIdempotencyKey(ctx context.Context, accountID, key string) (R, error)
}

// idempotent is a record that remembers the idempotency key and fingerprint of its creation.
type idempotent interface {
	Idempotency() domain.Idempotency
}

// createOnce is how every creation honours an idempotency key. Without a key, create runs.
// With one, a record already created with that key answers in its place (replayed) when the
// fingerprint matches, and ErrIdempotencyKeyReused when it does not. Concurrent requests with
// one key race on the store's unique key: create fails for the losers with an error lost
// tells apart (ports.ErrDuplicate, say), and they answer the winner's record as a replay. A
// failure of create that is not a lost race is answered as it is.
func createOnce[R idempotent](ctx context.Context, records keyedRecords[R], accountID string, idem domain.Idempotency,
	create func() (R, error), lost func(error) bool) (record R, replayed bool, err error) {
	if idem.Key != "" {
		if prior, err := replay(ctx, records, accountID, idem); !errors.Is(err, domain.ErrNotFound) {
			return prior, err == nil, err
		}
	}
	record, err = create()
	if err != nil && idem.Key != "" && lost(err) {
		if prior, rerr := replay(ctx, records, accountID, idem); !errors.Is(rerr, domain.ErrNotFound) {
			return prior, rerr == nil, rerr
		}
	}
	return record, false, err
}

// replay is the record created with idem's key, when idem's fingerprint is the one it was
// created with.
func replay[R idempotent](ctx context.Context, records keyedRecords[R], accountID string, idem domain.Idempotency) (R, error) {
	var none R
	prior, err := records.GetByIdempotencyKey(ctx, accountID, idem.Key)
	if err != nil {
		return none, err
	}
	if prior.Idempotency().Fingerprint != idem.Fingerprint {
		return none, ErrIdempotencyKeyReused
	}
	return prior, nil
}

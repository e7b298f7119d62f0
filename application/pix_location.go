package application

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// DefaultPixLocationCacheSize bounds the signed answers ShowPixLocation keeps: about 1.5 KiB
// each, so 10,000 take some 15 MiB.
const DefaultPixLocationCacheSize = 10_000

// ShowPixLocation answers a dynamic charge's payload location: the JWS a payer's bank reads
// before it pays (docs/API.md, Dynamic charges). The location id is the authority (a capability
// URL): no principal is asked for. A malformed id answers domain.ErrNotFound before any
// look-up, an unknown one after the store's indexed look-up, exactly alike.
//
// Signing costs far more than reading (one RSA-PSS signature), so each charge's answer is
// signed once per revision and kept for at most MaxPixAnswerAge: repeated fetches of an
// unchanged charge read the transaction and return the kept JWS. Its apresentacao is therefore
// the time that answer was signed on this instance, at most MaxPixAnswerAge before the time of
// the answer; a revision changes with the status, which is what a payer's bank acts on.
type ShowPixLocation struct {
	repo   ports.TransactionRepository
	signer ports.PixLocationSigner
	clock  ports.Clock
	key    string
	cache  *jwsCache
}

// NewShowPixLocation builds the use case; every port is required, key is the receiver's PIX
// key (the payload's chave) and cacheSize bounds the kept answers (at least 1).
func NewShowPixLocation(repo ports.TransactionRepository, signer ports.PixLocationSigner, clock ports.Clock, key string, cacheSize int) *ShowPixLocation {
	requirePorts("NewShowPixLocation", repo, signer, clock)
	if key == "" {
		panic("application.NewShowPixLocation: the PIX key is required")
	}
	return &ShowPixLocation{repo: repo, signer: signer, clock: clock, key: key, cache: newJWSCache(max(1, cacheSize))}
}

// MaxPixAnswerAge bounds how long a signed answer is served again: past it the next fetch
// signs anew, so that apresentacao never lags the time of the answer by more.
const MaxPixAnswerAge = time.Minute

// Execute returns the compact JWS of location id, or domain.ErrNotFound.
func (uc *ShowPixLocation) Execute(ctx context.Context, id string) (string, error) {
	if !domain.ValidPixLocationID(id) {
		return "", fmt.Errorf("pix location: %w", domain.ErrNotFound)
	}
	t, err := uc.repo.FindByPixLocation(ctx, id)
	if err != nil {
		return "", err
	}
	now := uc.clock.Now()
	cob, ok := t.Cob(now)
	if !ok || cob.Location.ID != id {
		// The store found it by this id, so this is a store's bug; answer as unknown.
		return "", fmt.Errorf("pix location: %w", domain.ErrNotFound)
	}
	k := jwsKey{location: id, revision: cob.Revision, status: cob.Status}
	if a, ok := uc.cache.get(k); ok && now.Sub(a.signedAt) < MaxPixAnswerAge {
		return a.jws, nil
	}
	jws, err := uc.signer.Sign(ctx, ports.PixLocationPayload{Cob: cob, PresentedAt: now, Key: uc.key})
	if err != nil {
		return "", fmt.Errorf("signing pix location: %w", err)
	}
	uc.cache.put(k, signedAnswer{jws: jws, signedAt: now})
	return jws, nil
}

// jwsKey names one revision of one charge; the status is part of it so that a wrong revision
// count could never serve a stale status.
type jwsKey struct {
	location string
	revision int
	status   domain.CobStatus
}

// signedAnswer is a JWS and when it was signed (its apresentacao).
type signedAnswer struct {
	jws      string
	signedAt time.Time
}

// jwsCache keeps up to size signed answers and forgets the oldest first. A charge's later
// revision replaces nothing: the older one ages out, being fetched no more.
type jwsCache struct {
	mu    sync.RWMutex
	size  int
	items map[jwsKey]signedAnswer
	order []jwsKey // a ring of the keys, oldest at next
	next  int
}

func newJWSCache(size int) *jwsCache {
	return &jwsCache{size: size, items: make(map[jwsKey]signedAnswer, size), order: make([]jwsKey, 0, size)}
}

func (c *jwsCache) get(k jwsKey) (signedAnswer, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.items[k]
	return v, ok
}

func (c *jwsCache) put(k jwsKey, a signedAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[k]; ok {
		if a.signedAt.After(old.signedAt) {
			c.items[k] = a // a fresher signature of the same revision; its place in line stays
		}
		return
	}
	if len(c.order) < c.size {
		c.order = append(c.order, k)
	} else {
		delete(c.items, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % c.size
	}
	c.items[k] = a
}

// len is how many answers are kept (tests watch the bound with it).
func (c *jwsCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

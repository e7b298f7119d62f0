package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.AccountRepository = (*Accounts)(nil)

// Accounts keeps client accounts and credentials in memory, lost on restart. It is safe for
// concurrent use: one mutex guards both maps, which is plenty since accounts change rarely and
// reads are map lookups.
//
// Accounts are stored as records and handed out as new aggregates, so that a caller changing
// what it got (Disable on a fetched account) cannot change the store behind UpdateAccount's
// back.
type Accounts struct {
	mu          sync.RWMutex
	accounts    map[string]domain.AccountRecord
	credentials map[string]domain.Credential // by client id
}

// NewAccounts returns an empty account store.
func NewAccounts() *Accounts {
	return &Accounts{
		accounts:    make(map[string]domain.AccountRecord),
		credentials: make(map[string]domain.Credential),
	}
}

// CreateAccount implements ports.AccountRepository.
func (s *Accounts) CreateAccount(ctx context.Context, account *domain.Account) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if account == nil {
		return fmt.Errorf("memory: nil account")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[account.ID()]; ok {
		return fmt.Errorf("account %s: %w", account.ID(), ports.ErrDuplicate)
	}
	rec := account.Record()
	rec.Version = 0
	s.accounts[account.ID()] = rec
	return nil
}

// GetAccount implements ports.AccountRepository.
func (s *Accounts) GetAccount(ctx context.Context, id string) (*domain.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.accounts[id]
	if !ok {
		return nil, fmt.Errorf("account %s: %w", id, domain.ErrNotFound)
	}
	return domain.UnmarshalAccountFromDatabase(a), nil
}

// ListAccounts implements ports.AccountRepository.
func (s *Accounts) ListAccounts(ctx context.Context) ([]*domain.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]*domain.Account, 0, len(s.accounts))
	for _, a := range s.accounts {
		out = append(out, domain.UnmarshalAccountFromDatabase(a))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *domain.Account) int {
		if c := a.CreatedAt().Compare(b.CreatedAt()); c != 0 {
			return c
		}
		return cmp.Compare(a.ID(), b.ID())
	})
	return out, nil
}

// UpdateAccount implements ports.AccountRepository. fn runs under the store's lock, on a copy
// that replaces the stored account only when fn succeeds.
func (s *Accounts) UpdateAccount(ctx context.Context, id string, fn func(*domain.Account) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.accounts[id]
	if !ok {
		return fmt.Errorf("account %s: %w", id, domain.ErrNotFound)
	}
	working := domain.UnmarshalAccountFromDatabase(stored)
	if err := fn(working); err != nil {
		return err
	}
	if working.ID() != id {
		return fmt.Errorf("memory: update of account %s changed its id", id)
	}
	rec := working.Record()
	rec.Version = stored.Version + 1
	s.accounts[id] = rec
	return nil
}

// CreateCredential implements ports.AccountRepository.
func (s *Accounts) CreateCredential(ctx context.Context, credential domain.Credential) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[credential.AccountID]; !ok {
		return fmt.Errorf("account %s: %w", credential.AccountID, domain.ErrNotFound)
	}
	if _, ok := s.credentials[credential.ClientID]; ok {
		return fmt.Errorf("credential %s: %w", credential.ClientID, ports.ErrDuplicate)
	}
	// Counted under the same lock that stores: concurrent creations cannot both see room.
	active := 0
	for _, c := range s.credentials {
		if c.AccountID == credential.AccountID && !c.Revoked() {
			active++
		}
	}
	if active >= domain.MaxActiveCredentials && !credential.Revoked() {
		return fmt.Errorf("account %s: %w", credential.AccountID, domain.ErrCredentialLimit)
	}
	s.credentials[credential.ClientID] = s.copyCredential(credential)
	return nil
}

// RecordCredentialUse implements ports.AccountRepository.
func (s *Accounts) RecordCredentialUse(ctx context.Context, clientID string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.credentials[clientID]
	if !ok {
		return fmt.Errorf("credential: %w", domain.ErrNotFound)
	}
	if c.LastUsedAt != nil && !c.LastUsedAt.Before(at) {
		return nil
	}
	at = at.UTC()
	c.LastUsedAt = &at
	s.credentials[clientID] = c
	return nil
}

// GetCredential implements ports.AccountRepository.
func (s *Accounts) GetCredential(ctx context.Context, clientID string) (domain.Credential, error) {
	if err := ctx.Err(); err != nil {
		return domain.Credential{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.credentials[clientID]
	if !ok {
		return domain.Credential{}, fmt.Errorf("credential: %w", domain.ErrNotFound)
	}
	return s.copyCredential(c), nil
}

// ListCredentials implements ports.AccountRepository.
func (s *Accounts) ListCredentials(ctx context.Context, accountID string) ([]domain.Credential, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := []domain.Credential{}
	for _, c := range s.credentials {
		if c.AccountID == accountID {
			out = append(out, s.copyCredential(c))
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b domain.Credential) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ClientID, b.ClientID)
	})
	return out, nil
}

// RevokeCredential implements ports.AccountRepository.
func (s *Accounts) RevokeCredential(ctx context.Context, accountID, clientID string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.credentials[clientID]
	if !ok || c.AccountID != accountID {
		return fmt.Errorf("credential: %w", domain.ErrNotFound)
	}
	if c.RevokedAt != nil {
		return nil
	}
	at = at.UTC()
	c.RevokedAt = &at
	s.credentials[clientID] = c
	return nil
}

// copyCredential returns a credential sharing no memory with c.
func (*Accounts) copyCredential(c domain.Credential) domain.Credential {
	c.SecretHash = bytes.Clone(c.SecretHash)
	if c.RevokedAt != nil {
		t := *c.RevokedAt
		c.RevokedAt = &t
	}
	if c.LastUsedAt != nil {
		t := *c.LastUsedAt
		c.LastUsedAt = &t
	}
	return c
}

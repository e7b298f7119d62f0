package porttest

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.AccountRepository = (*Accounts)(nil)

// Accounts is a ports.AccountRepository that passes each call to Repo after its Faults.
type Accounts struct {
	Repo ports.AccountRepository
	*Faults
}

// NewAccounts wraps repo with faults of its own.
func NewAccounts(repo ports.AccountRepository) *Accounts {
	return &Accounts{Repo: repo, Faults: &Faults{}}
}

func (a *Accounts) CreateAccount(ctx context.Context, account *domain.Account) error {
	if err := a.enter(ctx, "CreateAccount"); err != nil {
		return err
	}
	return a.Repo.CreateAccount(ctx, account)
}

func (a *Accounts) GetAccount(ctx context.Context, id string) (*domain.Account, error) {
	if err := a.enter(ctx, "GetAccount"); err != nil {
		return nil, err
	}
	return a.Repo.GetAccount(ctx, id)
}

func (a *Accounts) ListAccounts(ctx context.Context) ([]*domain.Account, error) {
	if err := a.enter(ctx, "ListAccounts"); err != nil {
		return nil, err
	}
	return a.Repo.ListAccounts(ctx)
}

func (a *Accounts) UpdateAccount(ctx context.Context, id string, fn func(*domain.Account) error) error {
	if err := a.enter(ctx, "UpdateAccount"); err != nil {
		return err
	}
	return a.Repo.UpdateAccount(ctx, id, fn)
}

func (a *Accounts) CreateCredential(ctx context.Context, c domain.Credential) error {
	if err := a.enter(ctx, "CreateCredential"); err != nil {
		return err
	}
	return a.Repo.CreateCredential(ctx, c)
}

func (a *Accounts) RecordCredentialUse(ctx context.Context, clientID string, at time.Time) error {
	if err := a.enter(ctx, "RecordCredentialUse"); err != nil {
		return err
	}
	return a.Repo.RecordCredentialUse(ctx, clientID, at)
}

func (a *Accounts) GetCredential(ctx context.Context, clientID string) (domain.Credential, error) {
	if err := a.enter(ctx, "GetCredential"); err != nil {
		return domain.Credential{}, err
	}
	return a.Repo.GetCredential(ctx, clientID)
}

func (a *Accounts) ListCredentials(ctx context.Context, accountID string) ([]domain.Credential, error) {
	if err := a.enter(ctx, "ListCredentials"); err != nil {
		return nil, err
	}
	return a.Repo.ListCredentials(ctx, accountID)
}

func (a *Accounts) RevokeCredential(ctx context.Context, accountID, clientID string, at time.Time) error {
	if err := a.enter(ctx, "RevokeCredential"); err != nil {
		return err
	}
	return a.Repo.RevokeCredential(ctx, accountID, clientID, at)
}

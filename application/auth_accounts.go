package application

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WebhookOverlap is how long a rotated webhook secret keeps signing beside the new one.
const WebhookOverlap = 24 * time.Hour

// NewCredential is a credential just made: the only time its secret is seen in clear.
type NewCredential struct {
	ClientID  string
	Secret    string
	CreatedAt time.Time
}

// String leaves the secret out, should a NewCredential ever be printed whole.
func (c NewCredential) String() string { return "credential " + c.ClientID }

// GoString leaves the secret out of %#v too.
func (c NewCredential) GoString() string { return c.String() }

// credentialMaker makes and stores credentials; CreateCredential, CreateAccount and
// SeedAccounts share it.
type credentialMaker struct {
	repo   ports.AccountRepository
	ids    ports.IDGenerator
	clock  ports.Clock
	hasher ports.Secrets
}

func newCredentialMaker(name string, repo ports.AccountRepository, ids ports.IDGenerator, clock ports.Clock, hasher ports.Secrets) credentialMaker {
	requirePorts(name, repo, ids, clock, hasher)
	return credentialMaker{repo: repo, ids: ids, clock: clock, hasher: hasher}
}

// create stores a credential clientID of the account with secret's keyed hash.
func (m credentialMaker) create(ctx context.Context, accountID, clientID, secret string) (NewCredential, error) {
	now := m.clock.Now().UTC()
	cred := domain.Credential{ClientID: clientID, AccountID: accountID, SecretHash: m.hasher.Hash(secret), CreatedAt: now}
	if err := m.repo.CreateCredential(ctx, cred); err != nil {
		return NewCredential{}, fmt.Errorf("storing credential %s: %w", clientID, err)
	}
	return NewCredential{ClientID: clientID, Secret: secret, CreatedAt: now}, nil
}

// newAccount builds and stores an active account with a fresh webhook secret.
func (m credentialMaker) newAccount(ctx context.Context, name string, scopes []domain.Scope) (*domain.Account, error) {
	if len(scopes) == 0 {
		scopes = domain.AllScopes()
	}
	account, err := domain.NewAccount(m.ids.NewID(), name, scopes, m.hasher.NewWebhookSecret(), m.clock.Now())
	if err != nil {
		return nil, err
	}
	if err := m.repo.CreateAccount(ctx, account); err != nil {
		return nil, fmt.Errorf("storing account: %w", err)
	}
	return account, nil
}

// CreateCredential gives the caller's account one more credential, so that a secret can be
// rotated without downtime: a fresh client id and a secret of 32 random bytes, shown this once
// and stored only as its keyed hash. An account holding domain.MaxActiveCredentials
// credentials that are not revoked answers domain.ErrCredentialLimit (the store keeps the cap).
type CreateCredential struct{ maker credentialMaker }

// NewCreateCredential builds the use case; every port is required.
func NewCreateCredential(repo ports.AccountRepository, ids ports.IDGenerator, clock ports.Clock, hasher ports.Secrets) *CreateCredential {
	return &CreateCredential{maker: newCredentialMaker("NewCreateCredential", repo, ids, clock, hasher)}
}

// Execute creates the credential for p's account.
func (uc *CreateCredential) Execute(ctx context.Context, p domain.Principal) (NewCredential, error) {
	return uc.maker.create(ctx, p.AccountID, uc.maker.ids.NewID(), uc.maker.hasher.NewSecret())
}

// ListCredentials lists the caller's account's credentials, newest first, revoked ones
// included, without their secret hashes: what the merchant needs to find the one to revoke
// (when each was created and last used).
type ListCredentials struct{ repo ports.AccountRepository }

// NewListCredentials builds the use case; the repository is required.
func NewListCredentials(repo ports.AccountRepository) *ListCredentials {
	requirePorts("NewListCredentials", repo)
	return &ListCredentials{repo: repo}
}

// Execute lists p's account's credentials.
func (uc *ListCredentials) Execute(ctx context.Context, p domain.Principal) ([]domain.Credential, error) {
	creds, err := uc.repo.ListCredentials(ctx, p.AccountID)
	if err != nil {
		return nil, fmt.Errorf("listing credentials: %w", err)
	}
	slices.Reverse(creds)
	for i := range creds {
		creds[i].SecretHash = nil
	}
	return creds, nil
}

// RevokeCredential revokes one of the caller's account's credentials; the tokens obtained with
// it stop working at once (Authenticate checks). Another account's or an unknown client id
// answers domain.ErrNotFound. Revoking the credential the caller's own token came from is
// allowed: that token dies with it.
type RevokeCredential struct {
	repo  ports.AccountRepository
	clock ports.Clock
}

// NewRevokeCredential builds the use case; every port is required.
func NewRevokeCredential(repo ports.AccountRepository, clock ports.Clock) *RevokeCredential {
	requirePorts("NewRevokeCredential", repo, clock)
	return &RevokeCredential{repo: repo, clock: clock}
}

// Execute revokes clientID of p's account.
func (uc *RevokeCredential) Execute(ctx context.Context, p domain.Principal, clientID string) error {
	return uc.repo.RevokeCredential(ctx, p.AccountID, clientID, uc.clock.Now())
}

// CreatedAccount is an account just made and its first credential, secret in clear this once.
type CreatedAccount struct {
	Account    *domain.Account
	Credential NewCredential
}

// CreateAccount creates a merchant account with its first credential (the command line's
// `pixgate clients create`). No scopes means every scope. An invalid name is a plain error
// naming the rule.
type CreateAccount struct{ maker credentialMaker }

// NewCreateAccount builds the use case; every port is required.
func NewCreateAccount(repo ports.AccountRepository, ids ports.IDGenerator, clock ports.Clock, hasher ports.Secrets) *CreateAccount {
	return &CreateAccount{maker: newCredentialMaker("NewCreateAccount", repo, ids, clock, hasher)}
}

// Execute creates the account named name.
func (uc *CreateAccount) Execute(ctx context.Context, name string, scopes []domain.Scope) (CreatedAccount, error) {
	account, err := uc.maker.newAccount(ctx, name, scopes)
	if err != nil {
		return CreatedAccount{}, err
	}
	cred, err := uc.maker.create(ctx, account.ID(), uc.maker.ids.NewID(), uc.maker.hasher.NewSecret())
	if err != nil {
		return CreatedAccount{}, err
	}
	return CreatedAccount{Account: account, Credential: cred}, nil
}

// AccountListing is an account and its credentials (secret hashes left out).
type AccountListing struct {
	Account     *domain.Account
	Credentials []domain.Credential
}

// ListAccounts lists every account with its credentials, oldest first (the command line's
// `pixgate clients list`).
type ListAccounts struct{ repo ports.AccountRepository }

// NewListAccounts builds the use case; the repository is required.
func NewListAccounts(repo ports.AccountRepository) *ListAccounts {
	requirePorts("NewListAccounts", repo)
	return &ListAccounts{repo: repo}
}

// Execute lists the accounts.
func (uc *ListAccounts) Execute(ctx context.Context) ([]AccountListing, error) {
	accounts, err := uc.repo.ListAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing accounts: %w", err)
	}
	out := make([]AccountListing, 0, len(accounts))
	for _, a := range accounts {
		creds, err := uc.repo.ListCredentials(ctx, a.ID())
		if err != nil {
			return nil, fmt.Errorf("listing credentials of account %s: %w", a.ID(), err)
		}
		for i := range creds {
			creds[i].SecretHash = nil
		}
		out = append(out, AccountListing{Account: a, Credentials: creds})
	}
	return out, nil
}

// DisableAccount disables an account: its tokens answer 403 from the next request on and it
// can obtain no new ones. Unknown id: domain.ErrNotFound.
type DisableAccount struct{ repo ports.AccountRepository }

// NewDisableAccount builds the use case; the repository is required.
func NewDisableAccount(repo ports.AccountRepository) *DisableAccount {
	requirePorts("NewDisableAccount", repo)
	return &DisableAccount{repo: repo}
}

// Execute disables the account with id.
func (uc *DisableAccount) Execute(ctx context.Context, accountID string) error {
	return uc.repo.UpdateAccount(ctx, accountID, func(a *domain.Account) error {
		a.Disable()
		return nil
	})
}

// GetWebhookSecret shows the caller's account's webhook signing secrets: the current one and,
// while its overlap lasts, the previous one (after it, the previous is left out: it no longer
// signs anything).
type GetWebhookSecret struct {
	repo  ports.AccountRepository
	clock ports.Clock
}

// NewGetWebhookSecret builds the use case; every port is required.
func NewGetWebhookSecret(repo ports.AccountRepository, clock ports.Clock) *GetWebhookSecret {
	requirePorts("NewGetWebhookSecret", repo, clock)
	return &GetWebhookSecret{repo: repo, clock: clock}
}

// Execute returns p's account's secrets.
func (uc *GetWebhookSecret) Execute(ctx context.Context, p domain.Principal) (domain.WebhookSecrets, error) {
	account, err := uc.repo.GetAccount(ctx, p.AccountID)
	if err != nil {
		return domain.WebhookSecrets{}, err
	}
	w := account.Webhook()
	if w.PreviousExpiresAt != nil && !uc.clock.Now().Before(*w.PreviousExpiresAt) {
		w.Previous, w.PreviousExpiresAt = "", nil
	}
	return w, nil
}

// RotateWebhookSecret gives the caller's account a new webhook signing secret; the current one
// becomes the previous and keeps signing beside it for WebhookOverlap, so that the merchant
// can switch its verifier without losing a notification. A rotation during an overlap drops
// the oldest secret.
type RotateWebhookSecret struct {
	repo    ports.AccountRepository
	clock   ports.Clock
	secrets ports.Secrets
}

// NewRotateWebhookSecret builds the use case; every port is required.
func NewRotateWebhookSecret(repo ports.AccountRepository, clock ports.Clock, secrets ports.Secrets) *RotateWebhookSecret {
	requirePorts("NewRotateWebhookSecret", repo, clock, secrets)
	return &RotateWebhookSecret{repo: repo, clock: clock, secrets: secrets}
}

// Execute rotates p's account's secret and returns the secrets as stored.
func (uc *RotateWebhookSecret) Execute(ctx context.Context, p domain.Principal) (domain.WebhookSecrets, error) {
	next := uc.secrets.NewWebhookSecret()
	var rotated domain.WebhookSecrets
	err := uc.repo.UpdateAccount(ctx, p.AccountID, func(a *domain.Account) error {
		a.RotateWebhookSecret(next, uc.clock.Now(), WebhookOverlap)
		rotated = a.Webhook()
		return nil
	})
	if err != nil {
		return domain.WebhookSecrets{}, err
	}
	return rotated, nil
}

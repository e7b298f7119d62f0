package mongo

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
)

type webhookDoc struct {
	Current           string     `bson:"current"`
	Previous          string     `bson:"previous,omitempty"`
	PreviousExpiresAt *time.Time `bson:"previousExpiresAt,omitempty"`
}

// accountDoc is a stored client account.
type accountDoc struct {
	ID     string   `bson:"_id"`
	Name   string   `bson:"name"`
	Status string   `bson:"status"`
	Scopes []string `bson:"scopes"`
	// ScopeSet is the revision of the scope list the record was written under (see
	// domain.ScopesCurrent): records written before balance:read existed have none (0), those
	// written before account:admin existed have 1. On read, domain.UpgradeLegacyScopes gives
	// them what they could do then (balance:read to readers of transactions, account:admin to
	// everyone), so that nobody is locked out by the upgrade.
	ScopeSet  int        `bson:"scopeSet,omitempty"`
	Webhook   webhookDoc `bson:"webhook"`
	CreatedAt time.Time  `bson:"createdAt"`
	Version   int64      `bson:"version"`
}

// currentScopeSet is the revision of the scope list this program writes.
const currentScopeSet = domain.ScopesCurrent

func fromAccount(a *domain.Account, version int64) accountDoc {
	scopes := make([]string, 0, len(a.Scopes()))
	for _, s := range a.Scopes() {
		scopes = append(scopes, string(s))
	}
	w := a.Webhook()
	return accountDoc{
		ID: a.ID(), Name: a.Name(), Status: string(a.Status()), Scopes: scopes, ScopeSet: currentScopeSet,
		Webhook:   webhookDoc{Current: w.Current, Previous: w.Previous, PreviousExpiresAt: utcPtr(w.PreviousExpiresAt)},
		CreatedAt: a.CreatedAt(), Version: version,
	}
}

func (d *accountDoc) toAccount() (*domain.Account, error) {
	status, err := domain.ParseAccountStatus(d.Status)
	if err != nil {
		return nil, fmt.Errorf("stored account %s: %w", d.ID, err)
	}
	scopes := make([]domain.Scope, len(d.Scopes))
	for i, s := range d.Scopes {
		scopes[i] = domain.Scope(s)
	}
	if d.ScopeSet < currentScopeSet {
		scopes = domain.UpgradeLegacyScopes(scopes, d.ScopeSet)
	}
	return domain.UnmarshalAccountFromDatabase(domain.AccountRecord{
		ID: d.ID, Name: d.Name, Status: status, Scopes: scopes, CreatedAt: d.CreatedAt, Version: d.Version,
		Webhook: domain.WebhookSecrets{Current: d.Webhook.Current, Previous: d.Webhook.Previous, PreviousExpiresAt: utcPtr(d.Webhook.PreviousExpiresAt)},
	}), nil
}

// credentialDoc is a stored credential; its _id is the client id, unique across accounts.
type credentialDoc struct {
	ClientID   string     `bson:"_id"`
	AccountID  string     `bson:"accountId"`
	SecretHash []byte     `bson:"secretHash"`
	CreatedAt  time.Time  `bson:"createdAt"`
	RevokedAt  *time.Time `bson:"revokedAt,omitempty"`
	LastUsedAt *time.Time `bson:"lastUsedAt,omitempty"`
	// Slot is the place the credential holds among its account's active ones ("<accountId>/<n>",
	// n below domain.MaxActiveCredentials), under a unique sparse index: that index is what
	// keeps the cap when creations race (see CreateCredential). Revoking frees it (unset);
	// credentials stored before the cap existed have none.
	Slot string `bson:"slot,omitempty"`
}

func fromCredential(c domain.Credential) credentialDoc {
	return credentialDoc{ClientID: c.ClientID, AccountID: c.AccountID, SecretHash: c.SecretHash,
		CreatedAt: c.CreatedAt.UTC(), RevokedAt: utcPtr(c.RevokedAt), LastUsedAt: utcPtr(c.LastUsedAt)}
}

func (d *credentialDoc) toCredential() domain.Credential {
	return domain.Credential{ClientID: d.ClientID, AccountID: d.AccountID, SecretHash: d.SecretHash,
		CreatedAt: d.CreatedAt.UTC(), RevokedAt: utcPtr(d.RevokedAt), LastUsedAt: utcPtr(d.LastUsedAt)}
}

package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scope is a permission a token carries.
type Scope string

const (
	ScopeTransactionRead  Scope = "transaction:read"
	ScopeTransactionWrite Scope = "transaction:write"
	ScopeWithdrawalRead   Scope = "withdrawal:read"
	ScopeWithdrawalWrite  Scope = "withdrawal:write"
	// ScopeBalanceRead reads the balance and the ledger's statement.
	ScopeBalanceRead Scope = "balance:read"
	// ScopeAccountAdmin manages the account itself: its credentials and its webhook secret.
	// A token without it cannot mint credentials or learn the secret that signs webhooks.
	ScopeAccountAdmin Scope = "account:admin"
)

// AllScopes lists every scope in its canonical order.
func AllScopes() []Scope {
	return []Scope{ScopeTransactionRead, ScopeTransactionWrite, ScopeWithdrawalRead, ScopeWithdrawalWrite,
		ScopeBalanceRead, ScopeAccountAdmin}
}

// Revisions of the scope list, for accounts stored by an older version of the program: a
// stored account records the revision it was written under, and UpgradeLegacyScopes brings it
// to the current one.
const (
	// ScopesOriginal: the first four scopes; the balance was read with transaction:read and
	// any token could manage credentials and the webhook secret.
	ScopesOriginal = 0
	// ScopesWithBalance added balance:read.
	ScopesWithBalance = 1
	// ScopesWithAccountAdmin added account:admin.
	ScopesWithAccountAdmin = 2
	// ScopesCurrent is the revision this program writes.
	ScopesCurrent = ScopesWithAccountAdmin
)

// UpgradeLegacyScopes gives an account stored under an older revision of the scope list what
// it could do then, so that nobody is locked out by an upgrade: before balance:read existed the
// balance was read with transaction:read, so such an account gets balance:read; before
// account:admin existed every token could manage credentials and the webhook secret, so every
// such account gets account:admin. Storage adapters call it with the revision the record was
// written under; a current record is returned as it is.
func UpgradeLegacyScopes(scopes []Scope, revision int) []Scope {
	out := slices.Clone(scopes)
	if revision < ScopesWithBalance && slices.Contains(out, ScopeTransactionRead) && !slices.Contains(out, ScopeBalanceRead) {
		out = append(out, ScopeBalanceRead)
	}
	if revision < ScopesWithAccountAdmin && !slices.Contains(out, ScopeAccountAdmin) {
		out = append(out, ScopeAccountAdmin)
	}
	return out
}

// ParseScope accepts exactly one of AllScopes.
func ParseScope(s string) (Scope, error) {
	for _, sc := range AllScopes() {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown scope %q", s)
}

// ParseRequestedScopes reads the scope parameter of a token request: scopes separated by
// spaces (RFC 6749) or commas (pixgate's own token responses), in any order, repeats ignored.
// An unknown scope is an error naming it; a parameter holding no scope at all is an error too,
// since a token that may do nothing is never what a client meant.
func ParseRequestedScopes(s string) ([]Scope, error) {
	var out []Scope
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		sc, err := ParseScope(part)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scope requested")
	}
	return out, nil
}

// ParseScopes reads a comma-separated scope list; an empty string is an error.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		sc, err := ParseScope(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// JoinScopes writes scopes comma-separated, as the token response's `scope` field does.
func JoinScopes(scopes []Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// AccountStatus tells whether a client account may act.
type AccountStatus string

const (
	AccountActive   AccountStatus = "active"
	AccountDisabled AccountStatus = "disabled"
)

// ParseAccountStatus accepts exactly one of the account statuses.
func ParseAccountStatus(s string) (AccountStatus, error) {
	switch st := AccountStatus(s); st {
	case AccountActive, AccountDisabled:
		return st, nil
	}
	return "", fmt.Errorf("unknown account status %q", s)
}

// WebhookSecrets are the account's webhook signing secrets ("whsec_<base64>"). During a rotation
// the previous secret keeps signing beside the current one until PreviousExpiresAt.
type WebhookSecrets struct {
	Current           string
	Previous          string     // empty when none
	PreviousExpiresAt *time.Time // nil when no previous secret
}

func (w WebhookSecrets) clone() WebhookSecrets {
	w.PreviousExpiresAt = clonePtr(w.PreviousExpiresAt)
	return w
}

// Signing returns the secrets that sign a webhook sent at now: the current one, and the previous
// one while its overlap lasts.
func (w WebhookSecrets) Signing(now time.Time) []string {
	out := []string{w.Current}
	if w.Previous != "" && w.PreviousExpiresAt != nil && now.Before(*w.PreviousExpiresAt) {
		out = append(out, w.Previous)
	}
	return out
}

// Account is a client account: a merchant. Build it with NewAccount; storage adapters rebuild
// it with UnmarshalAccountFromDatabase. Getters return copies.
type Account struct {
	id        string
	name      string
	status    AccountStatus
	scopes    []Scope
	webhook   WebhookSecrets
	createdAt time.Time
	version   int64
}

// NewAccount validates and builds an active account.
func NewAccount(id, name string, scopes []Scope, webhookSecret string, now time.Time) (*Account, error) {
	name = strings.TrimSpace(name)
	if id == "" {
		return nil, fmt.Errorf("account id is required")
	}
	if name == "" || len([]rune(name)) > 150 {
		return nil, fmt.Errorf("account name must have 1 to 150 characters")
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("account needs at least one scope")
	}
	if webhookSecret == "" {
		return nil, fmt.Errorf("account needs a webhook secret")
	}
	return &Account{id: id, name: name, status: AccountActive, scopes: slices.Clone(scopes),
		webhook: WebhookSecrets{Current: webhookSecret}, createdAt: now.UTC()}, nil
}

// AccountRecord is everything a storage adapter keeps of an account.
type AccountRecord struct {
	ID, Name  string
	Status    AccountStatus
	Scopes    []Scope
	Webhook   WebhookSecrets
	CreatedAt time.Time
	// Version counts the stored changes; storage adapters use it for optimistic concurrency.
	Version int64
}

// UnmarshalAccountFromDatabase rebuilds a stored account. It should be used only by storage
// adapters, for data this program wrote itself: it does not validate (the adapter checks the
// status it read with ParseAccountStatus).
func UnmarshalAccountFromDatabase(r AccountRecord) *Account {
	w := r.Webhook
	w.PreviousExpiresAt = clonePtr(w.PreviousExpiresAt)
	return &Account{id: r.ID, name: r.Name, status: r.Status, scopes: slices.Clone(r.Scopes), webhook: w,
		createdAt: r.CreatedAt.UTC(), version: r.Version}
}

// Record is the account as a storage adapter keeps it, sharing no memory with it.
func (a *Account) Record() AccountRecord {
	return AccountRecord{ID: a.id, Name: a.name, Status: a.status, Scopes: a.Scopes(), Webhook: a.Webhook(),
		CreatedAt: a.createdAt, Version: a.version}
}

func (a *Account) ID() string              { return a.id }
func (a *Account) Name() string            { return a.name }
func (a *Account) Status() AccountStatus   { return a.status }
func (a *Account) Scopes() []Scope         { return slices.Clone(a.scopes) }
func (a *Account) Webhook() WebhookSecrets { return a.webhook.clone() }
func (a *Account) CreatedAt() time.Time    { return a.createdAt }
func (a *Account) Active() bool            { return a.status == AccountActive }
func (a *Account) HasScope(s Scope) bool   { return slices.Contains(a.scopes, s) }
func (a *Account) Disable()                { a.status = AccountDisabled }

// Version counts the stored changes of the account, as an adapter read it; storage adapters
// use it for optimistic concurrency, and write Version()+1 when they store a change.
func (a *Account) Version() int64 { return a.version }

// RotateWebhookSecret makes next the current secret; the old one keeps signing for overlap.
func (a *Account) RotateWebhookSecret(next string, now time.Time, overlap time.Duration) {
	until := now.UTC().Add(overlap)
	a.webhook = WebhookSecrets{Current: next, Previous: a.webhook.Current, PreviousExpiresAt: &until}
}

// MaxActiveCredentials is how many credentials that are not revoked an account may hold: enough
// to rotate secrets across a few services, few enough that a leaked admin token cannot mint a
// pile of permanent ones.
const MaxActiveCredentials = 10

// CredentialUseInterval is how stale LastUsedAt may be: a token request records the use only
// when the recorded one is older, so that a busy credential costs at most one write a minute.
const CredentialUseInterval = time.Minute

// Credential is one client_id/client_secret pair of an account. Only a keyed hash of the secret
// is kept.
type Credential struct {
	ClientID   string
	AccountID  string
	SecretHash []byte
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// LastUsedAt is when a token was last issued with the credential, to within
	// CredentialUseInterval; nil when none was.
	LastUsedAt *time.Time
}

// UseIsStale tells whether a token issued at now should record the use: none is recorded yet,
// or the recorded one is CredentialUseInterval old.
func (c Credential) UseIsStale(now time.Time) bool {
	return c.LastUsedAt == nil || now.Sub(*c.LastUsedAt) >= CredentialUseInterval
}

// Revoked tells whether the credential has been revoked.
func (c Credential) Revoked() bool { return c.RevokedAt != nil }

// Principal is who is calling: the authenticated account and the scopes of its token.
type Principal struct {
	AccountID string
	ClientID  string
	Scopes    []Scope
}

// HasScope tells whether the token grants s.
func (p Principal) HasScope(s Scope) bool { return slices.Contains(p.Scopes, s) }

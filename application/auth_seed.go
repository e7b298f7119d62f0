package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// MinSeedSecretLength is the shortest secret a seeded client may have.
const MinSeedSecretLength = 32

// SeedClient is one parsed seed entry. Its secret is never printed: String and GoString leave
// it out.
type SeedClient struct {
	Name     string
	ClientID string
	Secret   string
	Scopes   []domain.Scope
}

func (c SeedClient) String() string {
	return fmt.Sprintf("seed client %s (%s)", c.ClientID, domain.JoinScopes(c.Scopes))
}

func (c SeedClient) GoString() string { return c.String() }

// SeedEntryError reports a malformed seed entry: its position (from 1) and, once the entry's
// secret was found where it belongs, its client id. It never carries the secret nor any text that
// could be a piece of it.
type SeedEntryError struct {
	Index    int
	ClientID string // empty when the fields could be misplaced
	Reason   string
}

func (e *SeedEntryError) Error() string {
	if e.ClientID == "" {
		return fmt.Sprintf("seed entry %d: %s", e.Index, e.Reason)
	}
	return fmt.Sprintf("seed entry %d (client id %q): %s", e.Index, e.ClientID, e.Reason)
}

// ParseSeedClients reads the PIXGATE_SEED_CLIENTS format: entries separated by ";", each
// name:client_id:client_secret[:scope,scope...]. The scopes are everything after the third ":"
// (scopes hold colons themselves); without them the client gets every scope. A name or secret
// therefore cannot contain ":". Empty entries are skipped. The first malformed entry stops the
// parse with a *SeedEntryError.
func ParseSeedClients(spec string) ([]SeedClient, error) {
	var out []SeedClient
	seen := map[string]int{}
	for i, entry := range strings.Split(spec, ";") {
		index := i + 1
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		fields := strings.SplitN(entry, ":", 4)
		if len(fields) < 3 {
			return nil, &SeedEntryError{Index: index, Reason: "want name:client_id:client_secret[:scope,scope...]"}
		}
		name, clientID, secret := strings.TrimSpace(fields[0]), fields[1], fields[2]
		// Until the secret is known to be well placed, the second field is not named: in an
		// entry with a missing field it might be the secret itself.
		if !validSeedClientID(clientID) {
			return nil, &SeedEntryError{Index: index, Reason: "client id must be 1 to 128 characters among A-Z a-z 0-9 . _ ~ -"}
		}
		if len(secret) < MinSeedSecretLength {
			return nil, &SeedEntryError{Index: index, Reason: fmt.Sprintf("client secret must have at least %d characters (and cannot contain ':')", MinSeedSecretLength)}
		}
		fail := func(reason string) error {
			return &SeedEntryError{Index: index, ClientID: clientID, Reason: reason}
		}
		if name == "" || utf8.RuneCountInString(name) > 150 {
			return nil, fail("name must have 1 to 150 characters")
		}
		scopes := domain.AllScopes()
		if len(fields) == 4 {
			var err error
			if scopes, err = parseSeedScopes(fields[3]); err != nil {
				return nil, fail(err.Error())
			}
		}
		if first, dup := seen[clientID]; dup {
			return nil, fail(fmt.Sprintf("client id already seeded by entry %d", first))
		}
		seen[clientID] = index
		out = append(out, SeedClient{Name: name, ClientID: clientID, Secret: secret, Scopes: scopes})
	}
	return out, nil
}

// parseSeedScopes reads the scope list. Its errors name a bad scope by position, not by text:
// after a mistyped separator the "scopes" may be the end of the secret.
func parseSeedScopes(list string) ([]domain.Scope, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("the scope list after the third ':' is empty (leave it out, with its ':', for every scope)")
	}
	var out []domain.Scope
	for i, part := range strings.Split(list, ",") {
		sc, err := domain.ParseScope(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("scope %d of the list is not one of %s", i+1, domain.JoinScopes(domain.AllScopes()))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func validSeedClientID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._~-", r)
		if !ok {
			return false
		}
	}
	return true
}

// SeedResult tells which seeded client ids were created and which existed already.
type SeedResult struct {
	Created  []string
	Existing []string
}

// SeedAccounts creates, at start, the accounts of PIXGATE_SEED_CLIENTS that do not exist yet
// (demos, CI jobs, merchants' container-based test suites get fixed credentials). A client id
// that exists is left alone, whatever its account's name, scopes or secret now are: seeding
// never overwrites what an operator changed.
type SeedAccounts struct{ maker credentialMaker }

// NewSeedAccounts builds the use case; every port is required.
func NewSeedAccounts(repo ports.AccountRepository, ids ports.IDGenerator, clock ports.Clock, hasher ports.Secrets) *SeedAccounts {
	return &SeedAccounts{maker: newCredentialMaker("NewSeedAccounts", repo, ids, clock, hasher)}
}

// Execute seeds clients (from ParseSeedClients).
func (uc *SeedAccounts) Execute(ctx context.Context, clients []SeedClient) (SeedResult, error) {
	var res SeedResult
	for _, c := range clients {
		_, err := uc.maker.repo.GetCredential(ctx, c.ClientID)
		if err == nil {
			res.Existing = append(res.Existing, c.ClientID)
			continue
		}
		if !errors.Is(err, domain.ErrNotFound) {
			return res, fmt.Errorf("seeding %s: looking up credential: %w", c.ClientID, err)
		}
		account, err := uc.maker.newAccount(ctx, c.Name, c.Scopes)
		if err != nil {
			return res, fmt.Errorf("seeding %s: %w", c.ClientID, err)
		}
		_, err = uc.maker.create(ctx, account.ID(), c.ClientID, c.Secret)
		if errors.Is(err, ports.ErrDuplicate) {
			// Another instance seeded it between our lookup and now. The account just made
			// has no credential and can do nothing; it stays, as accounts are never deleted.
			res.Existing = append(res.Existing, c.ClientID)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("seeding %s: %w", c.ClientID, err)
		}
		res.Created = append(res.Created, c.ClientID)
	}
	return res, nil
}

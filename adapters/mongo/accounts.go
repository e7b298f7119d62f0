package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// AccountRepository stores client accounts (collection accounts) and their credentials
// (collection credentials, keyed by client id). Build it with Open; use it through Store.
type AccountRepository struct {
	s           *Store
	accounts    *mdb.Collection
	credentials *mdb.Collection
}

var _ ports.AccountRepository = (*AccountRepository)(nil)

// CreateAccount inserts the account at version 0.
func (r *AccountRepository) CreateAccount(ctx context.Context, a *domain.Account) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	if _, err := r.accounts.InsertOne(ctx, fromAccount(a, 0)); err != nil {
		return mapErr(ctx, "create account "+a.ID(), err)
	}
	return nil
}

// GetAccount returns the account id.
func (r *AccountRepository) GetAccount(ctx context.Context, id string) (*domain.Account, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	d, err := r.getAccount(ctx, id)
	if err != nil {
		return nil, err
	}
	return d.toAccount()
}

func (r *AccountRepository) getAccount(ctx context.Context, id string) (*accountDoc, error) {
	var d accountDoc
	if err := r.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, mapErr(ctx, "get account "+id, err)
	}
	return &d, nil
}

// ListAccounts returns every account, oldest first.
func (r *AccountRepository) ListAccounts(ctx context.Context) ([]*domain.Account, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return findAll(ctx, r.accounts, "list accounts", bson.D{}, options.Find().SetSort(oldestFirst),
		(*accountDoc).toAccount)
}

// oldestFirst is the order of account and credential lists.
var oldestFirst = bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}

// UpdateAccount reads the account, applies fn and replaces the document only if its version
// is still the one read, retrying on a lost race.
func (r *AccountRepository) UpdateAccount(ctx context.Context, id string, fn func(*domain.Account) error) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	unlock, err := r.s.lock(ctx, collAccounts+"/"+id)
	if err != nil {
		return err
	}
	defer unlock()
	for attempt := 0; attempt < r.s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return mapErr(ctx, "update account "+id, err)
			}
		}
		d, err := r.getAccount(ctx, id)
		if err != nil {
			return err
		}
		a, err := d.toAccount()
		if err != nil {
			return err
		}
		v := a.Version()
		if err := fn(a); err != nil {
			return err
		}
		// One writer per version across instances (claims.go): a replace is not atomic
		// with its version check on every server.
		written, err := r.s.writeClaimed(ctx, collAccounts+"/"+id+"/v"+strconv.FormatInt(v, 10), "update account "+id,
			func(ctx context.Context) (*mdb.UpdateResult, error) {
				return r.accounts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "version", Value: v}}, fromAccount(a, v+1))
			})
		if err != nil {
			return err
		}
		if written {
			return nil
		}
	}
	return fmt.Errorf("mongo update account %s: %w", id, ports.ErrVersionConflict)
}

// CreateCredential inserts a credential of an existing account. Accounts are never deleted,
// so checking first and inserting after cannot attach a credential to a vanished account.
//
// The cap on active credentials rests on the unique index over slot, which MongoDB and
// FerretDB both enforce atomically: a new credential claims the lowest free slot of its
// account, and of two creations racing for one slot the index lets one in; the other reads
// again and tries the next slot, or finds none left (domain.ErrCredentialLimit). Credentials
// stored before the cap have no slot but count: with u of them active, only slots below
// domain.MaxActiveCredentials-u are offered. Their number only falls (new credentials always
// get a slot), so the active credentials of an account never exceed the cap, whatever the
// number of instances. Within one instance an account lock queues creations instead of
// letting them collide.
func (r *AccountRepository) CreateCredential(ctx context.Context, c domain.Credential) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	n, err := r.accounts.CountDocuments(ctx, bson.D{{Key: "_id", Value: c.AccountID}}, options.Count().SetLimit(1))
	if err != nil {
		return mapErr(ctx, "create credential", err)
	}
	if n == 0 {
		return fmt.Errorf("mongo create credential: account %s: %w", c.AccountID, domain.ErrNotFound)
	}
	doc := fromCredential(c)
	if c.Revoked() { // takes no place
		if _, err := r.credentials.InsertOne(ctx, doc); err != nil {
			return mapErr(ctx, "create credential "+c.ClientID, err)
		}
		return nil
	}
	unlock, err := r.s.lock(ctx, "credential-slots/"+c.AccountID)
	if err != nil {
		return err
	}
	defer unlock()
	for attempt := 0; attempt <= domain.MaxActiveCredentials; attempt++ {
		slot, ok, err := r.freeSlot(ctx, c.AccountID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("mongo create credential: account %s: %w", c.AccountID, domain.ErrCredentialLimit)
		}
		doc.Slot = slot
		_, err = r.credentials.InsertOne(ctx, doc)
		if err == nil {
			return nil
		}
		if !mdb.IsDuplicateKeyError(err) {
			return mapErr(ctx, "create credential "+c.ClientID, err)
		}
		// Either the client id is taken, or another instance took the slot first.
		taken, err := r.credentials.CountDocuments(ctx, bson.D{{Key: "_id", Value: c.ClientID}}, options.Count().SetLimit(1))
		if err != nil {
			return mapErr(ctx, "create credential "+c.ClientID, err)
		}
		if taken > 0 {
			return fmt.Errorf("mongo create credential %s: %w", c.ClientID, ports.ErrDuplicate)
		}
	}
	return fmt.Errorf("mongo create credential %s: %w", c.ClientID, ports.ErrVersionConflict)
}

// freeSlot finds the lowest slot the account may claim for one more active credential; ok is
// false when the account holds as many as the cap allows.
func (r *AccountRepository) freeSlot(ctx context.Context, accountID string) (string, bool, error) {
	active, err := findAll(ctx, r.credentials, "list active credentials",
		bson.D{{Key: "accountId", Value: accountID}, {Key: "revokedAt", Value: nil}},
		options.Find().SetProjection(bson.D{{Key: "slot", Value: 1}}),
		func(d *credentialDoc) (string, error) { return d.Slot, nil })
	if err != nil {
		return "", false, err
	}
	unslotted := 0
	for _, s := range active {
		if s == "" {
			unslotted++
		}
	}
	if len(active) >= domain.MaxActiveCredentials {
		return "", false, nil
	}
	for n := range domain.MaxActiveCredentials - unslotted {
		slot := fmt.Sprintf("%s/%d", accountID, n)
		if !slices.Contains(active, slot) {
			return slot, true, nil
		}
	}
	return "", false, nil
}

// GetCredential returns the credential clientID, revoked or not.
func (r *AccountRepository) GetCredential(ctx context.Context, clientID string) (domain.Credential, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	var d credentialDoc
	if err := r.credentials.FindOne(ctx, bson.D{{Key: "_id", Value: clientID}}).Decode(&d); err != nil {
		return domain.Credential{}, mapErr(ctx, "get credential "+clientID, err)
	}
	return d.toCredential(), nil
}

// ListCredentials returns the account's credentials, oldest first.
func (r *AccountRepository) ListCredentials(ctx context.Context, accountID string) ([]domain.Credential, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return findAll(ctx, r.credentials, "list credentials", bson.D{{Key: "accountId", Value: accountID}},
		options.Find().SetSort(oldestFirst),
		func(d *credentialDoc) (domain.Credential, error) { return d.toCredential(), nil })
}

// RevokeCredential sets revokedAt once: the update matches only a credential of the account
// that is not revoked yet, so the first revocation time stays. Matching nothing is then either
// an earlier revocation (success) or no such credential for this account (not found).
func (r *AccountRepository) RevokeCredential(ctx context.Context, accountID, clientID string, at time.Time) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	unlock, err := r.s.lock(ctx, collCredentials+"/"+clientID)
	if err != nil {
		return err
	}
	defer unlock()
	// The revocation and the record of a use write the same document: one at a time across
	// instances (see credentialClaim), or one could write back the other's read.
	var c *claim
	for attempt := 0; ; attempt++ {
		var ok bool
		if c, ok, err = r.s.claimWrite(ctx, credentialClaim(clientID)); err != nil {
			return err
		}
		if ok {
			break
		}
		if err := backoff(ctx, attempt); err != nil {
			return mapErr(ctx, "revoke credential "+clientID, err)
		}
	}
	owned := bson.D{{Key: "_id", Value: clientID}, {Key: "accountId", Value: accountID}}
	res, err := r.credentials.UpdateOne(ctx, append(owned, bson.E{Key: "revokedAt", Value: nil}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "revokedAt", Value: at.UTC()}}}, {Key: "$unset", Value: bson.D{{Key: "slot", Value: ""}}}})
	if err != nil {
		return mapErr(ctx, "revoke credential "+clientID, err)
	}
	c.release(ctx)
	if res.MatchedCount == 1 {
		return nil
	}
	err = r.credentials.FindOne(ctx, owned, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mdb.ErrNoDocuments) {
		return fmt.Errorf("mongo revoke credential %s: %w", clientID, domain.ErrNotFound)
	}
	return mapErr(ctx, "revoke credential "+clientID, err)
}

// RecordCredentialUse moves lastUsedAt forward to at: the update matches only a credential
// whose lastUsedAt is missing or earlier, so racing token requests cannot move it back.
// Matching nothing is then either a later use recorded already (success) or no such
// credential (not found).
func (r *AccountRepository) RecordCredentialUse(ctx context.Context, clientID string, at time.Time) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	at = at.UTC().Truncate(time.Millisecond)
	// A record of use is a courtesy: while someone else writes the credential (a revocation,
	// or another use just now) it is skipped, never waited for.
	c, ok, err := r.s.claimWrite(ctx, credentialClaim(clientID))
	if err != nil || !ok {
		return err
	}
	res, err := r.credentials.UpdateOne(ctx, bson.D{{Key: "_id", Value: clientID}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "lastUsedAt", Value: nil}}, bson.D{{Key: "lastUsedAt", Value: bson.D{{Key: "$lt", Value: at}}}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lastUsedAt", Value: at}}}})
	if err != nil {
		return mapErr(ctx, "record use of credential "+clientID, err)
	}
	c.release(ctx)
	if res.MatchedCount == 1 {
		return nil
	}
	err = r.credentials.FindOne(ctx, bson.D{{Key: "_id", Value: clientID}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mdb.ErrNoDocuments) {
		return fmt.Errorf("mongo record use of credential %s: %w", clientID, domain.ErrNotFound)
	}
	return mapErr(ctx, "record use of credential "+clientID, err)
}

// credentialClaim is the claim of credential clientID as a whole (claims.go): its writes, a
// revocation and the records of its use, take turns under it.
func credentialClaim(clientID string) string { return collCredentials + "/" + clientID }

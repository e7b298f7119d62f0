package mongo

import (
	"context"
	"errors"
	"fmt"
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
	return d.toAccount(), nil
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
		func(d *accountDoc) (*domain.Account, error) { return d.toAccount(), nil })
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
		a := d.toAccount()
		if err := fn(a); err != nil {
			return err
		}
		res, err := r.accounts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "version", Value: d.Version}}, fromAccount(a, d.Version+1))
		if err != nil {
			return mapErr(ctx, "update account "+id, err)
		}
		if res.MatchedCount == 1 {
			return nil
		}
	}
	return fmt.Errorf("mongo update account %s: %w", id, ports.ErrVersionConflict)
}

// CreateCredential inserts a credential of an existing account. Accounts are never deleted,
// so checking first and inserting after cannot attach a credential to a vanished account.
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
	if _, err := r.credentials.InsertOne(ctx, fromCredential(c)); err != nil {
		return mapErr(ctx, "create credential "+c.ClientID, err)
	}
	return nil
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
	owned := bson.D{{Key: "_id", Value: clientID}, {Key: "accountId", Value: accountID}}
	res, err := r.credentials.UpdateOne(ctx, append(owned, bson.E{Key: "revokedAt", Value: nil}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "revokedAt", Value: at.UTC()}}}})
	if err != nil {
		return mapErr(ctx, "revoke credential "+clientID, err)
	}
	if res.MatchedCount == 1 {
		return nil
	}
	err = r.credentials.FindOne(ctx, owned, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mdb.ErrNoDocuments) {
		return fmt.Errorf("mongo revoke credential %s: %w", clientID, domain.ErrNotFound)
	}
	return mapErr(ctx, "revoke credential "+clientID, err)
}

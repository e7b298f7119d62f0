package storage_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/test/testdb"
)

// TestPaymentTokenMigration opens the store on transactions written before the hosted payment
// page, which have no payment token: a unique index over a field they all lack would refuse
// the second of them (FerretDB has no partial index), so Open gives each a token first.
func TestPaymentTokenMigration(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	db := testdb.Client(t, srv).Database(cfg.Database)
	ctx := ctxTimeout(t, 3*time.Minute)
	writeLegacy(t, ctx, db)
	versions := txVersions(t, db)
	if len(versions) < 2 {
		t.Fatalf("%d legacy transactions; the test needs several", len(versions))
	}

	s := testdb.OpenStore(t, srv, cfg)
	tokens := txTokens(t, db)
	seen := map[string]bool{}
	for id, tok := range tokens {
		if !domain.ValidPaymentToken(tok) || seen[tok] {
			t.Errorf("transaction %s got token %q (valid and unique?)", id, tok)
		}
		seen[tok] = true
		got, err := s.Transactions().FindByPaymentToken(ctx, tok)
		if err != nil || got.ID() != id || got.PaymentToken() != tok {
			t.Errorf("FindByPaymentToken(%s's token) = %v, %v", id, got, err)
		}
	}
	for id, v := range txVersions(t, db) {
		if v != versions[id]+1 {
			t.Errorf("transaction %s: version %d, want %d (an Update that read it before must conflict)", id, v, versions[id]+1)
		}
	}
	if !hasIndex(t, db, pixmongo.IndexTxPayKey) {
		t.Fatalf("no index %s after Open", pixmongo.IndexTxPayKey)
	}

	t.Run("a second start changes no token", func(t *testing.T) {
		// As a second instance or a restart would: Open, closed at once (OpenStore would drop
		// the database when this subtest ends).
		again, err := pixmongo.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for id, tok := range txTokens(t, db) {
			if tokens[id] != tok {
				t.Errorf("transaction %s: token changed", id)
			}
		}
	})
	t.Run("a status change after the upgrade keeps the token", func(t *testing.T) {
		for id, tok := range tokens {
			tx, err := s.Transactions().Find(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if tx.Status() != domain.TxPixQRCodeGenerated {
				continue
			}
			if _, err := s.Transactions().Update(ctx, tx.AccountID(), id, func(tx *domain.Transaction) error {
				return tx.Expire(tx.Pix().ExpiresAt)
			}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Transactions().FindByPaymentToken(ctx, tok); err != nil || got.Status() != domain.TxFailed {
				t.Errorf("after the update: %v, %v", got, err)
			}
		}
	})
	t.Run("without its marker, the migration gives a token to what still lacks one, and only that", func(t *testing.T) {
		if _, err := db.Collection("migrations").DeleteOne(ctx, bson.D{{Key: "_id", Value: "paytokens"}}); err != nil {
			t.Fatal(err)
		}
		late := legacyTxDoc(newID(), legacyTx{amount: 100, path: []string{"PENDING", "PIX_QRCODE_GENERATED"}}, base)
		// The unique index exists now: a document without payKey is its one null.
		if _, err := db.Collection("transactions").InsertOne(ctx, late); err != nil {
			t.Fatal(err)
		}
		n, err := s.MigratePaymentTokens(ctx)
		if err != nil || n != 1 {
			t.Fatalf("MigratePaymentTokens = %d, %v; want 1", n, err)
		}
		for id, tok := range tokens {
			if txTokens(t, db)[id] != tok {
				t.Errorf("transaction %s: token changed", id)
			}
		}
	})
}

func txTokens(t *testing.T, db *mdb.Database) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range txDocs(t, db) {
		tok, _ := d["payToken"].(string)
		out[d["_id"].(string)] = tok
	}
	return out
}

func txVersions(t *testing.T, db *mdb.Database) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, d := range txDocs(t, db) {
		out[d["_id"].(string)] = d["version"].(int64)
	}
	return out
}

func txDocs(t *testing.T, db *mdb.Database) []bson.M {
	t.Helper()
	ctx := ctxTimeout(t, time.Minute)
	cur, err := db.Collection("transactions").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

func hasIndex(t *testing.T, db *mdb.Database, name string) bool {
	t.Helper()
	specs, err := db.Collection("transactions").Indexes().ListSpecifications(ctxTimeout(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == name {
			return s.Unique != nil && *s.Unique
		}
	}
	return false
}

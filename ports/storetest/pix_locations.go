package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TestPixLocations checks the look-ups of dynamic charges: by location id (a payer's bank
// reading the charge) and by cob txid (the acquirer's callback), both across accounts, both
// unique, and never confused by the many transactions that have no location at all (static
// charges, failed emissions, and transactions stored before dynamic charges existed).
func TestPixLocations(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	runStoreTests(t, newStore, []storeTest{
		{"a dynamic charge is found by its location id and by its cob txid, whatever its account, as it is now", pixLocationFoundByBothKeysAnyAccount},
		{"unknown, empty, or another charge's kind of key is not found", pixLocationUnknownKeysNotFound},
		{"a second charge with an existing location id or cob txid is a duplicate, even in another account", pixLocationDuplicateKeysRefused},
		{"a charge the PSP made keeps its location, revision and creation, and is found by its txid only", pixLocationPSPChargeKept},
		{"transactions without a location never collide on it", pixLocationNoneNeverCollides},
	})
}

func pixLocationFoundByBothKeysAnyAccount(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a := createDynamic(t, s, domain.NewID(), newLocation())
	b := createDynamic(t, s, domain.NewID(), newLocation())
	loc := b.Pix().Location
	if _, err := s.Transactions.Update(ctx, b.AccountID(), b.ID(), func(tx *domain.Transaction) error {
		return tx.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(1), EndToEnd: "E" + strings.ReplaceAll(b.ID(), "-", "")[:31]}, minutes(1))
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tx     *domain.Transaction
		status domain.TransactionStatus
	}{{a, domain.TxPixQRCodeGenerated}, {b, domain.TxPaid}} {
		want := c.tx.Pix().Location
		for name, find := range map[string]func() (*domain.Transaction, error){
			"FindByPixLocation": func() (*domain.Transaction, error) { return s.Transactions.FindByPixLocation(ctx, want.ID) },
			"FindByCobTxID":     func() (*domain.Transaction, error) { return s.Transactions.FindByCobTxID(ctx, want.CobTxID) },
		} {
			got, err := find()
			if err != nil || got.ID() != c.tx.ID() || got.AccountID() != c.tx.AccountID() || got.Status() != c.status {
				t.Errorf("%s(%s's) = %v, %v; want it in %s", name, c.tx.ID(), got, err, c.status)
				continue
			}
			if got.Pix() == nil || got.Pix().Location != want {
				t.Errorf("%s: location read back %+v, want %+v", name, got.Pix(), want)
			}
		}
	}
	if got, err := s.Transactions.Get(ctx, b.AccountID(), b.ID()); err != nil || got.Pix().Location != loc {
		t.Errorf("after an update the location is %+v (%v), want %+v", got.Pix(), err, loc)
	}
}

func pixLocationUnknownKeysNotFound(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createDynamic(t, s, domain.NewID(), newLocation())
	static := createTransaction(t, s, txSpec{account: domain.NewID()})
	loc := tx.Pix().Location
	for _, id := range []string{newLocation().ID, "", tx.ID(), loc.CobTxID, loc.ID[:len(loc.ID)-1], static.ID()} {
		if got, err := s.Transactions.FindByPixLocation(ctx, id); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("FindByPixLocation(%q) = %v, %v; want ErrNotFound", id, got, err)
		}
	}
	for _, txid := range []string{newLocation().CobTxID, "", tx.ID(), loc.ID, loc.CobTxID[1:]} {
		if got, err := s.Transactions.FindByCobTxID(ctx, txid); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("FindByCobTxID(%q) = %v, %v; want ErrNotFound", txid, got, err)
		}
	}
}

func pixLocationDuplicateKeysRefused(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	first := createDynamic(t, s, domain.NewID(), newLocation())
	taken := first.Pix().Location
	for _, loc := range []domain.PixLocation{
		{ID: taken.ID, CobTxID: newLocation().CobTxID},
		{ID: newLocation().ID, CobTxID: taken.CobTxID},
	} {
		again := buildDynamic(t, domain.NewID(), loc)
		if err := s.Transactions.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
			t.Errorf("Create with %+v: %v, want ErrDuplicate", loc, err)
		}
		if _, err := s.Transactions.Find(ctx, again.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("the refused duplicate %s was stored: %v", again.ID(), err)
		}
	}
	for _, find := range []func() (*domain.Transaction, error){
		func() (*domain.Transaction, error) { return s.Transactions.FindByPixLocation(ctx, taken.ID) },
		func() (*domain.Transaction, error) { return s.Transactions.FindByCobTxID(ctx, taken.CobTxID) },
	} {
		if got, err := find(); err != nil || got.ID() != first.ID() {
			t.Errorf("after the duplicates: %v, %v; want the first transaction", got, err)
		}
	}
}

func pixLocationPSPChargeKept(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	first := createAtPSP(t, s, account, rand.Text())
	second := createAtPSP(t, s, account, rand.Text()) // no location of pixgate's: no collision on it
	want := first.Pix()
	for name, find := range map[string]func() (*domain.Transaction, error){
		"Get":           func() (*domain.Transaction, error) { return s.Transactions.Get(ctx, account, first.ID()) },
		"FindByCobTxID": func() (*domain.Transaction, error) { return s.Transactions.FindByCobTxID(ctx, want.Location.CobTxID) },
	} {
		got, err := find()
		if err != nil || got.ID() != first.ID() {
			t.Errorf("%s = %v, %v; want %s", name, got, err, first.ID())
			continue
		}
		c, ok := got.PSPCharge()
		if !ok || c != want.PSP || got.Pix().Location != want.Location || got.Pix().ExpiresAt != want.ExpiresAt {
			t.Errorf("%s: read back %+v, want %+v", name, got.Pix(), want)
		}
		if _, dynamic := got.Cob(minutes(1)); dynamic {
			t.Errorf("%s: pixgate would serve a location for a charge the PSP serves", name)
		}
	}
	if got, err := s.Transactions.FindByPixLocation(ctx, ""); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("FindByPixLocation(\"\") = %v, %v; want ErrNotFound", got, err)
	}
	again := buildAtPSP(t, domain.NewID(), second.Pix().Location.CobTxID)
	if err := s.Transactions.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Errorf("a second charge under the txid %s: %v, want ErrDuplicate", second.Pix().Location.CobTxID, err)
	}
}

func pixLocationNoneNeverCollides(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s := newStore(t)
	account := domain.NewID()
	for range 3 {
		createTransaction(t, s, txSpec{account: account})                          // static codes
		createTransaction(t, s, txSpec{account: account, status: domain.TxFailed}) // no code at all
	}
	createDynamic(t, s, account, newLocation())
	createDynamic(t, s, account, newLocation())
}

// newLocation makes a random location as the emitter does: 26 characters each.
func newLocation() domain.PixLocation {
	return domain.PixLocation{ID: rand.Text(), CobTxID: rand.Text()}
}

// buildDynamic makes a transaction of account awaiting payment of a dynamic charge at loc.
func buildDynamic(t *testing.T, account string, loc domain.PixLocation) *domain.Transaction {
	t.Helper()
	tx := buildTransaction(t, txSpec{account: account, status: domain.TxPending})
	pix := pixFor(tx)
	pix.URI = "00020101021226580014br.gov.bcb.pix2536pay.shop.example/pix/qr/" + loc.ID
	pix.Location = loc
	if err := tx.AttachPix(pix, tx.CreatedAt().Add(time.Second)); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return tx
}

func createDynamic(t *testing.T, s Stores, account string, loc domain.PixLocation) *domain.Transaction {
	t.Helper()
	tx := buildDynamic(t, account, loc)
	mustCreateTransaction(t, s, tx)
	return tx
}

// buildAtPSP makes a transaction of account awaiting payment of a charge its PSP made under
// txid, created by the PSP's clock a little before pixgate's.
func buildAtPSP(t *testing.T, account, txid string) *domain.Transaction {
	t.Helper()
	tx := buildTransaction(t, txSpec{account: account, status: domain.TxPending})
	pix := pixFor(tx)
	created := tx.CreatedAt().Add(-1500 * time.Millisecond)
	pix.URI = "00020101021226830014br.gov.bcb.pix2561psp.example/qr/v2/" + txid
	pix.Location = domain.PixLocation{CobTxID: txid}
	pix.PSP = domain.PSPCharge{LocationID: 7, Location: "psp.example/qr/v2/" + txid, Revision: 0, CreatedAt: created}
	pix.ExpiresAt = created.Add(30 * time.Minute)
	if err := tx.AttachPix(pix, tx.CreatedAt().Add(time.Second)); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return tx
}

func createAtPSP(t *testing.T, s Stores, account, txid string) *domain.Transaction {
	t.Helper()
	tx := buildAtPSP(t, account, txid)
	mustCreateTransaction(t, s, tx)
	return tx
}

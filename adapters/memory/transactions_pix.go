package memory

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// A dynamic charge is found by its location id (the payer's bank reading its payload) and by
// its cob txid (the acquirer's callback), each with one map look-up. Both are set when the
// charge is emitted, before the transaction is stored, and never change after: Create indexes
// them and Update refuses to change them.

// pixLocationIndex holds the two look-ups of dynamic charges.
type pixLocationIndex struct {
	byID, byCobTxID map[string]*domain.TransactionRecord
}

func newPixLocationIndex() pixLocationIndex {
	return pixLocationIndex{byID: make(map[string]*domain.TransactionRecord), byCobTxID: make(map[string]*domain.TransactionRecord)}
}

// pixLocation is the location of a stored transaction's charge, zero for a static one.
func pixLocation(rec *domain.TransactionRecord) domain.PixLocation {
	if rec.Pix == nil {
		return domain.PixLocation{}
	}
	return rec.Pix.Location
}

// pixLocationTaken answers ErrDuplicate when another transaction has rec's location id or cob
// txid. The caller holds the write lock.
func (s *Store) pixLocationTaken(rec domain.TransactionRecord) error {
	l := pixLocation(&rec)
	if !l.Dynamic() {
		return nil
	}
	// A charge the PSP made has a txid and no location of pixgate's.
	if l.ID != "" && s.pixLocations.byID[l.ID] != nil || s.pixLocations.byCobTxID[l.CobTxID] != nil {
		return fmt.Errorf("transaction pix location: %w", ports.ErrDuplicate)
	}
	return nil
}

// indexPixLocation records a new transaction's location. The caller holds the write lock.
func (s *Store) indexPixLocation(rec *domain.TransactionRecord) {
	if l := pixLocation(rec); l.Dynamic() {
		if l.ID != "" {
			s.pixLocations.byID[l.ID] = rec
		}
		s.pixLocations.byCobTxID[l.CobTxID] = rec
	}
}

// FindByPixLocation implements ports.TransactionRepository with one map look-up.
func (r *Transactions) FindByPixLocation(ctx context.Context, id string) (*domain.Transaction, error) {
	return r.findPix(ctx, r.store.pixLocations.byID, id)
}

// FindByCobTxID implements ports.TransactionRepository with one map look-up.
func (r *Transactions) FindByCobTxID(ctx context.Context, txid string) (*domain.Transaction, error) {
	return r.findPix(ctx, r.store.pixLocations.byCobTxID, txid)
}

func (r *Transactions) findPix(ctx context.Context, index map[string]*domain.TransactionRecord, key string) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := index[key]
	if rec == nil || key == "" {
		return nil, fmt.Errorf("transaction by pix location: %w", domain.ErrNotFound)
	}
	return domain.UnmarshalTransactionFromDatabase(*rec), nil
}

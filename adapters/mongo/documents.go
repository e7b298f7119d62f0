package mongo

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// The documents are the storage shapes of the aggregates, one file each (documents_<aggregate>.go;
// this one holds the pieces they share): plain structs with bson tags, mapped by hand to and
// from the domain so that the domain never learns about BSON. Field names
// are part of the stored format (and of the index definitions in indexes.go): renaming one
// needs a migration.

// documentDoc is a CPF or CNPJ.
type documentDoc struct {
	Kind  string `bson:"kind"`
	Value string `bson:"value"`
}

func fromDocument(d domain.Document) *documentDoc {
	if d.IsZero() {
		return nil
	}
	return &documentDoc{Kind: string(d.Kind()), Value: d.Value()}
}

// toDocument rebuilds a document. The domain offers no unvalidated path for documents, so a
// stored value is parsed again; it was valid when written, so a failure means the data was
// changed behind the program's back.
func (d *documentDoc) toDocument() (domain.Document, error) {
	if d == nil || d.Value == "" {
		return domain.Document{}, nil
	}
	doc, err := domain.ParseDocument(d.Value)
	if err != nil {
		return domain.Document{}, fmt.Errorf("stored document %q: %w", d.Value, err)
	}
	return doc, nil
}

type pixKeyDoc struct {
	Type string `bson:"type"`
	Key  string `bson:"key"`
}

type bankAccountDoc struct {
	Type  string `bson:"type,omitempty"`
	Digit string `bson:"digit,omitempty"`
	ISPB  string `bson:"ispb,omitempty"`
}

type holderDoc struct {
	Type        string         `bson:"type"`
	Name        string         `bson:"name"`
	Document    *documentDoc   `bson:"document,omitempty"`
	BankAccount bankAccountDoc `bson:"bankAccount"`
	Pix         pixKeyDoc      `bson:"pix"`
}

func fromHolder(h *domain.AccountHolder) *holderDoc {
	if h == nil {
		return nil
	}
	return &holderDoc{
		Type: string(h.Type), Name: h.Name, Document: fromDocument(h.Document),
		BankAccount: bankAccountDoc{Type: h.BankAccount.Type, Digit: h.BankAccount.Digit, ISPB: h.BankAccount.ISPB},
		Pix:         pixKeyDoc{Type: string(h.Pix.Type), Key: h.Pix.Key},
	}
}

func (h *holderDoc) toHolder() (*domain.AccountHolder, error) {
	if h == nil {
		return nil, nil
	}
	doc, err := h.Document.toDocument()
	if err != nil {
		return nil, err
	}
	return &domain.AccountHolder{
		Type: domain.HolderType(h.Type), Name: h.Name, Document: doc,
		BankAccount: domain.BankAccount{Type: h.BankAccount.Type, Digit: h.BankAccount.Digit, ISPB: h.BankAccount.ISPB},
		Pix:         domain.PixKey{Type: domain.PixKeyType(h.Pix.Type), Key: h.Pix.Key},
	}, nil
}

type historyDoc struct {
	Status string    `bson:"status"`
	Date   time.Time `bson:"date"`
}

func fromHistory[S ~string](h []domain.StatusEntry[S]) []historyDoc {
	out := make([]historyDoc, len(h))
	for i, e := range h {
		out[i] = historyDoc{Status: string(e.Status), Date: e.Date}
	}
	return out
}

// toHistory rebuilds a status history, checking every status with parse: a status this
// program does not know means the data was changed behind its back, and is refused rather than
// carried into the domain.
func toHistory[S ~string](h []historyDoc, parse func(string) (S, error)) ([]domain.StatusEntry[S], error) {
	out := make([]domain.StatusEntry[S], len(h))
	for i, e := range h {
		s, err := parse(e.Status)
		if err != nil {
			return nil, fmt.Errorf("stored history: %w", err)
		}
		out[i] = domain.StatusEntry[S]{Status: s, Date: e.Date.UTC()}
	}
	return out, nil
}

// idemSlot is the value of the unique (accountId, idem) index. MongoDB cannot make a unique
// index ignore documents without a key unless it is partial, and partial indexes exist neither
// on FerretDB nor comfortably on sharded clusters; so every document carries a slot that is
// always present and unique: its key when it has one, its own id otherwise. The prefixes keep
// the two spaces apart (a merchant's key can never collide with an id).
func idemSlot(key, id string) string {
	if key == "" {
		return "id:" + id
	}
	return "key:" + key
}

// ledgerFields are the postings of status changes stored in the document but not yet posted
// to the ledger (docs/adr/0006). A status change appends its unchecked postings here in the same
// write as the change; once they are posted the array goes, with ledgerDue.
type ledgerFields struct {
	LedgerPending []postingDoc `bson:"ledgerPending,omitempty"`
	// LedgerDue is when the oldest pending posting was stored; Recover finds, through its
	// index, documents whose postings have waited too long.
	LedgerDue *time.Time `bson:"ledgerDue,omitempty"`
}

func cents(c *domain.Cents) *int64 {
	if c == nil {
		return nil
	}
	v := int64(*c)
	return &v
}

func toCents(v *int64) *domain.Cents {
	if v == nil {
		return nil
	}
	c := domain.Cents(*v)
	return &c
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

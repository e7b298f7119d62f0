package application

import (
	"context"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Statement is one page of a merchant's statement: entries newest first, and Next, the number
// to continue before (0 when this page is the last).
type Statement struct {
	Entries []domain.Entry
	Next    int64
}

// ListEntries pages through the caller's statement. Pages are cut by entry number, so they
// stay exact while new entries arrive: a new entry is numbered above every page already
// handed out, and nothing is skipped or repeated.
type ListEntries struct{ ledger ports.Ledger }

// NewListEntries builds the use case.
func NewListEntries(ledger ports.Ledger) *ListEntries {
	requirePorts("NewListEntries", ledger)
	return &ListEntries{ledger: ledger}
}

// Execute returns up to limit entries of the caller's account matching f (whose account is
// always the caller's), newest first.
func (uc *ListEntries) Execute(ctx context.Context, p domain.Principal, f ports.EntryFilter, limit int) (Statement, error) {
	f.AccountID = p.AccountID
	entries, err := uc.ledger.Entries(ctx, f, limit+1)
	if err != nil {
		return Statement{}, err
	}
	out := Statement{Entries: entries}
	if len(entries) > limit {
		out.Entries = entries[:limit]
		out.Next = out.Entries[limit-1].Seq
	}
	return out, nil
}

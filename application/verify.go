package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// DisagreementKind classifies what the ledger audit found wrong.
type DisagreementKind string

const (
	// DisagreeMalformed: an entry that is not a double entry (debit and credit the same
	// account, an amount not above zero, an account or type the ledger does not know), or that
	// sits in another merchant's ledger.
	DisagreeMalformed DisagreementKind = "malformed_entry"
	// DisagreeUnbalanced: the balances of every ledger account do not sum to zero.
	DisagreeUnbalanced DisagreementKind = "unbalanced"
	// DisagreeSequence: a ledger's entries are not numbered 1, 2, 3... without gaps.
	DisagreeSequence DisagreementKind = "sequence_gap"
	// DisagreeBalanceAfter: an entry's balanceAfter is not the previous one plus its change.
	DisagreeBalanceAfter DisagreementKind = "balance_after"
	// DisagreeBalance: the merchant's balance is not what its entries add up to.
	DisagreeBalance DisagreementKind = "balance"
	// DisagreeDuplicate: one posting id stored more than once.
	DisagreeDuplicate DisagreementKind = "duplicate_entry"
	// DisagreeMissing: a status change whose entry the ledger lacks.
	DisagreeMissing DisagreementKind = "missing_entry"
	// DisagreeChanged: an entry that records another movement than its status change implies.
	DisagreeChanged DisagreementKind = "changed_entry"
	// DisagreeExtra: an entry with no status change behind it.
	DisagreeExtra DisagreementKind = "extra_entry"
	// DisagreeUnknownResource: an entry of a transaction or withdrawal that does not exist.
	DisagreeUnknownResource DisagreementKind = "unknown_resource"
	// DisagreeLatePayment: the suspense account's entries and the late payments disagree.
	DisagreeLatePayment DisagreementKind = "late_payment"
	// DisagreeOverdrawn: a merchant's available balance below zero where nothing allows it,
	// right after a debit the merchant asked for or beyond what MED disputes hold (see
	// checkOrder): movements recorded out of their changes' order.
	DisagreeOverdrawn DisagreementKind = "overdrawn"
)

// Disagreement is one thing the ledger audit found wrong, said in a sentence.
type Disagreement struct {
	Kind       DisagreementKind
	AccountID  string // the ledger ("" for the service's own)
	EntryID    string // the posting id, when one entry is at fault
	ResourceID string // the transaction, withdrawal or payment concerned, when there is one
	Detail     string
}

func (d Disagreement) String() string {
	ledger := d.AccountID
	if ledger == "" {
		ledger = "(service)"
	}
	s := string(d.Kind) + " ledger=" + ledger
	if d.ResourceID != "" {
		s += " resource=" + d.ResourceID
	}
	if d.EntryID != "" {
		s += " entry=" + d.EntryID
	}
	return s + ": " + d.Detail
}

// LedgerReport is the outcome of a ledger audit: what it checked and every disagreement.
type LedgerReport struct {
	Ledgers   int // ledgers read (the service's own included)
	Entries   int // entries read
	Resources int // transactions, withdrawals and late payments compared with their entries
	// Balances are every ledger account's balance recomputed from the entries read (the
	// merchants' available and blocked added up over the merchants read).
	Balances      map[domain.LedgerAccount]domain.Cents
	Disagreements []Disagreement
}

// OK tells whether the audit found nothing wrong.
func (r LedgerReport) OK() bool { return len(r.Disagreements) == 0 }

// VerifyLedger audits the double-entry ledger against itself and against the resources whose
// status changes it records. It checks that
//   - every entry moves one positive amount from one known account to another, so that the
//     balances of all ledger accounts, merchants' and the service's (clearing, fees, payouts,
//     suspense), sum to zero;
//   - each ledger is numbered 1, 2, 3... and, for a merchant, each balanceAfter is the one
//     before plus the entry's change, the last one being the balance the ledger answers;
//   - a merchant's entries are in an order the gateway allows, not only in sums that add up:
//     no debit the merchant asked for leaves available below zero, and available goes below
//     zero only by what MED disputes hold (checkOrder);
//   - every transaction and withdrawal has exactly the entries its history implies
//     (domain.ImpliedTransactionPostings, domain.ImpliedWithdrawalPostings), each once. The only
//     entries allowed without a status change behind them are a checked debit together with
//     the void that gave it back (a store that reserved the money, then lost the write), and
//     one opening balance per merchant account;
//   - the service's ledger holds the late payments the payment registry names: each arrival
//     in suspense, and its return to the payer only after it.
//
// The audit reads a live store: a resource that disagrees is read again, with its entries,
// until two reads of it agree on its version, so that a status change made during the audit
// is not reported as a fault.
type VerifyLedger struct {
	ledger       ports.Ledger
	transactions ports.TransactionRepository
	withdrawals  ports.WithdrawalRepository
	accounts     ports.AccountRepository
}

// NewVerifyLedger builds the use case. accounts lists the merchants, so that an account whose
// entries are all missing is audited too.
func NewVerifyLedger(ledger ports.Ledger, transactions ports.TransactionRepository, withdrawals ports.WithdrawalRepository, accounts ports.AccountRepository) *VerifyLedger {
	requirePorts("NewVerifyLedger", ledger, transactions, withdrawals, accounts)
	return &VerifyLedger{ledger: ledger, transactions: transactions, withdrawals: withdrawals, accounts: accounts}
}

// verifyPageSize is how many transactions or withdrawals the audit reads at a time. Pages
// shift only towards older items while the audit reads (transactions newest first, withdrawals
// oldest first), so a resource may be read twice, never skipped.
const verifyPageSize = 100

// Execute audits the merchant accountID's ledger, or with "" every ledger: the service's own
// and every merchant's (those with entries and every account). Only a store failure is an
// error; what disagrees is in the report.
func (uc *VerifyLedger) Execute(ctx context.Context, accountID string) (LedgerReport, error) {
	rep := LedgerReport{Balances: map[domain.LedgerAccount]domain.Cents{}}
	ledgers := []string{accountID}
	if accountID == "" {
		var err error
		if ledgers, err = uc.ledgerIDs(ctx); err != nil {
			return LedgerReport{}, err
		}
	}
	for _, id := range ledgers {
		var err error
		if id == "" {
			err = uc.verifyService(ctx, &rep)
		} else {
			err = uc.verifyMerchant(ctx, id, &rep)
		}
		if err != nil {
			return LedgerReport{}, err
		}
	}
	var sum domain.Cents
	for _, c := range rep.Balances {
		sum += c
	}
	if sum != 0 {
		rep.add(Disagreement{Kind: DisagreeUnbalanced, AccountID: accountID,
			Detail: fmt.Sprintf("the ledger accounts' balances sum to %d cents, not 0: %v", sum, rep.Balances)})
	}
	return rep, nil
}

// ledgerIDs are the service's ledger and every merchant's, sorted, the service's first.
func (uc *VerifyLedger) ledgerIDs(ctx context.Context) ([]string, error) {
	ids, err := uc.ledger.Ledgers(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the ledgers: %w", err)
	}
	accounts, err := uc.accounts.ListAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the accounts: %w", err)
	}
	ids = append([]string{""}, ids...)
	for _, a := range accounts {
		ids = append(ids, a.ID())
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (r *LedgerReport) add(d ...Disagreement) { r.Disagreements = append(r.Disagreements, d...) }

// resourceKey names the resource a merchant's entry belongs to.
type resourceKey struct {
	kind domain.ResourceKind
	id   string
}

// scanLedger reads one ledger, oldest first, checking each entry's shape and number (and,
// for a merchant, its balanceAfter), and adds the entries to the report's balances.
func (uc *VerifyLedger) scanLedger(ctx context.Context, accountID string, rep *LedgerReport) ([]domain.Entry, error) {
	var entries []domain.Entry
	seen := map[string]int64{}
	var prev domain.LedgerBalance
	err := uc.ledger.Scan(ctx, accountID, func(e domain.Entry) error {
		entries = append(entries, e)
		bad := func(kind DisagreementKind, format string, args ...any) {
			rep.add(Disagreement{Kind: kind, AccountID: accountID, EntryID: e.ID, ResourceID: e.ResourceID,
				Detail: fmt.Sprintf("entry %d: ", e.Seq) + fmt.Sprintf(format, args...)})
		}
		if want := int64(len(entries)); e.Seq != want {
			bad(DisagreeSequence, "numbered %d where %d was due", e.Seq, want)
		}
		if first, dup := seen[e.ID]; dup {
			bad(DisagreeDuplicate, "posting %s is stored again, first as entry %d", e.ID, first)
		} else {
			seen[e.ID] = e.Seq
		}
		if problem := entryShape(accountID, e.Posting); problem != "" {
			bad(DisagreeMalformed, "%s", problem)
		}
		if e.Amount > 0 && e.Debit != e.Credit {
			rep.Balances[e.Debit] -= e.Amount
			rep.Balances[e.Credit] += e.Amount
		}
		if accountID == "" {
			return nil
		}
		d := e.Delta()
		want := domain.LedgerBalance{Available: prev.Available + d.Available, Blocked: prev.Blocked + d.Blocked}
		if e.BalanceAfter != want {
			bad(DisagreeBalanceAfter, "balanceAfter is available %d, blocked %d; the previous one and this %s of %d cents make available %d, blocked %d",
				e.BalanceAfter.Available, e.BalanceAfter.Blocked, e.Type, e.Amount, want.Available, want.Blocked)
		}
		prev = e.BalanceAfter
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of %q: %w", accountID, err)
	}
	rep.Ledgers++
	rep.Entries += len(entries)
	return entries, nil
}

var knownAccounts = []domain.LedgerAccount{domain.LedgerAvailable, domain.LedgerBlocked, domain.LedgerClearing,
	domain.LedgerFees, domain.LedgerPayouts, domain.LedgerSuspense}

// entryShape says what makes p no double entry of ledger accountID, or "".
func entryShape(accountID string, p domain.Posting) string {
	switch {
	case p.Amount <= 0:
		return fmt.Sprintf("moves %d cents; an entry moves an amount above zero", p.Amount)
	case p.Debit == p.Credit:
		return fmt.Sprintf("debits and credits the same account, %s", p.Debit)
	case !slices.Contains(knownAccounts, p.Debit) || !slices.Contains(knownAccounts, p.Credit):
		return fmt.Sprintf("moves money between %q and %q; one is no ledger account", p.Debit, p.Credit)
	case p.AccountID != accountID:
		return fmt.Sprintf("belongs to account %q, not to this ledger", p.AccountID)
	case accountID == "" && (p.Debit.Merchant() || p.Credit.Merchant()):
		return fmt.Sprintf("the service's ledger moves a merchant's %s→%s", p.Debit, p.Credit)
	case accountID != "" && !p.Debit.Merchant() && !p.Credit.Merchant():
		return fmt.Sprintf("a merchant's ledger moves only service accounts, %s→%s", p.Debit, p.Credit)
	case !slices.Contains(entryTypes(), p.Type):
		return fmt.Sprintf("has the unknown type %q", p.Type)
	}
	return ""
}

// entryTypes are every movement type an entry may have.
func entryTypes() []domain.MovementType {
	return append(domain.StatementTypes(), domain.MoveLatePayment, domain.MoveLatePaymentReturn)
}

// verifyMerchant audits one merchant's ledger and resources.
func (uc *VerifyLedger) verifyMerchant(ctx context.Context, accountID string, rep *LedgerReport) error {
	entries, err := uc.scanLedger(ctx, accountID, rep)
	if err != nil {
		return err
	}
	var sum, last domain.LedgerBalance
	for _, e := range entries {
		if e.Amount <= 0 || e.Debit == e.Credit {
			continue
		}
		d := e.Delta()
		sum.Available += d.Available
		sum.Blocked += d.Blocked
		last = e.BalanceAfter
	}
	bal, err := uc.ledger.Balance(ctx, accountID)
	if err != nil {
		return fmt.Errorf("reading the balance of %s: %w", accountID, err)
	}
	if bal.Available != sum.Available || bal.Blocked != sum.Blocked || bal.Available != last.Available || bal.Blocked != last.Blocked {
		rep.add(Disagreement{Kind: DisagreeBalance, AccountID: accountID, Detail: fmt.Sprintf(
			"the ledger answers available %d, blocked %d; its entries add up to available %d, blocked %d, and the last balanceAfter is available %d, blocked %d",
			bal.Available, bal.Blocked, sum.Available, sum.Blocked, last.Available, last.Blocked)})
	}

	groups := groupByResource(entries)
	checked := map[resourceKey]bool{}
	journals := map[string]string{} // posting id → the id of the journal it joins, when another's
	var suspects []resourceKey
	compare := func(k resourceKey, implied []domain.Posting) {
		checked[k] = true
		rep.Resources++
		for _, p := range implied {
			if p.Journal != "" {
				journals[p.ID] = p.Journal
			}
		}
		if len(compareEntries(accountID, k, implied, groups[k])) > 0 {
			suspects = append(suspects, k)
		}
	}
	for page := 1; ; page++ {
		res, err := uc.transactions.List(ctx, ports.TransactionFilter{AccountID: accountID}, ports.Page{Number: page, Size: verifyPageSize})
		if err != nil {
			return fmt.Errorf("listing the transactions of %s: %w", accountID, err)
		}
		for _, t := range res.Items {
			if k := (resourceKey{domain.ResourceTransaction, t.ID()}); !checked[k] {
				compare(k, domain.ImpliedTransactionPostings(t.Record()))
			}
		}
		if len(res.Items) < verifyPageSize {
			break
		}
	}
	for page := 1; ; page++ {
		ws, err := uc.withdrawals.ListByAccount(ctx, accountID, ports.Page{Number: page, Size: verifyPageSize})
		if err != nil {
			return fmt.Errorf("listing the withdrawals of %s: %w", accountID, err)
		}
		for _, w := range ws {
			if k := (resourceKey{domain.ResourceWithdrawal, w.ID()}); !checked[k] {
				compare(k, domain.ImpliedWithdrawalPostings(w.Record()))
			}
		}
		if len(ws) < verifyPageSize {
			break
		}
	}
	rep.add(checkOrder(accountID, entries, journals)...)
	// Entries of resources the lists did not show: opening balances, resources created while
	// the lists were read, and resources that do not exist.
	for _, k := range sortedKeys(groups) {
		if checked[k] {
			continue
		}
		if k.kind == domain.ResourceAccount {
			rep.add(checkOpening(accountID, groups[k])...)
			continue
		}
		suspects = append(suspects, k)
	}
	for _, k := range suspects {
		ds, counted, err := uc.settle(ctx, accountID, k, groups[k])
		if err != nil {
			return err
		}
		if counted && !checked[k] {
			rep.Resources++
		}
		rep.add(ds...)
	}
	return nil
}

// checkOrder checks the order of a merchant's entries, where the sums cannot see it. The
// balance check of a debit the merchant asks for (a withdrawal, a refund's hold: a checked
// entry) never lets available below zero, and the only movement taken whatever the balance is
// a MED dispute's hold (domain.Transaction.OpenDispute). So
//
//   - right after a checked entry available is not negative, and not either when every
//     change's entries are counted together, at the first of them (a payment and its fee are
//     one change: a withdrawal recorded between them took money whose fee was still to come);
//   - at every entry available is not below minus what disputes hold by then: the holds not
//     released. A dispute the merchant lost has its money debited from blocked: available
//     stays down by its hold for good, still explained by it; a dispute rejected gives its
//     hold back.
//
// Anything else is a movement recorded apart from its change, which let the merchant spend
// money it did not have. Each stretch below zero is reported once, at the entry that entered
// it. A change's entries are known by their journal (domain.Posting.Journal), as stored or,
// for a ledger written before journals, as journals maps it: what the resources' histories
// imply.
//
// A ledger brought to an upgrade from the version before the ledger starts with the history
// the upgrade replayed, resource after resource (its withdrawals and refund holds recorded
// unchecked: history was not judged again), closed by the opening balance that reconciles it.
// That order is a reconstruction, not the order things happened in, so the check starts after
// it.
func checkOrder(accountID string, entries []domain.Entry, journals map[string]string) []Disagreement {
	journalOf := func(e domain.Entry) string {
		if j, ok := journals[e.ID]; ok && e.Journal == "" {
			return j
		}
		return e.JournalID()
	}
	change := map[string]domain.Cents{} // what each journal does to available, all entries together
	from := 0
	for i, e := range entries {
		change[journalOf(e)] += e.Delta().Available
		replayed := !e.Checked && (e.Type == domain.MoveWithdrawal || e.Type == domain.MoveRefundHold)
		if e.Type == domain.MoveOpeningBalance || replayed {
			from = i + 1
		}
	}
	var out []Disagreement
	var (
		held  domain.Cents // what MED disputes hold, not released
		whole domain.Cents // available with each journal counted at its first entry
		below bool
	)
	counted := map[string]bool{}
	for i, e := range entries {
		switch e.Type {
		case domain.MoveDisputeHold:
			held += e.Amount
		case domain.MoveDisputeRelease:
			held -= e.Amount
		}
		if j := journalOf(e); !counted[j] {
			counted[j] = true
			whole += change[j]
		}
		if i < from {
			continue
		}
		available := e.BalanceAfter.Available
		bad := func(format string, args ...any) {
			out = append(out, Disagreement{Kind: DisagreeOverdrawn, AccountID: accountID, EntryID: e.ID, ResourceID: e.ResourceID,
				Detail: fmt.Sprintf("entry %d, a %s of %d cents, ", e.Seq, e.Type, e.Amount) + fmt.Sprintf(format, args...)})
		}
		switch lowest := min(available, whole); {
		case e.Checked && available < 0:
			bad("is a debit the merchant asked for and leaves available at %d; its balance check allows no less than 0", available)
		case e.Checked && whole < 0:
			bad("is a debit the merchant asked for, checked against money a change had not finished recording: "+
				"with each change's entries counted together, it leaves available at %d", whole)
		case lowest < -held && !below:
			bad("leaves available at %d, and MED disputes hold %d cents then: no change lets a merchant spend money it does not have", lowest, held)
		}
		below = min(available, whole) < -held || (e.Checked && whole < 0)
	}
	return out
}

// settle compares once more a resource that disagreed, reading it and its entries until two
// reads of the resource agree on its version: a status change made while the audit read the
// store is then seen with its entries. counted tells whether the resource exists.
func (uc *VerifyLedger) settle(ctx context.Context, accountID string, k resourceKey, entries []domain.Entry) ([]Disagreement, bool, error) {
	const attempts = 3
	var out []Disagreement
	for i := 0; i < attempts; i++ {
		implied, version, found, err := uc.implied(ctx, accountID, k)
		if err != nil {
			return nil, false, err
		}
		if i > 0 || found { // the entries read before the resource may be older than it
			if entries, err = uc.resourceEntries(ctx, accountID, k); err != nil {
				return nil, false, err
			}
		}
		if !found {
			return unknownResource(accountID, k, entries), false, nil
		}
		out = compareEntries(accountID, k, implied, entries)
		if len(out) == 0 {
			return nil, true, nil
		}
		_, again, _, err := uc.implied(ctx, accountID, k)
		if err != nil {
			return nil, false, err
		}
		if again == version {
			return out, true, nil
		}
	}
	return out, true, nil
}

// implied reads resource k and returns the postings its history implies and its version.
func (uc *VerifyLedger) implied(ctx context.Context, accountID string, k resourceKey) ([]domain.Posting, int64, bool, error) {
	var err error
	switch k.kind {
	case domain.ResourceTransaction:
		var t *domain.Transaction
		if t, err = uc.transactions.Get(ctx, accountID, k.id); err == nil {
			return domain.ImpliedTransactionPostings(t.Record()), t.Version(), true, nil
		}
	case domain.ResourceWithdrawal:
		var w *domain.Withdrawal
		if w, err = uc.withdrawals.Get(ctx, accountID, k.id); err == nil {
			return domain.ImpliedWithdrawalPostings(w.Record()), w.Version(), true, nil
		}
	default:
		return nil, 0, false, nil
	}
	if errors.Is(err, domain.ErrNotFound) {
		return nil, 0, false, nil
	}
	return nil, 0, false, fmt.Errorf("reading %s %s: %w", k.kind, k.id, err)
}

// resourceEntries reads the entries of resource k again.
func (uc *VerifyLedger) resourceEntries(ctx context.Context, accountID string, k resourceKey) ([]domain.Entry, error) {
	var out []domain.Entry
	err := uc.ledger.Scan(ctx, accountID, func(e domain.Entry) error {
		if e.Resource == k.kind && e.ResourceID == k.id {
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of %q: %w", accountID, err)
	}
	return out, nil
}

func groupByResource(entries []domain.Entry) map[resourceKey][]domain.Entry {
	groups := map[resourceKey][]domain.Entry{}
	for _, e := range entries {
		k := resourceKey{e.Resource, e.ResourceID}
		groups[k] = append(groups[k], e)
	}
	return groups
}

func sortedKeys(groups map[resourceKey][]domain.Entry) []resourceKey {
	keys := make([]resourceKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b resourceKey) int {
		return strings.Compare(string(a.kind)+"/"+a.id, string(b.kind)+"/"+b.id)
	})
	return keys
}

// compareEntries compares a resource's entries with the postings its history implies.
func compareEntries(accountID string, k resourceKey, implied []domain.Posting, entries []domain.Entry) []Disagreement {
	var out []Disagreement
	bad := func(kind DisagreementKind, entryID, format string, args ...any) {
		out = append(out, Disagreement{Kind: kind, AccountID: accountID, EntryID: entryID, ResourceID: k.id,
			Detail: fmt.Sprintf("%s %s: ", k.kind, k.id) + fmt.Sprintf(format, args...)})
	}
	byID := map[string]domain.Entry{}
	for _, e := range entries {
		if _, dup := byID[e.ID]; !dup {
			byID[e.ID] = e
		}
	}
	matched := map[string]bool{}
	for _, p := range implied {
		e, ok := byID[p.ID]
		if !ok {
			bad(DisagreeMissing, p.ID, "its history implies a %s of %d cents %s→%s that the ledger lacks",
				p.Type, p.Amount, p.Debit, p.Credit)
			continue
		}
		matched[p.ID] = true
		if same, how := domain.SamePosting(e.Posting, p); !same {
			bad(DisagreeChanged, p.ID, "%s", how)
		}
	}
	for _, e := range entries {
		if matched[e.ID] || voided(e, byID, matched) {
			continue
		}
		matched[e.ID] = true // a duplicate is reported once, by the ledger's own check
		bad(DisagreeExtra, e.ID, "entry %d, a %s of %d cents %s→%s, has no status change behind it",
			e.Seq, e.Type, e.Amount, e.Debit, e.Credit)
	}
	return out
}

// voided tells whether e is half of an allowed pair: a checked debit (a refund hold or a
// withdrawal) that no status change implies, and the void after it that gave it back.
func voided(e domain.Entry, byID map[string]domain.Entry, matched map[string]bool) bool {
	orig, void := e, e
	if id, ok := strings.CutSuffix(e.ID, domain.VoidPostingID("")); ok {
		var found bool
		if orig, found = byID[id]; !found {
			return false
		}
	} else {
		var found bool
		if void, found = byID[domain.VoidPostingID(e.ID)]; !found {
			return false
		}
	}
	if matched[orig.ID] || matched[void.ID] || void.Seq <= orig.Seq ||
		(orig.Type != domain.MoveRefundHold && orig.Type != domain.MoveWithdrawal) {
		return false
	}
	same, _ := domain.SamePosting(void.Posting, orig.Void())
	return same
}

// unknownResource reports the entries of a resource that does not exist, but for void pairs:
// a store may reserve money for a withdrawal or refund it then fails to write, and give it
// back.
func unknownResource(accountID string, k resourceKey, entries []domain.Entry) []Disagreement {
	byID := map[string]domain.Entry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	var out []Disagreement
	for _, e := range entries {
		if voided(e, byID, nil) {
			continue
		}
		out = append(out, Disagreement{Kind: DisagreeUnknownResource, AccountID: accountID, EntryID: e.ID, ResourceID: k.id,
			Detail: fmt.Sprintf("entry %d, a %s of %d cents, belongs to %s %q, which does not exist", e.Seq, e.Type, e.Amount, k.kind, k.id)})
	}
	return out
}

// checkOpening checks a merchant's opening balance entries: at most one per merchant account,
// between it and clearing, named after it.
func checkOpening(accountID string, entries []domain.Entry) []Disagreement {
	var out []Disagreement
	for _, e := range entries {
		side := e.Credit
		if e.Debit.Merchant() {
			side = e.Debit
		}
		other := e.Debit
		if other == side {
			other = e.Credit
		}
		if e.Type == domain.MoveOpeningBalance && e.ResourceID == accountID && side.Merchant() &&
			other == domain.LedgerClearing && e.ID == "opening/"+accountID+"/"+string(side) {
			continue
		}
		out = append(out, Disagreement{Kind: DisagreeExtra, AccountID: accountID, EntryID: e.ID, ResourceID: e.ResourceID,
			Detail: fmt.Sprintf("entry %d, a %s of %d cents %s→%s of the account itself, is no opening balance of its %s account",
				e.Seq, e.Type, e.Amount, e.Debit, e.Credit, side)})
	}
	return out
}

// verifyService audits the service's own ledger: its entries are the late payments' arrivals
// in suspense and their returns, and nothing else.
func (uc *VerifyLedger) verifyService(ctx context.Context, rep *LedgerReport) error {
	entries, err := uc.scanLedger(ctx, "", rep)
	if err != nil {
		return err
	}
	claims, err := uc.ledger.LatePayments(ctx)
	if err != nil {
		return fmt.Errorf("listing the late payments: %w", err)
	}
	byID := map[string]domain.Entry{}
	for _, e := range entries {
		if _, dup := byID[e.ID]; !dup {
			byID[e.ID] = e
		}
	}
	matched := map[string]bool{}
	for _, c := range claims {
		rep.Resources++
		bad := func(kind DisagreementKind, entryID, format string, args ...any) {
			rep.add(Disagreement{Kind: kind, EntryID: entryID, ResourceID: c.EndToEndID,
				Detail: fmt.Sprintf("late payment %s (transaction %s): ", c.EndToEndID, c.TransactionID) + fmt.Sprintf(format, args...)})
		}
		arrive, leave := domain.LatePaymentPostings(c.EndToEndID, c.TransactionID, c.Amount)
		in, arrived := byID[arrive.ID]
		if !arrived {
			bad(DisagreeMissing, arrive.ID, "its %d cents never entered suspense", c.Amount)
		} else {
			matched[arrive.ID] = true
			if same, how := domain.SamePosting(in.Posting, arrive); !same {
				bad(DisagreeChanged, arrive.ID, "%s", how)
			}
		}
		out, left := byID[leave.ID]
		if !left {
			continue
		}
		matched[leave.ID] = true
		if same, how := domain.SamePosting(out.Posting, leave); !same {
			bad(DisagreeChanged, leave.ID, "%s", how)
		}
		if !arrived || out.Seq < in.Seq {
			bad(DisagreeLatePayment, leave.ID, "its return to the payer (entry %d) comes before its arrival in suspense", out.Seq)
		}
	}
	for _, e := range entries {
		if matched[e.ID] {
			continue
		}
		matched[e.ID] = true
		rep.add(Disagreement{Kind: DisagreeLatePayment, EntryID: e.ID, ResourceID: e.ResourceID,
			Detail: fmt.Sprintf("entry %d, a %s of %d cents %s→%s, matches no late payment of the payment registry", e.Seq, e.Type, e.Amount, e.Debit, e.Credit)})
	}
	return nil
}

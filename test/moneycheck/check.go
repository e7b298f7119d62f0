package moneycheck

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The checks of a run, numbered as the package documentation lists them; CheckRun is the run
// itself (an operation answered an error, the callback answered a surprise).
const (
	CheckRun          = 0
	CheckOverdraw     = 1
	CheckReads        = 2
	CheckExactlyOnce  = 3
	CheckSums         = 4
	CheckLinearizable = 5
)

var checkNames = map[int]string{
	CheckRun:          "the run",
	CheckOverdraw:     "no overdraw",
	CheckReads:        "reads explained by the ledger",
	CheckExactlyOnce:  "entries exactly once",
	CheckSums:         "sums",
	CheckLinearizable: "linearizable",
}

// Finding is one thing a run found wrong.
type Finding struct {
	Check   int
	Account string // "" when it concerns no single merchant
	Detail  string
}

func (f Finding) String() string {
	s := fmt.Sprintf("[%d %s]", f.Check, checkNames[f.Check])
	if f.Account != "" {
		s += " account " + f.Account
	}
	return s + ": " + f.Detail
}

// Report is what a run did and found.
type Report struct {
	Seed      int64
	Instances int
	Accounts  []string
	LoadTime  time.Duration
	// Counts are the operations by kind and outcome ("withdraw refused": 12).
	Counts map[string]int
	// Entries counts the entries of the run's merchants.
	Entries  int
	Findings []Finding
	// Linearizable is porcupine's verdict over every account (Ok, Illegal, or Unknown when its
	// search ran out of time).
	Linearizable porcupine.CheckResult
	// Dir is where the run wrote its history and the drawing of each account that is not
	// linearizable: written only when the run found something.
	Dir string
}

// OK tells whether the run found nothing wrong.
func (r Report) OK() bool { return len(r.Findings) == 0 }

// Summary says what the run did, in a few lines.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d instance(s), %d account(s), %v of load, %d entries; linearizable: %s\n",
		r.Seed, r.Instances, len(r.Accounts), r.LoadTime.Round(time.Millisecond), r.Entries, r.Linearizable)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Counts[k]))
	}
	fmt.Fprintf(&b, "operations: %s", strings.Join(parts, ", "))
	return b.String()
}

// String is the summary, then every finding, then where the history lies.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	if len(r.Findings) > 0 {
		fmt.Fprintf(&b, "\n%d finding(s):", len(r.Findings))
		for _, f := range r.Findings {
			b.WriteString("\n  " + f.String())
		}
	}
	if r.Dir != "" {
		fmt.Fprintf(&b, "\nhistory and drawings: %s", r.Dir)
	}
	return b.String()
}

// maxPerCheck bounds the findings of one check on one account that the report details; the
// rest are counted.
const maxPerCheck = 4

// ledgerView is one merchant's ledger as the run left it, with the operations made on it.
type ledgerView struct {
	account string
	entries []domain.Entry
	balance domain.Balance
	ops     []Op
	// seqs maps an applied operation to the positions (1-based) of its entries, when the
	// per-resource check matched them.
	seqs map[int][]int
}

// judge reads the ledger the run left and runs every check.
func (r *run) judge(ctx context.Context, loadTime time.Duration) (Report, error) {
	ops := r.h.Ops()
	rep := Report{Seed: r.cfg.Seed, Instances: len(r.instances), Accounts: r.accounts, LoadTime: loadTime, Counts: map[string]int{}}
	rep.Findings = r.runFindings(ops, rep.Counts)
	views, err := r.readLedgers(ctx, ops)
	for _, v := range views {
		rep.Entries += len(v.entries)
	}
	if err != nil {
		return rep, err
	}
	for _, v := range views {
		rep.Findings = append(rep.Findings, checkResources(v)...)
		rep.Findings = append(rep.Findings, checkOverdraw(v)...)
		rep.Findings = append(rep.Findings, checkReads(v)...)
		rep.Findings = append(rep.Findings, checkFinal(v)...)
	}
	audit, err := r.auditStore(ctx, views)
	rep.Findings = append(rep.Findings, audit...)
	if err != nil {
		return rep, err
	}
	var drawings map[string]porcupine.LinearizationInfo
	rep.Linearizable, drawings = r.checkLinearizable(views)
	if len(rep.Findings) == 0 && len(drawings) == 0 {
		return rep, nil
	}
	return r.keepHistory(rep, views, drawings)
}

// runFindings counts ops by kind and outcome into counts, and finds the run's own failures:
// each operation that failed, and each problem the run met.
func (r *run) runFindings(ops []Op, counts map[string]int) []Finding {
	var findings []Finding
	for _, op := range ops {
		counts[string(op.Kind)+" "+string(op.Outcome)]++
		if op.Outcome == Failed {
			findings = append(findings, Finding{CheckRun, op.Account, op.String()})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		findings = append(findings, Finding{Check: CheckRun, Detail: p})
	}
	return findings
}

// readLedgers reads, through the first instance, the ledger and balance of each of the run's
// merchants, beside the operations made on it. On an error it returns the views read before it.
func (r *run) readLedgers(ctx context.Context, ops []Op) ([]*ledgerView, error) {
	store := r.instances[0]
	byAccount := map[string][]Op{}
	for _, op := range ops {
		byAccount[op.Account] = append(byAccount[op.Account], op)
	}
	var views []*ledgerView
	for _, account := range r.accounts {
		v := &ledgerView{account: account, ops: byAccount[account], seqs: map[int][]int{}}
		if err := store.Ledger.Scan(ctx, account, func(e domain.Entry) error {
			v.entries = append(v.entries, e)
			return nil
		}); err != nil {
			return views, fmt.Errorf("moneycheck: reading the ledger of %s: %w", account, err)
		}
		b, err := store.Ledger.Balance(ctx, account)
		if err != nil {
			return views, fmt.Errorf("moneycheck: reading the balance of %s: %w", account, err)
		}
		v.balance = b
		views = append(views, v)
	}
	return views, nil
}

// auditStore checks the whole store: the sums of every ledger, then pixgate's own ledger audit
// (pixgate ledger verify), whose disagreements are findings of exactly once or, unbalanced,
// of the sums. On an error it returns the findings made before it.
func (r *run) auditStore(ctx context.Context, views []*ledgerView) ([]Finding, error) {
	store := r.instances[0]
	findings, err := r.checkSums(ctx, views)
	if err != nil {
		return nil, err
	}
	audit, err := application.NewVerifyLedger(store.Ledger, store.Transactions, store.Withdrawals, store.Accounts).Execute(ctx, "")
	if err != nil {
		return findings, fmt.Errorf("moneycheck: the ledger audit: %w", err)
	}
	for _, d := range audit.Disagreements {
		check := CheckExactlyOnce
		if d.Kind == application.DisagreeUnbalanced {
			check = CheckSums
		}
		findings = append(findings, Finding{check, d.AccountID, "pixgate ledger verify: " + d.String()})
	}
	return findings, nil
}

// checkLinearizable asks porcupine whether each account's operations fit one account, and
// returns the verdict over them all (Illegal over Unknown over Ok) and the information to draw
// each account found Illegal.
func (r *run) checkLinearizable(views []*ledgerView) (porcupine.CheckResult, map[string]porcupine.LinearizationInfo) {
	verdict := porcupine.Ok
	drawings := map[string]porcupine.LinearizationInfo{}
	for _, v := range views {
		res, info := porcupine.CheckOperationsVerbose(Model(), Operations(v.ops), r.cfg.LinearizabilityTimeout)
		switch res {
		case porcupine.Illegal:
			verdict = porcupine.Illegal
			drawings[v.account] = info
		case porcupine.Unknown:
			if verdict == porcupine.Ok {
				verdict = porcupine.Unknown
			}
		}
	}
	return verdict, drawings
}

// keepHistory makes the report's directory (Dir) under ReportDir, draws there each account
// that is not linearizable, with a finding that points at its drawing, and writes the
// history.
func (r *run) keepHistory(rep Report, views []*ledgerView, drawings map[string]porcupine.LinearizationInfo) (Report, error) {
	dir, err := os.MkdirTemp(r.cfg.ReportDir, fmt.Sprintf("pixgate-moneycheck-%d-", r.cfg.Seed))
	if err != nil {
		return rep, fmt.Errorf("moneycheck: a directory for the history: %w", err)
	}
	rep.Dir = dir
	for _, v := range views {
		info, illegal := drawings[v.account]
		if !illegal {
			continue
		}
		path := filepath.Join(dir, "account-"+v.account+".html")
		detail := fmt.Sprintf("no order of the %d reads and movements of money fits one account; the drawing of the longest orders that fit is %s",
			len(Operations(v.ops)), path)
		if err := porcupine.VisualizePath(Model(), info, path); err != nil {
			detail = fmt.Sprintf("no order of the %d reads and movements of money fits one account (drawing it failed: %v)", len(Operations(v.ops)), err)
		}
		rep.Findings = append(rep.Findings, Finding{CheckLinearizable, v.account, detail})
	}
	if err := writeHistory(filepath.Join(dir, "history.txt"), rep, views); err != nil {
		return rep, err
	}
	return rep, nil
}

// writeHistory writes the report, and each account's operations and entries, to path.
func writeHistory(path string, rep Report, views []*ledgerView) error {
	var b strings.Builder
	b.WriteString(rep.String() + "\n")
	for _, v := range views {
		fmt.Fprintf(&b, "\n== account %s: %d operations, %d entries\n", v.account, len(v.ops), len(v.entries))
		ops := slices.Clone(v.ops)
		slices.SortFunc(ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
		for _, op := range ops {
			b.WriteString(op.String() + "\n")
		}
		b.WriteString("-- entries\n")
		for i, e := range v.entries {
			b.WriteString(describeEntry(i+1, e) + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("moneycheck: writing the history: %w", err)
	}
	return nil
}

func describeEntry(pos int, e domain.Entry) string {
	return fmt.Sprintf("entry %d (seq %d) %s of %d %s→%s, %s %s, after it %s", pos, e.Seq, e.Type, e.Amount,
		e.Debit, e.Credit, e.Resource, e.ResourceID, describeBalance(e.BalanceAfter))
}

// limited adds findings of one check on one account, the first maxPerCheck in full.
type limited struct {
	check   int
	account string
	out     []Finding
	more    int
}

func (l *limited) add(format string, args ...any) {
	if len(l.out) == maxPerCheck {
		l.more++
		return
	}
	l.out = append(l.out, Finding{l.check, l.account, fmt.Sprintf(format, args...)})
}

func (l *limited) findings() []Finding {
	if l.more > 0 {
		l.out = append(l.out, Finding{l.check, l.account, fmt.Sprintf("and %d more like these", l.more)})
	}
	return l.out
}

// checkResources is check 3 per operation: each resource's entries, in the ledger's order, are
// the postings its applied operations asked for, in the order the operations were made (one
// client makes them one after another; two deliveries of one callback at once apply once).
// It records the positions of each operation's entries for checkReads.
func checkResources(v *ledgerView) []Finding {
	l := &limited{check: CheckExactlyOnce, account: v.account}
	entries := map[string][]int{} // resource id → positions
	for i, e := range v.entries {
		entries[e.ResourceID] = append(entries[e.ResourceID], i+1)
	}
	ops := map[string][]Op{}
	for _, op := range v.ops {
		if op.ResourceID != "" && op.Outcome == Applied {
			ops[op.ResourceID] = append(ops[op.ResourceID], op)
		}
	}
	for id := range entries {
		if _, known := ops[id]; !known {
			for _, pos := range entries[id] {
				l.add("%s, which no operation of the run asked for", describeEntry(pos, v.entries[pos-1]))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ops)) {
		rs := ops[id]
		slices.SortFunc(rs, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
		var want []Posting
		var owner []int // the operation of each wanted posting
		for _, op := range rs {
			for _, p := range op.Postings {
				want = append(want, p)
				owner = append(owner, op.ID)
			}
		}
		have := entries[id]
		same := len(have) == len(want)
		for i := 0; same && i < len(have); i++ {
			e := v.entries[have[i]-1]
			same = e.Type == want[i].Type && e.Amount == want[i].Amount
		}
		if !same {
			var got []string
			for _, pos := range have {
				e := v.entries[pos-1]
				got = append(got, fmt.Sprintf("%s %d (entry %d)", e.Type, e.Amount, pos))
			}
			var asked []string
			for i, p := range want {
				asked = append(asked, fmt.Sprintf("%s %d (op %d)", p.Type, p.Amount, owner[i]))
			}
			l.add("%s %s: the ledger holds [%s]; the operations that applied asked for [%s]", rs[0].Resource, id,
				strings.Join(got, ", "), strings.Join(asked, ", "))
			continue
		}
		for i, pos := range have {
			v.seqs[owner[i]] = append(v.seqs[owner[i]], pos)
		}
	}
	return l.findings()
}

// disputeMove tells the movements of MED disputes: not the merchant's choice, they may take
// available below zero.
func disputeMove(t domain.MovementType) bool {
	return t == domain.MoveDisputeHold || t == domain.MoveDisputeRelease || t == domain.MoveDisputeDebit
}

// merchantDebit tells the debits a merchant asks for, which the ledger checks.
func merchantDebit(t domain.MovementType) bool {
	return t == domain.MoveWithdrawal || t == domain.MoveRefundHold
}

// checkOverdraw is check 1 on every state the ledger recorded (each balance read answers one of
// them, check 2): after each entry, what available holds less the MED disputes' movements
// never goes below zero, and a merchant's debit never leaves available itself below zero.
// Money only leaves available unchecked as a payment's fee, which its payment brought in, or
// as a MED hold, left out here; so a negative figure means that a debit the merchant asked for
// spent money that a change had not finished bringing in.
func checkOverdraw(v *ledgerView) []Finding {
	l := &limited{check: CheckOverdraw, account: v.account}
	var own domain.Cents // available, MED disputes left out
	for i, e := range v.entries {
		pos := i + 1
		if !disputeMove(e.Type) {
			own += e.Delta().Available
		}
		switch {
		case merchantDebit(e.Type) && e.BalanceAfter.Available < 0:
			l.add("%s: a debit the merchant asked for left available at %d", describeEntry(pos, e), e.BalanceAfter.Available)
		case own < 0:
			l.add("%s: available is %d, and %d with the MED disputes left out: a debit the merchant asked for spent money that was not there%s",
				describeEntry(pos, e), e.BalanceAfter.Available, own, splitChange(v, pos))
		}
	}
	return l.findings()
}

// splitChange says which entries came between entry pos and the earlier entries of the same
// change (a fee and its payment), when some did.
func splitChange(v *ledgerView, pos int) string {
	e := v.entries[pos-1]
	if e.Type != domain.MoveFee {
		return ""
	}
	for p := pos - 1; p >= 1; p-- {
		prev := v.entries[p-1]
		if prev.ResourceID != e.ResourceID || prev.Type != domain.MovePayment {
			continue
		}
		if p == pos-1 {
			return ""
		}
		var between []string
		for q := p + 1; q < pos; q++ {
			x := v.entries[q-1]
			between = append(between, fmt.Sprintf("entry %d, a %s of %d (%s %s), after it %s", q, x.Type, x.Amount,
				x.Resource, x.ResourceID, describeBalance(x.BalanceAfter)))
		}
		return fmt.Sprintf(" (its payment is entry %d, after it %s; between them came %s)", p,
			describeBalance(prev.BalanceAfter), strings.Join(between, "; "))
	}
	return ""
}

// checkReads is check 2: each read answered the balance after some entry k (k = 0: before the
// first), with k never going back in real time across reads, k at or after the entries of every
// operation that ended before the read began, and k before the entries of every operation that
// began after the read ended. Reads are taken in the order they ended, each given the smallest
// k that fits, which leaves the most room to the reads after it.
func checkReads(v *ledgerView) []Finding {
	l := &limited{check: CheckReads, account: v.account}
	after := func(k int) domain.LedgerBalance {
		if k == 0 {
			return domain.LedgerBalance{}
		}
		return v.entries[k-1].BalanceAfter
	}
	type bound struct {
		at  time.Duration
		pos int
	}
	var ended, began []bound // operations' last entries by when they ended; first entries by when they began
	for _, op := range v.ops {
		seqs := v.seqs[op.ID]
		if len(seqs) == 0 {
			continue
		}
		ended = append(ended, bound{op.Return, slices.Max(seqs)})
		began = append(began, bound{op.Call, slices.Min(seqs)})
	}
	var reads []Op
	for _, op := range v.ops {
		if op.Kind == KindReadBalance && op.Outcome == Applied {
			reads = append(reads, op)
		}
	}
	slices.SortFunc(reads, func(a, b Op) int { return cmp.Compare(a.Return, b.Return) })
	var placed []bound // reads placed so far: when they ended, and their k
	for _, rd := range reads {
		lo, why := 0, "the start"
		for _, b := range ended {
			if b.at < rd.Call && b.pos > lo {
				lo, why = b.pos, fmt.Sprintf("an operation that ended before it began (entry %d)", b.pos)
			}
		}
		for _, b := range placed {
			if b.at < rd.Call && b.pos > lo {
				lo, why = b.pos, fmt.Sprintf("a read that ended before it began (entry %d)", b.pos)
			}
		}
		hi := len(v.entries)
		for _, b := range began {
			if b.at > rd.Return && b.pos-1 < hi {
				hi = b.pos - 1
			}
		}
		k := -1
		for c := lo; c <= hi; c++ {
			if after(c) == rd.Balance {
				k = c
				break
			}
		}
		if k < 0 {
			var ever []string
			for c := 0; c <= len(v.entries); c++ {
				if after(c) == rd.Balance {
					ever = append(ever, fmt.Sprint(c))
				}
			}
			where := "no entry of the ledger ever left that balance"
			if len(ever) > 0 {
				where = "only entries " + strings.Join(ever, ", ") + " left that balance"
			}
			l.add("%s: the entries it may have seen are %d..%d (bounded below by %s); %s", rd, lo, hi, why, where)
			continue
		}
		placed = append(placed, bound{rd.Return, k})
	}
	return l.findings()
}

// checkFinal is part of check 4: the balance the ledger answers at the end is its last entry's
// balanceAfter and what the applied operations add up to.
func checkFinal(v *ledgerView) []Finding {
	var want domain.LedgerBalance
	for _, op := range v.ops {
		if op.Outcome == Applied {
			want.Available += op.Delta.Available
			want.Blocked += op.Delta.Blocked
		}
	}
	var last domain.LedgerBalance
	if n := len(v.entries); n > 0 {
		last = v.entries[n-1].BalanceAfter
	}
	got := domain.LedgerBalance{Available: v.balance.Available, Blocked: v.balance.Blocked}
	if got == want && last == want {
		return nil
	}
	return []Finding{{CheckSums, v.account, fmt.Sprintf(
		"the balance answers %s and the last entry left %s; the operations that applied add up to %s",
		describeBalance(got), describeBalance(last), describeBalance(want))}}
}

// checkSums is the rest of check 4: over the service's ledger and the run's merchants', every
// ledger account's balance adds up to zero; each merchant's fees are the fees of its payments,
// its payouts those of the withdrawals that still hold money; and the service's suspense
// account is empty (the sandbox returns every late payment at once).
func (r *run) checkSums(ctx context.Context, views []*ledgerView) ([]Finding, error) {
	var out []Finding
	total := map[domain.LedgerAccount]domain.Cents{}
	move := func(into map[domain.LedgerAccount]domain.Cents, e domain.Entry) {
		into[e.Debit] -= e.Amount
		into[e.Credit] += e.Amount
	}
	for _, v := range views {
		own := map[domain.LedgerAccount]domain.Cents{}
		for _, e := range v.entries {
			move(own, e)
			move(total, e)
		}
		var fees, payouts domain.Cents
		for _, op := range v.ops {
			if op.Outcome != Applied {
				continue
			}
			for _, p := range op.Postings {
				switch p.Type {
				case domain.MoveFee:
					fees += p.Amount
				case domain.MoveWithdrawal:
					payouts += p.Amount
				case domain.MoveWithdrawalReversal:
					payouts -= p.Amount
				}
			}
		}
		if own[domain.LedgerFees] != fees || own[domain.LedgerPayouts] != payouts {
			out = append(out, Finding{CheckSums, v.account, fmt.Sprintf(
				"the ledger's fees account holds %d and payouts %d of this merchant; its applied operations add up to %d and %d",
				own[domain.LedgerFees], own[domain.LedgerPayouts], fees, payouts)})
		}
	}
	service := map[domain.LedgerAccount]domain.Cents{}
	if err := r.instances[0].Ledger.Scan(ctx, "", func(e domain.Entry) error {
		move(service, e)
		move(total, e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("moneycheck: reading the service's ledger: %w", err)
	}
	if service[domain.LedgerSuspense] != 0 {
		out = append(out, Finding{Check: CheckSums, Detail: fmt.Sprintf(
			"the suspense account holds %d; every late payment of the run was returned", service[domain.LedgerSuspense])})
	}
	var sum domain.Cents
	for _, c := range total {
		sum += c
	}
	if sum != 0 {
		out = append(out, Finding{Check: CheckSums, Detail: fmt.Sprintf("the ledger accounts sum to %d, not 0: %v", sum, total)})
	}
	return out, nil
}

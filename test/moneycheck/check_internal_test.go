package moneycheck

import (
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// The checks of the ledger, on ledgers and histories written by hand: what each must report,
// and what it must let pass.

var at = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// posting is a movement of account "A" of resource id.
func posting(id string, kind domain.MovementType, amount domain.Cents) domain.Posting {
	p := domain.Posting{ID: id + "/" + string(kind), Type: kind, AccountID: "A", ResourceID: id, Amount: amount,
		Resource: domain.ResourceTransaction}
	switch kind {
	case domain.MovePayment:
		p.Debit, p.Credit = domain.LedgerClearing, domain.LedgerAvailable
	case domain.MoveFee:
		p.Debit, p.Credit = domain.LedgerAvailable, domain.LedgerFees
	case domain.MoveWithdrawal:
		p.Debit, p.Credit, p.Checked, p.Resource = domain.LedgerAvailable, domain.LedgerPayouts, true, domain.ResourceWithdrawal
	case domain.MoveRefundHold:
		p.Debit, p.Credit, p.Checked = domain.LedgerAvailable, domain.LedgerBlocked, true
	case domain.MoveDisputeHold:
		p.Debit, p.Credit = domain.LedgerAvailable, domain.LedgerBlocked
	}
	return p
}

// ledger numbers the postings as a ledger would, without its balance check: the ledgers
// written here are the broken ones a store could leave.
func ledger(t *testing.T, ps ...domain.Posting) []domain.Entry {
	t.Helper()
	var out []domain.Entry
	for _, p := range ps {
		var prev *domain.Entry
		if len(out) > 0 {
			prev = &out[len(out)-1]
		}
		p.Checked = false // let the broken ledgers be written
		e, err := domain.NextEntry(prev, p, at)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func details(fs []Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.String())
	}
	return strings.Join(s, "\n")
}

func TestCheckOverdraw(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		entries []domain.Posting
		want    string // in the one finding; "" for none
	}{
		{"a withdrawal between a payment and its fee is an overdraw, and the gap is named", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000),
			posting("W1", domain.MoveWithdrawal, 100_000),
			posting("T1", domain.MoveFee, 2_040),
		}, "between them came entry 2, a withdrawal of 100000"},
		{"a withdrawal of what a whole payment left is no overdraw", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000),
			posting("T1", domain.MoveFee, 2_040),
			posting("W1", domain.MoveWithdrawal, 97_960),
		}, ""},
		{"a MED hold taking available below zero is no overdraw", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000),
			posting("T1", domain.MoveFee, 2_040),
			posting("W1", domain.MoveWithdrawal, 50_000),
			posting("T1", domain.MoveDisputeHold, 100_000),
		}, ""},
		{"a refund hold leaving available below zero is an overdraw", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000),
			posting("T1", domain.MoveFee, 2_040),
			posting("T1", domain.MoveRefundHold, 100_000),
		}, "a debit the merchant asked for left available at -2040"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := checkOverdraw(&ledgerView{account: "A", entries: ledger(t, c.entries...)})
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("findings:\n%s\nwant none", details(got))
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0].Detail, c.want)):
				t.Errorf("findings:\n%s\nwant one saying %q", details(got), c.want)
			}
		})
	}
}

func TestCheckReads(t *testing.T) {
	t.Parallel()
	// Entries: 1 payment (available 100000), 2 fee (97960), 3 withdrawal (0).
	entries := []domain.Posting{
		posting("T1", domain.MovePayment, 100_000),
		posting("T1", domain.MoveFee, 2_040),
		posting("W1", domain.MoveWithdrawal, 97_960),
	}
	pay := Op{ID: 100, Kind: KindPayment, Call: ms(0), Return: ms(10), Outcome: Applied}
	wd := Op{ID: 101, Kind: KindWithdraw, Call: ms(20), Return: ms(30), Outcome: Applied}
	seqs := map[int][]int{100: {1, 2}, 101: {3}}
	rd := func(id, from, to int, available domain.Cents) Op {
		return Op{ID: id, Kind: KindReadBalance, Call: ms(from), Return: ms(to), Outcome: Applied,
			Balance: domain.LedgerBalance{Available: available}}
	}
	for _, c := range []struct {
		name  string
		reads []Op
		want  string
	}{
		{"reads of states the entries left, in order, are explained", []Op{
			rd(1, 0, 1, 0), rd(2, 1, 12, 97_960), rd(3, 12, 40, 0),
		}, ""},
		{"a read of a balance no entry left is reported", []Op{
			rd(1, 12, 13, 55),
		}, "no entry of the ledger ever left that balance"},
		{"a read going back before an earlier read is reported", []Op{
			rd(1, 5, 6, 97_960), rd(2, 7, 8, 100_000), // both while the payment is under way
		}, "a read that ended before it began (entry 2)"},
		{"a read before an operation that ended before it is reported", []Op{
			rd(1, 31, 32, 97_960),
		}, "an operation that ended before it began (entry 3)"},
		{"a read of an operation that began after it ended is reported", []Op{
			rd(1, 12, 13, 0),
		}, "the entries it may have seen are 2..2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := &ledgerView{account: "A", entries: ledger(t, entries...), ops: append([]Op{pay, wd}, c.reads...), seqs: seqs}
			got := checkReads(v)
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("findings:\n%s\nwant none", details(got))
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0].Detail, c.want)):
				t.Errorf("findings:\n%s\nwant one saying %q", details(got), c.want)
			}
		})
	}
}

func TestCheckResources(t *testing.T) {
	t.Parallel()
	pay := Op{ID: 7, Kind: KindPayment, Resource: domain.ResourceTransaction, ResourceID: "T1", Outcome: Applied,
		Postings: []Posting{{domain.MovePayment, 100_000}, {domain.MoveFee, 2_040}}}
	again := Op{ID: 8, Kind: KindPayment, Resource: domain.ResourceTransaction, ResourceID: "T1", Outcome: NoEffect}
	for _, c := range []struct {
		name    string
		entries []domain.Posting
		want    string
	}{
		{"a payment's entries, once, match", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000), posting("T1", domain.MoveFee, 2_040),
		}, ""},
		{"a fee posted twice is reported", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000), posting("T1", domain.MoveFee, 2_040), posting("T1", domain.MoveFee, 2_040),
		}, "the ledger holds [payment 100000 (entry 1), fee 2040 (entry 2), fee 2040 (entry 3)]"},
		{"a fee missing is reported", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000),
		}, "asked for [payment 100000 (op 7), fee 2040 (op 7)]"},
		{"an entry no operation asked for is reported", []domain.Posting{
			posting("T1", domain.MovePayment, 100_000), posting("T1", domain.MoveFee, 2_040), posting("W9", domain.MoveWithdrawal, 5),
		}, "no operation of the run asked for"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := &ledgerView{account: "A", entries: ledger(t, c.entries...), ops: []Op{pay, again}, seqs: map[int][]int{}}
			got := checkResources(v)
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("findings:\n%s\nwant none", details(got))
			case c.want == "" && (len(v.seqs[7]) != 2 || v.seqs[7][0] != 1 || v.seqs[7][1] != 2):
				t.Errorf("the payment's entries were placed at %v, want [1 2]", v.seqs[7])
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0].Detail, c.want)):
				t.Errorf("findings:\n%s\nwant one saying %q", details(got), c.want)
			}
		})
	}
}

func TestCheckFinal(t *testing.T) {
	t.Parallel()
	entries := ledger(t, posting("T1", domain.MovePayment, 100_000), posting("T1", domain.MoveFee, 2_040))
	pay := Op{ID: 1, Kind: KindPayment, Outcome: Applied, Delta: domain.LedgerBalance{Available: 97_960}}
	for _, c := range []struct {
		name    string
		balance domain.Cents
		ops     []Op
		found   bool
	}{
		{"a balance where the applied operations lead passes", 97_960, []Op{pay}, false},
		{"a balance the ledger answers apart from its last entry is reported", 100_000, []Op{pay}, true},
		{"an applied operation the ledger lost is reported", 97_960, []Op{pay, pay}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := &ledgerView{account: "A", entries: entries, balance: domain.Balance{Available: c.balance}, ops: c.ops}
			if got := checkFinal(v); (len(got) > 0) != c.found {
				t.Errorf("findings:\n%s\nwant some: %t", details(got), c.found)
			}
		})
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

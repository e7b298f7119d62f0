package domain_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestPayRaisesThePaymentAndItsFeeAsOneJournal(t *testing.T) {
	tx, now := txAt(t, validOrder(), txPaths[1])
	tx.MarkStored(tx.Version() + 1)
	p := paymentAt(now.Add(time.Second))
	p.Fee = 199
	if err := tx.Pay(p, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	ps := tx.Postings()
	if got := postingTypes(ps); !slices.Equal(got, []domain.MovementType{domain.MovePayment, domain.MoveFee}) {
		t.Fatalf("Pay raised %v, want the payment and its fee", got)
	}
	if ps[0].Journal != "" || ps[1].Journal != ps[0].ID || ps[1].JournalID() != ps[0].JournalID() {
		t.Errorf("journals %q and %q, want the fee in the payment's (%s)", ps[0].Journal, ps[1].Journal, ps[0].ID)
	}
	if js := domain.Journals(ps); len(js) != 1 || len(js[0]) != 2 {
		t.Errorf("Journals = %v, want one of two postings", js)
	}
	implied := domain.ImpliedTransactionPostings(tx.Record())
	if len(implied) != 2 || implied[1].Journal != implied[0].ID {
		t.Errorf("the audit implies %+v, want the payment and its fee in one journal", implied)
	}
}

func TestJournalsCutPostingsIntoTheirJournalsInOrder(t *testing.T) {
	a := domain.Posting{ID: "a"}
	a2 := domain.Posting{ID: "a2", Journal: "a"}
	b := domain.Posting{ID: "b"}
	c := domain.Posting{ID: "c"}
	c2 := domain.Posting{ID: "c2", Journal: "c"}
	ids := func(js [][]domain.Posting) [][]string {
		var out [][]string
		for _, j := range js {
			var ids []string
			for _, p := range j {
				ids = append(ids, p.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   []domain.Posting
		want [][]string
	}{
		{"nothing is no journal", nil, nil},
		{"a posting alone is a journal", []domain.Posting{b}, [][]string{{"b"}}},
		{"postings naming a first one join its journal", []domain.Posting{a, a2, b, c, c2}, [][]string{{"a", "a2"}, {"b"}, {"c", "c2"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ids(domain.Journals(c.in))
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("Journals = %v, want %v", got, c.want)
			}
		})
	}
}

func TestNextJournalAppliesEveryPostingOrNone(t *testing.T) {
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	head := &domain.Entry{Posting: domain.Posting{ID: "h", AccountID: "acc"}, Seq: 7, CreatedAt: at,
		BalanceAfter: domain.LedgerBalance{Available: 100}}
	leg := func(id, journal string, typ domain.MovementType, debit, credit domain.LedgerAccount, amount domain.Cents, checked bool, when time.Time) domain.Posting {
		return domain.Posting{ID: id, Journal: journal, Type: typ, AccountID: "acc", Resource: domain.ResourceTransaction, ResourceID: "tx",
			Debit: debit, Credit: credit, Amount: amount, Checked: checked, At: when}
	}
	pay := leg("tx/2/payment", "", domain.MovePayment, domain.LedgerClearing, domain.LedgerAvailable, 1000, false, at.Add(time.Minute))
	fee := leg("tx/2/fee", pay.ID, domain.MoveFee, domain.LedgerAvailable, domain.LedgerFees, 10, false, at.Add(2*time.Minute))

	t.Run("the lines are numbered on, each applied after the one before, and dated by the first", func(t *testing.T) {
		es, err := domain.NextJournal(head, []domain.Posting{pay, fee}, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2 || es[0].Seq != 8 || es[1].Seq != 9 {
			t.Fatalf("NextJournal = %+v, want lines 8 and 9", es)
		}
		if es[0].BalanceAfter.Available != 1100 || es[1].BalanceAfter.Available != 1090 {
			t.Errorf("balances after %+v and %+v, want 1100 then 1090", es[0].BalanceAfter, es[1].BalanceAfter)
		}
		if !es[0].CreatedAt.Equal(pay.At) || !es[1].CreatedAt.Equal(pay.At) {
			t.Errorf("dated %v and %v, want both %v", es[0].CreatedAt, es[1].CreatedAt, pay.At)
		}
	})
	t.Run("a checked posting sees the postings before it in its journal", func(t *testing.T) {
		debit := leg("tx/3/x", pay.ID, domain.MoveWithdrawal, domain.LedgerAvailable, domain.LedgerPayouts, 1100, true, time.Time{})
		if _, err := domain.NextJournal(head, []domain.Posting{pay, debit}, at); err != nil {
			t.Errorf("a debit of 1100 after a payment of 1000 on 100: %v", err)
		}
	})
	t.Run("a refused posting refuses the whole journal", func(t *testing.T) {
		debit := leg("tx/3/x", pay.ID, domain.MoveWithdrawal, domain.LedgerAvailable, domain.LedgerPayouts, 1101, true, time.Time{})
		if es, err := domain.NextJournal(head, []domain.Posting{pay, debit}, at); !errors.Is(err, domain.ErrInsufficientBalance) || es != nil {
			t.Errorf("NextJournal = %v, %v; want nothing and ErrInsufficientBalance", es, err)
		}
	})
	t.Run("a journal records one resource in one ledger", func(t *testing.T) {
		other := fee
		other.AccountID = "other"
		elsewhere := fee
		elsewhere.ResourceID = "tx2"
		for _, ps := range [][]domain.Posting{nil, {pay, other}, {pay, elsewhere}} {
			if _, err := domain.NextJournal(head, ps, at); !errors.Is(err, domain.ErrInvalidPosting) {
				t.Errorf("NextJournal(%d postings) = %v, want ErrInvalidPosting", len(ps), err)
			}
		}
	})
}

func TestTheVoidsOfAJournalAreOneJournal(t *testing.T) {
	first := domain.Posting{ID: "tx/0/withdrawal", Type: domain.MoveWithdrawal, Amount: 5}
	second := domain.Posting{ID: "tx/0/other", Journal: first.ID, Amount: 5}
	if v := first.Void(); v.Journal != "" {
		t.Errorf("the void of a journal's first posting joins %q, want its own journal", v.Journal)
	}
	if v := second.Void(); v.JournalID() != first.Void().ID {
		t.Errorf("the void of a journal's second posting joins %q, want %q", v.JournalID(), first.Void().ID)
	}
}

func TestOpeningBalancesOfBothSidesAreOneJournal(t *testing.T) {
	ps := domain.OpeningBalancePostings("acc", domain.LedgerBalance{}, domain.LedgerBalance{Available: 10, Blocked: -5})
	if len(ps) != 2 || ps[0].Journal != "" || ps[1].Journal != ps[0].ID {
		t.Errorf("OpeningBalancePostings = %+v, want two postings in one journal", ps)
	}
}

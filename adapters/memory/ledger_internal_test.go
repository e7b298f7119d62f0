package memory

import (
	"strconv"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// BenchmarkApplyPaymentPostings is the ledger's share of a payment in the memory store: its two
// postings (payment and fee, one journal) numbered, checked and appended, as Transactions.Update does under
// the store's lock. BenchmarkSandboxPayPosting/pay is the whole payment path it belongs to.
func BenchmarkApplyPaymentPostings(b *testing.B) {
	s := NewStore()
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	postings := make([][]domain.Posting, b.N)
	for i := range postings {
		id := "tx-" + strconv.Itoa(i)
		postings[i] = []domain.Posting{
			{ID: id + "/2/payment", Type: domain.MovePayment, AccountID: "acc-bench", ResourceID: id,
				Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable, Amount: 10_000, At: at},
			{ID: id + "/2/fee", Journal: id + "/2/payment", Type: domain.MoveFee, AccountID: "acc-bench", ResourceID: id,
				Debit: domain.LedgerAvailable, Credit: domain.LedgerFees, Amount: 109, At: at},
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.mu.Lock()
		err := s.apply(postings[i], at)
		s.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}

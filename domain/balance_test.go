package domain_test

import (
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestBalanceRulesPerTransactionStatus(t *testing.T) {
	totals := domain.TransactionTotals{Amount: 10_000, Paid: 9_000, Fee: 300}
	for _, c := range []struct {
		status domain.TransactionStatus
		want   domain.Balance
	}{
		{domain.TxPending, domain.Balance{}},
		{domain.TxPixQRCodeGenerated, domain.Balance{Pending: 10_000}},
		{domain.TxPaid, domain.Balance{Available: 8_700}},
		{domain.TxBlocked, domain.Balance{Blocked: 8_700}},
		{domain.TxProcessingRefund, domain.Balance{Blocked: 8_700}},
		{domain.TxProcessingInfraction, domain.Balance{Blocked: 8_700}},
		{domain.TxRefunded, domain.Balance{}},
		{domain.TxInfraction, domain.Balance{}},
		{domain.TxFailed, domain.Balance{}},
	} {
		t.Run("a "+string(c.status)+" transaction counts as the rules say", func(t *testing.T) {
			b := domain.BalanceTotals{Transactions: map[domain.TransactionStatus]domain.TransactionTotals{c.status: totals}}
			if got := b.Balance(); got != c.want {
				t.Fatalf("Balance() = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestBalanceRulesPerWithdrawalStatus(t *testing.T) {
	paid := map[domain.TransactionStatus]domain.TransactionTotals{domain.TxPaid: {Amount: 10_000, Paid: 10_000, Fee: 200}}
	for _, c := range []struct {
		status    domain.WithdrawalStatus
		available domain.Cents
	}{
		{domain.WdPending, 9_800 - 3_100},
		{domain.WdProcessing, 9_800 - 3_100},
		{domain.WdProcessed, 9_800 - 3_100},
		{domain.WdCanceled, 9_800},
		{domain.WdFailed, 9_800},
		{domain.WdRejected, 9_800},
		{domain.WdRefunded, 9_800},
	} {
		t.Run("a "+string(c.status)+" withdrawal takes "+itoa(int64(9_800-c.available))+" cents", func(t *testing.T) {
			b := domain.BalanceTotals{
				Transactions: paid,
				Withdrawals:  map[domain.WithdrawalStatus]domain.WithdrawalTotals{c.status: {Amount: 3_000, Fee: 100}},
			}
			if got, want := b.Balance(), (domain.Balance{Available: c.available}); got != want {
				t.Fatalf("Balance() = %+v, want %+v", got, want)
			}
		})
	}
	t.Run("withdrawals may take the available balance below zero: blocked money does not cover them", func(t *testing.T) {
		b := domain.BalanceTotals{
			Transactions: map[domain.TransactionStatus]domain.TransactionTotals{domain.TxBlocked: {Amount: 5_000, Paid: 5_000}},
			Withdrawals:  map[domain.WithdrawalStatus]domain.WithdrawalTotals{domain.WdProcessed: {Amount: 1_000}},
		}
		if got, want := b.Balance(), (domain.Balance{Available: -1_000, Blocked: 5_000}); got != want {
			t.Fatalf("Balance() = %+v, want %+v", got, want)
		}
	})
}

func TestBalanceOfAnEmptyAccountIsZero(t *testing.T) {
	var b domain.BalanceTotals
	if got := b.Balance(); got != (domain.Balance{}) {
		t.Fatalf("Balance() = %+v", got)
	}
}

func TestBalanceTotalsAddAggregates(t *testing.T) {
	var b domain.BalanceTotals // zero value: the maps are made on first use
	now := base
	for _, path := range txPaths {
		tx, _ := txAt(t, validOrder(), path) // amount 10000, paid 10000, fee 199
		b.AddTransaction(tx)
	}
	payout := validPayout() // 5000 + 150
	for _, path := range wdPaths {
		w, _ := wdAt(t, payout, path)
		b.AddWithdrawal(w)
	}
	// Paid statuses among txPaths: PAID x3 (available), PROCESSING_REFUND, BLOCKED,
	// PROCESSING_INFRACTION (blocked); one PIX_QRCODE_GENERATED (pending). Withdrawals holding
	// money: PENDING, PROCESSING, PROCESSED.
	want := domain.Balance{
		Available: 3*(10_000-199) - 3*(5_000+150),
		Blocked:   3 * (10_000 - 199),
		Pending:   10_000,
	}
	if got := b.Balance(); got != want {
		t.Fatalf("Balance() = %+v, want %+v", got, want)
	}
	if got := b.Transactions[domain.TxPaid]; got != (domain.TransactionTotals{Amount: 30_000, Paid: 30_000, Fee: 597}) {
		t.Fatalf("PAID totals %+v", got)
	}
	if got := b.Transactions[domain.TxPending]; got != (domain.TransactionTotals{Amount: 10_000}) {
		t.Fatalf("PENDING totals %+v", got)
	}
	if got := b.Withdrawals[domain.WdProcessed]; got != (domain.WithdrawalTotals{Amount: 5_000, Fee: 150}) {
		t.Fatalf("PROCESSED totals %+v", got)
	}

	t.Run("a PAID transaction counts what was paid, not what was ordered", func(t *testing.T) {
		tx, _ := txAt(t, validOrder(), txPaths[1])
		p := paymentAt(now)
		p.AmountPaid, p.Fee = 9_000, 90
		if err := tx.Pay(p, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		var one domain.BalanceTotals
		one.AddTransaction(tx)
		if got := one.Balance(); got != (domain.Balance{Available: 8_910}) {
			t.Fatalf("Balance() = %+v", got)
		}
	})
}

package moneycheck_test

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/test/moneycheck"
)

// ms is a point of a test history, in milliseconds since its start.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func read(client, from, to int, available, blocked domain.Cents) moneycheck.Op {
	return moneycheck.Op{Client: client, Account: "A", Kind: moneycheck.KindReadBalance, Call: ms(from), Return: ms(to),
		Outcome: moneycheck.Applied, Balance: domain.LedgerBalance{Available: available, Blocked: blocked}}
}

func payment(client, from, to int, net domain.Cents) moneycheck.Op {
	return moneycheck.Op{Client: client, Account: "A", Kind: moneycheck.KindPayment, Call: ms(from), Return: ms(to),
		Outcome: moneycheck.Applied, Delta: domain.LedgerBalance{Available: net}}
}

func withdraw(client, from, to int, total domain.Cents, outcome moneycheck.Outcome) moneycheck.Op {
	return moneycheck.Op{Client: client, Account: "A", Kind: moneycheck.KindWithdraw, Call: ms(from), Return: ms(to),
		Outcome: outcome, Delta: domain.LedgerBalance{Available: -total}, Checked: true}
}

func disputeHold(client, from, to int, held domain.Cents) moneycheck.Op {
	return moneycheck.Op{Client: client, Account: "A", Kind: moneycheck.KindDisputeOpen, Call: ms(from), Return: ms(to),
		Outcome: moneycheck.Applied, Delta: domain.LedgerBalance{Available: -held, Blocked: held}}
}

func onAccount(op moneycheck.Op, account string) moneycheck.Op {
	op.Account = account
	return op
}

func TestModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		history []moneycheck.Op
		want    porcupine.CheckResult
	}{
		{"a read of a payment without its fee fits no order", []moneycheck.Op{
			payment(0, 0, 10, 97_960), // 1,000.00 less a fee of 20.40
			read(1, 2, 3, 100_000, 0),
		}, porcupine.Illegal},
		{"a withdrawal only a payment without its fee covers fits no order", []moneycheck.Op{
			payment(0, 0, 10, 97_960),
			withdraw(1, 2, 3, 100_000, moneycheck.Applied),
		}, porcupine.Illegal},
		{"two withdrawals of the same money fit no order", []moneycheck.Op{
			payment(0, 0, 1, 100),
			withdraw(1, 2, 3, 100, moneycheck.Applied),
			withdraw(2, 2, 3, 100, moneycheck.Applied),
		}, porcupine.Illegal},
		{"a payment lost to another fits no order", []moneycheck.Op{
			payment(0, 0, 1, 100),
			payment(1, 2, 3, 50),
			read(2, 4, 5, 100, 0),
		}, porcupine.Illegal},
		{"a withdrawal refused while available covered it fits no order", []moneycheck.Op{
			payment(0, 0, 1, 100),
			withdraw(1, 2, 3, 50, moneycheck.Refused),
		}, porcupine.Illegal},
		{"a read that goes back to a state before an operation that ended fits no order", []moneycheck.Op{
			payment(0, 0, 1, 100),
			read(1, 2, 3, 100, 0),
			withdraw(0, 4, 5, 60, moneycheck.Applied),
			read(1, 6, 7, 100, 0),
		}, porcupine.Illegal},
		{"concurrent payments, debits and reads fit the order the reads show", []moneycheck.Op{
			payment(0, 0, 10, 100),
			withdraw(1, 1, 11, 100, moneycheck.Applied), // concurrent with the payment: after it
			withdraw(2, 1, 3, 100, moneycheck.Refused),  // before the payment
			read(3, 2, 4, 0, 0),
			read(3, 5, 12, 100, 0),
			read(3, 13, 14, 0, 0),
		}, porcupine.Ok},
		{"a MED hold may take available below zero, and a debit is then refused", []moneycheck.Op{
			payment(0, 0, 1, 100),
			withdraw(1, 2, 3, 80, moneycheck.Applied),
			disputeHold(0, 4, 5, 100),
			read(2, 6, 7, -80, 100),
			withdraw(1, 8, 9, 1, moneycheck.Refused),
		}, porcupine.Ok},
		{"accounts are judged apart", []moneycheck.Op{
			payment(0, 0, 1, 100),
			onAccount(payment(1, 0, 1, 7), "B"),
			read(2, 2, 3, 100, 0),
			onAccount(read(3, 2, 3, 7, 0), "B"),
		}, porcupine.Ok},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for i := range c.history {
				c.history[i].ID = i
			}
			if got := porcupine.CheckOperationsTimeout(moneycheck.Model(), moneycheck.Operations(c.history), 10*time.Second); got != c.want {
				t.Errorf("porcupine says %s, want %s", got, c.want)
			}
		})
	}
}

func TestOperationsLeaveOutWhatMovesNoMoney(t *testing.T) {
	t.Parallel()
	history := []moneycheck.Op{
		{Account: "A", Kind: moneycheck.KindCharge, Outcome: moneycheck.Applied},
		{Account: "A", Kind: moneycheck.KindPayment, Outcome: moneycheck.NoEffect},
		{Account: "A", Kind: moneycheck.KindDisputeAccept, Outcome: moneycheck.Applied},
		{Account: "A", Kind: moneycheck.KindReadBalance, Outcome: moneycheck.Failed},
		withdraw(0, 0, 1, 10, moneycheck.Refused),
		payment(0, 2, 3, 10),
		read(0, 4, 5, 10, 0),
	}
	if got := moneycheck.Operations(history); len(got) != 3 {
		t.Errorf("Operations kept %d operations, want 3 (the refused withdrawal, the payment and the read): %v", len(got), got)
	}
}

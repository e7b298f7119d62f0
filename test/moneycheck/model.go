package moneycheck

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/pixgate/pixgate/domain"
)

// Call is what an operation asks of one merchant account, as the model sees it: a read of the
// balance, or a movement of Delta, checked or not.
type Call struct {
	Account string
	Read    bool
	Delta   domain.LedgerBalance
	Checked bool
	Label   string // the operation, for the drawing
}

// Answer is what the operation answered: the balance a read saw, or the movement's outcome
// (Applied, Refused or NoEffect).
type Answer struct {
	Balance domain.LedgerBalance
	Outcome Outcome
}

// Model is the sequential specification of one merchant account, partitioned by account: its
// state is what available and blocked hold, starting empty. A read answers the state. A movement
// that applied changes the state by its delta, and if it is checked (a withdrawal, a refund's
// hold), it may apply only where available covers it; a checked movement refused must have
// found available short. Unchecked movements (a payment net of its fee, a refund completed or
// failed, a MED hold, release or debit, a withdrawal coming back) always apply.
//
// A payment is one step of the model, net of its fee: a store that lets a read or a debit in
// between its payment and its fee shows a state the model never reaches, or lets a debit pass
// that the model would refuse, and the history is not linearizable. So is a history where a
// debit spends money it did not have (the model refuses it) and one where an update is lost
// (the reads after it disagree with every order of the operations).
func Model() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByAccount,
		Init:      func() any { return domain.LedgerBalance{} },
		Step:      step,
		Hash: func(state any) uint64 {
			s := state.(domain.LedgerBalance)
			return uint64(s.Available)*0x9E3779B97F4A7C15 ^ uint64(s.Blocked)
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(Call), output.(Answer)
			if in.Read {
				return fmt.Sprintf("read → %s", describeBalance(out.Balance))
			}
			check := ""
			if in.Checked {
				check = " checked"
			}
			return fmt.Sprintf("%s (%+d, %+d%s) → %s", in.Label, in.Delta.Available, in.Delta.Blocked, check, out.Outcome)
		},
		DescribeState: func(state any) string { return describeBalance(state.(domain.LedgerBalance)) },
	}
}

func step(state, input, output any) (bool, any) {
	s, in, out := state.(domain.LedgerBalance), input.(Call), output.(Answer)
	if in.Read {
		return out.Balance == s, s
	}
	next := domain.LedgerBalance{Available: s.Available + in.Delta.Available, Blocked: s.Blocked + in.Delta.Blocked}
	covered := !in.Checked || next.Available >= 0
	switch out.Outcome {
	case Applied:
		return covered, next
	case Refused:
		return !covered, s
	}
	return true, s
}

func partitionByAccount(history []porcupine.Operation) [][]porcupine.Operation {
	var order []string
	parts := map[string][]porcupine.Operation{}
	for _, op := range history {
		a := op.Input.(Call).Account
		if _, ok := parts[a]; !ok {
			order = append(order, a)
		}
		parts[a] = append(parts[a], op)
	}
	out := make([][]porcupine.Operation, 0, len(order))
	for _, a := range order {
		out = append(out, parts[a])
	}
	return out
}

// Operations turns the history's reads and movements of money into porcupine's operations for
// Model. Operations that moved nothing of the merchant's (a callback delivered again, a late
// payment, a charge) are left out: they cannot make a history more or less linearizable.
func Operations(ops []Op) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if !op.movesMoney() {
			continue
		}
		in := Call{Account: op.Account, Read: op.Kind == KindReadBalance, Delta: op.Delta, Checked: op.Checked,
			Label: fmt.Sprintf("#%d %s", op.ID, op.Kind)}
		out = append(out, porcupine.Operation{
			ClientId: op.Client, Input: in, Output: Answer{Balance: op.Balance, Outcome: op.Outcome},
			Call: int64(op.Call), Return: int64(op.Return),
		})
	}
	return out
}

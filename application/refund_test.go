package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func TestRefundAsksTheAcquirerWithTheRefundID(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxPaid)
	out, err := w.refund.Execute(context.Background(), w.merchant, id, application.RefundInput{Amount: 2345, Reason: "troca"})
	if err != nil {
		t.Fatal(err)
	}
	tx := out.Transaction
	if out.Replayed || tx.Status() != domain.TxProcessingRefund || len(tx.Refunds()) != 1 {
		t.Fatalf("answer %s with %d refunds (replayed %v)", tx.Status(), len(tx.Refunds()), out.Replayed)
	}
	r := tx.Refunds()[0]
	if len(r.ID) < 1 || len(r.ID) > 35 || r.Amount != 2345 || r.Reason != "troca" {
		t.Fatalf("refund %+v", r)
	}
	asked := w.devolver.asked
	if len(asked) != 1 || asked[0].ID != r.ID || asked[0].Amount != 2345 || asked[0].EndToEndID != tx.EndToEnd() || asked[0].Kind != ports.DevolutionRefund {
		t.Fatalf("devolutions asked %+v, want the refund's id, amount and payment", asked)
	}
}

func TestRefundSettledAtOnceByTheAcquirer(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer ports.DevolutionResult
		status domain.TransactionStatus
		refund domain.RefundStatus
	}{
		{"DEVOLVIDO completes it", ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: lcRtrID}, domain.TxRefunded, domain.RefundRefunded},
		{"NAO_REALIZADO fails it", ports.DevolutionResult{Status: ports.DevolutionNotDone, Reason: "conta encerrada"}, domain.TxPaid, domain.RefundFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newLcWorld(t)
			w.devolver.answer = c.answer
			id := w.reach(t, domain.TxPaid)
			out, err := w.refund.Execute(context.Background(), w.merchant, id, application.RefundInput{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Transaction.Status() != domain.TxProcessingRefund {
				t.Errorf("the answer is %s, want the transaction as the request left it", out.Transaction.Status())
			}
			stored := w.repo.stored(id)
			if stored.Status() != c.status || stored.Refunds()[0].Status != c.refund {
				t.Fatalf("stored %s with refund %s, want %s and %s", stored.Status(), stored.Refunds()[0].Status, c.status, c.refund)
			}
		})
	}
}

func TestRefundAcquirerFailureLeavesTheRefundProcessingAndItsDevolutionDue(t *testing.T) {
	w := newLcWorld(t)
	w.devolver.err = errors.New("acquirer down")
	var reported []error
	refund := application.NewRefundTransaction(w.repo, w.devolutions, &fakeIDs{}, w.clock, func(err error) { reported = append(reported, err) })
	id := w.reach(t, domain.TxPaid)
	if _, err := refund.Execute(context.Background(), w.merchant, id, application.RefundInput{}); err != nil {
		t.Fatalf("the refund failed with the acquirer: %v; it is stored and its devolution sent by the outbox", err)
	}
	stored := w.repo.stored(id)
	r, _ := stored.RefundInProgress()
	if stored.Status() != domain.TxProcessingRefund || len(reported) != 0 || len(w.reports) != 1 || w.reports[0].Level != application.DevolutionWarn {
		t.Fatalf("stored %s, %d store reports, outbox reports %+v; want PROCESSING_REFUND and the unknown outcome reported by the outbox", stored.Status(), len(reported), w.reports)
	}
	if r.Dispatch.Claims != 1 || r.Dispatch.Due == nil || !r.Dispatch.Due.After(w.clock.Now()) {
		t.Fatalf("the devolution stands %+v; want claimed once and due again later", r.Dispatch)
	}
}

func TestRefundIdempotency(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxPaid)
	in := application.RefundInput{Amount: 1000, IdempotencyKey: "refund-1", Fingerprint: "fp-1"}
	first, err := w.refund.Execute(context.Background(), w.merchant, id, in)
	if err != nil {
		t.Fatal(err)
	}
	// The refund completes and another starts: a replay still answers the first answer.
	w.clock.Advance(lcSettle)
	if err := lcSettleNow(w, id); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund.Execute(context.Background(), w.merchant, id, application.RefundInput{Amount: 500}); err != nil {
		t.Fatal(err)
	}
	again, err := w.refund.Execute(context.Background(), w.merchant, id, in)
	if err != nil || !again.Replayed {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	a, b := first.Transaction.Record(), again.Transaction.Record()
	if a.Status != b.Status || len(a.History) != len(b.History) || len(b.Refunds) != 1 || b.Refunds[0].Status != domain.RefundProcessing {
		t.Fatalf("replay answered %s with %d refunds, want the first answer (%s, 1 refund processing)", b.Status, len(b.Refunds), a.Status)
	}
	if got := len(w.repo.stored(id).Refunds()); got != 2 {
		t.Fatalf("%d refunds stored, want 2: a replay refunds nothing", got)
	}
	in.Fingerprint = "fp-other"
	if _, err := w.refund.Execute(context.Background(), w.merchant, id, in); !errors.Is(err, application.ErrIdempotencyKeyReused) {
		t.Fatalf("the key with another request: %v, want ErrIdempotencyKeyReused", err)
	}
}

func TestRefundOfAnotherAccountsTransactionIsNotFound(t *testing.T) {
	w := newLcWorld(t)
	id := w.reach(t, domain.TxPaid)
	other := domain.Principal{AccountID: "acct-someone-else", Scopes: domain.AllScopes()}
	for _, in := range []application.RefundInput{{}, {IdempotencyKey: "k", Fingerprint: "f"}} {
		if _, err := w.refund.Execute(context.Background(), other, id, in); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("refund with %+v: %v, want ErrNotFound", in, err)
		}
	}
	if got := w.repo.stored(id).Status(); got != domain.TxPaid {
		t.Fatalf("the owner's transaction is %s", got)
	}
}

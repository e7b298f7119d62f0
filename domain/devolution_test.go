package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestARefundIsRecordedWithItsDevolutionDueAndClaimedOneStepAtATime(t *testing.T) {
	tx, now := paidTx(t)
	if err := tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 1000}, now); err != nil {
		t.Fatal(err)
	}
	if due := tx.DevolutionDue(); due == nil || !due.Equal(now.UTC().Truncate(time.Millisecond)) {
		t.Fatalf("a new refund's devolution is due %v; want at once", due)
	}
	r, step, err := tx.ClaimDevolution(now, now.Add(time.Minute))
	if err != nil || step != domain.DevolutionSend || r.ID != "R1" || r.Dispatch.Claims != 1 {
		t.Fatalf("the first claim: %+v, %s, %v; want R1 sent, one claim", r, step, err)
	}
	if _, _, err := tx.ClaimDevolution(now.Add(59*time.Second), now.Add(2*time.Minute)); !errors.Is(err, domain.ErrDevolutionNotDue) {
		t.Fatalf("a claim while another holds it: %v; want ErrDevolutionNotDue", err)
	}
	if _, step, err := tx.ClaimDevolution(now.Add(time.Minute), now.Add(2*time.Minute)); err != nil || step != domain.DevolutionReadBack {
		t.Fatalf("a claim once the first ran out: %s, %v; want a read back", step, err)
	}
	if !tx.ScheduleDevolution("R1", now.Add(time.Hour)) || !tx.DevolutionDue().Equal(now.Add(time.Hour).UTC().Truncate(time.Millisecond)) {
		t.Fatalf("scheduled, the devolution is due %v", tx.DevolutionDue())
	}
	if err := tx.ConfirmRefund("R1", "D1", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if tx.DevolutionDue() != nil || tx.Refunds()[0].Dispatch.Due != nil || tx.ScheduleDevolution("R1", now) {
		t.Fatalf("a completed refund's devolution is due %v", tx.Refunds()[0].Dispatch.Due)
	}
	if _, _, err := tx.ClaimDevolution(now.Add(time.Hour), now.Add(2*time.Hour)); !errors.Is(err, domain.ErrDevolutionNotDue) {
		t.Fatalf("a claim with no refund in progress: %v; want ErrDevolutionNotDue", err)
	}
}

func TestAFailedRefundLeavesNothingDue(t *testing.T) {
	tx, now := paidTx(t)
	_ = tx.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 1000}, now)
	if err := tx.FailRefund("R1", "no", now); err != nil {
		t.Fatal(err)
	}
	if tx.DevolutionDue() != nil {
		t.Fatalf("a failed refund's devolution is due %v", tx.DevolutionDue())
	}
}

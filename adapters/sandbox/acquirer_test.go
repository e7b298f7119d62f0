package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/ports"
)

type fixedClock struct{ at time.Time }

func (c fixedClock) Now() time.Time { return c.at }

var at = time.Date(2026, 11, 22, 12, 34, 56, 0, time.UTC)

// rtrID is Banco Central's end-to-end id of a devolution by the sandbox participant.
var rtrID = regexp.MustCompile(`^D99999999202611221234[A-Za-z0-9]{11}$`)

func devolution(id string, kind ports.DevolutionKind) ports.Devolution {
	return ports.Devolution{EndToEndID: "E12345678202611221200abcdefghijk", ID: id, Amount: 1000, Kind: kind}
}

func TestARefundIsInProgressUntilTheSettleJobCompletesIt(t *testing.T) {
	a := sandbox.NewAcquirer(fixedClock{at})
	res, err := a.RequestDevolution(context.Background(), devolution("r1", ports.DevolutionRefund))
	if err != nil || res.Status != ports.DevolutionInProgress || res.ReturnID != "" {
		t.Fatalf("got %+v, %v; want EM_PROCESSAMENTO without rtrId", res, err)
	}
}

func TestALatePaymentIsReturnedAtOnceWithAnRtrID(t *testing.T) {
	a := sandbox.NewAcquirer(fixedClock{at})
	res, err := a.RequestDevolution(context.Background(), devolution("L1", ports.DevolutionLatePayment))
	if err != nil || res.Status != ports.DevolutionReturned || !rtrID.MatchString(res.ReturnID) {
		t.Fatalf("got %+v, %v; want DEVOLVIDO with an rtrId like %s", res, err, rtrID)
	}
}

func TestAnIDUsedBeforeIsRefusedAndTheFirstAnswerIsReadBack(t *testing.T) {
	a := sandbox.NewAcquirer(fixedClock{at})
	ctx := context.Background()
	first, err := a.RequestDevolution(ctx, devolution("L1", ports.DevolutionLatePayment))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = a.RequestDevolution(ctx, devolution("L1", ports.DevolutionLatePayment)) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, ports.ErrDevolutionRefused) {
			t.Fatalf("a second request of L1 answered %v; want ErrDevolutionRefused", err)
		}
	}
	if got, err := a.Devolution(ctx, devolution("L1", "").EndToEndID, "L1"); err != nil || got != first {
		t.Fatalf("read back %+v, %v; want %+v", got, err, first)
	}
	other, _ := a.RequestDevolution(ctx, devolution("L2", ports.DevolutionLatePayment))
	if other.ReturnID == first.ReturnID {
		t.Fatalf("two devolutions share the rtrId %s", other.ReturnID)
	}
	if _, err := a.Devolution(ctx, devolution("L3", "").EndToEndID, "L3"); !errors.Is(err, ports.ErrDevolutionNotFound) {
		t.Fatalf("reading back a devolution never asked answered %v; want ErrDevolutionNotFound", err)
	}
}

func TestMemoryIsBounded(t *testing.T) {
	a := sandbox.NewAcquirer(fixedClock{at})
	ctx := context.Background()
	if _, err := a.RequestDevolution(ctx, devolution("L0", ports.DevolutionLatePayment)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10_000; i++ {
		if _, err := a.RequestDevolution(ctx, devolution(fmt.Sprintf("L%d", i), ports.DevolutionLatePayment)); err != nil {
			t.Fatal(err)
		}
	}
	// The oldest is forgotten: read back, it was never made, and asking again makes it.
	e2e := devolution("L0", "").EndToEndID
	if _, err := a.Devolution(ctx, e2e, "L0"); !errors.Is(err, ports.ErrDevolutionNotFound) {
		t.Fatalf("after 10,000 others, reading L0 back answered %v; want ErrDevolutionNotFound", err)
	}
	again, err := a.RequestDevolution(ctx, devolution("L0", ports.DevolutionLatePayment))
	if err != nil || !rtrID.MatchString(again.ReturnID) {
		t.Fatalf("after 10,000 others, L0 answered %+v, %v", again, err)
	}
}

func TestADevolutionAPIPixWouldRefuseIsAnError(t *testing.T) {
	a := sandbox.NewAcquirer(fixedClock{at})
	for name, d := range map[string]ports.Devolution{
		"no payment":        {ID: "r1", Amount: 1, Kind: ports.DevolutionRefund},
		"an empty id":       {EndToEndID: "E1", Amount: 1, Kind: ports.DevolutionRefund},
		"an id of 36":       {EndToEndID: "E1", ID: "123456789012345678901234567890123456", Amount: 1},
		"an id with a dash": {EndToEndID: "E1", ID: "a-b", Amount: 1},
		"no amount":         {EndToEndID: "E1", ID: "r1", Kind: ports.DevolutionLatePayment},
		"a negative amount": {EndToEndID: "E1", ID: "r1", Amount: -5},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := a.RequestDevolution(context.Background(), d); !errors.Is(err, ports.ErrDevolutionRefused) {
				t.Fatalf("%+v answered %v; want ErrDevolutionRefused", d, err)
			}
		})
	}
}

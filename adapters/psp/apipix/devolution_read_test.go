package apipix_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/ports"
)

func TestADevolutionIsReadBackWithAGET(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	e2e := paidPix(t, p, c, "10.00")
	if _, err := c.Devolution(context.Background(), e2e, "r1"); !errors.Is(err, ports.ErrDevolutionNotFound) {
		t.Fatalf("reading back a devolution never asked: %v, want ErrDevolutionNotFound", err)
	}
	if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Devolution(context.Background(), e2e, "r1"); err != nil || got.Status != ports.DevolutionInProgress {
		t.Fatalf("read back %+v, %v; want EM_PROCESSAMENTO", got, err)
	}
	if err := p.SettleDevolution(e2e, "r1", psptest.DevolutionReturned, ""); err != nil {
		t.Fatal(err)
	}
	d, _ := p.Devolution(e2e, "r1")
	if got, err := c.Devolution(context.Background(), e2e, "r1"); err != nil || got.Status != ports.DevolutionReturned || got.ReturnID != d.RtrID {
		t.Fatalf("read back %+v, %v; want DEVOLVIDO with rtrId %s", got, err, d.RtrID)
	}
	if p.Requests(psptest.OpDevolutionGet) != 3 {
		t.Fatalf("%d GETs", p.Requests(psptest.OpDevolutionGet))
	}
}

func TestAReadBackThePSPCannotAnswerIsAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 403, 500, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			c := newClient(t, p, nil)
			e2e := paidPix(t, p, c, "10.00")
			p.Inject(psptest.Fault{Status: status, RetryAfter: "0"}.On(psptest.OpDevolutionGet), -1)
			_, err := c.Devolution(context.Background(), e2e, "r1")
			if err == nil || errors.Is(err, ports.ErrDevolutionNotFound) || errors.Is(err, ports.ErrDevolutionRefused) {
				t.Fatalf("%d: %v; want an unknown outcome", status, err)
			}
		})
	}
}

func TestARefusedPUTCarriesThePSPsReasonAndAnUnknownOneIsNoRefusal(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	e2e := paidPix(t, p, c, "10.00")
	big := refund(e2e, "")
	big.Amount = 2000
	_, err := c.RequestDevolution(context.Background(), big)
	var re *ports.DevolutionRefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "Devolução inválida") {
		t.Fatalf("a devolution above the payment: %v; want the PSP's refusal with its reason", err)
	}
	p.Inject(psptest.Unavailable("").On(psptest.OpDevolutionPut), 1)
	if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err == nil || errors.Is(err, ports.ErrDevolutionRefused) {
		t.Fatalf("a 503: %v; want an unknown outcome", err)
	}
}

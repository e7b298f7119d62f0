package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/domain"
)

// Withdrawals paid out through Efí, as `serve` wires PIXGATE_PAYOUT_PROVIDER=efi: the fake Efí
// (client certificates required, tokens that expire) on real HTTPS, the memory store, money
// from the acquirer's callback. Helpers here start with "po".

// poEnv is pixgate in production mode paying out through e, on a clock the tests move (the
// outbox's read backs are due by it). The transport's settings come from their
// PIXGATE_ACQUIRER_* namesakes, as an operator whose one PSP does both sets them.
func poEnv(t *testing.T, e *efitest.Efi) *env {
	t.Helper()
	return acqEnvWith(t, map[string]string{
		"PIXGATE_SANDBOX": "false", "PIXGATE_FEE_BASIS_POINTS": "0", "PIXGATE_WITHDRAWAL_FEE_CENTS": "150",
		"PIXGATE_PIX_KEY":              e.Chave,
		"PIXGATE_PAYOUT_PROVIDER":      "efi",
		"PIXGATE_PAYOUT_API_URL":       e.URL,
		"PIXGATE_PAYOUT_CHECK_SECONDS": "1",
		"PIXGATE_PAYOUT_TOKEN_REQUEST": "json",
		"PIXGATE_ACQUIRER_CLIENT_ID":   e.ClientID, "PIXGATE_ACQUIRER_CLIENT_SECRET": e.ClientSecret,
		"PIXGATE_ACQUIRER_CERT_FILE": e.Client.CertFile, "PIXGATE_ACQUIRER_KEY_FILE": e.Client.KeyFile,
		"PIXGATE_PAYOUT_API_CA_FILE": e.CA.CertFile,
	}, func(a *app) { a.clock = &fakeClock{} })
}

// poStep is how far the clock moves between two runs of the payout outbox: the server runs it
// every second, and read backs are due a second apart (PIXGATE_PAYOUT_CHECK_SECONDS).
const poStep = 250 * time.Millisecond

// poAdvance moves the clock of an env of poEnv on by d.
func (e *env) poAdvance(d time.Duration) {
	e.t.Helper()
	clock, ok := e.app.clock.(*fakeClock)
	if !ok {
		e.t.Fatalf("the app runs on %T, not the clock of poEnv", e.app.clock)
	}
	clock.Advance(d)
}

// poFunded is an account with funds charges of 10.00, paid through the acquirer's callback.
func (e *env) poFunded(charges int) string {
	e.t.Helper()
	_, tok := e.account()
	for range charges {
		e.dvPaid(tok)
	}
	return tok
}

func (e *env) poWithdraw(tok string, amount int64, key string) string {
	e.t.Helper()
	r := e.do("POST", "/withdrawal", tok, map[string]any{"amount": amount, "pixKey": map[string]any{"key": key, "type": "EMAIL"}})
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /withdrawal: %d %s", r.status, r.body)
	}
	w := r.json(e.t)
	if w["status"] != "PENDING" {
		e.t.Fatalf("created %v, want PENDING until the outbox sends it", w["status"])
	}
	return w["id"].(string)
}

func (e *env) poGet(tok, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/withdrawal/"+id, tok, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET /withdrawal/%s: %d %s", id, r.status, r.body)
	}
	return r.json(e.t)
}

// poRunUntil runs the payout outbox, moving the clock on by poStep between runs, until the
// withdrawal is in status (120 runs, 30 s of the clock, at most: read backs are a second
// apart).
func (e *env) poRunUntil(tok, id, status string) map[string]any {
	e.t.Helper()
	for run := 0; ; run++ {
		if _, err := e.app.payouts.RunOnce(context.Background()); err != nil {
			e.t.Fatalf("the payout outbox: %v", err)
		}
		w := e.poGet(tok, id)
		if w["status"] == status {
			return w
		}
		if run == 120 {
			e.t.Fatalf("withdrawal %s still %v after 30 s, want %s", id, w["status"], status)
		}
		e.poAdvance(poStep)
	}
}

// poStatuses is the withdrawal's statusHistory, as statuses.
func poStatuses(w map[string]any) []string {
	var out []string
	for _, h := range w["statusHistory"].([]any) {
		out = append(out, h.(map[string]any)["status"].(string))
	}
	return out
}

func TestAWithdrawalIsPaidOutThroughEfi(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	if got := e.wdBalance(tok)[0]; got != 1000-550 {
		t.Fatalf("available %d after the withdrawal, want %d", got, 1000-550)
	}
	w := e.poRunUntil(tok, id, "PROCESSED")
	made, ok := psp.Payout(domain.PayoutID(id))
	if !ok || made.Amount != 400 || made.Key != "maria@example.com" || made.Payer != psp.Chave {
		t.Fatalf("Efí holds %+v, want 4.00 from pixgate's key to maria@example.com", made)
	}
	if w["endToEnd"] != made.EndToEndID || w["amountWithdrawn"] != float64(400) || w["processedDate"] == nil ||
		!slices.Equal(poStatuses(w), []string{"PENDING", "PROCESSING", "PROCESSED"}) {
		t.Fatalf("withdrawal %v, want PROCESSED with Efí's endToEndId %s", w, made.EndToEndID)
	}
	if n, puts := len(psp.Payouts()), psp.Puts(made.IDEnvio); n != 1 || puts != 1 {
		t.Fatalf("%d payouts after %d PUTs, want 1 after 1", n, puts)
	}
	if got := e.wdBalance(tok)[0]; got != 1000-550 {
		t.Fatalf("available %d once paid out, want %d", got, 1000-550)
	}
	e.dvVerify()
}

func TestAWithdrawalEfiRefusesFailsAndTheBalanceComesBackExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		steer  func(p *efitest.Efi)
		reason string
	}{
		{"a key that does not exist", func(p *efitest.Efi) { p.Steer("ghost@example.com", efitest.Refused) }, "chave_invalida"},
		{"too little money at the PSP", func(p *efitest.Efi) { p.SetBalance(100) }, "saldo_insuficiente"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			psp := efitest.New(t, efitest.Config{})
			c.steer(psp)
			e := poEnv(t, psp)
			tok := e.poFunded(1)
			before := e.wdBalance(tok)
			id := e.poWithdraw(tok, 400, "ghost@example.com")
			w := e.poRunUntil(tok, id, "FAILED")
			if msg, _ := w["errorMessage"].(string); !strings.Contains(msg, c.reason) ||
				!slices.Equal(poStatuses(w), []string{"PENDING", "FAILED"}) {
				t.Fatalf("withdrawal %v, want PENDING → FAILED with Efí's reason %s", w, c.reason)
			}
			if after := e.wdBalance(tok); after != before {
				t.Fatalf("balance %v after the refusal, want %v exactly", after, before)
			}
			r := e.do("GET", "/balance/entries?type=withdrawal_reversal", tok, nil)
			var found bool
			for _, entry := range r.json(t)["data"].([]any) {
				m := entry.(map[string]any)
				found = found || m["resourceId"] == id && m["available"] == float64(550)
			}
			if r.status != http.StatusOK || !found {
				t.Fatalf("the statement shows no reversal of %s: %s", id, r.body)
			}
			if n := len(psp.Payouts()); n != 0 {
				t.Fatalf("%d payouts made", n)
			}
			e.dvVerify()
		})
	}
}

func TestAWithdrawalEfiCouldNotMakeFailsWithItsReason(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	psp.Steer("closed@example.com", efitest.NotProcessed)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "closed@example.com")
	w := e.poRunUntil(tok, id, "FAILED")
	if msg, _ := w["errorMessage"].(string); !strings.Contains(msg, efitest.NotDoneReason) ||
		!slices.Equal(poStatuses(w), []string{"PENDING", "PROCESSING", "FAILED"}) {
		t.Fatalf("withdrawal %v, want PROCESSING → FAILED with Efí's reason", w)
	}
	if got := e.wdBalance(tok)[0]; got != 1000 {
		t.Fatalf("available %d, want 1000", got)
	}
	e.dvVerify()
}

func TestEfiDownThenBackGetsThePayoutOnce(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	psp.Inject(psptest.Unavailable("").On(efitest.OpPayoutPut), -1)
	psp.Inject(psptest.Unavailable("").On(efitest.OpPayoutGet), -1)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	if _, err := e.app.payouts.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := e.poGet(tok, id); w["status"] != "PENDING" {
		t.Fatalf("%v while Efí is down, want PENDING", w["status"])
	}
	problemOf(t, e.do("POST", "/withdrawal/"+id+"/cancel", tok, nil), http.StatusConflict, "invalid_transition")
	if !strings.Contains(e.log.String(), "outcome is unknown") {
		t.Fatalf("the unknown outcome is not logged:\n%s", e.log.String())
	}
	psp.ClearFaults()
	e.poRunUntil(tok, id, "PROCESSED")
	if n, puts := len(psp.Payouts()), psp.Puts(domain.PayoutID(id)); n != 1 || puts != 1 {
		t.Fatalf("%d payouts after %d PUTs reached Efí, want 1 after 1", n, puts)
	}
	e.dvVerify()
}

func TestAPayoutWhoseAnswerWasLostIsReadBackNotPaidTwice(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	// Efí makes the payout and the answer is lost, every time the transport tries.
	psp.Inject(psptest.HangUp().On(efitest.OpPayoutPut).AfterApplying(), 8)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	w := e.poRunUntil(tok, id, "PROCESSED")
	if n := len(psp.Payouts()); n != 1 || !slices.Equal(poStatuses(w), []string{"PENDING", "PROCESSING", "PROCESSED"}) {
		t.Fatalf("%d payouts, history %v; want one payout, PROCESSED", n, poStatuses(w))
	}
	e.dvVerify()
}

func TestAStatusPixgateDoesNotKnowIsLoggedAndReadBackLater(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	psp.Steer("odd@example.com", efitest.StaysUnknown)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "odd@example.com")
	for range 3 {
		if _, err := e.app.payouts.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.poAdvance(400 * time.Millisecond) // a read back is due a second after the last
	}
	if w := e.poGet(tok, id); w["status"] != "PENDING" {
		t.Fatalf("%v after a status pixgate does not know, want PENDING (not guessed)", w["status"])
	}
	if log := e.log.String(); !strings.Contains(log, efitest.Unknown) || !strings.Contains(log, `"level":"WARN"`) {
		t.Fatalf("the unknown status is not logged:\n%s", log)
	}
	if err := psp.Settle(domain.PayoutID(id), efitest.Done, ""); err != nil {
		t.Fatal(err)
	}
	e.poRunUntil(tok, id, "PROCESSED")
	e.dvVerify()
}

// TestACancelRacingTheSendEndsOneWay races POST /withdrawal/{id}/cancel against the outbox,
// many times: a canceled withdrawal never has a payout at Efí, and a withdrawal whose cancel
// was refused has exactly one.
func TestACancelRacingTheSendEndsOneWay(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	psp.SteerOthers(efitest.StaysProcessing)
	e := poEnv(t, psp)
	const rounds = 25
	tok := e.poFunded(7) // 25 withdrawals of 1.00 and a fee of 1.50
	outcomes := map[int]int{}
	for round := range rounds {
		id := e.poWithdraw(tok, 100, fmt.Sprintf("race%d@example.com", round))
		var cancel response
		// Each side starts up to half a millisecond after the other, in turn, so that either
		// may come first.
		lag := func(side int) {
			if round%2 == side {
				time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			lag(0)
			cancel = e.do("POST", "/withdrawal/"+id+"/cancel", tok, nil)
		})
		wg.Go(func() {
			lag(1)
			if _, err := e.app.payouts.RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		outcomes[cancel.status]++
		_, paid := psp.Payout(domain.PayoutID(id))
		status := e.poGet(tok, id)["status"]
		switch cancel.status {
		case http.StatusOK:
			if status != "CANCELED" || paid {
				t.Fatalf("round %d: canceled, yet %v with a payout at Efí: %v", round, status, paid)
			}
		case http.StatusConflict:
			if status != "PROCESSING" || !paid {
				t.Fatalf("round %d: the cancel was refused, yet %v, payout at Efí: %v", round, status, paid)
			}
		default:
			t.Fatalf("round %d: cancel answered %d %s", round, cancel.status, cancel.body)
		}
	}
	t.Logf("cancels answered %v", outcomes)
	e.dvVerify()
}

func TestNoPayoutProviderLeavesWithdrawalsPendingAndCancelable(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	if e.app.payouts != nil || e.app.payoutAPI != nil {
		t.Fatalf("a payout outbox runs without a provider: %T", e.app.payoutAPI)
	}
	for _, j := range e.app.jobs {
		if j.name == payoutJobName {
			t.Fatal("the payout job runs without a provider")
		}
	}
	if r := e.do("POST", "/withdrawal/"+id+"/cancel", tok, nil); r.status != http.StatusOK || r.json(t)["status"] != "CANCELED" {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	e.dvVerify()
}

package efi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/efi"
	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// newPayouts is the adapter as pixgate builds it for Efí: the JSON token request, mutual TLS
// with the fake's client certificate, trusting the fake's CA.
func newPayouts(t *testing.T, e *efitest.Efi, edit func(*efi.Config)) *efi.Payouts {
	t.Helper()
	cfg := efi.Config{PayerKey: e.Chave, Transport: psp.Config{
		APIURL: e.URL, ClientID: e.ClientID, ClientSecret: e.ClientSecret, TokenRequest: psp.TokenJSON,
		CertFile: e.Client.CertFile, KeyFile: e.Client.KeyFile, CAFiles: []string{e.CA.CertFile},
		Timeout: 5 * time.Second,
	}}
	if edit != nil {
		edit(&cfg)
	}
	p, err := efi.New(cfg)
	if err != nil {
		t.Fatalf("efi.New: %v", err)
	}
	t.Cleanup(p.CloseIdleConnections)
	return p
}

func order(amount domain.Cents, key string) ports.PayoutOrder {
	return ports.PayoutOrder{ID: domain.PayoutID(domain.NewID()), Amount: amount, Key: domain.PixKey{Type: domain.PixKeyEmail, Key: key}}
}

func TestSendMakesOnePayoutAndStatusReadsItBack(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	p := newPayouts(t, e, nil)
	o := order(12345, "maria@example.com")
	res, err := p.Send(context.Background(), o)
	if err != nil || res.Status != ports.PayoutInProgress || len(res.EndToEndID) != 32 {
		t.Fatalf("Send = %+v, %v; want EM_PROCESSAMENTO with an end-to-end id", res, err)
	}
	made, ok := e.Payout(o.ID)
	if !ok || made.Amount != 12345 || made.Key != "maria@example.com" || made.Payer != e.Chave {
		t.Fatalf("the fake holds %+v, want 123.45 from %s to maria@example.com", made, e.Chave)
	}
	got, err := p.Status(context.Background(), o.ID)
	if err != nil || got.Status != ports.PayoutDone || got.EndToEndID != made.EndToEndID {
		t.Fatalf("Status = %+v, %v; want REALIZADO with %s", got, err, made.EndToEndID)
	}
}

func TestSendingAgainUnderTheSameIDIsTakenNotPaidTwice(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	p := newPayouts(t, e, nil)
	o := order(500, "joao@example.com")
	if _, err := p.Send(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(context.Background(), o); !errors.Is(err, ports.ErrPayoutIDTaken) || errors.Is(err, ports.ErrPayoutRefused) {
		t.Fatalf("second Send: %v, want ErrPayoutIDTaken and no refusal", err)
	}
	if n := len(e.Payouts()); n != 1 {
		t.Fatalf("%d payouts made, want 1", n)
	}
}

func TestARefusedSendCarriesEfisReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steer func(e *efitest.Efi)
		want  []string
	}{
		{"a key that does not exist", func(e *efitest.Efi) { e.Steer("ghost@example.com", efitest.Refused) }, []string{"chave_invalida", "não existe"}},
		{"too little money at the PSP", func(e *efitest.Efi) { e.SetBalance(100) }, []string{"saldo_insuficiente", "Saldo insuficiente"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := efitest.New(t, efitest.Config{})
			c.steer(e)
			p := newPayouts(t, e, nil)
			_, err := p.Send(context.Background(), order(1000, "ghost@example.com"))
			var re *ports.PayoutRefusedError
			if !errors.As(err, &re) || !errors.Is(err, ports.ErrPayoutRefused) {
				t.Fatalf("Send: %v, want a PayoutRefusedError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(re.Reason, w) {
					t.Errorf("reason %q lacks %q", re.Reason, w)
				}
			}
			if strings.Contains(re.Reason, e.ClientSecret) {
				t.Fatal("the reason holds the client secret")
			}
			if n := len(e.Payouts()); n != 0 {
				t.Fatalf("%d payouts made, want none", n)
			}
		})
	}
}

func TestStatusOfAPayoutEfiNeverGotIsNotFound(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	p := newPayouts(t, e, nil)
	if _, err := p.Status(context.Background(), domain.PayoutID(domain.NewID())); !errors.Is(err, ports.ErrPayoutNotFound) {
		t.Fatalf("Status: %v, want ErrPayoutNotFound", err)
	}
}

func TestStatusPassesOnEveryStatusWithTheReasonOfOneNotDone(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	e.Steer("fail@example.com", efitest.NotProcessed)
	e.Steer("slow@example.com", efitest.StaysProcessing)
	e.Steer("odd@example.com", efitest.StaysUnknown)
	p := newPayouts(t, e, nil)
	for _, c := range []struct {
		key    string
		status ports.PayoutStatus
		reason string
	}{
		{"fail@example.com", ports.PayoutNotDone, efitest.NotDoneReason + " (AC14)"},
		{"slow@example.com", ports.PayoutInProgress, ""},
		{"odd@example.com", efitest.Unknown, ""},
	} {
		o := order(700, c.key)
		if _, err := p.Send(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		got, err := p.Status(context.Background(), o.ID)
		if err != nil || got.Status != c.status || got.Reason != c.reason {
			t.Errorf("%s: Status = %+v, %v; want %s with reason %q", c.key, got, err, c.status, c.reason)
		}
	}
}

func TestAnAnswerLostAfterThePayoutWasMadeIsRepeatedAndFoundTaken(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	// Efí makes the payout, then the connection drops: the transport repeats the PUT.
	e.Inject(psptest.HangUp().On(efitest.OpPayoutPut).AfterApplying(), 1)
	p := newPayouts(t, e, nil)
	o := order(900, "maria@example.com")
	_, err := p.Send(context.Background(), o)
	if !errors.Is(err, ports.ErrPayoutIDTaken) {
		t.Fatalf("Send: %v, want ErrPayoutIDTaken (the repeat found the payout made)", err)
	}
	if n, puts := len(e.Payouts()), e.Puts(o.ID); n != 1 || puts != 2 {
		t.Fatalf("%d payouts after %d PUTs, want 1 after 2", n, puts)
	}
}

func TestAnEfiThatStaysDownLeavesTheOutcomeUnknown(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	e.Inject(psptest.Unavailable("").On(efitest.OpPayoutPut), -1)
	p := newPayouts(t, e, func(c *efi.Config) { c.Transport.Timeout = 2 * time.Second })
	_, err := p.Send(context.Background(), order(900, "maria@example.com"))
	if err == nil || errors.Is(err, ports.ErrPayoutRefused) || errors.Is(err, ports.ErrPayoutIDTaken) || !errors.Is(err, psp.ErrOutcomeUnknown) {
		t.Fatalf("Send: %v, want an unknown outcome", err)
	}
}

func TestCredentialsEfiRefusesAreNoRefusalOfThePayout(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	p := newPayouts(t, e, func(c *efi.Config) { c.Transport.ClientSecret = "wrong-secret" })
	_, err := p.Send(context.Background(), order(900, "maria@example.com"))
	if err == nil || errors.Is(err, ports.ErrPayoutRefused) || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("Send: %v, want an error that refuses nothing and holds no secret", err)
	}
}

func TestTokensThatExpireAreRenewed(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{PSP: psptest.Config{TokenLifetime: time.Second}})
	p := newPayouts(t, e, nil)
	for i := range 3 {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // the token's lifetime, not a wait for work
		}
		if _, err := p.Send(context.Background(), order(100, "maria@example.com")); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if got := e.Answered(psptest.OpToken, http.StatusOK); got < 2 {
		t.Fatalf("%d tokens issued for sends 1 s apart with tokens of 1 s, want at least 2", got)
	}
}

func TestAClientWithoutTheCertificateIsTurnedAway(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	other := psptest.NewCA(t, "another CA").IssueClient(t, "stranger")
	p := newPayouts(t, e, func(c *efi.Config) { c.Transport.CertFile, c.Transport.KeyFile = other.CertFile, other.KeyFile })
	if _, err := p.Send(context.Background(), order(100, "maria@example.com")); err == nil || errors.Is(err, ports.ErrPayoutRefused) {
		t.Fatalf("Send with a stranger's certificate: %v, want an unknown outcome", err)
	}
	if n := len(e.Payouts()); n != 0 {
		t.Fatalf("%d payouts made", n)
	}
}

func TestNewNamesTheSettingsAtFault(t *testing.T) {
	t.Parallel()
	if _, err := efi.New(efi.Config{PayerKey: "pix@pixgate.example"}); err == nil {
		t.Fatal("a config without a transport was accepted")
	} else {
		var se *psp.SettingError
		if !errors.As(err, &se) {
			t.Fatalf("error %v names no setting", err)
		}
	}
	e := efitest.New(t, efitest.Config{})
	cfg := efi.Config{Transport: psp.Config{APIURL: e.URL, ClientID: "x", ClientSecret: "y", CertFile: e.Client.CertFile, KeyFile: e.Client.KeyFile}}
	if _, err := efi.New(cfg); err == nil || !strings.Contains(err.Error(), "paying PIX key") {
		t.Fatalf("a config without a payer key: %v", err)
	}
}

func TestIDsEfiWouldNotTakeAreNeverSent(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	p := newPayouts(t, e, nil)
	for _, id := range []string{"", "has-dashes", strings.Repeat("a", 36), "../../oauth"} {
		o := order(100, "maria@example.com")
		o.ID = id
		if _, err := p.Send(context.Background(), o); err == nil {
			t.Errorf("Send(%q) was accepted", id)
		}
		if _, err := p.Status(context.Background(), id); err == nil || errors.Is(err, ports.ErrPayoutNotFound) {
			t.Errorf("Status(%q) = %v", id, err)
		}
	}
	if n := e.Requests(""); n != 0 {
		t.Fatalf("%d requests reached Efí", n)
	}
}

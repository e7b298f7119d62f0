package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/domain"
)

// efiHost is the fake Efí's name, as pixgate's containers resolve it (an extra /etc/hosts
// entry pointing at the Docker network's gateway, where the test process listens).
const efiHost = "efi.pixgate.test"

// acquirerSecret lets the test pay charges through POST /acquirer/pix.
const acquirerSecret = "e2e-acquirer-secret-for-tests-only-0001"

// efiStack is a stack whose pixgate instances pay withdrawals out through a fake Efí in the
// test process: production mode (no sandbox), mutual TLS with a client certificate mounted in
// the containers, OAuth 2.0 tokens in Efí's JSON style, read backs a second apart.
type efiStack struct {
	*stack
	efi   *efitest.Efi
	extra map[string]string
	opts  func() []testcontainers.ContainerCustomizer
}

func newEfiStack(t *testing.T) *efiStack {
	t.Helper()
	s := newStack(t)
	e := efitest.New(t, efitest.Config{PSP: psptest.Config{Listen: ":0", Hosts: []string{efiHost}}})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(e.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/etc/pixgate/efi.pem": e.Client.CertFile, "/etc/pixgate/efi.key": e.Client.KeyFile, "/etc/pixgate/efi-ca.pem": e.CA.CertFile}
	contents := map[string][]byte{}
	for in, from := range files {
		raw, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		contents[in] = raw
	}
	gateway := s.gateway()
	return &efiStack{stack: s, efi: e,
		extra: map[string]string{
			"PIXGATE_SANDBOX": "false", "PIXGATE_ACQUIRER_SECRET": acquirerSecret, "PIXGATE_PIX_KEY": e.Chave,
			"PIXGATE_PAYOUT_PROVIDER": "efi", "PIXGATE_PAYOUT_API_URL": "https://" + net.JoinHostPort(efiHost, port),
			"PIXGATE_PAYOUT_CLIENT_ID": e.ClientID, "PIXGATE_PAYOUT_CLIENT_SECRET": e.ClientSecret,
			"PIXGATE_PAYOUT_TOKEN_REQUEST": "json", "PIXGATE_PAYOUT_CHECK_SECONDS": "1",
			"PIXGATE_PAYOUT_CERT_FILE": "/etc/pixgate/efi.pem", "PIXGATE_PAYOUT_KEY_FILE": "/etc/pixgate/efi.key",
			"PIXGATE_PAYOUT_API_CA_FILE": "/etc/pixgate/efi-ca.pem",
		},
		opts: func() []testcontainers.ContainerCustomizer {
			var cf []testcontainers.ContainerFile
			for in, raw := range contents {
				cf = append(cf, testcontainers.ContainerFile{Reader: bytes.NewReader(raw), ContainerFilePath: in, FileMode: 0o644})
			}
			return []testcontainers.ContainerCustomizer{
				testcontainers.WithFiles(cf...),
				testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
					hc.ExtraHosts = append(hc.ExtraHosts, efiHost+":"+gateway)
				}),
			}
		},
	}
}

func (s *efiStack) start(alias string) *pixgate { return s.startPixgate(alias, s.extra, s.opts()...) }

// fund pays a charge of amount through the acquirer's callback, as the PSP would.
func (s *efiStack) fund(p *pixgate, amount int64) {
	p.t.Helper()
	id := p.want(http.StatusCreated, "POST", "/transaction", chargeBody(amount, "fund-"+runTag+"-"+domain.NewID()[:8])).object(p.t)["id"].(string)
	txid, err := pix.TxIDFromTransactionID(id)
	if err != nil {
		p.t.Fatal(err)
	}
	entry := map[string]any{"endToEndId": "E12345678" + time.Now().UTC().Format("200601021504") + domain.PayoutID(domain.NewID())[:11],
		"txid": txid, "valor": fmt.Sprintf("%d.%02d", amount/100, amount%100), "horario": time.Now().UTC().Format(time.RFC3339)}
	r := p.want(http.StatusOK, "POST", "/acquirer/pix", map[string]any{"pix": []any{entry}}, "Authorization", "Bearer "+acquirerSecret)
	if !strings.Contains(string(r.body), `"outcome":"applied"`) {
		p.t.Fatalf("paying %s: %s", id, r)
	}
}

// TestTwoInstancesAndASIGKILLPayEachWithdrawalOutOnce runs two pixgate instances on one
// FerretDB paying withdrawals out through the fake Efí, and SIGKILLs one of them while its
// sends are in flight (Efí makes the payout, then takes seconds to answer): the other takes
// the killed instance's payouts over once their claim runs out, reads them back, and every
// withdrawal ends PROCESSED with exactly one payout at Efí; the killed instance, started
// again, sends nothing more; `pixgate ledger verify` finds the books whole.
func TestTwoInstancesAndASIGKILLPayEachWithdrawalOutOnce(t *testing.T) {
	t.Parallel()
	s := newEfiStack(t)
	// Every send is made at once and answered four seconds later: the kill lands between.
	s.efi.Inject(psptest.Slow(4*time.Second).On(efitest.OpPayoutPut).AfterApplying(), -1)
	a, b := s.start("pixgate-a"), s.start("pixgate-b")
	s.fund(a, 10_000)
	const withdrawals = 8
	var ids []string
	for i := range withdrawals {
		p := []*pixgate{a, b}[i%2]
		body := map[string]any{"amount": 100 + i, "pixKey": map[string]any{"type": "EMAIL", "key": fmt.Sprintf("w%d-%s@example.com", i, runTag)}}
		w := p.want(http.StatusCreated, "POST", "/withdrawal", body).object(t)
		ids = append(ids, w["id"].(string))
	}
	eventually(t, time.Minute, "sends in flight at Efí", func() (bool, string) {
		n := s.efi.Requests(efitest.OpPayoutPut)
		return n >= 2, fmt.Sprintf("%d PUTs", n)
	})
	a.kill()

	// The survivor sends the rest, and takes over what the killed instance held once its
	// claim (four times the transport's 10 s timeout, and a margin) runs out.
	eventually(t, 4*time.Minute, "every withdrawal PROCESSED", func() (bool, string) {
		var pending []string
		for _, id := range ids {
			r, err := b.call(context.Background(), "GET", "/withdrawal/"+id, nil)
			if err != nil || r.status != http.StatusOK {
				return false, fmt.Sprintf("GET %s: %v %s", id, err, r)
			}
			if st := r.object(t)["status"]; st != "PROCESSED" {
				pending = append(pending, fmt.Sprintf("%s %v", id, st))
			}
		}
		return len(pending) == 0, strings.Join(pending, ", ")
	})
	// Started again, the killed instance finds nothing left to send: its outbox sweeps at
	// start and every second, and Efí gets no new PUT in three seconds of them.
	puts := s.efi.Requests(efitest.OpPayoutPut)
	a.start()
	time.Sleep(3 * time.Second)
	if n := s.efi.Requests(efitest.OpPayoutPut); n != puts {
		t.Fatalf("%d PUTs after the restart, want none", n-puts)
	}
	for i, id := range ids {
		made, ok := s.efi.Payout(domain.PayoutID(id))
		if !ok || made.Amount != int64(100+i) {
			t.Errorf("withdrawal %s: Efí holds %+v, want one payout of %d", id, made, 100+i)
		}
		w := b.want(http.StatusOK, "GET", "/withdrawal/"+id, nil).object(t)
		if w["endToEnd"] != made.EndToEndID {
			t.Errorf("withdrawal %s: endToEnd %v, want Efí's %s", id, w["endToEnd"], made.EndToEndID)
		}
	}
	if n := len(s.efi.Payouts()); n != withdrawals {
		t.Fatalf("Efí holds %d payouts for %d withdrawals", n, withdrawals)
	}
	t.Logf("%d PUTs reached Efí for %d payouts", s.efi.Requests(efitest.OpPayoutPut), withdrawals)
	verifyLedger(t, b)
}

// TestEfiRefusalsOnMongoDBGiveTheMoneyBack pays out through Efí on FerretDB, one withdrawal
// to a key Efí refuses: it fails with Efí's reason and the balance and statement show the
// money back, while the other is paid out.
func TestEfiRefusalsOnMongoDBGiveTheMoneyBack(t *testing.T) {
	t.Parallel()
	s := newEfiStack(t)
	ghost := "ghost-" + runTag + "@example.com"
	s.efi.Steer(ghost, efitest.Refused)
	p := s.start("pixgate")
	s.fund(p, 10_000)
	before := p.balance()
	refused := p.want(http.StatusCreated, "POST", "/withdrawal", map[string]any{"amount": 1000,
		"pixKey": map[string]any{"type": "EMAIL", "key": ghost}}).object(t)["id"].(string)
	paid := p.want(http.StatusCreated, "POST", "/withdrawal", map[string]any{"amount": 2000,
		"pixKey": map[string]any{"type": "EMAIL", "key": "maria-" + runTag + "@example.com"}}).object(t)["id"].(string)
	eventually(t, time.Minute, "the refused withdrawal FAILED and the other PROCESSED", func() (bool, string) {
		r1 := p.want(http.StatusOK, "GET", "/withdrawal/"+refused, nil).object(t)
		r2 := p.want(http.StatusOK, "GET", "/withdrawal/"+paid, nil).object(t)
		return r1["status"] == "FAILED" && r2["status"] == "PROCESSED", fmt.Sprintf("%v, %v", r1["status"], r2["status"])
	})
	w := p.want(http.StatusOK, "GET", "/withdrawal/"+refused, nil).object(t)
	if msg, _ := w["errorMessage"].(string); !strings.Contains(msg, "chave_invalida") {
		t.Fatalf("errorMessage %q, want Efí's reason", msg)
	}
	p.waitBalance("after the refusal", before[0]-(2000+wdFee), 0, 0, time.Minute)
	var reversal bool
	for _, line := range p.statement() {
		reversal = reversal || line.kind == "withdrawal_reversal" && line.available == 1000+wdFee
	}
	if !reversal {
		t.Fatal("the statement shows no reversal of the refused withdrawal")
	}
	if _, ok := s.efi.Payout(domain.PayoutID(refused)); ok || len(s.efi.Payouts()) != 1 {
		t.Fatalf("Efí holds %v, want only the paid withdrawal's payout", s.efi.Payouts())
	}
	verifyLedger(t, p)
}

package efitest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/efi"
	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// notices is a receiver of the fake's notices over TLS, with a certificate of the fake's CA.
type notices struct {
	mu     sync.Mutex
	bodies [][]byte
	url    string
}

func receive(t *testing.T, e *efitest.Efi) *notices {
	t.Helper()
	n := &notices{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.bodies = append(n.bodies, raw)
		n.mu.Unlock()
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{e.CA.IssueServer(t, "127.0.0.1").TLS}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	n.url = srv.URL + "/acquirer/pix"
	return n
}

func (n *notices) wait(t *testing.T, count int) [][]byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n.mu.Lock()
		got := append([][]byte(nil), n.bodies...)
		n.mu.Unlock()
		if len(got) >= count {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notices after 20 s, want %d", len(got), count)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func adapter(t *testing.T, e *efitest.Efi) *efi.Payouts {
	t.Helper()
	p, err := efi.New(efi.Config{PayerKey: e.Chave, Transport: psp.Config{
		APIURL: e.URL, ClientID: e.ClientID, ClientSecret: e.ClientSecret, TokenRequest: psp.TokenJSON,
		CertFile: e.Client.CertFile, KeyFile: e.Client.KeyFile, CAFiles: []string{e.CA.CertFile}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAPayoutThatEndsIsNotifiedAsEfiNotifiesIt(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{SettleAfter: 50 * time.Millisecond})
	n := receive(t, e)
	e.NotifyTo(n.url)
	e.Steer("fail@example.com", efitest.NotProcessed)
	p := adapter(t, e)
	ok := ports.PayoutOrder{ID: domain.PayoutID(domain.NewID()), Amount: 150, Key: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}}
	bad := ports.PayoutOrder{ID: domain.PayoutID(domain.NewID()), Amount: 250, Key: domain.PixKey{Type: domain.PixKeyEmail, Key: "fail@example.com"}}
	for _, o := range []ports.PayoutOrder{ok, bad} {
		if _, err := p.Send(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string]map[string]any{}
	for _, raw := range n.wait(t, 2) {
		var body struct {
			Pix []map[string]any `json:"pix"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || len(body.Pix) != 1 {
			t.Fatalf("notice %s", raw)
		}
		entry := body.Pix[0]
		extras, _ := entry["gnExtras"].(map[string]any)
		id, _ := extras["idEnvio"].(string)
		if entry["tipo"] != "SOLICITACAO" || id == "" || entry["txid"] != nil {
			t.Fatalf("notice entry %v is not a payout's", entry)
		}
		byID[id] = entry
	}
	if byID[ok.ID]["status"] != efitest.Done || byID[bad.ID]["status"] != efitest.NotDone {
		t.Fatalf("notices %v, want %s REALIZADO and %s NAO_REALIZADO", byID, ok.ID, bad.ID)
	}
	if !bytes.Contains(mustJSON(t, byID[bad.ID]), []byte(efitest.NotDoneReason)) {
		t.Fatalf("the NAO_REALIZADO notice lacks its reason: %v", byID[bad.ID])
	}
}

func TestAPayoutLeftProcessingEndsWhenTheTestSettlesIt(t *testing.T) {
	t.Parallel()
	e := efitest.New(t, efitest.Config{})
	e.SteerOthers(efitest.StaysProcessing)
	p := adapter(t, e)
	o := ports.PayoutOrder{ID: domain.PayoutID(domain.NewID()), Amount: 150, Key: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}}
	if _, err := p.Send(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res, err := p.Status(context.Background(), o.ID); err != nil || res.Status != ports.PayoutInProgress {
			t.Fatalf("Status = %+v, %v; want still in progress", res, err)
		}
	}
	if err := e.Settle(o.ID, efitest.Done, ""); err != nil {
		t.Fatal(err)
	}
	if res, err := p.Status(context.Background(), o.ID); err != nil || res.Status != ports.PayoutDone {
		t.Fatalf("Status = %+v, %v; want REALIZADO", res, err)
	}
	if err := e.Settle(o.ID, efitest.NotDone, "too late"); err == nil {
		t.Fatal("a payout that ended was settled again")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

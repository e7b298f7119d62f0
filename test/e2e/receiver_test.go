package e2e_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// hooksHost is the webhook receiver's name, as pixgate's container resolves it (an extra
// /etc/hosts entry pointing at the Docker network's gateway, where the test process listens).
// Webhook URLs need a DNS name with an alphabetic top-level domain.
const hooksHost = "hooks.pixgate.test"

// receiver is a merchant's HTTPS webhook endpoint inside the test process, listening on every
// interface so that containers reach it through their network's gateway, with a certificate
// for hooksHost issued by a CA of its own (caPEM, mounted into pixgate's container).
//
// While held, it keeps every request open without answering (until released or the sender
// goes away) and then answers 503: deliveries in flight that never succeed. Otherwise it
// checks the Standard Webhooks signature and answers 204.
type receiver struct {
	t     *testing.T
	srv   *http.Server
	port  int
	caPEM []byte

	mu        sync.Mutex
	secret    []byte            // the account's signing key, once known
	secrets   map[string][]byte // URL path -> its account's key, where accounts differ
	onDeliver func(path string, body []byte, at time.Time)
	held      bool                   // hold new requests
	release   chan struct{}          // closed to let held requests go
	inFlight  int                    // held requests not answered yet
	heldIDs   map[string]time.Time   // webhook-id -> when a held attempt arrived
	delivered map[string][]time.Time // webhook-id -> every 2xx answer
	badSigs   []string

	// failFirst makes the receiver answer 503 to the first request of each event (it fails,
	// then recovers for the retry); every answer comes after slow (a receiver that takes its
	// time, so that attempts in flight would overlap if two ever ran at once).
	failFirst bool
	slow      time.Duration
	attempts  map[string]int // webhook-id -> requests received
	active    map[string]int // webhook-id -> requests being answered now
	overlaps  []string       // webhook-ids that had two requests in flight at once
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pixgate e2e webhook CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: hooksHost}, DNSNames: []string{hooksHost},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{
		t: t, port: ln.Addr().(*net.TCPAddr).Port,
		caPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		release:   make(chan struct{}),
		heldIDs:   map[string]time.Time{},
		delivered: map[string][]time.Time{},
		attempts:  map[string]int{},
		active:    map[string]int{},
	}
	rc.srv = &http.Server{
		Handler:           http.HandlerFunc(rc.serve),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{
			Certificate: [][]byte{leafDER}, PrivateKey: leafKey,
		}}},
		// Handshakes cut short by the kill are expected; keep them out of the test's output.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = rc.srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		rc.unhold()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rc.srv.Shutdown(ctx)
	})
	return rc
}

// url is a webhook URL of the receiver.
func (rc *receiver) url(path string) string {
	return fmt.Sprintf("https://%s:%d%s", hooksHost, rc.port, path)
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	id := r.Header.Get("webhook-id")
	rc.mu.Lock()
	rc.attempts[id]++
	if rc.active[id]++; rc.active[id] > 1 {
		rc.overlaps = append(rc.overlaps, id)
	}
	failing, slow := rc.failFirst && rc.attempts[id] == 1, rc.slow
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.active[id]--
		rc.mu.Unlock()
	}()
	if slow > 0 {
		select {
		case <-time.After(slow):
		case <-r.Context().Done():
		}
	}
	if failing {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	rc.mu.Lock()
	if rc.held {
		if _, ok := rc.heldIDs[id]; !ok {
			rc.heldIDs[id] = time.Now()
		}
		rc.inFlight++
		release := rc.release
		rc.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		rc.mu.Lock()
		rc.inFlight--
		rc.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	secret := rc.secret
	if key, ok := rc.secrets[r.URL.Path]; ok {
		secret = key
	}
	if err := verify(secret, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body); err != nil {
		rc.badSigs = append(rc.badSigs, id+": "+err.Error())
	}
	at := time.Now()
	rc.delivered[id] = append(rc.delivered[id], at)
	onDeliver := rc.onDeliver
	rc.mu.Unlock()
	if onDeliver != nil {
		onDeliver(r.URL.Path, body, at)
	}
	w.WriteHeader(http.StatusNoContent)
}

// verify checks a Standard Webhooks signature: one of the space-separated "v1,<base64>"
// values is the HMAC-SHA256 of "id.timestamp.body" keyed with the secret.
func verify(secret []byte, id, timestamp, signatures string, body []byte) error {
	if secret == nil {
		return errors.New("no secret to check the signature with")
	}
	if id == "" || timestamp == "" {
		return errors.New("webhook-id or webhook-timestamp missing")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(signatures) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("signature %q does not match", signatures)
}

// useSecret sets the account's "whsec_..." secret that signs the deliveries.
func (rc *receiver) useSecret(whsec string) {
	rc.t.Helper()
	key := rc.secretKey(whsec)
	rc.mu.Lock()
	rc.secret = key
	rc.mu.Unlock()
}

// useSecretFor sets the secret that signs the deliveries to path (URL path), for a receiver
// that several accounts' webhooks reach, each at a path of its own.
func (rc *receiver) useSecretFor(path, whsec string) {
	rc.t.Helper()
	key := rc.secretKey(whsec)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.secrets == nil {
		rc.secrets = map[string][]byte{}
	}
	rc.secrets[path] = key
}

func (rc *receiver) secretKey(whsec string) []byte {
	rc.t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsec, "whsec_"))
	if err != nil || !strings.HasPrefix(whsec, "whsec_") {
		rc.t.Fatalf("webhook secret %q is not whsec_<base64>", whsec)
	}
	return key
}

// notify has f called with every successful delivery (its URL path, body and when it
// arrived), after the receiver recorded it and before it answers.
func (rc *receiver) notify(f func(path string, body []byte, at time.Time)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.onDeliver = f
}

func (rc *receiver) hold() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.held = true
}

// unhold answers the held requests (503) and stops holding.
func (rc *receiver) unhold() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.held {
		rc.held = false
		close(rc.release)
	}
}

// snapshot is what the receiver saw: the held attempts, the requests held right now, and the
// successful deliveries.
func (rc *receiver) snapshot() (held map[string]time.Time, inFlight int, delivered map[string][]time.Time, badSigs []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	held = map[string]time.Time{}
	for k, v := range rc.heldIDs {
		held[k] = v
	}
	delivered = map[string][]time.Time{}
	for k, v := range rc.delivered {
		delivered[k] = append([]time.Time(nil), v...)
	}
	return held, rc.inFlight, delivered, append([]string(nil), rc.badSigs...)
}

// failFirstAttempts makes the receiver answer 503 to the first attempt of every event, and
// answer every request after slow.
func (rc *receiver) failFirstAttempts(slow time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failFirst, rc.slow = true, slow
}

// load is how many requests each webhook-id got, and the ids that ever had two in flight.
func (rc *receiver) load() (attempts map[string]int, overlaps []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	attempts = map[string]int{}
	for k, v := range rc.attempts {
		attempts[k] = v
	}
	return attempts, append([]string(nil), rc.overlaps...)
}

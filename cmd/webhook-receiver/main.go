// Command webhook-receiver is a merchant's webhook endpoint for trying pixgate on one machine:
// it serves HTTPS with a certificate of its own for a DNS name that resolves to loopback
// (hooks.localtest.me by default), writes that certificate where pixgate can trust it
// (PIXGATE_WEBHOOK_CA_FILE), and prints every notification it receives with the verdict of its
// Standard Webhooks signature, checked against the secret in -secret-file (read on every
// delivery, so it can be written after pixgate starts). It is a development tool: pixgate only
// reaches it with PIXGATE_WEBHOOK_ALLOW_PRIVATE=true.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/adapters/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, net.DefaultResolver.LookupHost, nil); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends; resolve looks host names up (net.DefaultResolver's LookupHost);
// listening, when set, receives the bound address.
func run(ctx context.Context, args []string, out io.Writer, resolve func(context.Context, string) ([]string, error),
	listening func(addr string)) error {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8443", "address to listen on")
	host := fs.String("host", "hooks.localtest.me", "DNS name in the certificate (must resolve to this machine)")
	caOut := fs.String("ca-out", "webhook-ca.pem", "where to write the certificate for PIXGATE_WEBHOOK_CA_FILE")
	secretFile := fs.String("secret-file", "whsec.txt", "file holding the account's whsec_ secret (GET /webhook/secret)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the flag package printed the usage
		}
		return err
	}
	if err := checkHost(ctx, resolve, *host, *addr); err != nil {
		return err
	}
	cert, certPEM, err := selfSigned(*host)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*caOut, certPEM, 0o644); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           receiver(out, *secretFile),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	fmt.Fprintf(out, "listening: use webhookUrl https://%s:%s/pix\ntrust it with PIXGATE_WEBHOOK_CA_FILE=%s\n", *host, port, *caOut)
	if listening != nil {
		listening(ln.Addr().String())
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkHost makes sure host leads pixgate to this receiver: it must resolve, and to a loopback
// address when the receiver listens on loopback. Otherwise pixgate's attempts fail far from
// here ("host ... not found" in GET /transaction/{id}/events) and nothing says why no
// notification arrives, so the receiver refuses to start and says what to do instead.
func checkHost(ctx context.Context, resolve func(context.Context, string) ([]string, error), host, addr string) error {
	const fallback = "add the line \"127.0.0.1 %[1]s\" to /etc/hosts (pixgate resolves names with the system's resolver), " +
		"or start the receiver with -host NAME for a DNS name of your own that resolves to this machine " +
		"(pixgate refuses localhost and IP addresses in a webhookUrl, so -host localhost would not do)"
	lookup, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolve(lookup, host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("-host %s does not resolve on this machine (offline, or a resolver that drops it), "+
			"so pixgate could not deliver to it: "+fallback, host)
	}
	listenHost, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(listenHost); ip == nil || !ip.IsLoopback() {
		return nil // listening beyond loopback: the name may lead to any of this machine's addresses
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("-host %s resolves to %s, not to this machine's loopback where the receiver listens (%s): "+fallback,
		host, strings.Join(addrs, ", "), addr)
}

// receiver prints each notification and whether its signature is good, and answers 204.
func receiver(out io.Writer, secretFile string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		verdict := "signature NOT checked: no secret in " + secretFile
		if raw, err := os.ReadFile(secretFile); err == nil && strings.TrimSpace(string(raw)) != "" {
			verdict = "signature verified"
			if err := webhook.Verify(strings.TrimSpace(string(raw)), r.Header, body, time.Now(), 5*time.Minute); err != nil {
				verdict = "signature INVALID: " + err.Error()
			}
		}
		var event struct {
			Type string `json:"type"`
			Data struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &event)
		fmt.Fprintf(out, "%s  %s  %s %s  webhook-id %s  %s\n", time.Now().UTC().Format(time.RFC3339),
			event.Type, event.Data.ID, event.Data.Status, r.Header.Get("webhook-id"), verdict)
		w.WriteHeader(http.StatusNoContent)
	})
}

// selfSigned makes a certificate for host that is its own CA.
func selfSigned(host string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}

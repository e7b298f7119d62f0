package main

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// ServerConfig is the API's listener, its logs and the address payers reach.
type ServerConfig struct {
	Addr            string
	MetricsAddr     string // empty: /metrics is served with the API
	LogLevel        string
	ShutdownTimeout time.Duration
	MaxRequestBytes int64  // not a variable: 1 MiB
	PublicURL       string // https base of the payment pages; empty: the server's own address
}

func (s *ServerConfig) settings() []setting {
	return []setting{
		{"PIXGATE_ADDR", ":8080", "Address the API listens on.", hostPort(&s.Addr)},
		{"PIXGATE_METRICS_ADDR", "", "Separate address for /metrics; empty serves it with the API. Request metrics are labelled by route name, method and status, each from a fixed set (anything else is `other`), so no request can add series.", optional(hostPort(&s.MetricsAddr))},
		{"PIXGATE_LOG_LEVEL", "info", "debug, info, warn or error.", oneOf(&s.LogLevel, "debug", "info", "warn", "error")},
		{"PIXGATE_SHUTDOWN_TIMEOUT", "30s", "How long SIGTERM waits for requests in flight.", duration(&s.ShutdownTimeout)},
		{"PIXGATE_PUBLIC_URL", "", "https base URL at which payers reach pixgate: each transaction's paymentUrl is this base, /pay/ and its token, and charges are dynamic BR Codes whose payload location is under it. Empty: the server's own address (http://localhost:8080 for make run) and static codes.", optional(publicBaseURL(&s.PublicURL))},
	}
}

// publicBaseURL reads PIXGATE_PUBLIC_URL: an absolute https URL with a host, maybe a path
// prefix, and nothing else (no user info, query or fragment). It keeps it without a trailing
// slash.
func publicBaseURL(dst *string) func(string) error {
	return func(v string) error {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil ||
			u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(v, "?") || strings.HasSuffix(v, "#") {
			return fmt.Errorf("must be an https URL such as https://pay.example.com, without user info, query or fragment")
		}
		*dst = strings.TrimRight(v, "/")
		return nil
	}
}

// ownBaseURL is the address payment pages get without PIXGATE_PUBLIC_URL: the address the
// server listens on, over http, with localhost for an unspecified host (":8080",
// "0.0.0.0:8080"), so that make run's links open on the same machine.
func ownBaseURL(listening string) string {
	host, port, err := net.SplitHostPort(listening)
	if err != nil {
		return "http://" + listening
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// StoreConfig is where accounts, transactions and the ledger are kept.
type StoreConfig struct {
	Kind          string // memory or mongo
	MongoURI      string
	MongoDatabase string
	MongoTimeout  time.Duration
	MongoMaxPool  uint64
	CredentialKey []byte // HMAC key for client secrets; empty: generated (memory store only)
}

func (s *StoreConfig) settings() []setting {
	return []setting{
		{"PIXGATE_STORE", "memory", "memory (lost on restart) or mongo.", oneOf(&s.Kind, "memory", "mongo")},
		{"PIXGATE_MONGODB_URI", "mongodb://localhost:27017", "MongoDB connection string (PIXGATE_STORE=mongo).", mongoURI(&s.MongoURI)},
		{"PIXGATE_MONGODB_DATABASE", "pixgate", "MongoDB database name.", mongoDatabase(&s.MongoDatabase)},
		{"PIXGATE_MONGODB_TIMEOUT", "5s", "Timeout of each MongoDB call.", duration(&s.MongoTimeout)},
		{"PIXGATE_MONGODB_MAX_POOL", "100", "Most MongoDB connections per instance.", whole(&s.MongoMaxPool, 1, 10000)},
		{"PIXGATE_CREDENTIAL_KEY", "", "Hex key (at least 32 bytes) that hashes client secrets; required with mongo, generated for memory.", optional(credentialKey(&s.CredentialKey))},
	}
}

func mongoURI(dst *string) func(string) error {
	return func(v string) error {
		if !strings.HasPrefix(v, "mongodb://") && !strings.HasPrefix(v, "mongodb+srv://") {
			return fmt.Errorf("must start with mongodb:// or mongodb+srv://")
		}
		*dst = v
		return nil
	}
}

func mongoDatabase(dst *string) func(string) error {
	return func(v string) error {
		if v == "" || strings.ContainsAny(v, "/\\. \"$") || len(v) > 63 {
			return fmt.Errorf("must be a MongoDB database name")
		}
		*dst = v
		return nil
	}
}

func credentialKey(dst *[]byte) func(string) error {
	return func(v string) error {
		b, err := hex.DecodeString(v)
		if err != nil || len(b) < 32 {
			return fmt.Errorf("must be at least 64 hexadecimal characters")
		}
		*dst = b
		return nil
	}
}

// WebhooksConfig is how pixgate delivers webhooks to the merchants.
type WebhooksConfig struct {
	AllowPrivate bool
	CAFile       string
	Workers      int
	Lease        time.Duration
}

func (w *WebhooksConfig) settings() []setting {
	return []setting{
		{"PIXGATE_WEBHOOK_ALLOW_PRIVATE", "false", "Let webhooks reach loopback and private addresses (development and tests only).", boolean(&w.AllowPrivate)},
		{"PIXGATE_WEBHOOK_CA_FILE", "", "PEM file of extra CA certificates trusted for webhook receivers.", text(&w.CAFile)},
		{"PIXGATE_WEBHOOK_LEASE", "30s", "How long an instance holds the deliveries it claimed: after a crash, others resend them once it ends.",
			durationIn(&w.Lease, 15*time.Second, time.Hour, "must be a duration from 15s (an attempt may take 10 s) to 1h")},
		{"PIXGATE_WEBHOOK_WORKERS", "8", "Webhook deliveries sent at once per instance; one account takes at most half of them.", whole(&w.Workers, 1, 1024)},
	}
}

// SandboxConfig is the sandbox acquirer, for development.
type SandboxConfig struct {
	On          bool
	DemoAccount bool
	Settle      time.Duration
}

func (s *SandboxConfig) settings() []setting {
	return []setting{
		{"PIXGATE_SANDBOX", "false", "Turns on the sandbox acquirer and its /sandbox routes.", boolean(&s.On)},
		{"PIXGATE_SANDBOX_DEMO_ACCOUNT", "false", "In sandbox mode, create a demo account at start and print its credentials once (make run sets it).", boolean(&s.DemoAccount)},
		{"PIXGATE_SANDBOX_SETTLE_SECONDS", "2", "Seconds after which sandbox refunds and withdrawals complete by themselves.", seconds(&s.Settle, 0, 3600)},
	}
}

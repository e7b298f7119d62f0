package main

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/application"
)

// Config is every setting of pixgate, read once at start from PIXGATE_* variables.
type Config struct {
	Addr            string
	MetricsAddr     string
	LogLevel        string
	ShutdownTimeout time.Duration

	Sandbox            bool
	SandboxDemoAccount bool
	SandboxSettle      time.Duration

	Store           string // memory or mongo
	MongoURI        string
	MongoDatabase   string
	MongoTimeout    time.Duration
	MongoMaxPool    uint64
	CredentialKey   []byte // HMAC key for client secrets; empty: generated (memory store only)
	SeedClients     []application.SeedClient
	JWTKeyFile      string
	JWTIssuer       string
	JWTAudience     string
	TokenTTL        time.Duration
	AuthCacheTTL    time.Duration // 0: every request reads its credential and account
	UpstreamToken   string
	UpstreamJWKS    string
	UpstreamTimeout time.Duration
	UpstreamIssuer  string
	UpstreamAud     string

	PixKey          string
	MerchantName    string
	MerchantCity    string
	QRConcurrency   int
	QRQueue         int // creations that may wait for a drawing; 0: the renderer's default
	QRProcess       bool
	QRTimeout       time.Duration // a drawing's deadline, its wait included
	FeeFixedCents   int64
	FeeBasisPoints  int64
	WithdrawalFee   int64
	AcquirerSecret  string
	RateLimitRPS    float64
	RateLimitBurst  int
	TokenRPS        float64
	TokenBurst      int
	TokenFailures   int
	WebhookPrivate  bool
	WebhookCAFile   string
	WebhookWorkers  int
	WebhookLease    time.Duration
	MaxRequestBytes int64

	PublicURL         string // https base of the payment pages; empty: the server's own address
	PayRateLimitRPS   float64
	PayRateLimitBurst int
	PayStreamsCharge  int
	PayStreamsAddress int

	// Dynamic charges (wire_pixlocation.go), with PublicURL only.
	PixSigningKey      string // PEM file of the key that signs payload locations
	PixSigningPrevious string // PEM file of earlier keys kept in the key set
	PixSigningCert     string // PEM file of the signing key's certificate chain
	PixLocationRPS     float64
	PixLocationBurst   int

	// The PSP's API Pix (config_acquirer.go).
	Acquirer AcquirerConfig
	// Payouts (config_payouts.go).
	Payout PayoutConfig
	// Devolutions (config_devolutions.go).
	Devolution DevolutionConfig

	// Reconcile is how often the acquirer's received PIX are reconciled; 0: never
	// (reconcile.go).
	Reconcile time.Duration
	// The PSP's callbacks and webhook registration (config_callback.go).
	Callback CallbackConfig
}

// setting is one PIXGATE_* variable: its default, what it does, and how it is read.
type setting struct {
	name string
	def  string
	doc  string
	set  func(c *Config, v string) error
}

// settings lists every variable pixgate reads; the configuration table of docs/OPERATIONS.md
// is checked against it by a test.
func settings() []setting {
	return slices.Concat(
		coreSettings(),
		acquirerSettings(),
		payoutSettings(),
		devolutionSettings(),
		reconcileSettings(),
		callbackSettings(),
	)
}

// coreSettings are the variables of the gateway itself; each feature with settings of its own
// lists them in its config_*.go file.
func coreSettings() []setting {
	return []setting{
		{"PIXGATE_ADDR", ":8080", "Address the API listens on.", func(c *Config, v string) error { return hostPort(&c.Addr, v) }},
		{"PIXGATE_METRICS_ADDR", "", "Separate address for /metrics; empty serves it with the API.", func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			return hostPort(&c.MetricsAddr, v)
		}},
		{"PIXGATE_LOG_LEVEL", "info", "debug, info, warn or error.", func(c *Config, v string) error {
			return oneOf(&c.LogLevel, v, "debug", "info", "warn", "error")
		}},
		{"PIXGATE_SHUTDOWN_TIMEOUT", "30s", "How long SIGTERM waits for requests in flight.", durationSetting(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
		{"PIXGATE_SANDBOX", "false", "Turns on the sandbox acquirer and its /sandbox routes.", boolSetting(func(c *Config) *bool { return &c.Sandbox })},
		{"PIXGATE_SANDBOX_DEMO_ACCOUNT", "false", "In sandbox mode, create a demo account at start and print its credentials once (make run sets it).", boolSetting(func(c *Config) *bool { return &c.SandboxDemoAccount })},
		{"PIXGATE_SANDBOX_SETTLE_SECONDS", "2", "Seconds after which sandbox refunds and withdrawals complete by themselves.", func(c *Config, v string) error {
			n, err := intIn(v, 0, 3600)
			c.SandboxSettle = time.Duration(n) * time.Second
			return err
		}},
		{"PIXGATE_STORE", "memory", "memory (lost on restart) or mongo.", func(c *Config, v string) error { return oneOf(&c.Store, v, "memory", "mongo") }},
		{"PIXGATE_MONGODB_URI", "mongodb://localhost:27017", "MongoDB connection string (PIXGATE_STORE=mongo).", func(c *Config, v string) error {
			if !strings.HasPrefix(v, "mongodb://") && !strings.HasPrefix(v, "mongodb+srv://") {
				return fmt.Errorf("must start with mongodb:// or mongodb+srv://")
			}
			c.MongoURI = v
			return nil
		}},
		{"PIXGATE_MONGODB_DATABASE", "pixgate", "MongoDB database name.", func(c *Config, v string) error {
			if v == "" || strings.ContainsAny(v, "/\\. \"$") || len(v) > 63 {
				return fmt.Errorf("must be a MongoDB database name")
			}
			c.MongoDatabase = v
			return nil
		}},
		{"PIXGATE_MONGODB_TIMEOUT", "5s", "Timeout of each MongoDB call.", durationSetting(func(c *Config) *time.Duration { return &c.MongoTimeout })},
		{"PIXGATE_MONGODB_MAX_POOL", "100", "Most MongoDB connections per instance.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 10000)
			c.MongoMaxPool = uint64(n)
			return err
		}},
		{"PIXGATE_CREDENTIAL_KEY", "", "Hex key (at least 32 bytes) that hashes client secrets; required with mongo, generated for memory.", func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			b, err := hex.DecodeString(v)
			if err != nil || len(b) < 32 {
				return fmt.Errorf("must be at least 64 hexadecimal characters")
			}
			c.CredentialKey = b
			return nil
		}},
		{"PIXGATE_SEED_CLIENTS", "", "Accounts created at start: name:client_id:client_secret[:scope,scope...] separated by ;.", func(c *Config, v string) error {
			var err error
			c.SeedClients, err = application.ParseSeedClients(v)
			return err
		}},
		{"PIXGATE_JWT_PRIVATE_KEY_FILE", "", "PEM RSA private key that signs tokens; empty generates one (tokens die with the process).", func(c *Config, v string) error {
			c.JWTKeyFile = v
			return nil
		}},
		{"PIXGATE_JWT_ISSUER", "pixgate", "iss of the tokens.", nonEmpty(func(c *Config) *string { return &c.JWTIssuer })},
		{"PIXGATE_JWT_AUDIENCE", "pixgate-api", "aud of the tokens.", nonEmpty(func(c *Config) *string { return &c.JWTAudience })},
		{"PIXGATE_TOKEN_TTL", "3600", "Token lifetime in seconds, from 12 (OAuth clients renew a token 10 s before it expires).", func(c *Config, v string) error {
			n, err := intIn(v, 12, 86400)
			c.TokenTTL = time.Duration(n) * time.Second
			return err
		}},
		{"PIXGATE_AUTH_CACHE_TTL", "2s", "How long an instance trusts what it read about a credential and its account (revoked? disabled? scopes?) before reading them again; a revocation or disabling made on another instance takes up to this long to reach it (at once on the instance that made it). 0 reads them on every request.", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > time.Minute {
				return fmt.Errorf("must be a duration from 0 to 1m, such as 2s")
			}
			c.AuthCacheTTL = d
			return nil
		}},
		{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL", "", "OpenID Connect token endpoint to delegate client credentials to.", func(c *Config, v string) error {
			c.UpstreamToken = v
			return urlOrEmpty(v)
		}},
		{"PIXGATE_AUTH_UPSTREAM_JWKS_URL", "", "JWKS of the upstream provider, to verify its tokens.", func(c *Config, v string) error {
			c.UpstreamJWKS = v
			return urlOrEmpty(v)
		}},
		{"PIXGATE_AUTH_UPSTREAM_ISSUER", "", "iss the upstream provider's tokens must carry (required with the upstream).", func(c *Config, v string) error {
			c.UpstreamIssuer = v
			return nil
		}},
		{"PIXGATE_AUTH_UPSTREAM_AUDIENCE", "", "aud the upstream provider's tokens must carry (required with the upstream).", func(c *Config, v string) error {
			c.UpstreamAud = v
			return nil
		}},
		{"PIXGATE_AUTH_UPSTREAM_TIMEOUT", "5s", "Timeout of calls to the upstream provider.", durationSetting(func(c *Config) *time.Duration { return &c.UpstreamTimeout })},
		{"PIXGATE_PIX_KEY", "pix@pixgate.example", "PIX key that receives the payments: a valid e-mail, +55 phone, CPF, CNPJ or EVP key.", nonEmpty(func(c *Config) *string { return &c.PixKey })},
		{"PIXGATE_PIX_MERCHANT_NAME", "PIXGATE SANDBOX", "Merchant name in the BR Code (cut at 25 ASCII characters).", nonEmpty(func(c *Config) *string { return &c.MerchantName })},
		{"PIXGATE_PIX_MERCHANT_CITY", "SAO PAULO", "Merchant city in the BR Code (cut at 15 ASCII characters).", nonEmpty(func(c *Config) *string { return &c.MerchantCity })},
		{"PIXGATE_QR_PROCESS", "true", "Draw QR images in a child process of the lowest priority (pixgate qr-worker, started by serve), so that their CPU and memory never slow requests; false draws them in the serving process, on threads of the lowest priority.", boolSetting(func(c *Config) *bool { return &c.QRProcess })},
		{"PIXGATE_QR_CONCURRENCY", "0", "QR images drawn at once, at the lowest priority so that other requests always find a core; 0 means the number of CPUs.", func(c *Config, v string) error {
			n, err := intIn(v, 0, 1024)
			c.QRConcurrency = int(n)
			if n == 0 {
				c.QRConcurrency = runtime.GOMAXPROCS(0)
			}
			return err
		}},
		{"PIXGATE_QR_QUEUE", "0", "Creations that may wait for a QR drawing beyond those being drawn; when full, POST /transaction answers 503 unavailable with Retry-After and stores nothing. 0 means 32 per drawing at once (about 50 ms of waiting at most).", func(c *Config, v string) error {
			n, err := intIn(v, 0, 1_000_000)
			c.QRQueue = int(n)
			return err
		}},
		{"PIXGATE_QR_TIMEOUT", "10s", "Longest a creation waits for its QR image (its wait for a drawing included); past it POST /transaction answers 503 unavailable with Retry-After and stores nothing, and a drawing process that answered nothing in that time is killed and started again. From 1s to 25s (the server's write timeout is 30 s).", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second || d > 25*time.Second {
				return fmt.Errorf("must be a duration from 1s to 25s, such as 10s")
			}
			c.QRTimeout = d
			return nil
		}},
		{"PIXGATE_FEE_FIXED_CENTS", "0", "Fixed fee on each paid transaction, in cents.", int64Setting(0, 100_000, func(c *Config) *int64 { return &c.FeeFixedCents })},
		{"PIXGATE_FEE_BASIS_POINTS", "99", "Fee on each paid transaction in basis points (99 = 0.99%).", int64Setting(0, 10_000, func(c *Config) *int64 { return &c.FeeBasisPoints })},
		{"PIXGATE_WITHDRAWAL_FEE_CENTS", "0", "Fee on each withdrawal, in cents.", int64Setting(0, 100_000, func(c *Config) *int64 { return &c.WithdrawalFee })},
		{"PIXGATE_ACQUIRER_SECRET", "", "Shared secret of POST /acquirer/pix; empty: the route does not exist.", func(c *Config, v string) error {
			if v != "" && len(v) < 32 {
				return fmt.Errorf("must have at least 32 characters")
			}
			c.AcquirerSecret = v
			return nil
		}},
		{"PIXGATE_RATE_LIMIT_RPS", "50", "POST /transaction requests a second per account; 0 turns the limit off.", func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1e6 {
				return fmt.Errorf("must be a number from 0 to 1000000")
			}
			c.RateLimitRPS = f
			return nil
		}},
		{"PIXGATE_RATE_LIMIT_BURST", "100", "Burst of POST /transaction per account.", func(c *Config, v string) error {
			n, err := intIn(v, 0, 1_000_000)
			c.RateLimitBurst = int(n)
			return err
		}},
		{"PIXGATE_TOKEN_RATE_LIMIT_RPS", "10", "Token requests a second per client_id; 0 turns the limit off.", func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1e6 {
				return fmt.Errorf("must be a number from 0 to 1000000")
			}
			c.TokenRPS = f
			return nil
		}},
		{"PIXGATE_TOKEN_RATE_LIMIT_BURST", "20", "Burst of token requests per client_id.", func(c *Config, v string) error {
			n, err := intIn(v, 0, 1_000_000)
			c.TokenBurst = int(n)
			return err
		}},
		{"PIXGATE_TOKEN_FAILURE_LIMIT", "60", "Failed token requests (400, 401) a minute per client address, and wrong secrets a minute per client_id; 0 turns both limits off.", func(c *Config, v string) error {
			n, err := intIn(v, 0, 1_000_000)
			c.TokenFailures = int(n)
			return err
		}},
		{"PIXGATE_PUBLIC_URL", "", "https base URL at which payers reach pixgate: each transaction's paymentUrl is this base, /pay/ and its token, and charges are dynamic BR Codes whose payload location is under it. Empty: the server's own address (http://localhost:8080 for make run) and static codes.", func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			base, err := publicBaseURL(v)
			c.PublicURL = base
			return err
		}},
		{"PIXGATE_PAY_RATE_LIMIT_RPS", "5", "Requests a second per client address to the payment page and its status routes; 0 turns the limit off.", func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1e6 {
				return fmt.Errorf("must be a number from 0 to 1000000")
			}
			c.PayRateLimitRPS = f
			return nil
		}},
		{"PIXGATE_PAY_RATE_LIMIT_BURST", "30", "Burst of payment page requests per client address.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 1_000_000)
			c.PayRateLimitBurst = int(n)
			return err
		}},
		{"PIXGATE_PAY_STREAMS_PER_CHARGE", "5", "Live channels (server-sent events) of the payment page open at once per charge.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 10_000)
			c.PayStreamsCharge = int(n)
			return err
		}},
		{"PIXGATE_PAY_STREAMS_PER_ADDRESS", "20", "Live channels of the payment page open at once per client address.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 100_000)
			c.PayStreamsAddress = int(n)
			return err
		}},
		{"PIXGATE_PIX_SIGNING_KEY_FILE", "", "PEM RSA private key (2048 bits or more) that signs the payload locations of dynamic charges, never the token key; empty generates one with a warning. Only with PIXGATE_PUBLIC_URL.", func(c *Config, v string) error {
			c.PixSigningKey = v
			return nil
		}},
		{"PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE", "", "PEM file of earlier signing keys (private or public keys, or certificates), served in the key set beside the current one after a rotation.", func(c *Config, v string) error {
			c.PixSigningPrevious = v
			return nil
		}},
		{"PIXGATE_PIX_SIGNING_CERT_FILE", "", "PEM certificate chain of the signing key, its own certificate first; sent as x5c and x5t#S256. In production it must chain to ICP-Brasil.", func(c *Config, v string) error {
			c.PixSigningCert = v
			return nil
		}},
		{"PIXGATE_PIX_LOCATION_RATE_LIMIT_RPS", "50", "Requests a second per client address to GET /pix/qr/{locationId} and /pix/jwks (a payer's bank fetches from few addresses); 0 turns the limit off.", func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1e6 {
				return fmt.Errorf("must be a number from 0 to 1000000")
			}
			c.PixLocationRPS = f
			return nil
		}},
		{"PIXGATE_PIX_LOCATION_RATE_LIMIT_BURST", "200", "Burst of payload location requests per client address.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 1_000_000)
			c.PixLocationBurst = int(n)
			return err
		}},
		{"PIXGATE_WEBHOOK_ALLOW_PRIVATE", "false", "Let webhooks reach loopback and private addresses (development and tests only).", boolSetting(func(c *Config) *bool { return &c.WebhookPrivate })},
		{"PIXGATE_WEBHOOK_CA_FILE", "", "PEM file of extra CA certificates trusted for webhook receivers.", func(c *Config, v string) error {
			c.WebhookCAFile = v
			return nil
		}},
		{"PIXGATE_WEBHOOK_LEASE", "30s", "How long an instance holds the deliveries it claimed: after a crash, others resend them once it ends.", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 15*time.Second || d > time.Hour {
				return fmt.Errorf("must be a duration from 15s (an attempt may take 10 s) to 1h")
			}
			c.WebhookLease = d
			return nil
		}},
		{"PIXGATE_WEBHOOK_WORKERS", "8", "Webhook deliveries sent at once per instance.", func(c *Config, v string) error {
			n, err := intIn(v, 1, 1024)
			c.WebhookWorkers = int(n)
			return err
		}},
	}
}

// loadConfig reads every setting from getenv; the first bad value stops it with a one-line
// message naming the variable (and never its value, which may be a secret).
func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{MaxRequestBytes: 1 << 20}
	for _, s := range settings() {
		v, ok := strings.TrimSpace(getenv(s.name)), true
		if v == "" {
			v, ok = s.def, false
		}
		if err := s.set(&c, v); err != nil {
			where := "value"
			if !ok {
				where = "default"
			}
			return Config{}, fmt.Errorf("%s: invalid %s: %v", s.name, where, err)
		}
	}
	if c.Store == "mongo" && len(c.CredentialKey) == 0 {
		return Config{}, fmt.Errorf("PIXGATE_CREDENTIAL_KEY: required with PIXGATE_STORE=mongo, so that stored secrets still match after a restart")
	}
	if err := acquirerConfig(c); err != nil {
		return Config{}, err
	}
	if err := payoutConfig(&c); err != nil {
		return Config{}, err
	}
	if err := pixLocationConfig(c); err != nil {
		return Config{}, err
	}
	if err := callbackConfig(&c); err != nil {
		return Config{}, err
	}
	if c.UpstreamToken != "" || c.UpstreamJWKS != "" {
		// In the settings table's order, so that the same configuration always names the same
		// variable first.
		for _, u := range []struct{ name, value string }{
			{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL", c.UpstreamToken}, {"PIXGATE_AUTH_UPSTREAM_JWKS_URL", c.UpstreamJWKS},
			{"PIXGATE_AUTH_UPSTREAM_ISSUER", c.UpstreamIssuer}, {"PIXGATE_AUTH_UPSTREAM_AUDIENCE", c.UpstreamAud},
		} {
			if u.value == "" {
				return Config{}, fmt.Errorf("%s: required when an upstream authentication provider is configured", u.name)
			}
		}
	}
	return c, nil
}

// publicBaseURL checks PIXGATE_PUBLIC_URL: an absolute https URL with a host, maybe a path
// prefix, and nothing else (no user info, query or fragment). It returns it without a trailing
// slash.
func publicBaseURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(v, "?") || strings.HasSuffix(v, "#") {
		return "", fmt.Errorf("must be an https URL such as https://pay.example.com, without user info, query or fragment")
	}
	return strings.TrimRight(v, "/"), nil
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

func hostPort(dst *string, v string) error {
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("must be host:port")
	}
	*dst = v
	return nil
}

func oneOf(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
}

func intIn(v string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("must be a whole number from %d to %d", min, max)
	}
	return n, nil
}

func int64Setting(min, max int64, field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := intIn(v, min, max)
		*field(c) = n
		return err
	}
}

func boolSetting(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*field(c) = b
		return nil
	}
}

func durationSetting(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Hour {
			return fmt.Errorf("must be a duration such as 5s, above 0 and at most 1h")
		}
		*field(c) = d
		return nil
	}
}

func nonEmpty(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			return fmt.Errorf("must not be empty")
		}
		*field(c) = v
		return nil
	}
}

func urlOrEmpty(v string) error {
	if v == "" || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://") {
		return nil
	}
	return fmt.Errorf("must be an http(s) URL")
}

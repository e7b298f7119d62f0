package main

import (
	"runtime"
	"time"
)

// PixConfig is the PIX key that receives the payments, the merchant the BR Codes name, the
// fees, and the payload locations of dynamic charges (wire_pixlocation.go, with
// Server.PublicURL only).
type PixConfig struct {
	Key                 string
	MerchantName        string
	MerchantCity        string
	FeeFixedCents       int64
	FeeBasisPoints      int64
	WithdrawalFeeCents  int64
	SigningKeyFile      string // PEM file of the key that signs payload locations
	SigningPreviousFile string // PEM file of earlier keys kept in the key set
	SigningCertFile     string // PEM file of the signing key's certificate chain
	LocationRPS         float64
	LocationBurst       int
}

func (p *PixConfig) settings() []setting {
	return []setting{
		{"PIXGATE_PIX_KEY", "pix@pixgate.example", "PIX key that receives the payments: a valid e-mail, +55 phone, CPF, CNPJ or EVP key.", nonEmpty(&p.Key)},
		{"PIXGATE_PIX_MERCHANT_NAME", "PIXGATE SANDBOX", "Merchant name in the BR Code (cut at 25 ASCII characters).", nonEmpty(&p.MerchantName)},
		{"PIXGATE_PIX_MERCHANT_CITY", "SAO PAULO", "Merchant city in the BR Code (cut at 15 ASCII characters).", nonEmpty(&p.MerchantCity)},
		{"PIXGATE_FEE_FIXED_CENTS", "0", "Fixed fee on each paid transaction, in cents.", whole(&p.FeeFixedCents, 0, 100_000)},
		{"PIXGATE_FEE_BASIS_POINTS", "99", "Fee on each paid transaction in basis points (99 = 0.99%).", whole(&p.FeeBasisPoints, 0, 10_000)},
		{"PIXGATE_WITHDRAWAL_FEE_CENTS", "0", "Fee on each withdrawal, in cents.", whole(&p.WithdrawalFeeCents, 0, 100_000)},
		{"PIXGATE_PIX_SIGNING_KEY_FILE", "", "PEM RSA private key (2048 bits or more) that signs the payload locations of dynamic charges, never the token key; empty generates one with a warning. Only with PIXGATE_PUBLIC_URL.", text(&p.SigningKeyFile)},
		{"PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE", "", "PEM file of earlier signing keys (private or public keys, or certificates), served in the key set beside the current one after a rotation.", text(&p.SigningPreviousFile)},
		{"PIXGATE_PIX_SIGNING_CERT_FILE", "", "PEM certificate chain of the signing key, its own certificate first; sent as x5c and x5t#S256. In production it must chain to ICP-Brasil.", text(&p.SigningCertFile)},
		{"PIXGATE_PIX_LOCATION_RATE_LIMIT_RPS", "50", "Requests a second per client address to GET /pix/qr/{locationId} and /pix/jwks (a payer's bank fetches from few addresses); 0 turns the limit off.", rate(&p.LocationRPS)},
		{"PIXGATE_PIX_LOCATION_RATE_LIMIT_BURST", "200", "Burst of payload location requests per client address.", whole(&p.LocationBurst, 1, 1_000_000)},
	}
}

// QRConfig is how the QR images of charges are drawn.
type QRConfig struct {
	Process     bool
	Concurrency int           // 0 in the variable: the number of CPUs
	Queue       int           // creations that may wait for a drawing; 0: the renderer's default
	Timeout     time.Duration // a drawing's deadline, its wait included
}

func (q *QRConfig) settings() []setting {
	return []setting{
		{"PIXGATE_QR_PROCESS", "true", "Draw QR images in a child process of the lowest priority (pixgate qr-worker, started by serve), so that their CPU and memory never slow requests; false draws them in the serving process, on threads of the lowest priority.", boolean(&q.Process)},
		{"PIXGATE_QR_CONCURRENCY", "0", "QR images drawn at once, at the lowest priority so that other requests always find a core; 0 means the number of CPUs.", orCPUs(&q.Concurrency)},
		{"PIXGATE_QR_QUEUE", "0", "Creations that may wait for a QR drawing beyond those being drawn; when full, POST /transaction answers 503 unavailable with Retry-After and stores nothing. 0 means 32 per drawing at once (about 50 ms of waiting at most).", whole(&q.Queue, 0, 1_000_000)},
		{"PIXGATE_QR_TIMEOUT", "10s", "Longest a creation waits for its QR image (its wait for a drawing included); past it POST /transaction answers 503 unavailable with Retry-After and stores nothing, and a drawing process that answered nothing in that time is killed and started again. From 1s to 25s (the server's write timeout is 30 s).",
			durationIn(&q.Timeout, time.Second, 25*time.Second, "must be a duration from 1s to 25s, such as 10s")},
	}
}

// orCPUs reads a whole number from 0 to 1024, 0 meaning the number of CPUs.
func orCPUs(dst *int) func(string) error {
	return func(v string) error {
		n, err := intIn(v, 0, 1024)
		*dst = int(n)
		if n == 0 {
			*dst = runtime.GOMAXPROCS(0)
		}
		return err
	}
}

// PageConfig bounds what payers may ask of the payment page.
type PageConfig struct {
	RPS                  float64
	Burst                int
	MaxStreamsPerCharge  int
	MaxStreamsPerAddress int
}

func (p *PageConfig) settings() []setting {
	return []setting{
		{"PIXGATE_PAY_RATE_LIMIT_RPS", "5", "Requests a second per client address to the payment page and its status routes; 0 turns the limit off.", rate(&p.RPS)},
		{"PIXGATE_PAY_RATE_LIMIT_BURST", "30", "Burst of payment page requests per client address.", whole(&p.Burst, 1, 1_000_000)},
		{"PIXGATE_PAY_STREAMS_PER_CHARGE", "5", "Live channels (server-sent events) of the payment page open at once per charge.", whole(&p.MaxStreamsPerCharge, 1, 10_000)},
		{"PIXGATE_PAY_STREAMS_PER_ADDRESS", "20", "Live channels of the payment page open at once per client address.", whole(&p.MaxStreamsPerAddress, 1, 100_000)},
	}
}

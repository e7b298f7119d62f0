package pixsign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"

	"github.com/pixgate/pixgate/ports"
)

var _ ports.PixLocationSigner = (*Signer)(nil)

// Config is what a Signer signs with.
type Config struct {
	// Key signs every payload. Required.
	Key *rsa.PrivateKey
	// Previous are the public keys of earlier signing keys, served in the key set beside Key's
	// so that a payer's bank holding a JWS or a cached key set from before a rotation still
	// verifies it. A key equal to Key's is left out.
	Previous []*rsa.PublicKey
	// Chain is Key's certificate chain, its own certificate first; optional. When given, every
	// JWS header and Key's entry in the key set carry it (x5c) and its certificate's SHA-256
	// thumbprint (x5t#S256). In production it must chain to ICP-Brasil.
	Chain []*x509.Certificate
	// KeySetURL is where the key set is served, the jku of every header: an https URL.
	KeySetURL string
}

// Signer writes payload locations as compact JWS, PS256, with kid (the key's RFC 7638
// thumbprint) and jku in the header. It holds only values fixed at construction and is safe
// for concurrent use.
type Signer struct {
	key    *rsa.PrivateKey
	kid    string
	header string // the encoded protected header, the same for every JWS
	keySet []byte
}

// New checks the configuration and prepares the header and the key set once.
func New(cfg Config) (*Signer, error) {
	if cfg.Key == nil {
		return nil, errors.New("pixsign: a signing key is required")
	}
	if err := checkBits(&cfg.Key.PublicKey); err != nil {
		return nil, err
	}
	if u, err := url.Parse(cfg.KeySetURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("pixsign: the key set URL %q must be an https URL", cfg.KeySetURL)
	}
	current := jwk(&cfg.Key.PublicKey)
	header := map[string]any{"alg": "PS256", "kid": current.Kid, "jku": cfg.KeySetURL}
	if len(cfg.Chain) > 0 {
		if !cfg.Key.PublicKey.Equal(cfg.Chain[0].PublicKey) {
			return nil, errors.New("pixsign: the first certificate of the chain is not the signing key's")
		}
		sum := sha256.Sum256(cfg.Chain[0].Raw)
		current.X5T = base64.RawURLEncoding.EncodeToString(sum[:])
		for _, c := range cfg.Chain {
			current.X5C = append(current.X5C, base64.StdEncoding.EncodeToString(c.Raw))
		}
		header["x5c"], header["x5t#S256"] = current.X5C, current.X5T
	}
	set := jwkSet{Keys: []jwkJSON{current}}
	for _, k := range cfg.Previous {
		if k == nil || k.Equal(&cfg.Key.PublicKey) {
			continue
		}
		if err := checkBits(k); err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jwk(k))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("pixsign: header: %w", err)
	}
	ks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("pixsign: key set: %w", err)
	}
	return &Signer{key: cfg.Key, kid: current.Kid, header: base64.RawURLEncoding.EncodeToString(h), keySet: ks}, nil
}

// KeyID is the kid of the signing key: its RFC 7638 thumbprint.
func (s *Signer) KeyID() string { return s.kid }

// KeySet implements ports.PixLocationSigner: the JWKS document, the same bytes every time.
func (s *Signer) KeySet() []byte { return bytes.Clone(s.keySet) }

// Sign implements ports.PixLocationSigner.
func (s *Signer) Sign(ctx context.Context, p ports.PixLocationPayload) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	body, err := json.Marshal(payloadOf(p))
	if err != nil {
		return "", fmt.Errorf("pixsign: payload: %w", err)
	}
	input := s.header + "." + base64.RawURLEncoding.EncodeToString(body)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPSS(rand.Reader, s.key, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		return "", fmt.Errorf("pixsign: sign: %w", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// payload is the JWS payload, in Banco Central's API Pix names (the cob of "GET
// /v2/cob/{txid}" as a payer's bank reads it at the location).
type payload struct {
	Revisao    int `json:"revisao"`
	Calendario struct {
		Criacao      string `json:"criacao"`
		Apresentacao string `json:"apresentacao"`
		Expiracao    int    `json:"expiracao"`
	} `json:"calendario"`
	TxID  string `json:"txid"`
	Valor struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              string `json:"chave"`
	Status             string `json:"status"`
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
}

// timeLayout writes times in UTC with milliseconds, as every time pixgate answers.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func payloadOf(p ports.PixLocationPayload) payload {
	var out payload
	c := p.Cob
	out.Revisao = c.Revision
	out.Calendario.Criacao = c.CreatedAt.UTC().Format(timeLayout)
	out.Calendario.Apresentacao = p.PresentedAt.UTC().Format(timeLayout)
	out.Calendario.Expiracao = c.ExpirationSeconds
	out.TxID = c.Location.CobTxID
	out.Valor.Original = c.Amount.Reais()
	out.Chave = p.Key
	out.Status = string(c.Status)
	out.SolicitacaoPagador = c.PayerRequest
	return out
}

// jwkJSON is one key of the set (RFC 7517), with the members RFC 7638 hashes for its kid.
type jwkJSON struct {
	Kty string   `json:"kty"`
	Use string   `json:"use"`
	Alg string   `json:"alg"`
	Kid string   `json:"kid"`
	N   string   `json:"n"`
	E   string   `json:"e"`
	X5C []string `json:"x5c,omitempty"`
	X5T string   `json:"x5t#S256,omitempty"`
}

type jwkSet struct {
	Keys []jwkJSON `json:"keys"`
}

func jwk(k *rsa.PublicKey) jwkJSON {
	n := base64.RawURLEncoding.EncodeToString(k.N.Bytes())
	e := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())
	// RFC 7638: the required members, in lexicographic order, without white space.
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return jwkJSON{Kty: "RSA", Use: "sig", Alg: "PS256", Kid: base64.RawURLEncoding.EncodeToString(sum[:]), N: n, E: e}
}

package main

import (
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/pixsign"
	"github.com/pixgate/pixgate/application"
)

// pixLocationPrefix is what a dynamic BR Code holds before each location id: the public
// address without its scheme (payers' banks always fetch over https), its path prefix kept,
// then the location route. "" without PIXGATE_PUBLIC_URL: codes are static.
func pixLocationPrefix(publicURL string) string {
	if publicURL == "" {
		return ""
	}
	return strings.TrimPrefix(publicURL, "https://") + httpapi.PixLocationPath
}

// pixLocationConfig checks the dynamic charges' settings together: the public address must
// leave room for the location id in the BR Code, and signing settings mean nothing without it.
func pixLocationConfig(c Config) error {
	if c.Server.PublicURL == "" {
		for name, v := range map[string]string{"PIXGATE_PIX_SIGNING_KEY_FILE": c.Pix.SigningKeyFile,
			"PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE": c.Pix.SigningPreviousFile, "PIXGATE_PIX_SIGNING_CERT_FILE": c.Pix.SigningCertFile} {
			if v != "" {
				return fmt.Errorf("%s: set without PIXGATE_PUBLIC_URL, which turns dynamic charges on", name)
			}
		}
		return nil
	}
	if n := len(pixLocationPrefix(c.Server.PublicURL)); n > pix.MaxLocationPrefix {
		return fmt.Errorf("PIXGATE_PUBLIC_URL: too long for a dynamic BR Code: without https:// and with %s it has %d characters, at most %d fit",
			httpapi.PixLocationPath, n, pix.MaxLocationPrefix)
	}
	return nil
}

// wirePixLocation builds the payload locations of dynamic charges, when pixgate has a public
// address: the signer with its own key (never the token key), the use case that answers
// GET /pix/qr/{locationId}, and its per-address rate limit. With a PSP, which serves the
// locations of the charges it makes, pixgate serves none.
func (a *app) wirePixLocation(deps *httpapi.Deps) error {
	if a.cfg.Server.PublicURL == "" || a.psp != nil {
		return nil
	}
	var key *rsa.PrivateKey
	var err error
	if a.cfg.Pix.SigningKeyFile != "" {
		if key, err = pixsign.LoadKeyFile(a.cfg.Pix.SigningKeyFile); err != nil {
			return fmt.Errorf("PIXGATE_PIX_SIGNING_KEY_FILE: %w", err)
		}
	} else {
		a.log.Warn("no PIXGATE_PIX_SIGNING_KEY_FILE: generated a key that signs dynamic charges; payers' banks see another key after every restart, and in production the key's certificate must chain to ICP-Brasil")
		if key, err = pixsign.GenerateKey(); err != nil {
			return err
		}
	}
	var previous []*rsa.PublicKey
	if a.cfg.Pix.SigningPreviousFile != "" {
		if previous, err = pixsign.LoadPublicKeysFile(a.cfg.Pix.SigningPreviousFile); err != nil {
			return fmt.Errorf("PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE: %w", err)
		}
	}
	var chain []*x509.Certificate
	if a.cfg.Pix.SigningCertFile != "" {
		if chain, err = pixsign.LoadCertificateChainFile(a.cfg.Pix.SigningCertFile); err != nil {
			return fmt.Errorf("PIXGATE_PIX_SIGNING_CERT_FILE: %w", err)
		}
	}
	signer, err := pixsign.New(pixsign.Config{Key: key, Previous: previous, Chain: chain, KeySetURL: a.cfg.Server.PublicURL + httpapi.PixKeySetPath})
	if err != nil {
		return fmt.Errorf("PIXGATE_PIX_SIGNING_KEY_FILE: %w", err)
	}
	cacheSize := a.pixLocationCache
	if cacheSize == 0 {
		cacheSize = application.DefaultPixLocationCacheSize
	}
	deps.PixLocation = &httpapi.PixLocationDeps{
		Show:    application.NewShowPixLocation(a.stores.transactions, signer, a.clock, a.cfg.Pix.Key, cacheSize),
		KeySet:  signer.KeySet(),
		Limiter: httpapi.NewRateLimiter(a.cfg.Pix.LocationRPS, a.cfg.Pix.LocationBurst, a.clock),
	}
	return nil
}

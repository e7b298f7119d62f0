package application_test

// This benchmark wires real adapters (jwtauth, memory) because its point is the cost of the
// real hot path. Only this test file imports them; the application package itself does not.

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// BenchmarkAuthenticate measures what every business request pays to authenticate (verify the
// token, then check its credential and account in the store, or in the AuthCache) beside the
// bare RSA verification of the same token, so that the overhead can be read as a ratio:
//
//	go test -run '^$' -bench BenchmarkAuthenticate ./application/
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Now()}
	key, err := jwtauth.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	cfg := jwtauth.Config{Issuer: "https://pixgate.bench", Audience: "pixgate", Clock: clock}
	issuer, err := jwtauth.NewIssuer(cfg, key)
	if err != nil {
		b.Fatal(err)
	}
	repo := memory.NewAccounts()
	hasher, err := system.NewClientSecrets([]byte("bench-key-bench-key-bench-key-32"))
	if err != nil {
		b.Fatal(err)
	}
	created, err := application.NewCreateAccount(repo, &fakeIDs{}, clock, hasher).Execute(ctx, "Bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	grant, err := application.NewIssueToken(repo, issuer, hasher, time.Hour).Execute(ctx, created.Credential.ClientID, created.Credential.Secret, nil)
	if err != nil {
		b.Fatal(err)
	}
	token := grant.AccessToken

	b.Run("bare rsa.VerifyPKCS1v15", func(b *testing.B) {
		dot := strings.LastIndexByte(token, '.')
		sig, err := base64.RawURLEncoding.DecodeString(token[dot+1:])
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			digest := sha256.Sum256([]byte(token[:dot]))
			if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, cache := range []struct {
		name string
		size int
	}{{"uncached", 0}, {"cached", 1024}} {
		jwtVerifier, err := jwtauth.NewVerifier(cfg, jwtauth.VerifierOptions{Leeway: 30 * time.Second}, &key.PublicKey)
		if err != nil {
			b.Fatal(err)
		}
		var verifier ports.TokenVerifier = jwtVerifier
		if cache.size > 0 {
			verifier = application.NewCachingVerifier(jwtVerifier, clock, cache.size)
		}
		authenticate := application.NewAuthenticate(verifier, repo)
		withStanding := application.NewCachedAuthenticate(verifier, repo, application.NewAuthCache(time.Hour, clock, 0))
		b.Run("jwtauth.Verify "+cache.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verifier.Verify(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Authenticate "+cache.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := authenticate.Execute(ctx, token)
				if err != nil {
					b.Fatal(err)
				}
				if !p.HasScope(domain.ScopeTransactionWrite) {
					b.Fatal("scope lost")
				}
			}
		})
		b.Run("Authenticate "+cache.name+", AuthCache", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := withStanding.Execute(ctx, token)
				if err != nil {
					b.Fatal(err)
				}
				if !p.HasScope(domain.ScopeTransactionWrite) {
					b.Fatal("scope lost")
				}
			}
		})
	}
}

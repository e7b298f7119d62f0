package system_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/system"
)

func TestClientSecretsHashWithTheServerKey(t *testing.T) {
	if _, err := system.NewClientSecrets(make([]byte, 31)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
	a, _ := system.NewClientSecrets(bytes.Repeat([]byte("a"), 32))
	b, _ := system.NewClientSecrets(bytes.Repeat([]byte("b"), 32))
	if !bytes.Equal(a.Hash("s3cret"), a.Hash("s3cret")) {
		t.Error("hashing is not deterministic")
	}
	if bytes.Equal(a.Hash("s3cret"), b.Hash("s3cret")) {
		t.Error("the hash does not depend on the key")
	}
	if bytes.Contains(a.Hash("s3cret"), []byte("s3cret")) {
		t.Error("the hash holds the secret")
	}
	if !a.Matches("s3cret", a.Hash("s3cret")) || a.Matches("s3creT", a.Hash("s3cret")) || a.Matches("s3cret", nil) {
		t.Error("Matches is wrong")
	}
}

func TestClientSecretsAreFreshAndURLSafe(t *testing.T) {
	s, err := system.NewClientSecrets(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.NewSecret(), s.NewSecret()
	if a == b || len(a) != 43 || strings.Trim(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		t.Fatalf("secrets %q and %q, want two different 43-character base64url strings", a, b)
	}
}

func TestWebhookSecretsAreStandardWebhooksSecrets(t *testing.T) {
	s, err := system.NewClientSecrets(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.NewWebhookSecret(), s.NewWebhookSecret()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if a == b || !strings.HasPrefix(a, "whsec_") || err != nil || len(raw) != 32 {
		t.Fatalf("secrets %q and %q, want two different whsec_ and the base64 of 32 bytes (%v)", a, b, err)
	}
}

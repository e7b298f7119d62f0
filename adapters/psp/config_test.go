package psp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

func TestNewNamesTheSettingAtFault(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	ca := p.CA
	other := ca.IssueClient(t, "someone else")
	expired := ca.Issue(t, psptest.Spec{CommonName: "pixgate", Client: true,
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("just words"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const password = "the-right-Password-71"
	withPassword := p.Client.WriteP12(t, password)
	pem := func(c *psp.Config) { c.CertFile, c.KeyFile = p.Client.CertFile, p.Client.KeyFile }
	p12 := func(file, pw string) func(*psp.Config) {
		return func(c *psp.Config) { c.CertFile, c.KeyFile, c.P12File, c.P12Password = "", "", file, pw }
	}
	for name, tc := range map[string]struct {
		edit func(*psp.Config)
		want psp.Setting
	}{
		"no certificate at all":                {func(c *psp.Config) { c.CertFile, c.KeyFile = "", "" }, psp.SettingCertFile},
		"a certificate without its key":        {func(c *psp.Config) { c.KeyFile = "" }, psp.SettingKeyFile},
		"a key without its certificate":        {func(c *psp.Config) { c.CertFile = "" }, psp.SettingCertFile},
		"PEM files and a PKCS#12 file":         {func(c *psp.Config) { pem(c); c.P12File = p.Client.P12File }, psp.SettingP12File},
		"a P12 password without the file":      {func(c *psp.Config) { c.P12Password = "x" }, psp.SettingP12Password},
		"a certificate file that is not there": {func(c *psp.Config) { c.CertFile = missing }, psp.SettingCertFile},
		"a key file that is not there":         {func(c *psp.Config) { c.KeyFile = missing }, psp.SettingKeyFile},
		"a key file that cannot be read":       {func(c *psp.Config) { c.KeyFile = dir }, psp.SettingKeyFile},
		"a PKCS#12 file that cannot be read":   {p12(dir, ""), psp.SettingP12File},
		"a certificate file without PEM":       {func(c *psp.Config) { c.CertFile = notPEM }, psp.SettingCertFile},
		"a key file without PEM":               {func(c *psp.Config) { c.KeyFile = notPEM }, psp.SettingKeyFile},
		"the key of another certificate":       {func(c *psp.Config) { c.KeyFile = other.KeyFile }, psp.SettingKeyFile},
		"an expired certificate": {func(c *psp.Config) {
			c.CertFile, c.KeyFile = expired.CertFile, expired.KeyFile
		}, psp.SettingCertFile},
		"a PKCS#12 file that is not there":           {p12(missing, ""), psp.SettingP12File},
		"a PKCS#12 file that is no bundle":           {p12(notPEM, ""), psp.SettingP12File},
		"a PKCS#12 file with a wrong password":       {p12(withPassword, "not-"+password), psp.SettingP12Password},
		"a PKCS#12 file opened without its password": {p12(withPassword, ""), psp.SettingP12Password},
		"a CA file that is not there":                {func(c *psp.Config) { c.CAFiles = []string{missing} }, psp.SettingCAFile},
		"a CA file without certificates":             {func(c *psp.Config) { c.CAFiles = []string{p.Client.KeyFile} }, psp.SettingCAFile},
		"an http API URL":                            {func(c *psp.Config) { c.APIURL = "http://pix.psp.example/v2" }, psp.SettingAPIURL},
		"an API URL with credentials":                {func(c *psp.Config) { c.APIURL = "https://u:p@pix.psp.example/v2" }, psp.SettingAPIURL},
		"no API URL":                                 {func(c *psp.Config) { c.APIURL = "" }, psp.SettingAPIURL},
		"an http token URL":                          {func(c *psp.Config) { c.TokenURL = "http://pix.psp.example/oauth/token" }, psp.SettingTokenURL},
		"no client id":                               {func(c *psp.Config) { c.ClientID = "" }, psp.SettingClientID},
		"a client id with a colon":                   {func(c *psp.Config) { c.ClientID = "a:b" }, psp.SettingClientID},
		"no client secret":                           {func(c *psp.Config) { c.ClientSecret = "" }, psp.SettingClientSecret},
		"a scope with a space":                       {func(c *psp.Config) { c.Scopes = []string{"cob.write cob.read"} }, psp.SettingScopes},
		"an unknown token request":                   {func(c *psp.Config) { c.TokenRequest = "xml" }, psp.SettingTokenRequest},
		"a negative timeout":                         {func(c *psp.Config) { c.Timeout = -time.Second }, psp.SettingTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config(p)
			tc.edit(&cfg)
			_, err := psp.New(cfg)
			var se *psp.SettingError
			if !errors.As(err, &se) || se.Setting != tc.want {
				t.Fatalf("err = %v, want a %q error", err, tc.want)
			}
			if !strings.Contains(err.Error(), string(tc.want)) {
				t.Fatalf("err = %q does not name %q", err, tc.want)
			}
			for _, secret := range []string{p.ClientSecret, password, p.Client.P12Password} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("err = %q shows a secret", err)
				}
			}
		})
	}
}

func TestNewReportsEverySettingAtFaultAtOnce(t *testing.T) {
	t.Parallel()
	_, err := psp.New(psp.Config{APIURL: "http://x", TokenRequest: "xml"})
	want := []psp.Setting{psp.SettingAPIURL, psp.SettingClientID, psp.SettingClientSecret, psp.SettingTokenRequest, psp.SettingCertFile}
	for _, s := range want {
		if !strings.Contains(err.Error(), "psp: "+string(s)+":") {
			t.Errorf("err = %q does not name %q", err, s)
		}
	}
}

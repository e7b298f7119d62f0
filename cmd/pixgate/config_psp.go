package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
)

// pspTransport is how pixgate reaches one of a PSP's APIs and proves who it is there (OAuth 2.0
// client credentials over mutual TLS, as Banco Central's security manual requires): the
// settings that PIXGATE_ACQUIRER_* (config_acquirer.go) and PIXGATE_PAYOUT_*
// (config_payouts.go) both have.
type pspTransport struct {
	APIURL string
	// TokenURL is empty when the API URL's scheme and host with /oauth/token is meant.
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
	// TokenRequest is "form" or "json" (empty: form).
	TokenRequest string
	CertFile     string
	KeyFile      string
	P12File      string
	P12Password  string
	CAFile       string
}

// config is the transport's psp.Config: timeout bounds each call (0: the transport's default),
// and observe, when not nil, sees every call.
func (t pspTransport) config(timeout time.Duration, observe func(psp.Observation)) psp.Config {
	cfg := psp.Config{
		APIURL: t.APIURL, TokenURL: t.TokenURL, ClientID: t.ClientID, ClientSecret: t.ClientSecret,
		Scopes: t.Scopes, TokenRequest: psp.TokenRequest(t.TokenRequest),
		CertFile: t.CertFile, KeyFile: t.KeyFile, P12File: t.P12File, P12Password: t.P12Password,
		Timeout: timeout, Observe: observe,
	}
	if t.CAFile != "" {
		cfg.CAFiles = []string{t.CAFile}
	}
	return cfg
}

// httpsURL reads an absolute https URL with a host and no credentials or fragment.
func httpsURL(dst *string) func(string) error {
	return func(v string) error {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
			return fmt.Errorf("must be an https URL with a host, without credentials or fragment")
		}
		*dst = v
		return nil
	}
}

// transportVariables names the PIXGATE_<PREFIX>_* variable's suffix of each setting of the
// transport.
var transportVariables = map[psp.Setting]string{
	psp.SettingAPIURL: "API_URL", psp.SettingTokenURL: "TOKEN_URL", psp.SettingClientID: "CLIENT_ID",
	psp.SettingClientSecret: "CLIENT_SECRET", psp.SettingScopes: "SCOPES", psp.SettingTokenRequest: "TOKEN_REQUEST",
	psp.SettingCertFile: "CERT_FILE", psp.SettingKeyFile: "KEY_FILE", psp.SettingP12File: "P12_FILE",
	psp.SettingP12Password: "P12_PASSWORD", psp.SettingCAFile: "API_CA_FILE", psp.SettingTimeout: "TIMEOUT",
}

// transportSettingError rewrites the transport's errors with the variables an operator sets:
// one line per setting at fault, named by variable (given its suffix in transportVariables;
// false when the operator has no such variable), and every other error after fallback. The
// transport's errors never hold a secret.
func transportSettingError(err error, fallback string, variable func(suffix string) (string, bool)) error {
	var all []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		all = joined.Unwrap()
	} else {
		all = []error{err}
	}
	var lines []string
	for _, e := range all {
		var se *psp.SettingError
		if suffix, ok := transportVariables[settingOf(e, &se)]; ok {
			if name, ok := variable(suffix); ok {
				lines = append(lines, fmt.Sprintf("%s: %v", name, se.Err))
				continue
			}
		}
		lines = append(lines, fallback+": "+e.Error())
	}
	return errors.New(strings.Join(lines, "; "))
}

// settingOf is the setting an error of the transport names, or "".
func settingOf(err error, se **psp.SettingError) psp.Setting {
	if errors.As(err, se) {
		return (*se).Setting
	}
	return ""
}

package main

import (
	"fmt"
	"regexp"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
)

// AcquirerConfig is the PSP's API Pix (PIXGATE_ACQUIRER_*): where it is, and how pixgate proves
// who it is there (OAuth 2.0 client credentials over mutual TLS, as Banco Central's security
// manual requires). With APIURL, charges are made at the PSP and devolutions sent to it; the
// client settings also serve as the payout API's defaults (config_payouts.go), so they are read
// whether or not APIURL is set.
type AcquirerConfig struct {
	// Its APIURL is API Pix's https base; empty: no PSP (the sandbox, or production that only
	// takes callbacks).
	pspTransport
	// Name is each transaction's and withdrawal's `acquirer` with APIURL.
	Name string
	// Timeout bounds each call to the PSP, its token fetch and retries included.
	Timeout time.Duration
}

// On tells whether pixgate takes money through the PSP's API Pix.
func (a AcquirerConfig) On() bool { return a.APIURL != "" }

// transport is the PSP transport's configuration; observe, when not nil, sees every call.
func (a AcquirerConfig) transport(observe func(psp.Observation)) psp.Config {
	return a.config(a.Timeout, observe)
}

// acquirerName is PIXGATE_ACQUIRER_NAME's shape.
var acquirerName = regexp.MustCompile(`^[A-Z0-9_]{1,20}$`)

// settings are the PIXGATE_ACQUIRER_* variables of the PSP's API Pix. The files are read, and
// the settings checked together, when the client is built (wire_psp.go); its errors name the
// variables too.
func (a *AcquirerConfig) settings() []setting {
	return []setting{
		{"PIXGATE_ACQUIRER_API_URL", "", "https base URL of the PSP's API Pix (for example https://pix.psp.example/v2): charges are made there (PUT /cob/{txid}) and refunds and late payments sent back (PUT /pix/{e2eid}/devolucao/{id}). Not with PIXGATE_SANDBOX=true. Empty in production: no charge can be made, refunds wait for the acquirer's callback and late payments stay in suspense.", optional(httpsURL(&a.APIURL))},
		{"PIXGATE_ACQUIRER_NAME", "APIPIX", "Each transaction's and withdrawal's acquirer with PIXGATE_ACQUIRER_API_URL: 1 to 20 characters A-Z, 0-9 and _ (the sandbox's is SANDBOX).", acquirerNameOf(&a.Name)},
		{"PIXGATE_ACQUIRER_TOKEN_URL", "", "OAuth 2.0 token endpoint of the PSP. Empty: the API URL's scheme and host with /oauth/token.", optional(httpsURL(&a.TokenURL))},
		{"PIXGATE_ACQUIRER_CLIENT_ID", "", "OAuth 2.0 client id at the PSP (required with PIXGATE_ACQUIRER_API_URL).", text(&a.ClientID)},
		{"PIXGATE_ACQUIRER_CLIENT_SECRET", "", "OAuth 2.0 client secret at the PSP (required with PIXGATE_ACQUIRER_API_URL).", text(&a.ClientSecret)},
		{"PIXGATE_ACQUIRER_SCOPES", "cob.write cob.read pix.write pix.read webhook.write webhook.read", "OAuth 2.0 scopes asked of the PSP, separated by spaces (sent with PIXGATE_ACQUIRER_TOKEN_REQUEST=form only).", words(&a.Scopes)},
		{"PIXGATE_ACQUIRER_TOKEN_REQUEST", "form", "How the token is asked for: form (RFC 6749: a form body, the credentials in HTTP Basic) or json (HTTP Basic and the body {\"grant_type\":\"client_credentials\"}, as some PSPs want).", oneOf(&a.TokenRequest, "form", "json")},
		{"PIXGATE_ACQUIRER_CERT_FILE", "", "PEM client certificate for the PSP (mutual TLS), with PIXGATE_ACQUIRER_KEY_FILE.", text(&a.CertFile)},
		{"PIXGATE_ACQUIRER_KEY_FILE", "", "PEM private key of PIXGATE_ACQUIRER_CERT_FILE.", text(&a.KeyFile)},
		{"PIXGATE_ACQUIRER_P12_FILE", "", "PKCS#12 client certificate and key for the PSP, as PSPs hand them out, instead of the PEM files.", text(&a.P12File)},
		{"PIXGATE_ACQUIRER_P12_PASSWORD", "", "Password of PIXGATE_ACQUIRER_P12_FILE (may be empty).", text(&a.P12Password)},
		{"PIXGATE_ACQUIRER_API_CA_FILE", "", "PEM file of extra CA certificates trusted for the PSP's API and token endpoint.", text(&a.CAFile)},
		{"PIXGATE_ACQUIRER_TIMEOUT", "10s", "Longest a call to the PSP may take, its token and retries included; a charge the PSP did not make in that time answers 503 unavailable. From 100ms to 60s.",
			durationIn(&a.Timeout, 100*time.Millisecond, time.Minute, "must be a duration from 100ms to 60s, such as 10s")},
	}
}

func acquirerNameOf(dst *string) func(string) error {
	return func(v string) error {
		if !acquirerName.MatchString(v) {
			return fmt.Errorf("must be 1 to 20 characters A-Z, 0-9 and _")
		}
		*dst = v
		return nil
	}
}

// acquirerConfig checks what the PSP's settings need of the others: not the sandbox, whose own
// acquirer makes charges and answers devolutions.
func acquirerConfig(c Config) error {
	if c.Acquirer.On() && c.Sandbox.On {
		return fmt.Errorf("PIXGATE_ACQUIRER_API_URL: not with PIXGATE_SANDBOX=true, whose acquirer makes charges and answers devolutions itself")
	}
	return nil
}

// acquirerSettingError rewrites the transport's errors with the variables an operator sets: one
// line per setting at fault, each naming its PIXGATE_ACQUIRER_* variable.
func acquirerSettingError(err error) error {
	return transportSettingError(err, "PIXGATE_ACQUIRER_API_URL", func(suffix string) (string, bool) {
		return "PIXGATE_ACQUIRER_" + suffix, true
	})
}

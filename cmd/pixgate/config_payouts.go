package main

import (
	"fmt"
	"time"
)

// Payout providers: who pays withdrawals out (PIXGATE_PAYOUT_PROVIDER).
const (
	payoutNone    = "none"
	payoutSandbox = "sandbox"
	payoutEfi     = "efi"
)

// PayoutsConfig is how withdrawals are paid out: the provider, and for a PSP its payout API
// and how pixgate proves who it is there (the same OAuth 2.0 client credentials over mutual
// TLS as the acquirer's API Pix).
type PayoutsConfig struct {
	// Provider is payoutNone, payoutSandbox or payoutEfi, decided: an empty
	// PIXGATE_PAYOUT_PROVIDER is the sandbox's with PIXGATE_SANDBOX=true and none otherwise.
	Provider string
	// Its TokenURL is empty when the payout API's scheme and host with /oauth/token is meant.
	pspTransport
	// Check is PIXGATE_PAYOUT_CHECK_SECONDS: how often a payout in progress is read back.
	Check time.Duration
}

// payoutDefaults are the payout settings that default to their PIXGATE_ACQUIRER_* namesake
// (the same PSP usually holds pixgate's key and pays its withdrawals out), each taken from
// the acquirer's configuration (config_acquirer.go) when the payout's own is empty. The client
// certificate's settings default as a group: a payout certificate of its own takes none of the
// acquirer's. They have no default of their own: payoutConfig fills them in.
var payoutDefaults = []struct {
	suffix string
	cert   bool
	doc    string
	field  func(*pspTransport) *string
}{
	{"CLIENT_ID", false, "OAuth 2.0 client id at the payout API. Default: PIXGATE_ACQUIRER_CLIENT_ID.",
		func(t *pspTransport) *string { return &t.ClientID }},
	{"CLIENT_SECRET", false, "OAuth 2.0 client secret at the payout API. Default: PIXGATE_ACQUIRER_CLIENT_SECRET.",
		func(t *pspTransport) *string { return &t.ClientSecret }},
	{"TOKEN_REQUEST", false, "`form` or `json`: how the payout API's token is asked for (Efí wants `json`). Default: PIXGATE_ACQUIRER_TOKEN_REQUEST, else `form`.",
		func(t *pspTransport) *string { return &t.TokenRequest }},
	{"CERT_FILE", true, "PEM client certificate for the payout API (mutual TLS), with PIXGATE_PAYOUT_KEY_FILE. Default: PIXGATE_ACQUIRER_CERT_FILE (the client certificate's four settings default together, when none of PIXGATE_PAYOUT_CERT_FILE, _KEY_FILE and _P12_FILE is set).",
		func(t *pspTransport) *string { return &t.CertFile }},
	{"KEY_FILE", true, "PEM private key of PIXGATE_PAYOUT_CERT_FILE. Default: PIXGATE_ACQUIRER_KEY_FILE (with the certificate).",
		func(t *pspTransport) *string { return &t.KeyFile }},
	{"P12_FILE", true, "PKCS#12 client certificate and key for the payout API, instead of the PEM files. Default: PIXGATE_ACQUIRER_P12_FILE (with the certificate).",
		func(t *pspTransport) *string { return &t.P12File }},
	{"P12_PASSWORD", true, "Password of PIXGATE_PAYOUT_P12_FILE (may be empty). Default: PIXGATE_ACQUIRER_P12_PASSWORD (with the certificate).",
		func(t *pspTransport) *string { return &t.P12Password }},
	{"API_CA_FILE", false, "PEM file of extra CA certificates trusted for the payout API. Default: PIXGATE_ACQUIRER_API_CA_FILE.",
		func(t *pspTransport) *string { return &t.CAFile }},
}

// settings are the PIXGATE_PAYOUT_* variables: the provider's, then those of payoutDefaults.
func (p *PayoutsConfig) settings() []setting {
	out := []setting{
		{"PIXGATE_PAYOUT_PROVIDER", "", "Who pays withdrawals out: `efi` (Efí's payout API, with PIXGATE_PAYOUT_API_URL), `sandbox` (only with PIXGATE_SANDBOX=true: payouts complete by themselves after PIXGATE_SANDBOX_SETTLE_SECONDS) or `none` (withdrawals wait PENDING, cancelable, and are sent once a provider is configured). Empty: sandbox with PIXGATE_SANDBOX=true, otherwise none. See [PSP.md, Payouts](PSP.md#payouts).",
			optional(oneOf(&p.Provider, payoutEfi, payoutSandbox, payoutNone))},
		{"PIXGATE_PAYOUT_API_URL", "", "https base URL of the payout API (Efí: `https://pix.api.efipay.com.br`); required with PIXGATE_PAYOUT_PROVIDER=efi.", optional(httpsURL(&p.APIURL))},
		{"PIXGATE_PAYOUT_TOKEN_URL", "", "OAuth 2.0 token endpoint of the payout API. Empty: the payout API URL's scheme and host with /oauth/token.", optional(httpsURL(&p.TokenURL))},
		{"PIXGATE_PAYOUT_SCOPES", "", "OAuth 2.0 scopes asked for the payout API, separated by spaces. Empty: none is asked, and the PSP grants what the client was registered for.", words(&p.Scopes)},
		{"PIXGATE_PAYOUT_CHECK_SECONDS", "30", "Seconds between two readings of a payout the PSP is still making (and the longest wait before a send whose outcome is unknown is read back again).", seconds(&p.Check, 1, 3600)},
	}
	for _, d := range payoutDefaults {
		out = append(out, setting{"PIXGATE_PAYOUT_" + d.suffix, "", d.doc, text(d.field(&p.pspTransport))})
	}
	return out
}

// payoutConfig decides the provider, fills in the settings that default to the acquirer's, and
// checks that they come together. The certificate files and the rest of the transport's
// settings are checked when the payout API's client is built (wire_payouts.go), which reads
// the files; its errors name the settings too.
func payoutConfig(c *Config) error {
	p := &c.Payouts
	switch {
	case p.Provider == "" && c.Sandbox.On:
		p.Provider = payoutSandbox
	case p.Provider == "":
		p.Provider = payoutNone
	case p.Provider != payoutSandbox && c.Sandbox.On:
		return fmt.Errorf("PIXGATE_PAYOUT_PROVIDER: %s is not for PIXGATE_SANDBOX=true, whose acquirer pays withdrawals out itself (leave it empty or sandbox)", p.Provider)
	case p.Provider == payoutSandbox && !c.Sandbox.On:
		return fmt.Errorf("PIXGATE_PAYOUT_PROVIDER: sandbox only with PIXGATE_SANDBOX=true")
	}
	if p.Provider != payoutEfi {
		if p.APIURL != "" {
			return fmt.Errorf("PIXGATE_PAYOUT_API_URL: set without PIXGATE_PAYOUT_PROVIDER=efi")
		}
		return nil
	}
	if p.APIURL == "" {
		return fmt.Errorf("PIXGATE_PAYOUT_API_URL: required with PIXGATE_PAYOUT_PROVIDER=efi")
	}
	ownCert := p.CertFile != "" || p.KeyFile != "" || p.P12File != ""
	for _, d := range payoutDefaults {
		if field := d.field(&p.pspTransport); *field == "" && !(d.cert && ownCert) {
			*field = *d.field(&c.Acquirer.pspTransport)
		}
	}
	if p.TokenRequest != "" && p.TokenRequest != "form" && p.TokenRequest != "json" {
		return fmt.Errorf("PIXGATE_PAYOUT_TOKEN_REQUEST: must be form or json")
	}
	return nil
}

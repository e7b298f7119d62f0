package psp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config says where the PSP is and how pixgate proves who it is there.
type Config struct {
	// APIURL is the API's https base (for API Pix, for instance https://pix.psp.example/v2);
	// request paths are joined below it.
	APIURL string
	// TokenURL is the OAuth 2.0 token endpoint; empty means APIURL's scheme and host with
	// /oauth/token.
	TokenURL string
	// ClientID and ClientSecret are the OAuth 2.0 client's credentials, sent in HTTP Basic.
	ClientID     string
	ClientSecret string
	// Scopes are asked for in the form style of TokenRequest; none means no scope is asked and
	// the PSP grants what the client was registered for.
	Scopes []string
	// TokenRequest is how the token is asked for: TokenForm (the default) or TokenJSON.
	TokenRequest TokenRequest

	// The client certificate: CertFile and KeyFile (PEM), or P12File with P12Password (PKCS#12,
	// as PSPs hand them out; the password may be empty). Exactly one of the two is required.
	CertFile    string
	KeyFile     string
	P12File     string
	P12Password string
	// CAFiles are PEM files of CA certificates trusted besides the system's.
	CAFiles []string

	// Timeout bounds a whole call, its token fetch, retries and waits included; 0 means 10 s.
	Timeout time.Duration
	// MaxAttempts is how many times a retryable call may be sent; 0 means 4. The retry after a
	// 401 does not count.
	MaxAttempts int
	// MaxAnswerBytes bounds the body read from any answer; 0 means 1 MiB.
	MaxAnswerBytes int64
	// Observe, optional, is called once per call and once per token fetch; it must be quick.
	Observe func(Observation)
}

// TokenRequest is the shape of the token request.
type TokenRequest string

const (
	// TokenForm is RFC 6749's: a form body (grant_type and, when there are Scopes, scope) with
	// the client's credentials, form-encoded, in HTTP Basic.
	TokenForm TokenRequest = "form"
	// TokenJSON is the JSON body {"grant_type":"client_credentials"} with the credentials in
	// HTTP Basic, as some PSPs (Efí) want; scopes are not sent.
	TokenJSON TokenRequest = "json"
)

// Setting names one setting of Config in words an operator reads; cmd maps it to its
// environment variable.
type Setting string

// The settings a SettingError may name.
const (
	SettingAPIURL       Setting = "API URL"
	SettingTokenURL     Setting = "token URL"
	SettingClientID     Setting = "client id"
	SettingClientSecret Setting = "client secret"
	SettingScopes       Setting = "scopes"
	SettingTokenRequest Setting = "token request"
	SettingCertFile     Setting = "certificate file"
	SettingKeyFile      Setting = "key file"
	SettingP12File      Setting = "PKCS#12 file"
	SettingP12Password  Setting = "PKCS#12 password"
	SettingCAFile       Setting = "CA file"
	SettingTimeout      Setting = "timeout"
)

// SettingError is a setting New cannot use. Its text names the setting and never repeats a
// secret or a password.
type SettingError struct {
	Setting Setting
	Err     error
}

func (e *SettingError) Error() string { return "psp: " + string(e.Setting) + ": " + e.Err.Error() }

func (e *SettingError) Unwrap() error { return e.Err }

func settingErr(s Setting, format string, args ...any) *SettingError {
	return &SettingError{Setting: s, Err: fmt.Errorf(format, args...)}
}

// Defaults of Config's zero values.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxAttempts    = 4
	DefaultMaxAnswerBytes = 1 << 20
)

// settings is a checked Config.
type settings struct {
	api      *url.URL
	tokenURL string
	Config
}

// check validates everything in cfg but the files, and fills in the defaults. All the
// problems are returned, joined, so an operator fixes them in one go.
func check(cfg Config) (settings, error) {
	var errs []error
	s := settings{Config: cfg}
	api, err := parseHTTPS(cfg.APIURL)
	if err != nil {
		errs = append(errs, &SettingError{Setting: SettingAPIURL, Err: err})
	} else {
		api.Path = strings.TrimSuffix(api.Path, "/")
		api.RawPath = ""
		s.api = api
	}
	switch {
	case cfg.TokenURL != "":
		if _, err := parseHTTPS(cfg.TokenURL); err != nil {
			errs = append(errs, &SettingError{Setting: SettingTokenURL, Err: err})
		}
		s.tokenURL = cfg.TokenURL
	case s.api != nil:
		s.tokenURL = (&url.URL{Scheme: s.api.Scheme, Host: s.api.Host, Path: "/oauth/token"}).String()
	}
	if cfg.ClientID == "" {
		errs = append(errs, settingErr(SettingClientID, "missing"))
	} else if !visible(cfg.ClientID) || strings.Contains(cfg.ClientID, ":") || len(cfg.ClientID) > 1024 {
		errs = append(errs, settingErr(SettingClientID, "must be at most 1024 visible ASCII characters without spaces or ':'"))
	}
	if cfg.ClientSecret == "" {
		errs = append(errs, settingErr(SettingClientSecret, "missing"))
	} else if strings.ContainsFunc(cfg.ClientSecret, isControl) || len(cfg.ClientSecret) > 4096 {
		errs = append(errs, settingErr(SettingClientSecret, "must be at most 4096 characters without control characters"))
	}
	for _, scope := range cfg.Scopes {
		if !validScope(scope) {
			errs = append(errs, settingErr(SettingScopes, "%q is not an OAuth 2.0 scope (visible ASCII, no spaces, quotes or backslashes)", scope))
			break
		}
	}
	switch cfg.TokenRequest {
	case "":
		s.TokenRequest = TokenForm
	case TokenForm, TokenJSON:
	default:
		errs = append(errs, settingErr(SettingTokenRequest, "%q is neither %q nor %q", cfg.TokenRequest, TokenForm, TokenJSON))
	}
	switch {
	case cfg.Timeout < 0 || cfg.Timeout > 10*time.Minute:
		errs = append(errs, settingErr(SettingTimeout, "%s is not between 0 and 10m", cfg.Timeout))
	case cfg.Timeout == 0:
		s.Timeout = DefaultTimeout
	}
	if s.MaxAttempts < 1 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.MaxAnswerBytes < 1 {
		s.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	errs = append(errs, checkCertificateChoice(cfg)...)
	return s, errors.Join(errs...)
}

// checkCertificateChoice wants exactly one client certificate: PEM files or a PKCS#12 file.
func checkCertificateChoice(cfg Config) []error {
	pem := cfg.CertFile != "" || cfg.KeyFile != ""
	switch {
	case pem && cfg.P12File != "":
		return []error{settingErr(SettingP12File, "give either a PEM certificate and key file or a PKCS#12 file, not both")}
	case cfg.P12File == "" && cfg.P12Password != "":
		return []error{settingErr(SettingP12Password, "set without a PKCS#12 file")}
	case pem && cfg.CertFile == "":
		return []error{settingErr(SettingCertFile, "missing: the key file needs its certificate file")}
	case pem && cfg.KeyFile == "":
		return []error{settingErr(SettingKeyFile, "missing: the certificate file needs its private key file")}
	case !pem && cfg.P12File == "":
		return []error{settingErr(SettingCertFile, "missing: the PSP requires a client certificate (mutual TLS); give a PEM certificate and key file, or a PKCS#12 file")}
	}
	return nil
}

// parseHTTPS accepts an absolute https URL with a host and no credentials or fragment.
func parseHTTPS(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("missing")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("must be an https URL with a host and no credentials or fragment")
	}
	return u, nil
}

// validScope is RFC 6749's scope-token: %x21 / %x23-5B / %x5D-7E.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// visible tells whether s is visible ASCII without spaces.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TokenGranter trades client credentials for an access token carrying the requested scopes
// (none: every scope of the account): application.IssueToken, or application.IssueUpstreamToken
// when an upstream OpenID Connect provider judges them. Errors: ports.ErrInvalidCredentials
// (401), ports.ErrInvalidScope (400), ports.ErrUpstreamUnavailable (502), ports.ErrUnavailable
// (503).
type TokenGranter interface {
	Execute(ctx context.Context, clientID, clientSecret string, scopes []domain.Scope) (application.TokenGrant, error)
}

// AuthDeps are the use cases of the authentication routes, all required but Limits.
type AuthDeps struct {
	// Token serves POST and GET /auth/token, POST /oauth/token and the authorization server
	// metadata (GET /.well-known/oauth-authorization-server).
	Token TokenGranter
	// Issuer is the iss of the tokens, named as issuer by the metadata.
	Issuer string
	// PublicURL, when it is an http(s) URL, is where the metadata says the endpoints are (the
	// address clients use behind a proxy); otherwise they are under the scheme and host the
	// request came to.
	PublicURL string
	// JWKSURI is the metadata's jwks_uri when the tokens are not pixgate's own (an upstream
	// provider's); empty names pixgate's /.well-known/jwks.json.
	JWKSURI string
	// Limits slow down token requests; nil limits nothing.
	Limits *TokenLimits
	// JWKS is the JSON Web Key Set document of the token verification keys, served as is at
	// GET /.well-known/jwks.json (jwtauth.Verifier.JWKS).
	JWKS                []byte
	CreateCredential    *application.CreateCredential    // POST /auth/credentials
	ListCredentials     *application.ListCredentials     // GET /auth/credentials
	RevokeCredential    *application.RevokeCredential    // DELETE /auth/credentials/{clientId}
	GetWebhookSecret    *application.GetWebhookSecret    // GET /webhook/secret
	RotateWebhookSecret *application.RotateWebhookSecret // POST /webhook/secret/rotate
}

// authRoutes registers the token, JWKS, credential and webhook-secret routes.
func (s *Server) authRoutes(r *mux.Router) {
	route(r, "auth.token", http.MethodPost, "/auth/token").HandlerFunc(s.tokenGuard(s.postToken(documentStyle)))
	route(r, "auth.token.get", http.MethodGet, "/auth/token").HandlerFunc(s.tokenGuard(s.getToken))
	route(r, "oauth.token", http.MethodPost, "/oauth/token").HandlerFunc(s.tokenGuard(s.postToken(rfc6749Style)))
	route(r, "oauth.metadata", http.MethodGet, "/.well-known/oauth-authorization-server").HandlerFunc(s.oauthMetadata)
	route(r, "auth.jwks", http.MethodGet, "/.well-known/jwks.json").HandlerFunc(s.jwks)
	// Credentials and the webhook secret are the keys to the account: a token that lacks
	// account:admin (a reporting job's, say) can neither mint permanent credentials nor learn
	// the secret that signs webhooks.
	admin := domain.ScopeAccountAdmin
	route(r, "auth.credentials.create", http.MethodPost, "/auth/credentials").
		Handler(s.authed(admin, s.createCredential))
	route(r, "auth.credentials.list", http.MethodGet, "/auth/credentials").
		Handler(s.authed(admin, s.listCredentials))
	route(r, "auth.credentials.revoke", http.MethodDelete, "/auth/credentials/{clientId}").
		Handler(s.authed(admin, s.revokeCredential))
	route(r, "webhook.secret.get", http.MethodGet, "/webhook/secret").
		Handler(s.authed(admin, s.getWebhookSecret))
	route(r, "webhook.secret.rotate", http.MethodPost, "/webhook/secret/rotate").
		Handler(s.authed(admin, s.rotateWebhookSecret))
}

// The token endpoint speaks OAuth 2.0 (RFC 6749 section 5.2 error bodies), not problem
// details, so that OAuth client libraries understand its refusals; tokenErrorTable is its
// counterpart of errorTable.
var tokenErrorTable = []struct {
	err    error
	status int
	code   string
	detail string
}{
	{ports.ErrInvalidCredentials, http.StatusUnauthorized, "invalid_client", "invalid client credentials"},
	{ports.ErrInvalidScope, http.StatusBadRequest, "invalid_scope", "the client may not have every scope it asked for"},
	{ports.ErrUpstreamUnavailable, http.StatusBadGateway, "temporarily_unavailable", "the authentication provider cannot be reached; retry later"},
	{ports.ErrUnavailable, http.StatusServiceUnavailable, "temporarily_unavailable", "the service is temporarily unavailable; retry later"},
}

// Bounds on what a token request may carry; pixgate's own ids and secrets are far shorter.
const (
	maxClientIDLength     = 256
	maxClientSecretLength = 1024
)

// tokenStyle is how a token endpoint writes its answer.
type tokenStyle int

const (
	// documentStyle is /auth/token's (docs/API.md, Token endpoints): expires_in is the Unix
	// time of expiry and scope comma-separated, with Keycloak's extra fields.
	documentStyle tokenStyle = iota
	// rfc6749Style is /oauth/token's, what OAuth client libraries expect: expires_in is the
	// lifetime in seconds and scope space-separated (RFC 6749 sections 3.3 and 5.1).
	rfc6749Style
)

type oauthTokenView struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"` // lifetime in seconds
	Scope       string `json:"scope"`
}

type authTokenView struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int64  `json:"expires_in"` // Unix time of expiry (docs/API.md, Token endpoints)
	RefreshExpiresIn int    `json:"refresh_expires_in"`
	TokenType        string `json:"token_type"`
	NotBeforePolicy  int    `json:"not-before-policy"`
	Scope            string `json:"scope"`
	ExpiresInSec     int64  `json:"expires_in_sec"`
}

type authTokenErrorView struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// writeTokenError answers an RFC 6749 error. A 401 to a client that authenticated with HTTP
// Basic carries the Basic challenge (RFC 6749 section 5.2).
func writeTokenError(w http.ResponseWriter, status int, code, description string, basic bool) {
	if status == http.StatusUnauthorized && basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="pixgate", charset="UTF-8"`)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, authTokenErrorView{Error: code, ErrorDescription: description})
}

func invalidTokenRequest(w http.ResponseWriter, description string) {
	writeTokenError(w, http.StatusBadRequest, "invalid_request", description, false)
}

// postToken is POST /auth/token and POST /oauth/token: a form body with the grant type, the
// optional scope and, unless they come in an HTTP Basic header, the client credentials.
func (s *Server) postToken(style tokenStyle) func(http.ResponseWriter, *http.Request, *tokenAttempt) {
	return func(w http.ResponseWriter, r *http.Request, a *tokenAttempt) { s.postTokenAs(w, r, a, style) }
}

func (s *Server) postTokenAs(w http.ResponseWriter, r *http.Request, a *tokenAttempt, style tokenStyle) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || query.Has("client_secret") {
		invalidTokenRequest(w, "credentials must not be sent in the query string")
		return
	}
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeTokenError(w, http.StatusRequestEntityTooLarge, "invalid_request", "the request body exceeds 1 MiB", false)
		return
	}
	if err != nil {
		invalidTokenRequest(w, "the request body could not be read")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" || len(body) > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			invalidTokenRequest(w, "the body must be application/x-www-form-urlencoded")
			return
		}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		invalidTokenRequest(w, "the form body is malformed")
		return
	}
	s.grantToken(w, r, a, form, false, style)
}

// getToken is GET /auth/token: credentials in an HTTP Basic header only, since a query string
// lands in access logs.
func (s *Server) getToken(w http.ResponseWriter, r *http.Request, a *tokenAttempt) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		invalidTokenRequest(w, "the query string is malformed")
		return
	}
	if query.Has("client_secret") {
		invalidTokenRequest(w, "client_secret must not be sent in the query string; use an HTTP Basic header")
		return
	}
	s.grantToken(w, r, a, query, true, documentStyle)
}

// grantToken checks the token request's parameters, reads the credentials and answers the
// token or the RFC 6749 error. The secret is checked before the client_id's rate is spent, so
// that only a request holding the right secret spends it (TokenLimits); a client over its rate
// therefore costs a check and an issued token per refusal, which only the secret's holder can
// cause.
func (s *Server) grantToken(w http.ResponseWriter, r *http.Request, a *tokenAttempt, params url.Values, basicOnly bool, style tokenStyle) {
	req, bad := parseTokenRequest(r, params, basicOnly)
	if bad != nil {
		writeTokenError(w, bad.status, bad.code, bad.description, bad.challenge)
		return
	}
	g, ok := s.admitGuess(w, req.clientID, a)
	if !ok {
		return
	}
	grant, err := s.deps.Auth.Token.Execute(r.Context(), req.clientID, req.secret, req.scopes)
	if s.guessChecked(w, g, a, errors.Is(err, ports.ErrInvalidCredentials)) {
		return
	}
	if err != nil {
		s.tokenFailed(w, r, err, req.basic)
		return
	}
	if !s.allowClient(w, req.clientID) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if style == rfc6749Style {
		writeJSON(w, http.StatusOK, oauthTokenView{
			AccessToken: grant.AccessToken,
			TokenType:   "Bearer",
			ExpiresIn:   int64(grant.Lifetime / time.Second),
			Scope:       strings.Join(scopeStrings(grant.Scopes), " "),
		})
		return
	}
	writeJSON(w, http.StatusOK, authTokenView{
		AccessToken:  grant.AccessToken,
		ExpiresIn:    grant.ExpiresAt.Unix(),
		TokenType:    "Bearer",
		Scope:        domain.JoinScopes(grant.Scopes),
		ExpiresInSec: int64(grant.Lifetime / time.Second),
	})
}

// tokenRequest is a token request as parseTokenRequest read it: the client's credentials,
// whether they came in a Basic header, and the scopes asked for (nil: the account's).
type tokenRequest struct {
	clientID, secret string
	basic            bool
	scopes           []domain.Scope
}

// tokenRequestError is a token request refused before any credential is checked.
type tokenRequestError struct {
	status            int
	code, description string
	challenge         bool // a 401 that names Basic in WWW-Authenticate
}

func invalidRequest(description string) *tokenRequestError {
	return &tokenRequestError{status: http.StatusBadRequest, code: "invalid_request", description: description}
}

// parseTokenRequest reads the grant type, the credentials (a Basic header or the form, never
// both; only the header when basicOnly) and the scope of a token request.
func parseTokenRequest(r *http.Request, params url.Values, basicOnly bool) (tokenRequest, *tokenRequestError) {
	for name, values := range params {
		if len(values) > 1 {
			return tokenRequest{}, invalidRequest(fmt.Sprintf("parameter %s is repeated", safeParamName(name)))
		}
	}
	if params.Has("grant_type") {
		switch gt := params.Get("grant_type"); gt {
		case "client_credentials":
		case "":
			return tokenRequest{}, invalidRequest("grant_type is empty")
		default:
			return tokenRequest{}, &tokenRequestError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: "only client_credentials is supported"}
		}
	}
	basicID, basicSecret, basic, err := basicCredentials(r)
	if errors.Is(err, errNotBasic) {
		// The challenge names Basic, so that the client knows which scheme to use.
		return tokenRequest{}, &tokenRequestError{status: http.StatusUnauthorized, code: "invalid_client",
			description: "client authentication must use HTTP Basic or the form body", challenge: true}
	} else if err != nil {
		return tokenRequest{}, invalidRequest(err.Error())
	}
	req := tokenRequest{basic: basic}
	switch {
	case basic && params.Has("client_secret"):
		return tokenRequest{}, invalidRequest("send the credentials either in the Basic header or in the form, not both")
	case basic && params.Has("client_id") && params.Get("client_id") != basicID:
		return tokenRequest{}, invalidRequest("client_id differs from the Basic header's")
	case basic:
		req.clientID, req.secret = basicID, basicSecret
	case basicOnly:
		return tokenRequest{}, invalidRequest("GET /auth/token needs the credentials in an HTTP Basic header")
	default:
		req.clientID, req.secret = params.Get("client_id"), params.Get("client_secret")
	}
	switch {
	case req.clientID == "":
		return tokenRequest{}, invalidRequest("client_id is required")
	case req.secret == "":
		return tokenRequest{}, invalidRequest("client_secret is required")
	case len(req.clientID) > maxClientIDLength || len(req.secret) > maxClientSecretLength:
		return tokenRequest{}, invalidRequest("client_id or client_secret is too long")
	}
	if params.Has("scope") {
		if req.scopes, err = domain.ParseRequestedScopes(params.Get("scope")); err != nil {
			return tokenRequest{}, &tokenRequestError{status: http.StatusBadRequest, code: "invalid_scope",
				description: "scope must name one or more of " + strings.Join(scopeNames(), " ") + ", separated by spaces or commas"}
		}
	}
	return req, nil
}

// tokenFailed answers a token request the use case refused, by the token error table; what
// the table does not know is a 500, logged with the request id.
func (s *Server) tokenFailed(w http.ResponseWriter, r *http.Request, err error, basic bool) {
	for _, e := range tokenErrorTable {
		if errors.Is(err, e.err) {
			if e.status >= 500 {
				s.log.WarnContext(r.Context(), "token request failed", slog.String("requestId", requestIDFrom(r.Context())), slog.String("error", err.Error()))
			}
			writeTokenError(w, e.status, e.code, e.detail, basic)
			return
		}
	}
	s.log.ErrorContext(r.Context(), "token request failed", slog.String("requestId", requestIDFrom(r.Context())), slog.String("error", err.Error()))
	writeTokenError(w, http.StatusInternalServerError, "server_error", "an internal error occurred; quote the request id to support", basic)
}

// errNotBasic: an Authorization header with another scheme than Basic.
var errNotBasic = errors.New("authorization scheme is not Basic")

// basicCredentials reads an HTTP Basic header. As RFC 6749 section 2.3.1 says, the client id
// and the secret are form-encoded before being joined, so they are decoded here (a secret
// holding "%" or "+" must be sent encoded). No header: basic is false and err nil.
func basicCredentials(r *http.Request) (clientID, secret string, basic bool, err error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "", false, nil
	}
	scheme, payload, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", false, errNotBasic
	}
	raw, decodeErr := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
	if decodeErr != nil {
		return "", "", true, errors.New("the Basic header is not valid base64")
	}
	id, sec, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", true, errors.New("the Basic header lacks the ':' between client_id and client_secret")
	}
	if clientID, err = url.QueryUnescape(id); err != nil {
		return "", "", true, errors.New("the Basic header's client_id is not form-encoded")
	}
	if secret, err = url.QueryUnescape(sec); err != nil {
		return "", "", true, errors.New("the Basic header's client_secret is not form-encoded")
	}
	return clientID, secret, true, nil
}

// safeParamName keeps a client-chosen parameter name fit to echo in an error.
func safeParamName(name string) string {
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("%q", name)
}

func scopeStrings(scopes []domain.Scope) []string {
	out := make([]string, len(scopes))
	for i, sc := range scopes {
		out[i] = string(sc)
	}
	return out
}

func scopeNames() []string { return scopeStrings(domain.AllScopes()) }

type oauthMetadataView struct {
	Issuer                            string   `json:"issuer"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
}

// oauthMetadata is GET /.well-known/oauth-authorization-server (RFC 8414): where OAuth clients
// find the token endpoint, the keys and the scopes. It needs no token.
func (s *Server) oauthMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.publicBase(r)
	jwks := s.deps.Auth.JWKSURI
	if jwks == "" {
		jwks = base + "/.well-known/jwks.json"
	}
	writeJSON(w, http.StatusOK, oauthMetadataView{
		Issuer:                            s.deps.Auth.Issuer,
		TokenEndpoint:                     base + "/oauth/token",
		JWKSURI:                           jwks,
		GrantTypesSupported:               []string{"client_credentials"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		ScopesSupported:                   scopeNames(),
		ResponseTypesSupported:            []string{}, // no authorization endpoint
	})
}

// publicBase is the URL the endpoints are under: PublicURL when it is an http(s) URL,
// otherwise the scheme and host the request came to.
func (s *Server) publicBase(r *http.Request) string {
	if u, err := url.Parse(s.deps.Auth.PublicURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return strings.TrimSuffix(u.String(), "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// jwks is GET /.well-known/jwks.json; it needs no token and ignores one sent.
func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSONBytes(w, http.StatusOK, s.deps.Auth.JWKS)
}

type authCredentialView struct {
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
	CreatedAt    isoTime `json:"createdAt"`
}

// createCredential is POST /auth/credentials: a new credential for the token's account, its
// secret shown this once.
func (s *Server) createCredential(w http.ResponseWriter, r *http.Request) {
	cred, err := s.deps.Auth.CreateCredential.Execute(r.Context(), principalFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, authCredentialView{ClientID: cred.ClientID, ClientSecret: cred.Secret, CreatedAt: isoTime(cred.CreatedAt)})
}

type credentialListItemView struct {
	ClientID   string   `json:"client_id"`
	CreatedAt  isoTime  `json:"createdAt"`
	LastUsedAt *isoTime `json:"lastUsedAt"`
	RevokedAt  *isoTime `json:"revokedAt"`
}

// listCredentials is GET /auth/credentials: the account's credentials, newest first, without
// secrets.
func (s *Server) listCredentials(w http.ResponseWriter, r *http.Request) {
	creds, err := s.deps.Auth.ListCredentials.Execute(r.Context(), principalFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Data []credentialListItemView `json:"data"`
	}{Data: make([]credentialListItemView, 0, len(creds))}
	for _, c := range creds {
		out.Data = append(out.Data, credentialListItemView{ClientID: c.ClientID, CreatedAt: isoTime(c.CreatedAt),
			LastUsedAt: isoPtr(c.LastUsedAt), RevokedAt: isoPtr(c.RevokedAt)})
	}
	writeJSON(w, http.StatusOK, out)
}

// revokeCredential is DELETE /auth/credentials/{clientId}: 204, or 404 for another account's
// or an unknown client id.
func (s *Server) revokeCredential(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Auth.RevokeCredential.Execute(r.Context(), principalFrom(r.Context()), mux.Vars(r)["clientId"]); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type authWebhookSecretView struct {
	Secret            string   `json:"secret"`
	PreviousSecret    *string  `json:"previousSecret"`
	PreviousExpiresAt *isoTime `json:"previousExpiresAt"`
}

func writeWebhookSecrets(w http.ResponseWriter, ws domain.WebhookSecrets) {
	v := authWebhookSecretView{Secret: ws.Current, PreviousSecret: nullableString(ws.Previous)}
	if ws.Previous != "" {
		v.PreviousExpiresAt = isoPtr(ws.PreviousExpiresAt)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, v)
}

// getWebhookSecret is GET /webhook/secret.
func (s *Server) getWebhookSecret(w http.ResponseWriter, r *http.Request) {
	ws, err := s.deps.Auth.GetWebhookSecret.Execute(r.Context(), principalFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeWebhookSecrets(w, ws)
}

// rotateWebhookSecret is POST /webhook/secret/rotate.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	ws, err := s.deps.Auth.RotateWebhookSecret.Execute(r.Context(), principalFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeWebhookSecrets(w, ws)
}

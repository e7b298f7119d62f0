package psptest

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// issued is an access token the fake handed out.
type issued struct {
	expires time.Time
	scopes  map[string]bool
}

// token is POST /oauth/token: the client credentials grant, the client authenticated with HTTP
// Basic, the body a form (RFC 6749) or the JSON {"grant_type":"client_credentials"}, as
// Config.TokenStyles allows.
func (p *PSP) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || !p.credentials(id, secret) {
		w.Header().Set("WWW-Authenticate", `Basic realm="psptest"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "Client authentication failed.")
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The body cannot be read.")
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var grant, scope string
	switch {
	case mt == "application/x-www-form-urlencoded" && p.cfg.TokenStyles&TokenForm != 0:
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_request", "The form does not parse.")
			return
		}
		grant, scope = form.Get("grant_type"), form.Get("scope")
	case mt == "application/json" && p.cfg.TokenStyles&TokenJSON != 0:
		var body struct {
			GrantType string `json:"grant_type"`
			Scope     string `json:"scope"`
		}
		if json.Unmarshal(raw, &body) != nil {
			oauthError(w, http.StatusBadRequest, "invalid_request", "The JSON does not parse.")
			return
		}
		grant, scope = body.GrantType, body.Scope
	default:
		oauthError(w, http.StatusBadRequest, "invalid_request", "This token endpoint does not take a "+mt+" body.")
		return
	}
	if grant != "client_credentials" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Only client_credentials is granted.")
		return
	}
	p.mu.Lock()
	granted := map[string]bool{}
	for _, s := range strings.Fields(scope) {
		if !p.scopes[s] {
			p.mu.Unlock()
			oauthError(w, http.StatusBadRequest, "invalid_scope", "Unknown scope "+s+".")
			return
		}
		granted[s] = true
	}
	if len(granted) == 0 { // none asked: what the client was registered for, everything
		for s := range p.scopes {
			granted[s] = true
		}
	}
	now := time.Now()
	for v, t := range p.tokens {
		if now.After(t.expires) {
			delete(p.tokens, v)
		}
	}
	value := rand.Text() + rand.Text()
	p.tokens[value] = issued{expires: now.Add(p.cfg.TokenLifetime), scopes: granted}
	p.mu.Unlock()
	names := make([]string, 0, len(granted))
	for s := range granted {
		names = append(names, s)
	}
	sort.Strings(names)
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, http.StatusOK, map[string]any{
		"access_token": value,
		"token_type":   "Bearer",
		"expires_in":   max(int(p.cfg.TokenLifetime/time.Second), 1),
		"scope":        strings.Join(names, " "),
	})
}

// credentials checks a client's id and secret, as sent (the JSON style) or form-decoded (RFC
// 6749 form-encodes them before HTTP Basic).
func (p *PSP) credentials(id, secret string) bool {
	if id == p.ClientID && secret == p.ClientSecret {
		return true
	}
	id, err1 := url.QueryUnescape(id)
	secret, err2 := url.QueryUnescape(secret)
	return err1 == nil && err2 == nil && id == p.ClientID && secret == p.ClientSecret
}

// RevokeTokens makes every token issued so far invalid, as a PSP that rotates its keys would.
func (p *PSP) RevokeTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens = map[string]issued{}
}

// authorize checks the bearer token of an API request: 401 when it is missing, unknown or
// expired, 403 when it was not granted scope.
func (p *PSP) authorize(w http.ResponseWriter, r *http.Request, scope string) bool {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		unauthorized(w)
		return false
	}
	p.mu.Lock()
	t, ok := p.tokens[strings.TrimSpace(h[7:])]
	p.mu.Unlock()
	if !ok || time.Now().After(t.expires) {
		unauthorized(w)
		return false
	}
	if scope != "" && !t.scopes[scope] {
		WriteProblem(w, http.StatusForbidden, "AcessoNegado", "Acesso Negado", "O token não concede o escopo "+scope+".")
		return false
	}
	return true
}

// unauthorized is the answer to a request without a valid token (RFC 6750).
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	WriteJSONAs(w, http.StatusUnauthorized, "application/problem+json", Problem{
		Type: "about:blank", Title: "Unauthorized", Status: http.StatusUnauthorized, Detail: "Token de acesso ausente, inválido ou expirado.",
	})
}

// oauthError is RFC 6749's error answer.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, status, map[string]string{"error": code, "error_description": description})
}

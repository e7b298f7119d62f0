package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OpenAPI document (adapters/httpapi/openapi.json, served at GET /openapi.json) is written
// by hand. These tests hold it to the real server: every route of the router is in it and
// nothing else, each operation's scope is the one the route enforces, the document is valid
// OpenAPI 3.1, and real requests and answers of every kind validate against it (with
// libopenapi-validator, which implements OpenAPI 3.1 and JSON Schema 2020-12).

// oaEnv is the server with every route group on: sandbox, acquirer callback and /metrics.
func oaEnv(t *testing.T, extra map[string]string) *env {
	vars := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_ACQUIRER_SECRET": strings.Repeat("s", 32),
		"PIXGATE_PUBLIC_URL": "https://pay.shop.example"} // dynamic charges: their routes exist
	for k, v := range extra {
		vars[k] = v
	}
	return newEnv(t, vars)
}

// oaDocument fetches the document the server serves.
func oaDocument(t *testing.T, e *env) []byte {
	t.Helper()
	r := e.do("GET", "/openapi.json", "", nil)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", r.status, r.header.Get("Content-Type"))
	}
	return r.body
}

var oaMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// oaOperation is one operation of the document, read as plain JSON.
type oaOperation struct {
	method, path string
	op           map[string]any
}

func oaOperations(t *testing.T, doc []byte) []oaOperation {
	t.Helper()
	var d struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	var out []oaOperation
	for path, item := range d.Paths {
		for _, m := range oaMethods {
			if op, ok := item[m].(map[string]any); ok {
				out = append(out, oaOperation{method: strings.ToUpper(m), path: path, op: op})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

func TestOpenAPIDescribesEveryRouteAndNoOther(t *testing.T) {
	t.Parallel()
	e := oaEnv(t, nil)
	routes := map[string]bool{}
	for _, route := range e.app.server.Routes() {
		if len(route.Methods) == 0 {
			t.Fatalf("route %s has no methods", route.Path)
		}
		for _, m := range route.Methods {
			routes[m+" "+route.Path] = true
		}
	}
	documented := map[string]bool{}
	for _, o := range oaOperations(t, oaDocument(t, e)) {
		documented[o.method+" "+o.path] = true
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is missing from the OpenAPI document", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("the OpenAPI document names %s, which the server does not serve", d)
		}
	}
	if len(routes) < 30 {
		t.Errorf("only %d routes walked; a route group is off", len(routes))
	}
}

// oaScopes reads an operation's security: whether it needs a bearer token and which scopes.
func oaScopes(t *testing.T, o oaOperation) (bearer bool, scopes []string) {
	t.Helper()
	sec, ok := o.op["security"].([]any)
	if !ok {
		t.Fatalf("%s %s: no explicit security", o.method, o.path)
	}
	for _, req := range sec {
		for scheme, list := range req.(map[string]any) {
			if scheme != "bearerAuth" {
				continue
			}
			bearer = true
			for _, s := range list.([]any) {
				scopes = append(scopes, s.(string))
			}
		}
	}
	if bearer {
		ext, ok := o.op["x-pixgate-scopes"].([]any)
		if !ok || len(ext) != len(scopes) {
			t.Errorf("%s %s: x-pixgate-scopes %v differs from the security requirement %v", o.method, o.path, o.op["x-pixgate-scopes"], scopes)
		}
		for i := range ext {
			if i < len(scopes) && ext[i] != scopes[i] {
				t.Errorf("%s %s: x-pixgate-scopes %v differs from the security requirement %v", o.method, o.path, ext, scopes)
			}
		}
	}
	return bearer, scopes
}

func TestOpenAPIScopesAreTheOnesTheRoutesEnforce(t *testing.T) {
	t.Parallel()
	e := oaEnv(t, nil)
	all := domain.AllScopes()
	tokenWithout := map[string]string{}
	tokenWith := map[string]string{}
	for _, s := range all {
		var others []domain.Scope
		for _, o := range all {
			if o != s {
				others = append(others, o)
			}
		}
		_, tokenWithout[string(s)] = e.account(others...)
		_, tokenWith[string(s)] = e.account(s)
	}
	operational := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/openapi.json": true, "/.well-known/jwks.json": true}
	for _, o := range oaOperations(t, oaDocument(t, e)) {
		bearer, scopes := oaScopes(t, o)
		path := strings.NewReplacer("{id}", "0b9e2a47-5f3c-4d1e-8a6b-7c9d0e1f2a3b", "{clientId}", "no-such-client").Replace(o.path)
		name := o.method + " " + o.path
		switch {
		case operational[o.path]:
			if sec := o.op["security"].([]any); len(sec) != 0 {
				t.Errorf("%s is operational, yet its security is %v", name, sec)
			}
			if r := e.do(o.method, path, "garbage", nil); r.status != http.StatusOK {
				t.Errorf("%s with a garbage token answered %d; operational routes ignore tokens", name, r.status)
			}
		case !bearer:
			// The token endpoint (Basic or form) and the acquirer callback (shared secret).
			continue
		case len(scopes) > 1:
			t.Errorf("%s names several scopes %v; the routes need one or none", name, scopes)
		case len(scopes) == 1:
			if r := e.do(o.method, path, tokenWithout[scopes[0]], nil); r.status != http.StatusForbidden ||
				r.json(t)["code"] != "insufficient_scope" {
				t.Errorf("%s with every scope but %s answered %d %s; the document says it needs %s", name, scopes[0], r.status, r.body, scopes[0])
			}
			if r := e.do(o.method, path, tokenWith[scopes[0]], nil); r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
				t.Errorf("%s with only %s answered %d %s; the document says that scope suffices", name, scopes[0], r.status, r.body)
			}
		default:
			if r := e.do(o.method, path, tokenWith[string(domain.ScopeWithdrawalRead)], nil); r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
				t.Errorf("%s with a token of any scope answered %d %s; the document says any valid token will do", name, r.status, r.body)
			}
		}
		if r := e.do(o.method, path, "", nil); bearer && r.status != http.StatusUnauthorized {
			t.Errorf("%s without a token answered %d; the document says it needs one", name, r.status)
		}
	}
}

// oaSpec is the document as libopenapi reads it, with a validator of requests and answers.
type oaSpec struct {
	model     *v3.Document
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
}

func oaLoad(t *testing.T, raw []byte) *oaSpec {
	t.Helper()
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("libopenapi cannot read the document: %v", err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("building the model: %v", err)
	}
	opts := []config.Option{config.WithURLEncodedBodyValidation(), config.WithFormatAssertions()}
	v, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		t.Fatalf("building the validator: %v", errs)
	}
	return &oaSpec{model: &model.Model, validator: v, schemas: schema_validation.NewSchemaValidator(opts...)}
}

func oaReport(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s at %s (%s)", f.Reason, f.FieldPath, f.KeywordLocation)
		}
	}
	return b.String()
}

func TestOpenAPIDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	spec := oaLoad(t, oaDocument(t, oaEnv(t, nil)))
	if ok, errs := spec.validator.ValidateDocument(); !ok {
		t.Fatalf("the document is not valid OpenAPI 3.1:%s", oaReport(errs))
	}
	// Every example of a schema satisfies it.
	examples := 0
	for name, s := range spec.model.Components.Schemas.FromOldest() {
		for i, ex := range s.Schema().Examples {
			examples++
			var v any
			if err := ex.Decode(&v); err != nil {
				t.Fatalf("schema %s example %d: %v", name, i, err)
			}
			if ok, errs := spec.schemas.ValidateSchemaObject(s.Schema(), v); !ok {
				t.Errorf("schema %s: example %d is invalid:%s", name, i, oaReport(errs))
			}
		}
	}
	// And so does every example of a response.
	for name, r := range spec.model.Components.Responses.FromOldest() {
		for mt, c := range r.Content.FromOldest() {
			if c.Example == nil {
				continue
			}
			examples++
			var v any
			if err := c.Example.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if ok, errs := spec.schemas.ValidateSchemaObject(c.Schema.Schema(), v); !ok {
				t.Errorf("response %s (%s): its example is invalid:%s", name, mt, oaReport(errs))
			}
		}
	}
	if examples < 5 {
		t.Errorf("only %d examples checked", examples)
	}
}

// oaClient sends real requests to the server and validates each request and answer against
// the document.
type oaClient struct {
	t    *testing.T
	e    *env
	spec *oaSpec
}

type oaRequest struct {
	method, path string
	header       http.Header
	body         []byte
}

func (c *oaClient) request(method, path, token string, body any, headers ...string) oaRequest {
	c.t.Helper()
	r := oaRequest{method: method, path: path, header: http.Header{}}
	switch b := body.(type) {
	case nil:
	case string:
		r.body = []byte(b)
	case url.Values:
		r.body = []byte(b.Encode())
		r.header.Set("Content-Type", "application/x-www-form-urlencoded")
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r.body = raw
	}
	if body != nil && r.header.Get("Content-Type") == "" {
		r.header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.header.Set(headers[i], headers[i+1])
	}
	return r
}

func (r oaRequest) build(base string) *http.Request {
	req, err := http.NewRequest(r.method, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		panic(err)
	}
	if r.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header = r.header.Clone()
	return req
}

// send makes the request and checks the answer's status and its validity against the
// document; requestValid says whether the request itself must satisfy the document (a request
// meant to be refused must not: its refusal is documented by the document's own rules).
func (c *oaClient) send(r oaRequest, wantStatus int, requestValid bool) response {
	c.t.Helper()
	res, err := c.e.srv.Client().Do(r.build(c.e.srv.URL))
	if err != nil {
		c.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	raw, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	got := response{status: res.StatusCode, header: res.Header, body: raw}
	if got.status != wantStatus {
		c.t.Fatalf("%s %s answered %d, want %d: %s", r.method, r.path, got.status, wantStatus, raw)
	}

	req := r.build(c.e.srv.URL)
	okReq, reqErrs := c.spec.validator.ValidateHttpRequest(req)
	switch {
	case requestValid && !okReq:
		c.t.Errorf("%s %s: the request does not satisfy the document:%s", r.method, r.path, oaReport(reqErrs))
	case !requestValid && okReq:
		c.t.Errorf("%s %s: the document accepts a request the server refused with %d: %s", r.method, r.path, got.status, raw)
	}
	answer := &http.Response{StatusCode: got.status, Header: got.header, Body: io.NopCloser(bytes.NewReader(raw)),
		Request: r.build(c.e.srv.URL)}
	if ok, errs := c.spec.validator.ValidateHttpResponse(r.build(c.e.srv.URL), answer); !ok {
		c.t.Errorf("%s %s: the %d answer does not satisfy the document:%s\n%s", r.method, r.path, got.status, oaReport(errs), raw)
	}
	return got
}

func (c *oaClient) ok(method, path, token string, body any, want int, headers ...string) response {
	c.t.Helper()
	return c.send(c.request(method, path, token, body, headers...), want, true)
}

// webhookSchema is the request body schema of the named webhook.
func (s *oaSpec) webhookSchema(t *testing.T, name string) *base.Schema {
	t.Helper()
	item := s.model.Webhooks.GetOrZero(name)
	if item == nil || item.Post == nil {
		t.Fatalf("the document has no webhook %s", name)
	}
	return item.Post.RequestBody.Content.GetOrZero("application/json").Schema.Schema()
}

func TestOpenAPIDescribesRealRequestsAndAnswers(t *testing.T) {
	t.Parallel()
	e := oaEnv(t, nil)
	spec := oaLoad(t, oaDocument(t, e))
	c := &oaClient{t: t, e: e, spec: spec}
	ctx := context.Background()

	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).Execute(ctx, "Loja OpenAPI", nil)
	if err != nil {
		t.Fatal(err)
	}
	clientID, secret := created.Credential.ClientID, created.Credential.Secret
	_, readOnly := e.account(domain.ScopeTransactionRead)

	// Tokens: the form, HTTP Basic on GET, and the RFC 6749 refusals.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
	tok := c.ok("POST", "/auth/token", "", form, http.StatusOK).json(t)["access_token"].(string)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID)+":"+url.QueryEscape(secret)))
	c.ok("GET", "/auth/token", "", nil, http.StatusOK, "Authorization", basic)
	c.ok("POST", "/auth/token", "", url.Values{"client_id": {clientID}, "client_secret": {"wrong-" + secret}}, http.StatusUnauthorized)
	c.send(c.request("POST", "/auth/token", "", url.Values{"grant_type": {"password"}, "client_id": {clientID}, "client_secret": {secret}}), http.StatusBadRequest, false)
	c.send(c.request("GET", "/auth/token?client_id="+clientID+"&client_secret=x", "", nil, "Authorization", basic), http.StatusBadRequest, true)
	c.ok("POST", "/auth/token", "", url.Values{"client_id": {clientID}, "client_secret": {secret}, "scope": {"transaction:read,balance:read"}}, http.StatusOK)
	c.ok("GET", "/auth/token?scope=balance:read", "", nil, http.StatusOK, "Authorization", basic)
	c.ok("POST", "/auth/token", "", url.Values{"client_id": {clientID}, "client_secret": {secret}, "scope": {"root"}}, http.StatusBadRequest)
	c.ok("POST", "/oauth/token", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}, "scope": {"transaction:read balance:read"}}, http.StatusOK)
	c.ok("POST", "/oauth/token", "", url.Values{"grant_type": {"client_credentials"}}, http.StatusOK, "Authorization", basic)
	c.ok("POST", "/oauth/token", "", url.Values{"client_id": {clientID}, "client_secret": {"wrong-" + secret}}, http.StatusUnauthorized)
	c.ok("GET", "/.well-known/oauth-authorization-server", "", nil, http.StatusOK)

	// Transactions: creation, replay, lookup, list.
	full := fullTransaction()
	tx := c.ok("POST", "/transaction", tok, full, http.StatusCreated, "Idempotency-Key", "openapi-0001").json(t)["id"].(string)
	replay := c.ok("POST", "/transaction", tok, full, http.StatusCreated, "Idempotency-Key", "openapi-0001")
	if replay.header.Get("Idempotent-Replayed") != "true" {
		t.Error("the replay lacks Idempotent-Replayed")
	}
	minimal := c.ok("POST", "/transaction", tok, minimalTransaction(), http.StatusCreated).json(t)["id"].(string)
	c.ok("GET", "/transaction/"+tx, tok, nil, http.StatusOK)
	c.ok("GET", "/transaction/"+minimal, tok, nil, http.StatusOK, "X-Request-Id", "openapi-trace-1")
	c.ok("GET", "/transaction?status=PIX_QRCODE_GENERATED&status=PAID&paymentMethod=PIX&perPage=10&page=1"+
		"&customerDocument=529.982.247-25&customerEmail=joao@example.com.br&customerName=Souza&customerPhone=11+3456-7890"+
		"&minAmount=1&maxAmount=10000000&startDate=2020-01-01T00:00:00Z&endDate=2099-01-01T00:00:00-03:00"+
		"&externalCode=order-000123&id="+tx, tok, nil, http.StatusOK)
	c.ok("GET", "/transaction?page=99", tok, nil, http.StatusOK)

	// The dynamic charge's payload location, as a payer's bank reads it, and its key set.
	uri := c.ok("GET", "/transaction/"+minimal, tok, nil, http.StatusOK).json(t)["pixResponse"].(map[string]any)["uri"].(string)
	location := uri[strings.Index(uri, "/pix/qr/"):]
	location = location[:len("/pix/qr/")+26]
	jws := strings.Split(string(c.ok("GET", location, "", nil, http.StatusOK).body), ".")
	payload, err := base64.RawURLEncoding.DecodeString(jws[1])
	if err != nil {
		t.Fatalf("the location's payload: %v", err)
	}
	if ok, errs := spec.schemas.ValidateSchemaBytes(spec.model.Components.Schemas.GetOrZero("PixLocationPayload").Schema(), payload); !ok {
		t.Errorf("the location's payload does not satisfy PixLocationPayload:%v\n%s", errs, payload)
	}
	c.ok("GET", "/pix/qr/ABCDEFGHIJKLMNOPQRSTUVWXYZ", "", nil, http.StatusNotFound)
	c.ok("GET", "/pix/jwks", "", nil, http.StatusOK)

	// The lifecycle through the sandbox, the balance and the refund.
	c.ok("POST", "/sandbox/transaction/"+tx+"/pay", tok, map[string]any{"payer": map[string]any{
		"type": "PF", "name": "Pagador da Silva", "document": validCPF,
		"bankAccount": map[string]any{"type": "CACC", "digit": "7", "ispb": "00000000"},
		"pix":         map[string]any{"key": "pagador@example.com", "type": "EMAIL"},
	}}, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+minimal+"/pay", tok, nil, http.StatusOK)
	c.ok("GET", "/balance", tok, nil, http.StatusOK)
	partial := map[string]any{"amount": 2_000, "reason": "one item returned"}
	c.ok("POST", "/transaction/"+tx+"/refund", tok, partial, http.StatusAccepted, "Idempotency-Key", "openapi-refund-1")
	c.ok("POST", "/transaction/"+tx+"/refund", tok, partial, http.StatusAccepted, "Idempotency-Key", "openapi-refund-1")
	c.ok("POST", "/transaction/"+tx+"/refund", tok, map[string]any{"amount": 1_000}, http.StatusUnprocessableEntity, "Idempotency-Key", "openapi-refund-1")
	c.ok("POST", "/sandbox/transaction/"+tx+"/refund/fail", tok, map[string]any{}, http.StatusOK)
	c.ok("POST", "/transaction/"+tx+"/refund", tok, map[string]any{"amount": 12_346}, http.StatusUnprocessableEntity)
	c.send(c.request("POST", "/transaction/"+tx+"/refund", tok, map[string]any{"amount": 0, "reason": ""}), http.StatusUnprocessableEntity, false)
	c.send(c.request("POST", "/transaction/"+tx+"/refund", tok, map[string]any{"amount": "100"}), http.StatusUnprocessableEntity, false)
	c.ok("POST", "/transaction/"+tx+"/refund", tok, map[string]any{"amount": 1_000_000}, http.StatusUnprocessableEntity)
	c.ok("POST", "/transaction/"+tx+"/refund", tok, nil, http.StatusAccepted)
	c.ok("POST", "/sandbox/transaction/"+tx+"/refund/fail", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+tx+"/med/open", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+tx+"/med/reject", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+tx+"/med/open", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+tx+"/med/accept", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/transaction/"+tx+"/med/accept", tok, nil, http.StatusConflict)

	// Withdrawals.
	wd := c.ok("POST", "/withdrawal", tok, map[string]any{
		"amount": 500, "pixKey": map[string]any{"key": "+5511987654321", "type": "PHONE"},
		"externalCode": "payout-0001", "webhookUrl": "https://merchant.example.com/hooks/payout",
	}, http.StatusCreated, "Idempotency-Key", "payout-key-0001").json(t)["id"].(string)
	c.ok("GET", "/withdrawal/"+wd, tok, nil, http.StatusOK)
	c.ok("POST", "/withdrawal/"+wd+"/cancel", tok, nil, http.StatusConflict)
	c.ok("POST", "/sandbox/withdrawal/"+wd+"/fail", tok, nil, http.StatusOK)
	c.ok("POST", "/sandbox/withdrawal/"+wd+"/reject", tok, nil, http.StatusConflict)
	c.ok("POST", "/sandbox/withdrawal/"+wd+"/refund", tok, nil, http.StatusConflict)
	c.ok("POST", "/withdrawal", tok, map[string]any{"amount": 10_000_000, "pixKey": map[string]any{"key": validCNPJ, "type": "CNPJ"}},
		http.StatusUnprocessableEntity)

	// Events and their webhook bodies.
	c.ok("GET", "/transaction/"+tx+"/events", tok, nil, http.StatusOK)
	c.ok("GET", "/withdrawal/"+wd+"/events", tok, nil, http.StatusOK)
	for _, res := range []struct {
		kind     domain.ResourceKind
		id, hook string
	}{{domain.ResourceTransaction, tx, "transactionEvent"}, {domain.ResourceWithdrawal, wd, "withdrawalEvent"}} {
		deliveries, err := e.app.stores.outbox.Deliveries(ctx, created.Account.ID(), res.kind, res.id)
		if err != nil || len(deliveries) == 0 {
			t.Fatalf("%s %s: %d deliveries, %v", res.kind, res.id, len(deliveries), err)
		}
		schema := spec.webhookSchema(t, res.hook)
		for _, d := range deliveries {
			body, err := httpapi.EventEncoder{}.EncodeEvent(d.Event)
			if err != nil {
				t.Fatal(err)
			}
			if ok, errs := spec.schemas.ValidateSchemaBytes(schema, body); !ok {
				t.Errorf("the %s notification does not satisfy webhook %s:%s\n%s", d.Event.Type, res.hook, oaReport(errs), body)
			}
		}
	}

	// Account credentials and the webhook secret.
	c.ok("GET", "/webhook/secret", tok, nil, http.StatusOK)
	c.ok("POST", "/webhook/secret/rotate", tok, nil, http.StatusOK)
	c.ok("GET", "/webhook/secret", readOnly, nil, http.StatusForbidden)
	cred := c.ok("POST", "/auth/credentials", tok, nil, http.StatusCreated).json(t)["client_id"].(string)
	c.ok("GET", "/auth/credentials", tok, nil, http.StatusOK)
	c.ok("DELETE", "/auth/credentials/"+cred, tok, nil, http.StatusNoContent)
	c.ok("DELETE", "/auth/credentials/no-such-client", tok, nil, http.StatusNotFound)
	c.ok("GET", "/auth/credentials", tok, nil, http.StatusOK)
	for range domain.MaxActiveCredentials - 1 {
		c.ok("POST", "/auth/credentials", tok, nil, http.StatusCreated)
	}
	c.ok("POST", "/auth/credentials", tok, nil, http.StatusUnprocessableEntity)

	// Problems: every kind a merchant meets.
	bad := map[string]any{"amount": 0, "paymentMethod": "BOLETO", "customer": map[string]any{"name": "a;b", "email": "x", "document": "123"},
		"items": []any{map[string]any{"title": "T", "unitPrice": 1.5}}, "status": "PAID"}
	p := c.send(c.request("POST", "/transaction", tok, bad), http.StatusUnprocessableEntity, false).json(t)
	if errs, _ := p["errors"].([]any); len(errs) < 5 {
		t.Errorf("the 422 lists %d errors: %v", len(errs), p)
	}
	c.send(c.request("POST", "/transaction", tok, `{"amount": 1000,`), http.StatusUnprocessableEntity, false)
	c.send(c.request("POST", "/transaction", tok, `{"amount": 1, "amount": 2, "paymentMethod": "PIX", "pix": {}}`), http.StatusUnprocessableEntity, true)
	c.send(c.request("POST", "/transaction", tok, minimalTransaction(), "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, false)
	c.send(c.request("POST", "/withdrawal", tok, `{"amount": 100}`, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, false)
	c.send(c.request("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "short"), http.StatusUnprocessableEntity, false)
	c.send(c.request("GET", "/transaction?perPage=101", tok, nil), http.StatusUnprocessableEntity, false)
	c.send(c.request("GET", "/transaction?per_page=10", tok, nil), http.StatusUnprocessableEntity, true)
	c.send(c.request("GET", "/transaction/not-a-uuid", tok, nil), http.StatusUnprocessableEntity, false)
	c.ok("GET", "/transaction/0b9e2a47-5f3c-4d1e-8a6b-7c9d0e1f2a3b", tok, nil, http.StatusNotFound)
	c.ok("GET", "/withdrawal/0b9e2a47-5f3c-4d1e-8a6b-7c9d0e1f2a3b", tok, nil, http.StatusNotFound)
	c.ok("POST", "/transaction/"+minimal+"/refund", tok, map[string]any{"amount": 100}, http.StatusAccepted)
	c.ok("POST", "/transaction/"+minimal+"/refund", tok, nil, http.StatusConflict)
	c.send(c.request("GET", "/transaction/"+tx, "", nil), http.StatusUnauthorized, false)
	c.ok("GET", "/transaction/"+tx, "garbage", nil, http.StatusUnauthorized)
	c.ok("POST", "/transaction", readOnly, minimalTransaction(), http.StatusForbidden)
	c.send(c.request("GET", "/balance?x=1", tok, nil), http.StatusUnprocessableEntity, true)

	// The statement: pages, filters, cursors, the CSV export and its refusals.
	page := c.ok("GET", "/balance/entries?limit=2&type=payment&type=fee&startDate=2020-01-01T00:00:00Z&endDate=2099-01-01T00:00:00-03:00", tok, nil, http.StatusOK).json(t)
	next, _ := page["nextCursor"].(string)
	if next == "" {
		t.Fatalf("no nextCursor on a first page of 2: %v", page)
	}
	c.ok("GET", "/balance/entries?limit=2&type=payment&type=fee&startDate=2020-01-01T00:00:00Z&endDate=2099-01-01T00:00:00-03:00&cursor="+url.QueryEscape(next), tok, nil, http.StatusOK)
	c.ok("GET", "/balance/entries", tok, nil, http.StatusOK)
	c.ok("GET", "/balance/entries?limit=100", tok, nil, http.StatusOK, "Accept", "text/csv")
	c.ok("GET", "/balance/entries?cursor="+url.QueryEscape(next), tok, nil, http.StatusUnprocessableEntity)
	c.ok("GET", "/balance/entries?cursor=garbage", tok, nil, http.StatusUnprocessableEntity)
	c.send(c.request("GET", "/balance/entries?limit=0", tok, nil), http.StatusUnprocessableEntity, false)
	c.send(c.request("GET", "/balance/entries?type=tip", tok, nil), http.StatusUnprocessableEntity, false)
	c.ok("GET", "/balance/entries", readOnly, nil, http.StatusForbidden)
	c.send(c.request("POST", "/transaction", tok, `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"x": "`+strings.Repeat("a", 1<<20)+`"}}`),
		http.StatusRequestEntityTooLarge, true)

	// The acquirer's callback.
	callback := map[string]any{"pix": []any{map[string]any{
		"endToEndId": "E00000000202611221119abcdefghijk", "txid": "unknowntxid0001", "valor": "10.00",
		"horario": "2026-11-22T11:19:32.123Z", "infoPagador": "pedido 1",
	}}}
	c.send(c.request("POST", "/acquirer/pix", strings.Repeat("s", 32), callback), http.StatusOK, true)
	c.send(c.request("POST", "/acquirer/pix", "wrong", callback), http.StatusUnauthorized, true)
	// A malformed entry is answered (invalid) with the others; only a body without pix is refused.
	if res := acqResults(t, c.send(c.request("POST", "/acquirer/pix", strings.Repeat("s", 32), map[string]any{"pix": []any{map[string]any{"txid": "x"}}}),
		http.StatusOK, false)); res[0].Outcome != "invalid" {
		t.Errorf("a malformed entry: %+v, want invalid", res)
	}
	c.send(c.request("POST", "/acquirer/pix", strings.Repeat("s", 32), map[string]any{"pixes": []any{}}), http.StatusUnprocessableEntity, false)
	vendor := map[string]any{"pix": []any{map[string]any{
		"endToEndId": "E00000000202611221119abcdefghijy", "valor": "10.00", "horario": "2026-11-22T11:19:32.123Z",
		"gnExtras": map[string]any{"tarifa": "0.00"},
	}}, "versao": 1}
	if res := acqResults(t, c.ok("POST", "/acquirer/pix", strings.Repeat("s", 32), vendor, http.StatusOK)); res[0].Outcome != "unknown_txid" {
		t.Errorf("a PIX without txid, with a vendor's members: %+v, want unknown_txid", res)
	}
	invalidTime := map[string]any{"pix": []any{map[string]any{
		"endToEndId": "E00000000202611221119abcdefghijz", "txid": acqTxID(t, tx), "valor": "10.00", "horario": "2000-01-01T00:00:00Z",
	}}}
	if res := acqResults(t, c.ok("POST", "/acquirer/pix", strings.Repeat("s", 32), invalidTime, http.StatusOK)); res[0].Outcome != "invalid_time" {
		t.Errorf("a horario of 2000: %+v, want invalid_time", res)
	}

	// The operational routes.
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/.well-known/jwks.json"} {
		c.ok("GET", path, "", nil, http.StatusOK)
	}
}

func TestOpenAPIDescribesTheRateLimit(t *testing.T) {
	t.Parallel()
	e := oaEnv(t, map[string]string{"PIXGATE_RATE_LIMIT_RPS": "0.001", "PIXGATE_RATE_LIMIT_BURST": "1"})
	c := &oaClient{t: t, e: e, spec: oaLoad(t, oaDocument(t, e))}
	_, tok := e.account()
	first := c.ok("POST", "/transaction", tok, minimalTransaction(), http.StatusCreated)
	limited := c.ok("POST", "/transaction", tok, minimalTransaction(), http.StatusTooManyRequests)
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if first.header.Get(h) == "" || limited.header.Get(h) == "" {
			t.Errorf("%s is missing", h)
		}
	}
	if limited.header.Get("Retry-After") == "" {
		t.Error("the 429 lacks Retry-After")
	}
}

func TestOpenAPIDescribesTheTokenLimits(t *testing.T) {
	t.Parallel()
	e := oaEnv(t, map[string]string{"PIXGATE_TOKEN_RATE_LIMIT_RPS": "0.001", "PIXGATE_TOKEN_RATE_LIMIT_BURST": "1",
		"PIXGATE_TOKEN_FAILURE_LIMIT": "1"})
	c := &oaClient{t: t, e: e, spec: oaLoad(t, oaDocument(t, e))}
	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).Execute(context.Background(), "Loja Limites", nil)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"client_id": {created.Credential.ClientID}, "client_secret": {created.Credential.Secret}}
	c.ok("POST", "/oauth/token", "", form, http.StatusOK)
	c.ok("POST", "/oauth/token", "", form, http.StatusTooManyRequests) // the client's bucket
	c.ok("POST", "/auth/token", "", url.Values{"client_id": {"nobody"}, "client_secret": {"guess"}}, http.StatusUnauthorized)
	c.ok("GET", "/auth/token", "", nil, http.StatusTooManyRequests, "Authorization", "Basic bm9ib2R5Omd1ZXNz") // the address's failures
}

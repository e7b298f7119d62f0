package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// What the logs may say (docs/OPERATIONS.md, "Logs"): JSON lines with the request id, and never a
// secret, a token, a full document or a customer's contact data. These tests run `serve` as the
// program runs it (its own logger, at debug level so that nothing hides below the threshold),
// walk every route that handles such data, and search each log line for each of them.
// Helpers here start with "lg".

// Personal data of the scenario, each valid, so that it reaches the use cases and not only the
// validation.
const (
	lgCustomerCPF  = validCPF         // the customer's document
	lgPayerCPF     = "111.444.777-35" // the sandbox payer's document
	lgKeyCPF       = "390.533.447-05" // the PIX key of a withdrawal
	lgEmail        = "joao@example.com.br"
	lgPayerEmail   = "pagador.logs@example.org"
	lgLandline     = "+55 (11) 3456-7890"
	lgMobile       = "(21) 98765-4321"
	lgBirthdate    = "1990-05-17"
	lgCustomerName = "João D'Ávila-Souza"
	lgSeedClientID = "logs-merchant"
	lgSeedSecret   = "seeded-secret-0123456789-abcdefghijklmnop"
)

// lgServer is `pixgate serve` running in the test process on a loopback port, with its stdout
// and its log (stderr) collected.
type lgServer struct {
	t      *testing.T
	base   string
	client *http.Client
	stdout *syncBuffer
	stderr *syncBuffer
	stop   func() error
	sent   []lgSent
}

// lgSent is a request the test sent: its X-Request-Id, the route it meant and the status it got.
type lgSent struct {
	id     string
	route  string
	status int
}

func lgServe(t *testing.T, vars map[string]string) *lgServer {
	t.Helper()
	base := map[string]string{"PIXGATE_ADDR": "127.0.0.1:0", "PIXGATE_SANDBOX": "true", "PIXGATE_LOG_LEVEL": "debug",
		"PIXGATE_RATE_LIMIT_RPS": "0"}
	for k, v := range vars {
		base[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s := &lgServer{t: t, client: &http.Client{Timeout: 10 * time.Second}, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, s.stdout, s.stderr, func(a string) { addr <- a }) }()
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-done:
		cancel()
		t.Fatalf("serve ended before listening: %v\n%s", err, s.stderr)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not listen within 20 s")
	}
	var stopped bool
	var stopErr error
	s.stop = func() error {
		if stopped {
			return stopErr
		}
		stopped = true
		cancel()
		select {
		case stopErr = <-done:
		case <-time.After(30 * time.Second):
			stopErr = fmt.Errorf("serve did not return within 30 s of its context ending")
		}
		return stopErr
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

// call sends a request meant for route with a request id of its own, and remembers what came
// back. body is sent as is when it is a string or url.Values (a form), else as JSON.
func (s *lgServer) call(route, method, path, token string, body any, headers ...string) response {
	s.t.Helper()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case url.Values:
		rd, contentType = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	id := fmt.Sprintf("lg-%03d", len(s.sent)+1)
	req.Header.Set("X-Request-Id", id)
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, route, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatalf("%s %s: reading the answer: %v", method, route, err)
	}
	s.sent = append(s.sent, lgSent{id: id, route: route, status: res.StatusCode})
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// want fails unless r has status, and returns its JSON object (nil for an empty body).
func (s *lgServer) want(step string, r response, status int) map[string]any {
	s.t.Helper()
	if r.status != status {
		s.t.Fatalf("%s: status %d, want %d\n%s", step, r.status, status, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.json(s.t)
}

// token gets an access token with client credentials in the form body.
func (s *lgServer) token(clientID, secret string) string {
	s.t.Helper()
	r := s.call("auth.token", "POST", "/auth/token", "",
		url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}})
	tok, _ := s.want("token for "+clientID, r, http.StatusOK)["access_token"].(string)
	if strings.Count(tok, ".") != 2 {
		s.t.Fatalf("access_token %q is not a JWT", tok)
	}
	return tok
}

// lgLogLine is one line of the log, decoded, and its text.
type lgLogLine struct {
	text   string
	fields map[string]any
}

// lgLog decodes every line of a JSON log; a line that is not a JSON object fails the test.
func lgLog(t *testing.T, log string) []lgLogLine {
	t.Helper()
	var out []lgLogLine
	for _, line := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not a JSON object (%v): %s", err, line)
		}
		out = append(out, lgLogLine{text: line, fields: m})
	}
	return out
}

// lgStrings lists every string in a decoded JSON value, keys included.
func lgStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for k, e := range x {
			out = lgStrings(e, append(out, k))
		}
	case []any:
		for _, e := range x {
			out = lgStrings(e, out)
		}
	}
	return out
}

var (
	lgNonDigits   = regexp.MustCompile(`\D`)
	lgDemoAccount = regexp.MustCompile(`client_id:\s+(\S+)\s+client_secret:\s+(\S+)`)
)

func lgDigits(s string) string { return lgNonDigits.ReplaceAllString(s, "") }

// lgSecret is something that must never reach the log: what it is, and how it could be written.
type lgSecret struct {
	what   string
	texts  []string // compared without regard to case with the whole line
	digits []string // compared with the digits of each string of the line
}

// lgLeaks lists every secret found in the log lines.
func lgLeaks(lines []lgLogLine, secrets []lgSecret) []string {
	var leaks []string
	for i, l := range lines {
		lower := strings.ToLower(l.text)
		values := lgStrings(l.fields, nil)
		for _, s := range secrets {
			for _, text := range s.texts {
				if text != "" && strings.Contains(lower, strings.ToLower(text)) {
					leaks = append(leaks, fmt.Sprintf("line %d holds %s (%q): %s", i+1, s.what, text, l.text))
				}
			}
			for _, d := range s.digits {
				for _, v := range values {
					if strings.Contains(lgDigits(v), d) {
						leaks = append(leaks, fmt.Sprintf("line %d holds %s (its digits %s): %s", i+1, s.what, d, l.text))
					}
				}
			}
		}
	}
	return leaks
}

// lgDocument is a CPF as it must not be logged: punctuated, plain, or as digits anywhere.
func lgDocument(what, cpf string) lgSecret {
	return lgSecret{what: what, texts: []string{cpf, lgDigits(cpf)}, digits: []string{lgDigits(cpf)}}
}

// lgJWT is an access token: whole, or its signature alone.
func lgJWT(what, token string) lgSecret {
	parts := strings.Split(token, ".")
	return lgSecret{what: what, texts: []string{token, parts[len(parts)-1]}}
}

// lgWebhookSecret is a whsec_ secret: whole, or its key alone.
func lgWebhookSecret(what, secret string) lgSecret {
	return lgSecret{what: what, texts: []string{secret, strings.TrimPrefix(secret, "whsec_")}}
}

func TestLogsHoldNoSecretTokenDocumentOrContactAndNameEveryRequest(t *testing.T) {
	s := lgServe(t, map[string]string{
		"PIXGATE_SEED_CLIENTS":         "Logs Merchant:" + lgSeedClientID + ":" + lgSeedSecret,
		"PIXGATE_SANDBOX_DEMO_ACCOUNT": "true",
	})
	secrets := []lgSecret{
		{what: "the seeded client secret", texts: []string{lgSeedSecret}},
		lgDocument("the customer's CPF", lgCustomerCPF),
		lgDocument("the payer's CPF", lgPayerCPF),
		lgDocument("the CPF of a PIX key", lgKeyCPF),
		{what: "the customer's e-mail", texts: []string{lgEmail, url.QueryEscape(lgEmail)}},
		{what: "the payer's e-mail key", texts: []string{lgPayerEmail, url.QueryEscape(lgPayerEmail)}},
		{what: "the landline", texts: []string{lgLandline, "3456-7890"}, digits: []string{lgDigits(lgLandline)[2:]}},
		{what: "the mobile phone", texts: []string{lgMobile, "98765-4321"}, digits: []string{lgDigits(lgMobile)}},
		{what: "the birthdate", texts: []string{lgBirthdate, "17/05/1990"}, digits: []string{lgDigits(lgBirthdate)}},
		{what: "the customer's name", texts: []string{lgCustomerName, "D'Ávila"}},
	}

	// The demo account printed on stdout works, so the search below is for its real secret.
	demo := lgDemoAccount.FindStringSubmatch(s.stdout.String())
	if demo == nil {
		t.Fatalf("stdout shows no demo account:\n%s", s.stdout)
	}
	demoSecret := demo[2]
	if len(demoSecret) < 32 {
		t.Fatalf("the demo secret %q is shorter than 32 characters", demoSecret)
	}
	secrets = append(secrets, lgSecret{what: "the demo account's secret", texts: []string{demoSecret}},
		lgJWT("the demo account's token", s.token(demo[1], demoSecret)))

	// Authentication: a token, refusals of a wrong secret and of a secret in a query string.
	tok := s.token(lgSeedClientID, lgSeedSecret)
	secrets = append(secrets, lgJWT("the access token", tok))
	wrongSecret := "wrong-secret-9876543210-zyxwvutsrqponmlk"
	secrets = append(secrets, lgSecret{what: "a wrong client secret", texts: []string{wrongSecret}})
	s.want("a wrong secret", s.call("auth.token", "POST", "/auth/token", "",
		url.Values{"client_id": {lgSeedClientID}, "client_secret": {wrongSecret}}), http.StatusUnauthorized)
	s.want("a secret in the query string", s.call("auth.token.get", "GET",
		"/auth/token?client_id="+lgSeedClientID+"&client_secret="+url.QueryEscape(wrongSecret), "", nil), http.StatusBadRequest)

	// A transaction with every personal field, read back and found by document and e-mail.
	body := fullTransaction()
	customer := body["customer"].(map[string]any)
	customer["name"], customer["document"], customer["email"] = lgCustomerName, lgCustomerCPF, lgEmail
	customer["landline"], customer["mobilePhone"], customer["birthdate"] = lgLandline, lgMobile, lgBirthdate
	created := s.want("creating", s.call("transaction.create", "POST", "/transaction", tok, body), http.StatusCreated)
	id := created["id"].(string)
	s.want("getting", s.call("transaction.get", "GET", "/transaction/"+id, tok, nil), http.StatusOK)
	for _, q := range []string{
		"customerDocument=" + url.QueryEscape(lgCustomerCPF),
		"customerDocument=" + lgDigits(lgCustomerCPF) + "&customerEmail=" + url.QueryEscape(lgEmail),
		"customerEmail=" + url.QueryEscape(strings.ToUpper(lgEmail)),
		"customerPhone=" + lgDigits(lgMobile),
	} {
		page := s.want("listing by "+q, s.call("transaction.list", "GET", "/transaction?"+q, tok, nil), http.StatusOK)
		if data, _ := page["data"].([]any); len(data) != 1 {
			t.Fatalf("listing by %s found %d transactions, want 1", q, len(data))
		}
	}

	// Webhook secrets, shown and rotated.
	ws := s.want("webhook secret", s.call("webhook.secret.get", "GET", "/webhook/secret", tok, nil), http.StatusOK)
	secrets = append(secrets, lgWebhookSecret("the webhook secret", ws["secret"].(string)))
	rotated := s.want("rotating", s.call("webhook.secret.rotate", "POST", "/webhook/secret/rotate", tok, nil), http.StatusOK)
	secrets = append(secrets, lgWebhookSecret("the rotated webhook secret", rotated["secret"].(string)))

	// A second credential: created, used, revoked, refused.
	cred := s.want("a credential", s.call("auth.credentials.create", "POST", "/auth/credentials", tok, nil), http.StatusCreated)
	credID, credSecret := cred["client_id"].(string), cred["client_secret"].(string)
	secrets = append(secrets, lgSecret{what: "a created client secret", texts: []string{credSecret}})
	tok2 := s.token(credID, credSecret)
	secrets = append(secrets, lgJWT("the second access token", tok2))
	s.want("revoking", s.call("auth.credentials.revoke", "DELETE", "/auth/credentials/"+credID, tok, nil), http.StatusNoContent)
	s.want("a revoked secret", s.call("auth.token", "POST", "/auth/token", "",
		url.Values{"client_id": {credID}, "client_secret": {credSecret}}), http.StatusUnauthorized)

	// Refusals that carry personal data: a 422 with a bad CPF and e-mail, a malformed body, a
	// token with a forged signature.
	bad := fullTransaction()
	badCustomer := bad["customer"].(map[string]any)
	badCustomer["document"], badCustomer["email"], badCustomer["birthdate"] = "529.982.247-26", "joao@@example", "1990-13-45"
	secrets = append(secrets, lgDocument("an invalid CPF", "529.982.247-26"),
		lgSecret{what: "an invalid e-mail", texts: []string{"joao@@example"}})
	s.want("an invalid customer", s.call("transaction.create", "POST", "/transaction", tok, bad), http.StatusUnprocessableEntity)
	s.want("a malformed body", s.call("transaction.create", "POST", "/transaction", tok,
		`{"amount": 100, "customer": {"document": "`+lgCustomerCPF+`", "email": "`+lgEmail+`"`), http.StatusUnprocessableEntity)
	forged := tok[:strings.LastIndex(tok, ".")+1] + "Zm9yZ2VkLXNpZ25hdHVyZS1vZi1hbi1hdHRhY2tlcg"
	secrets = append(secrets, lgJWT("a forged token", forged))
	s.want("a forged token", s.call("transaction.get", "GET", "/transaction/"+id, forged, nil), http.StatusUnauthorized)

	// The money: the sandbox payer pays, and a withdrawal goes to a CPF key.
	payer := map[string]any{"type": "PF", "name": "Pagador Dos Logs", "document": lgPayerCPF,
		"bankAccount": map[string]any{"type": "CACC", "digit": "7", "ispb": "00360305"},
		"pix":         map[string]any{"key": lgPayerEmail, "type": "EMAIL"}}
	s.want("paying", s.call("sandbox.transaction.pay", "POST", "/sandbox/transaction/"+id+"/pay", tok,
		map[string]any{"payer": payer}), http.StatusOK)
	wd := s.want("withdrawing", s.call("withdrawal.create", "POST", "/withdrawal", tok,
		map[string]any{"amount": 1000, "pixKey": map[string]any{"key": lgKeyCPF, "type": "CPF"}}), http.StatusCreated)
	s.want("the withdrawal", s.call("withdrawal.get", "GET", "/withdrawal/"+wd["id"].(string), tok, nil), http.StatusOK)

	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	stdout, stderr := s.stdout.String(), s.stderr.String()
	lines := lgLog(t, stderr)

	t.Run("no line holds a secret, a token, a document, a contact or a name", func(t *testing.T) {
		for _, leak := range lgLeaks(lines, secrets) {
			t.Error(leak)
		}
	})

	t.Run("each request has one line with its id, route name, status and duration", func(t *testing.T) {
		byID := map[string][]map[string]any{}
		for _, l := range lines {
			if l.fields["msg"] != "request" {
				continue
			}
			rid, _ := l.fields["requestId"].(string)
			route, _ := l.fields["route"].(string)
			_, isStatus := l.fields["status"].(float64)
			ms, isDuration := l.fields["durationMs"].(float64)
			if rid == "" || route == "" || !isStatus || !isDuration || ms < 0 {
				t.Errorf("a request line lacks requestId, route, status or durationMs: %s", l.text)
			}
			if strings.Contains(route, "/") || strings.Contains(route, "?") {
				t.Errorf("a request line names a path, not a route: %s", l.text)
			}
			byID[rid] = append(byID[rid], l.fields)
		}
		for _, sent := range s.sent {
			got := byID[sent.id]
			if len(got) != 1 {
				t.Errorf("request %s (%s, %d) has %d request lines, want 1", sent.id, sent.route, sent.status, len(got))
				continue
			}
			if got[0]["route"] != sent.route || got[0]["status"] != float64(sent.status) {
				t.Errorf("request %s: logged route %v status %v, want %s %d", sent.id, got[0]["route"], got[0]["status"], sent.route, sent.status)
			}
		}
		if len(byID) != len(s.sent) {
			t.Errorf("%d requests logged, %d sent", len(byID), len(s.sent))
		}
	})

	t.Run("the demo account's secret is printed on stdout, the only place it appears", func(t *testing.T) {
		if strings.Count(stdout, demoSecret) != 2 { // the credentials, and the curl line
			t.Errorf("stdout shows the demo secret %d times, want 2:\n%s", strings.Count(stdout, demoSecret), stdout)
		}
		if strings.Contains(stderr, demoSecret) {
			t.Error("the demo account's secret is in the log")
		}
		if strings.Contains(stdout, lgSeedSecret) {
			t.Error("a seeded secret, which the operator chose, is printed on stdout")
		}
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "{") {
				t.Errorf("stdout holds a log line: %s", l)
			}
		}
	})

	t.Run("the log says the server started and stopped", func(t *testing.T) {
		var serving, stopped bool
		for _, l := range lines {
			serving = serving || l.fields["msg"] == "pixgate serving"
			stopped = stopped || l.fields["msg"] == "stopped"
			if l.fields["level"] == "ERROR" {
				t.Errorf("an error was logged: %s", l.text)
			}
		}
		if !serving || !stopped {
			t.Errorf("serving %v stopped %v; the log:\n%s", serving, stopped, stderr)
		}
	})
}

// TestLogLeakSearchFindsEveryDisguise keeps the search above from passing vacuously: each line
// here leaks, each in a way of its own.
func TestLogLeakSearchFindsEveryDisguise(t *testing.T) {
	secrets := []lgSecret{
		lgDocument("a CPF", lgCustomerCPF),
		{what: "an e-mail", texts: []string{lgEmail}},
		{what: "a mobile phone", texts: []string{lgMobile}, digits: []string{lgDigits(lgMobile)}},
		lgJWT("a token", "aGVhZGVy.cGF5bG9hZA.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"),
		lgWebhookSecret("a webhook secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
	}
	leaking := []string{
		`{"msg":"a","document":"529.982.247-25"}`,
		`{"msg":"a","document":"52998224725"}`,
		`{"msg":"a","filter":{"customerDocument":"529 982 247 25"}}`,
		`{"msg":"a","email":"JOAO@EXAMPLE.COM.BR"}`,
		`{"msg":"a","phones":["+55 21 98765 4321"]}`,
		`{"msg":"a","auth":"Bearer aGVhZGVy.cGF5bG9hZA.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"}`,
		`{"msg":"a","sig":"c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"}`,
		`{"msg":"a","key":"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
	}
	for _, line := range leaking {
		if leaks := lgLeaks(lgLog(t, line), secrets); len(leaks) == 0 {
			t.Errorf("no leak found in %s", line)
		}
	}
	clean := `{"msg":"request","requestId":"lg-001","route":"transaction.get","status":200,"durationMs":0.4,"document":"***.982.247-**"}`
	if leaks := lgLeaks(lgLog(t, clean), secrets); len(leaks) != 0 {
		t.Errorf("a clean line was taken for a leak: %v", leaks)
	}
}

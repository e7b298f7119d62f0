package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// Charges made at the PSP, over HTTP: pixgate against the fake PSP (Banco Central's API Pix,
// mutual TLS, tokens that expire within seconds). Helpers here start with "psp".

// pspEnv is pixgate in PSP mode against p, with the acquirer callback's secret.
func pspEnv(t *testing.T, p *psptest.PSP, more map[string]string) *env {
	t.Helper()
	vars := dvPSPVars(p)
	for k, v := range more {
		vars[k] = v
	}
	return acqEnv(t, vars)
}

// pspTxID is the txid of the PSP's charge of the transaction id, as pixgate stored it.
func (e *env) pspTxID(id string) string {
	e.t.Helper()
	tx, err := e.app.stores.transactions.Find(context.Background(), id)
	if err != nil {
		e.t.Fatalf("finding %s: %v", id, err)
	}
	if tx.Pix() == nil || tx.Pix().Location.CobTxID == "" {
		e.t.Fatalf("%s has no charge at the PSP", id)
	}
	return tx.Pix().Location.CobTxID
}

// pspPay has the PSP settle a payment of the transaction id's charge, and delivers the
// callback the PSP would (its members as API Pix writes them); it answers the payment and the
// callback's outcome.
func (e *env) pspPay(p *psptest.PSP, id string) (psptest.Pix, string) {
	e.t.Helper()
	paid, err := p.Pay(e.pspTxID(id), psptest.Payment{})
	if err != nil {
		e.t.Fatal(err)
	}
	entry := map[string]any{"endToEndId": paid.EndToEndID, "txid": paid.TxID, "valor": paid.Valor, "chave": paid.Chave,
		"horario": paid.Horario}
	res := acqResults(e.t, e.acqNotify(map[string]any{"pix": []any{entry}}))
	return paid, res[0].Outcome
}

// pspQR reads the QR code of a pixResponse's qrCodeBase64; "" when gozxing finds no code in
// the image (it misses about 2% of them; other tests read every image with zbar too).
func pspQR(t *testing.T, qrCodeBase64 string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(qrCodeBase64, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, nil)
	if _, missed := errors.AsType[gozxing.ReaderException](err); missed {
		t.Logf("gozxing found no code in the image: %v", err)
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return res.GetText()
}

// pspListed is how many transactions the account lists.
func (e *env) pspListed(tok string) float64 {
	e.t.Helper()
	r := e.do("GET", "/transaction", tok, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("listing: %d %s", r.status, r.body)
	}
	return r.json(e.t)["total"].(float64)
}

func TestAChargeMadeAtThePSPIsPaidThroughItsCallback(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := pspEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_NAME": "BANCO_TESTE"})
	_, tok := e.account()
	body := fullTransaction()
	body["pix"] = map[string]any{"expirationSeconds": 900}
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create201: %d %s", r.status, r.body)
	}
	tx := r.json(t)
	id := tx["id"].(string)
	cob, ok := p.Cob(e.pspTxID(id))
	if !ok {
		t.Fatal("the PSP holds no cob for the transaction")
	}
	pr := tx["pixResponse"].(map[string]any)
	if pr["uri"] != cob.PixCopiaECola || cob.PixCopiaECola == "" {
		t.Fatalf("uri %q, the PSP's pixCopiaECola %q", pr["uri"], cob.PixCopiaECola)
	}
	if got := pspQR(t, pr["qrCodeBase64"].(string)); got != "" && got != cob.PixCopiaECola {
		t.Fatalf("the QR code reads %q, want the PSP's pixCopiaECola", got)
	}
	// Compared as instants: the answer writes milliseconds, always three digits, and the PSP
	// writes what it writes.
	criacao, _ := time.Parse(time.RFC3339Nano, cob.Calendario.Criacao)
	expiration, _ := pr["expirationDate"].(string)
	expires, err := time.Parse(time.RFC3339Nano, expiration)
	if want := criacao.Add(900 * time.Second); err != nil || expires.Sub(want).Abs() >= time.Millisecond {
		t.Fatalf("expirationDate %v, want the PSP's criacao plus 900 s, %s", pr["expirationDate"], want.UTC().Format(time.RFC3339Nano))
	}
	if acquirer := e.lcGet(tok, id).json(t)["acquirer"]; acquirer != "BANCO_TESTE" || cob.Valor.Original != "123.45" || cob.Chave != p.Chave || cob.Calendario.Expiracao != 900 ||
		cob.SolicitacaoPagador != "Algodão" || cob.Devedor == nil || cob.Devedor.CPF != "52998224725" || cob.Devedor.Nome != "João D'Ávila-Souza" {
		t.Fatalf("acquirer %v; the PSP holds %+v", acquirer, cob)
	}
	if page := e.do("GET", strings.TrimPrefix(tx["paymentUrl"].(string), e.srv.URL), "", nil); page.status != http.StatusOK ||
		!bytes.Contains(page.body, []byte(cob.PixCopiaECola[:40])) {
		t.Fatalf("payment page: %d", page.status)
	}

	paid, outcome := e.pspPay(p, id)
	got := e.lcGet(tok, id).json(t)
	if outcome != "applied" || got["status"] != "PAID" || got["endToEnd"] != paid.EndToEndID {
		t.Fatalf("after the payment: %s, status %v, endToEnd %v", outcome, got["status"], got["endToEnd"])
	}
	if w := e.mustWithdraw(tok, 1000); w["acquirer"] != "BANCO_TESTE" {
		t.Fatalf("a withdrawal's acquirer is %v, want the PSP's name", w["acquirer"])
	}
	if strings.Contains(e.log.String(), p.ClientSecret) {
		t.Fatal("the PSP's client secret reached the logs")
	}
}

func TestTokensAreRenewedWhileChargesAreMade(t *testing.T) {
	t.Parallel()
	// Tokens of 3 s are renewed 0.6 s before they expire: room enough for a request on a busy
	// machine to reach the PSP with its token still valid.
	p := psptest.New(t, psptest.Config{TokenLifetime: 3 * time.Second})
	e := pspEnv(t, p, nil)
	_, tok := e.account()
	deadline := time.Now().Add(20 * time.Second)
	n := 0
	for p.Requests(psptest.OpToken) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d token requests after %d charges in 20 s", p.Requests(psptest.OpToken), n)
		}
		if r := e.do("POST", "/transaction", tok, minimalTransaction()); r.status != http.StatusCreated {
			t.Fatalf("create201 #%d: %d %s", n, r.status, r.body)
		}
		n++
		// Charges at a pace rather than flat out: the renewal comes with time, not with
		// the number of charges, and the tests running beside this one want the CPU.
		time.Sleep(20 * time.Millisecond)
	}
	if got := p.Answered(psptest.OpCobPut, http.StatusUnauthorized); got != 0 {
		t.Fatalf("%d PUTs answered 401: a token was sent after it expired", got)
	}
}

func TestAPSPThatIsDownAnswers503AndTheRetryMakesOneCharge(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := pspEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_TIMEOUT": "2s"})
	_, tok := e.account()
	p.Inject(psptest.Unavailable("0"), -1)
	r := e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-503")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || r.json(t)["code"] != "unavailable" {
		t.Fatalf("create503: %d %v %s", r.status, r.header, r.body)
	}
	if n := e.pspListed(tok); n != 0 {
		t.Fatalf("%v transactions listed after a 503", n)
	}
	if !strings.Contains(e.log.String(), "the PSP did not make the charge") || !strings.Contains(e.log.String(), "cob_put") {
		t.Fatalf("the PSP's silence is not logged:\n%s", e.log.String())
	}

	p.ClearFaults()
	r = e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-503")
	if r.status != http.StatusCreated {
		t.Fatalf("retry201: %d %s", r.status, r.body)
	}
	again := e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-503")
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, r.body) {
		t.Fatalf("replay: %d %s", again.status, again.body)
	}
	if p.Cobs() != 1 || e.pspListed(tok) != 1 {
		t.Fatalf("%d cobs at the PSP, %v transactions; want one of each", p.Cobs(), e.pspListed(tok))
	}
}

func TestACobWhoseAnswerWasLostIsTheRetrysCharge(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := pspEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_TIMEOUT": "2s"})
	_, tok := e.account()
	// A first charge, so that the token and the connection are there before the fault.
	if r := e.do("POST", "/transaction", tok, minimalTransaction()); r.status != http.StatusCreated {
		t.Fatalf("warm-up: %d %s", r.status, r.body)
	}
	// The PSP makes the cob and its answer never comes within pixgate's timeout.
	p.Inject(psptest.Slow(time.Minute).On(psptest.OpCobPut).AfterApplying(), 1)
	r := e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-lost")
	if r.status != http.StatusServiceUnavailable || p.Cobs() != 2 || e.pspListed(tok) != 1 {
		t.Fatalf("create503: %d %s; %d cobs, %v transactions", r.status, r.body, p.Cobs(), e.pspListed(tok))
	}
	r = e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-lost")
	if r.status != http.StatusCreated {
		t.Fatalf("retry201: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	if cob, _ := p.Cob(e.pspTxID(id)); p.Cobs() != 2 || e.pspListed(tok) != 2 || r.json(t)["pixResponse"].(map[string]any)["uri"] != cob.PixCopiaECola {
		t.Fatalf("%d cobs at the PSP, %v transactions; want the one cob made first", p.Cobs(), e.pspListed(tok))
	}
	if _, outcome := e.pspPay(p, id); outcome != "applied" {
		t.Fatalf("payment: %s", outcome)
	}
}

func TestAChargeThePSPRefusesAnswers502WithItsWords(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	// A key that is not pixgate's account's at this PSP.
	e := pspEnv(t, p, map[string]string{"PIXGATE_PIX_KEY": "someone-else@example.com"})
	_, tok := e.account()
	r := e.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "order-502")
	if r.status != http.StatusBadGateway {
		t.Fatalf("create502: %d %s", r.status, r.body)
	}
	problem := r.json(t)
	if detail, _ := problem["detail"].(string); problem["code"] != "acquirer_error" || !strings.Contains(detail, "Cobrança inválida") ||
		!strings.Contains(detail, "não pertence a este usuário recebedor") {
		t.Fatalf("problem %v", problem)
	}
	if p.Cobs() != 0 || e.pspListed(tok) != 0 {
		t.Fatalf("%d cobs, %v transactions after a refusal", p.Cobs(), e.pspListed(tok))
	}
	if line := dvLogLine(t, e.log.String(), "the PSP did not make the charge"); !strings.Contains(line["error"].(string), "não pertence") {
		t.Fatalf("refusal log line %v", line)
	}
}

func TestAPSPThatAnswersNonsenseIsBoundedAndStoresNothing(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]psptest.Fault{
		"garbage":              psptest.Garbage(),
		"an oversized body":    psptest.Oversized(3 << 20),
		"an HTML page":         psptest.WrongContentType(),
		"no answer at all":     psptest.Slow(time.Minute),
		"a dropped connection": psptest.HangUp(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			e := pspEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_TIMEOUT": "1s"})
			_, tok := e.account()
			p.Inject(f, -1)
			start := time.Now()
			r := e.do("POST", "/transaction", tok, minimalTransaction())
			if r.status != http.StatusServiceUnavailable || r.json(t)["code"] != "unavailable" || r.header.Get("Retry-After") == "" {
				t.Fatalf("create503: %d %s", r.status, r.body)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the creation took %s with a 1 s timeout", d)
			}
			if e.pspListed(tok) != 0 {
				t.Fatal("a transaction was stored")
			}
			line := dvLogLine(t, e.log.String(), "the PSP did not make the charge")
			if msg := line["error"].(string); !strings.Contains(msg, "cob_put") || len(msg) > 2000 {
				t.Fatalf("log line %q", msg)
			}
		})
	}
}

func TestAPSPWhoseClockIsBehindHasItsPaymentsTaken(t *testing.T) {
	t.Parallel()
	behind := func() time.Time { return time.Now().Add(-3 * time.Minute) }
	p := psptest.New(t, psptest.Config{Clock: behind})
	e := pspEnv(t, p, nil)
	_, tok := e.account()
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	if r.status != http.StatusCreated {
		t.Fatalf("create201: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	// The payment is dated by the PSP's clock, three minutes before pixgate created the
	// transaction by its own, and after the PSP created the cob by the PSP's.
	if _, outcome := e.pspPay(p, id); outcome != "applied" {
		t.Fatalf("a payment dated by the PSP's clock: %s", outcome)
	}
}

func TestACobWithoutABRCodeGetsOneOfItsLocationAndPixgateServesNone(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{OmitPixCopiaECola: true})
	e := pspEnv(t, p, map[string]string{"PIXGATE_PUBLIC_URL": "https://pay.shop.example"})
	_, tok := e.account()
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	if r.status != http.StatusCreated {
		t.Fatalf("create201: %d %s", r.status, r.body)
	}
	pr := r.json(t)["pixResponse"].(map[string]any)
	cob, _ := p.Cob(e.pspTxID(r.json(t)["id"].(string)))
	uri := pr["uri"].(string)
	if !strings.Contains(uri, "br.gov.bcb.pix25"+twoDigits(len(cob.Location))+cob.Location) || strings.Contains(uri, p.Chave) ||
		strings.Contains(uri, "pay.shop.example") {
		t.Fatalf("uri %q, want a dynamic code of the PSP's location %q", uri, cob.Location)
	}
	if got := pspQR(t, pr["qrCodeBase64"].(string)); got != "" && got != uri {
		t.Fatalf("the QR code reads %q", got)
	}
	if r := e.do("GET", "/pix/jwks", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("pixgate serves its own payload locations' keys: %d", r.status)
	}
}

func twoDigits(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

// TestPSPSettingsThatCannotBeUsedStopTheStartNamingThem builds the app with settings of the
// PSP's transport that cannot work: each error names the variable an operator sets, never a
// secret.
func TestPSPSettingsThatCannotBeUsedStopTheStartNamingThem(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	for _, c := range []struct {
		name string
		edit map[string]string
		want string
	}{
		{"a missing key file", map[string]string{"PIXGATE_ACQUIRER_KEY_FILE": filepath.Join(t.TempDir(), "missing.pem")}, "PIXGATE_ACQUIRER_KEY_FILE"},
		{"a wrong PKCS#12 password", map[string]string{"PIXGATE_ACQUIRER_CERT_FILE": "", "PIXGATE_ACQUIRER_KEY_FILE": "",
			"PIXGATE_ACQUIRER_P12_FILE": p.Client.P12File, "PIXGATE_ACQUIRER_P12_PASSWORD": "not-" + p.Client.P12Password}, "PIXGATE_ACQUIRER_P12_PASSWORD"},
		{"no client secret", map[string]string{"PIXGATE_ACQUIRER_CLIENT_SECRET": ""}, "PIXGATE_ACQUIRER_CLIENT_SECRET"},
		{"no certificate", map[string]string{"PIXGATE_ACQUIRER_CERT_FILE": "", "PIXGATE_ACQUIRER_KEY_FILE": ""}, "PIXGATE_ACQUIRER_CERT_FILE"},
		{"an unreadable CA file", map[string]string{"PIXGATE_ACQUIRER_API_CA_FILE": filepath.Join(t.TempDir(), "missing.pem")}, "PIXGATE_ACQUIRER_API_CA_FILE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vars := dvPSPVars(p)
			for k, v := range c.edit {
				vars[k] = v
			}
			cfg, err := loadVars(vars)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			_, err = newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
				t.Fatalf("err = %v, want it to start with %s", err, c.want)
			}
			if strings.Contains(err.Error(), p.ClientSecret) || strings.Contains(err.Error(), p.Client.P12Password) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q holds a secret or spans lines", err)
			}
		})
	}
	t.Run("a URL that is not https", func(t *testing.T) {
		vars := dvPSPVars(p)
		vars["PIXGATE_ACQUIRER_API_URL"] = strings.Replace(p.APIURL, "https://", "http://", 1)
		if _, err := loadVars(vars); err == nil || !strings.HasPrefix(err.Error(), "PIXGATE_ACQUIRER_API_URL:") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestOpenAPIDescribesChargesMadeAtAPSP checks the answers of POST /transaction in PSP mode
// against the OpenAPI document: 201, 502 acquirer_error and 503 unavailable.
func TestOpenAPIDescribesChargesMadeAtAPSP(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	e := pspEnv(t, p, map[string]string{"PIXGATE_ACQUIRER_TIMEOUT": "2s"})
	c := &oaClient{t: t, e: e, spec: oaLoad(t, oaDocument(t, e))}
	_, tok := e.account()
	c.ok("POST", "/transaction", tok, fullTransaction(), http.StatusCreated)
	p.Inject(psptest.Answer(http.StatusForbidden), 2) // the PUT, then its read-back
	if r := c.ok("POST", "/transaction", tok, minimalTransaction(), http.StatusBadGateway); r.json(t)["code"] != "acquirer_error" {
		t.Fatalf("502 %s", r.body)
	}
	p.Inject(psptest.Unavailable("0"), -1)
	if r := c.ok("POST", "/transaction", tok, minimalTransaction(), http.StatusServiceUnavailable); r.header.Get("Retry-After") == "" {
		t.Fatal("the 503 lacks Retry-After")
	}
}

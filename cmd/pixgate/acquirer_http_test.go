package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
)

// POST /acquirer/pix over HTTP with Banco Central's callback bodies. Helpers here start with
// "acq".

const acqSecret = "acquirer-shared-secret-of-at-least-32-characters"

func acqEnv(t *testing.T, vars map[string]string) *env {
	base := map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret, "PIXGATE_SANDBOX_SETTLE_SECONDS": "0"}
	for k, v := range vars {
		base[k] = v
	}
	return newEnv(t, base)
}

func acqTxID(t *testing.T, id string) string {
	t.Helper()
	txid, err := pix.TxIDFromTransactionID(id)
	if err != nil {
		t.Fatal(err)
	}
	return txid
}

// acqPix is one `pix` entry paying 10.00, the amount of minimalTransaction.
func acqPix(txid, e2e string) map[string]any {
	return map[string]any{
		"endToEndId": e2e, "txid": txid, "valor": "10.00", "chave": "pix@pixgate.example",
		"horario": "2026-11-22T11:19:32.456-03:00", "infoPagador": "pedido 123",
	}
}

func acqDevolucao(status string) map[string]any {
	return map[string]any{
		"id": "D0001", "rtrId": "D00360305202611221430aBcDeFgHiJk", "valor": "10.00", "status": status,
		"natureza": "ORIGINAL", "horario": map[string]any{"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"},
	}
}

func (e *env) acqNotify(body any) response {
	e.t.Helper()
	return e.do("POST", "/acquirer/pix", "", body, "Authorization", "Bearer "+acqSecret)
}

type acqResult struct {
	EndToEndID string `json:"endToEndId"`
	TxID       string `json:"txid"`
	Outcome    string `json:"outcome"`
	Status     string `json:"status"`
	Detail     string `json:"detail"`
	Devolucoes []struct {
		ID      string `json:"id"`
		RtrID   string `json:"rtrId"`
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
	} `json:"devolucoes"`
}

// acqResults wants a 200 answer and returns its results.
func acqResults(t *testing.T, r response) []acqResult {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200\n%s", r.status, r.body)
	}
	var out struct {
		Results []acqResult `json:"results"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	return out.Results
}

const (
	acqE2E      = "E00360305202611221419aBcDeFgHiJk"
	acqOtherE2E = "E00360305202611221420zYxWvUtSrQp"
)

func TestAcquirerRouteExistsOnlyWithASecret(t *testing.T) {
	e := newEnv(t, nil)
	problemOf(t, e.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}, "Authorization", "Bearer "+acqSecret),
		http.StatusNotFound, "not_found")
}

func TestAcquirerAuthentication401(t *testing.T) {
	e := acqEnv(t, nil)
	_, merchantToken := e.account()
	body := map[string]any{"pix": []any{}}
	for _, c := range []struct{ name, header string }{
		{"no Authorization header", ""},
		{"a wrong secret", "Bearer " + strings.Repeat("x", len(acqSecret))},
		{"the secret with one more character", "Bearer " + acqSecret + "x"},
		{"a prefix of the secret", "Bearer " + acqSecret[:31]},
		{"the secret in Basic", "Basic " + acqSecret},
		{"Bearer without a secret", "Bearer "},
		{"a merchant's own token", "Bearer " + merchantToken},
	} {
		t.Run(c.name+" answers 401", func(t *testing.T) {
			var r response
			if c.header == "" {
				r = e.do("POST", "/acquirer/pix", "", body)
			} else {
				r = e.do("POST", "/acquirer/pix", "", body, "Authorization", c.header)
			}
			problemOf(t, r, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("the secret answers 200", func(t *testing.T) {
		if res := acqResults(t, e.acqNotify(body)); len(res) != 0 {
			t.Fatalf("results = %v", res)
		}
	})
}

func TestAcquirerPaymentPaysTheTransaction(t *testing.T) {
	e := acqEnv(t, nil)
	_, tok := e.account()
	id := e.lcCreate(tok)
	res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}}))
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].EndToEndID != acqE2E || res[0].TxID != acqTxID(t, id) {
		t.Fatalf("results = %+v", res)
	}
	got := e.lcGet(tok, id).json(t)
	lcHistory(t, got, "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	checks := []struct {
		what      string
		got, want any
	}{
		{"amountPaid is valor in cents", got["amountPaid"], float64(1000)},
		{"paymentDate is horario in UTC", got["paymentDate"], "2026-11-22T14:19:32.456Z"},
		{"endToEnd is endToEndId", got["endToEnd"], acqE2E},
		{"feeAmount", got["feeAmount"], float64(10)},
		{"no payer: the callback names none", got["payer"], nil},
		{"the receiving account (sandbox)", got["receiver"].(map[string]any)["pix"], map[string]any{"key": "pix@pixgate.example", "type": "EMAIL"}},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events", len(got))
	}
}

func TestAcquirerOutcomesOverHTTP(t *testing.T) {
	e := acqEnv(t, nil)
	_, tok := e.account()
	notify := func(t *testing.T, entries ...any) []acqResult {
		t.Helper()
		return acqResults(t, e.acqNotify(map[string]any{"pix": entries}))
	}
	paid := func(t *testing.T) (id, txid string) {
		t.Helper()
		id = e.lcCreate(tok)
		txid = acqTxID(t, id)
		if res := notify(t, acqPix(txid, acqE2E)); res[0].Outcome != "applied" {
			t.Fatalf("paying: %+v", res)
		}
		return id, txid
	}
	unchanged := func(t *testing.T, id string, before response) {
		t.Helper()
		if after := e.lcGet(tok, id); !bytes.Equal(after.body, before.body) {
			t.Fatalf("the transaction changed:\n%s\n%s", before.body, after.body)
		}
	}

	t.Run("a repeated payment is already_applied and changes nothing", func(t *testing.T) {
		id, txid := paid(t)
		before := e.lcGet(tok, id)
		res := notify(t, acqPix(txid, acqE2E))
		if res[0].Outcome != "already_applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if n := len(e.lcDeliveries(id, "transaction.paid")); n != 1 {
			t.Fatalf("%d paid events", n)
		}
	})
	t.Run("an unknown txid is unknown_txid", func(t *testing.T) {
		missing := acqTxID(t, "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f")
		res := notify(t, acqPix(missing, acqE2E), acqPix("txidOfSomeOtherGateway0001", acqE2E))
		for _, r := range res {
			if r.Outcome != "unknown_txid" || r.Status != "" || r.Detail == "" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("another amount is amount_mismatch and does not pay", func(t *testing.T) {
		id := e.lcCreate(tok)
		before := e.lcGet(tok, id)
		entry := acqPix(acqTxID(t, id), acqE2E)
		entry["valor"] = "10.01"
		res := notify(t, entry)
		if res[0].Outcome != "amount_mismatch" || res[0].Status != "PIX_QRCODE_GENERATED" || !strings.Contains(res[0].Detail, "10.01") {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
		if !strings.Contains(e.log.String(), `"outcome":"amount_mismatch"`) {
			t.Fatal("the mismatch was not logged for operations")
		}
	})
	t.Run("a payment of an expired charge is invalid_transition", func(t *testing.T) {
		body := minimalTransaction()
		body["pix"] = map[string]any{"expirationSeconds": 60}
		id := e.do("POST", "/transaction", tok, body).json(t)["id"].(string)
		e.lcExpire(time.Now().Add(2 * time.Minute))
		before := e.lcGet(tok, id)
		res := notify(t, acqPix(acqTxID(t, id), acqE2E))
		if res[0].Outcome != "invalid_transition" || res[0].Status != "FAILED" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("a second payment with another endToEndId is invalid_transition", func(t *testing.T) {
		id, txid := paid(t)
		before := e.lcGet(tok, id)
		res := notify(t, acqPix(txid, acqOtherE2E))
		if res[0].Outcome != "invalid_transition" || !strings.Contains(res[0].Detail, acqE2E) {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("DEVOLVIDO settles a refund with endToEndRefund = rtrId, once", func(t *testing.T) {
		id, txid := paid(t)
		e.lcStep(tok, id, "refund", http.StatusAccepted)
		entry := acqPix(txid, acqE2E)
		entry["devolucoes"] = []any{acqDevolucao("DEVOLVIDO")}
		res := notify(t, entry)
		if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "applied" ||
			res[0].Devolucoes[0].ID != "D0001" || res[0].Status != "REFUNDED" {
			t.Fatalf("%+v", res)
		}
		got := e.lcGet(tok, id)
		lcHistory(t, got.json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND", "REFUNDED")
		if got.json(t)["endToEndRefund"] != "D00360305202611221430aBcDeFgHiJk" {
			t.Fatalf("endToEndRefund = %v", got.json(t)["endToEndRefund"])
		}
		if again := notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		unchanged(t, id, got)
	})
	t.Run("DEVOLVIDO completes an accepted MED dispute into INFRACTION", func(t *testing.T) {
		id, txid := paid(t)
		e.lcStep(tok, id, "med/open", http.StatusOK)
		e.lcStep(tok, id, "med/accept", http.StatusOK)
		entry := acqPix(txid, acqE2E)
		dev := acqDevolucao("DEVOLVIDO")
		dev["natureza"] = "MED_FRAUDE"
		entry["devolucoes"] = []any{dev}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "INFRACTION" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("NAO_REALIZADO brings the refund back to PAID with the motivo", func(t *testing.T) {
		id, txid := paid(t)
		e.lcStep(tok, id, "refund", http.StatusAccepted)
		entry := acqPix(txid, acqE2E)
		dev := acqDevolucao("NAO_REALIZADO")
		dev["motivo"] = "Conta do pagador encerrada"
		entry["devolucoes"] = []any{dev}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "applied" || res[0].Status != "PAID" {
			t.Fatalf("%+v", res)
		}
		got := e.lcGet(tok, id)
		if msg, _ := got.json(t)["errorMessage"].(string); !strings.Contains(msg, "Conta do pagador encerrada") {
			t.Fatalf("errorMessage = %q", msg)
		}
		if again := notify(t, entry); again[0].Devolucoes[0].Outcome != "already_applied" {
			t.Fatalf("the repeat: %+v", again)
		}
		unchanged(t, id, got)
	})
	t.Run("EM_PROCESSAMENTO is in_progress and changes nothing", func(t *testing.T) {
		id, txid := paid(t)
		e.lcStep(tok, id, "refund", http.StatusAccepted)
		before := e.lcGet(tok, id)
		entry := acqPix(txid, acqE2E)
		dev := acqDevolucao("EM_PROCESSAMENTO")
		delete(dev["horario"].(map[string]any), "liquidacao")
		entry["devolucoes"] = []any{dev}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "in_progress" || res[0].Status != "PROCESSING_REFUND" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("a refund never asked for is invalid_transition", func(t *testing.T) {
		id, txid := paid(t)
		before := e.lcGet(tok, id)
		entry := acqPix(txid, acqE2E)
		entry["devolucoes"] = []any{acqDevolucao("DEVOLVIDO")}
		if res := notify(t, entry); res[0].Devolucoes[0].Outcome != "invalid_transition" {
			t.Fatalf("%+v", res)
		}
		unchanged(t, id, before)
	})
	t.Run("the entries of one callback get one result each, in order", func(t *testing.T) {
		a, b := e.lcCreate(tok), e.lcCreate(tok)
		res := notify(t, acqPix(acqTxID(t, a), acqE2E), acqPix("unknown", acqE2E), acqPix(acqTxID(t, b), acqOtherE2E), acqPix(acqTxID(t, a), acqE2E))
		var got []string
		for _, r := range res {
			got = append(got, r.Outcome)
		}
		if want := []string{"applied", "unknown_txid", "applied", "already_applied"}; !slices.Equal(got, want) {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	})
}

func TestAcquirerMalformedBodies422(t *testing.T) {
	e := acqEnv(t, nil)
	_, tok := e.account()
	txid := acqTxID(t, e.lcCreate(tok))
	entry := func(mut func(p map[string]any)) map[string]any {
		p := acqPix(txid, acqE2E)
		mut(p)
		return map[string]any{"pix": []any{p}}
	}
	refund := func(mut func(d map[string]any)) map[string]any {
		return entry(func(p map[string]any) {
			d := acqDevolucao("DEVOLVIDO")
			mut(d)
			p["devolucoes"] = []any{d}
		})
	}
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"no pix array", map[string]any{}, []string{"pix required"}},
		{"pix that is an object", map[string]any{"pix": map[string]any{}}, []string{"pix invalid_type"}},
		{"an entry that is null", map[string]any{"pix": []any{nil}}, []string{"pix[0] invalid_type"}},
		{"valor as a JSON number", entry(func(p map[string]any) { p["valor"] = 10.0 }), []string{"pix[0].valor invalid_type"}},
		{"valor with one decimal", entry(func(p map[string]any) { p["valor"] = "10.5" }), []string{"pix[0].valor invalid_format"}},
		{"valor with a comma", entry(func(p map[string]any) { p["valor"] = "10,00" }), []string{"pix[0].valor invalid_format"}},
		{"valor of zero", entry(func(p map[string]any) { p["valor"] = "0.00" }), []string{"pix[0].valor invalid_format"}},
		{"valor negative", entry(func(p map[string]any) { p["valor"] = "-10.00" }), []string{"pix[0].valor invalid_format"}},
		{"no valor", entry(func(p map[string]any) { delete(p, "valor") }), []string{"pix[0].valor required"}},
		{"an endToEndId of 31 characters", entry(func(p map[string]any) { p["endToEndId"] = acqE2E[:31] }), []string{"pix[0].endToEndId invalid_format"}},
		{"an endToEndId with a dash", entry(func(p map[string]any) { p["endToEndId"] = "E-" + acqE2E[2:] }), []string{"pix[0].endToEndId invalid_format"}},
		{"no txid", entry(func(p map[string]any) { delete(p, "txid") }), []string{"pix[0].txid required"}},
		{"a txid of 36 characters", entry(func(p map[string]any) { p["txid"] = strings.Repeat("a", 36) }), []string{"pix[0].txid invalid_format"}},
		{"horario without an offset", entry(func(p map[string]any) { p["horario"] = "2026-11-22T11:19:32" }), []string{"pix[0].horario invalid_format"}},
		{"no horario", entry(func(p map[string]any) { delete(p, "horario") }), []string{"pix[0].horario required"}},
		{"an unknown field", entry(func(p map[string]any) { p["pagador"] = "x" }), []string{"pix[0].pagador unknown_field"}},
		{"a refund with an unknown status", refund(func(d map[string]any) { d["status"] = "DONE" }), []string{"pix[0].devolucoes[0].status invalid_enum"}},
		{"a refund without rtrId", refund(func(d map[string]any) { delete(d, "rtrId") }), []string{"pix[0].devolucoes[0].rtrId required"}},
		{"a refund without its request time", refund(func(d map[string]any) { d["horario"] = map[string]any{} }), []string{"pix[0].devolucoes[0].horario.solicitacao required"}},
		{"a refund of an unknown nature", refund(func(d map[string]any) { d["natureza"] = "OUTRA" }), []string{"pix[0].devolucoes[0].natureza invalid_enum"}},
		{"a refund valor as a number", refund(func(d map[string]any) { d["valor"] = 10 }), []string{"pix[0].devolucoes[0].valor invalid_type"}},
		{"every broken field at once", map[string]any{"pix": []any{map[string]any{"valor": "x"}}, "extra": 1},
			[]string{"extra unknown_field", "pix[0].endToEndId required", "pix[0].horario required", "pix[0].txid required", "pix[0].valor invalid_format"}},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 naming the field", func(t *testing.T) {
			fields := problemOf(t, e.acqNotify(c.body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, c.want) {
				t.Fatalf("errors = %v, want %v", fields, c.want)
			}
		})
	}
	for _, body := range []string{`{"pix": [`, `[]`, `"pix"`, ``} {
		t.Run(fmt.Sprintf("%q answers 422 malformed_json", body), func(t *testing.T) {
			problemOf(t, e.acqNotify(body), http.StatusUnprocessableEntity, "malformed_json")
		})
	}
	t.Run("more than 1000 entries answer one too_long error, not one per entry", func(t *testing.T) {
		body := `{"pix": [` + strings.TrimSuffix(strings.Repeat("1,", 1001), ",") + `]}`
		fields := problemOf(t, e.acqNotify(body), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{"pix too_long"}) {
			t.Fatalf("errors = %v", fields)
		}
	})
	t.Run("1000 entries are accepted", func(t *testing.T) {
		entries := make([]any, 1000)
		for i := range entries {
			entries[i] = acqPix("unknown", acqE2E)
		}
		if res := acqResults(t, e.acqNotify(map[string]any{"pix": entries})); len(res) != 1000 {
			t.Fatalf("%d results", len(res))
		}
	})
	t.Run("a valid entry beside a broken one is not applied either", func(t *testing.T) {
		bad := acqPix(txid, acqE2E)
		bad["valor"] = 1
		problemOf(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, acqE2E), bad}}), http.StatusUnprocessableEntity, "validation_failed")
		if got := e.lcGet(tok, acqTransactionID(t, txid)).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
			t.Fatalf("status = %v", got)
		}
	})
}

func acqTransactionID(t *testing.T, txid string) string {
	t.Helper()
	id, err := pix.TransactionIDFromTxID(txid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestAcquirerConcurrentDeliveriesOfOnePaymentPayOnce(t *testing.T) {
	e := acqEnv(t, nil)
	_, tok := e.account()
	id := e.lcCreate(tok)
	body, _ := json.Marshal(map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}})
	const senders = 50
	type answer struct {
		status  int
		outcome string
		err     error
	}
	answers := make([]answer, senders)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", e.srv.URL+"/acquirer/pix", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+acqSecret)
			req.Header.Set("Content-Type", "application/json")
			res, err := e.srv.Client().Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var out struct{ Results []acqResult }
			answers[i].status = res.StatusCode
			answers[i].err = json.Unmarshal(raw, &out)
			if len(out.Results) == 1 {
				answers[i].outcome = out.Results[0].Outcome
			}
		})
	}
	close(start)
	wg.Wait()
	applied := 0
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("delivery %d: status %d, %v", i, a.status, a.err)
		}
		switch a.outcome {
		case "applied":
			applied++
		case "already_applied":
		default:
			t.Fatalf("delivery %d: outcome %q", i, a.outcome)
		}
	}
	if applied != 1 {
		t.Fatalf("%d deliveries applied the payment, want exactly 1", applied)
	}
	lcHistory(t, e.lcGet(tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	if got := e.lcDeliveries(id, "transaction.paid"); len(got) != 1 {
		t.Fatalf("%d transaction.paid events, want 1", len(got))
	}
}

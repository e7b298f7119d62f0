package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/efi/efitest"
	"github.com/pixgate/pixgate/domain"
)

// POST /acquirer/pix read as the API Pix specification asks of clients: what a PSP may add is
// ignored, each entry is judged alone, and only a body without a `pix` array is refused.

func TestAcquirerBodiesWithoutAPixArray422(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"no pix array", map[string]any{"gnExtras": map[string]any{}}, []string{"pix required"}},
		{"pix null", map[string]any{"pix": nil}, []string{"pix required"}},
		{"pix that is an object", map[string]any{"pix": map[string]any{}}, []string{"pix invalid_type"}},
		{"more than 1000 entries", `{"pix": [` + strings.TrimSuffix(strings.Repeat("1,", 1001), ",") + `]}`, []string{"pix too_long"}},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 naming pix", func(t *testing.T) {
			if fields := problemOf(t, e.acqNotify(c.body), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, c.want) {
				t.Fatalf("errors = %v, want %v", fields, c.want)
			}
		})
	}
	for _, body := range []string{`{"pix": [`, `[]`, `"pix"`, ``, `{"pix": [], "pix": []}`, "{\"pix\": [], \"x\": \"\xff\"}", `{"pix": [{"txid": "\ud800"}]}`} {
		t.Run(fmt.Sprintf("%q answers 422 malformed_json", body), func(t *testing.T) {
			problemOf(t, e.acqNotify(body), http.StatusUnprocessableEntity, "malformed_json")
		})
	}
}

func TestAcquirerMalformedEntryIsInvalidAndTheOthersApply(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	entry := func(txid string, mut func(p map[string]any)) map[string]any {
		p := acqPix(txid, acqNewE2E())
		mut(p)
		return p
	}
	refund := func(txid string, mut func(d map[string]any)) map[string]any {
		return entry(txid, func(p map[string]any) {
			d := acqDevolucao("DEVOLVIDO")
			mut(d)
			p["devolucoes"] = []any{d}
		})
	}
	cases := []struct {
		name   string
		broken func(txid string) any
		detail string // a piece of the detail
	}{
		{"an entry that is null", func(string) any { return nil }, "must be an object"},
		{"an entry that is a number", func(string) any { return 1 }, "must be an object"},
		{"valor as a JSON number", func(x string) any { return entry(x, func(p map[string]any) { p["valor"] = 10.0 }) }, "valor invalid_type"},
		{"valor with one decimal", func(x string) any { return entry(x, func(p map[string]any) { p["valor"] = "10.5" }) }, "valor invalid_format"},
		{"valor of zero", func(x string) any { return entry(x, func(p map[string]any) { p["valor"] = "0.00" }) }, "valor invalid_format"},
		{"no valor", func(x string) any { return entry(x, func(p map[string]any) { delete(p, "valor") }) }, "valor required"},
		{"no endToEndId", func(x string) any { return entry(x, func(p map[string]any) { delete(p, "endToEndId") }) }, "endToEndId required"},
		{"an endToEndId of 31 characters", func(x string) any {
			return entry(x, func(p map[string]any) { p["endToEndId"] = acqE2E[:31] })
		}, "endToEndId invalid_format"},
		{"a txid of 36 characters", func(x string) any {
			return entry(x, func(p map[string]any) { p["txid"] = strings.Repeat("a", 36) })
		}, "txid invalid_format"},
		{"horario without an offset", func(x string) any {
			return entry(x, func(p map[string]any) { p["horario"] = "2026-11-22T11:19:32" })
		}, "horario invalid_format"},
		{"no horario", func(x string) any { return entry(x, func(p map[string]any) { delete(p, "horario") }) }, "horario required"},
		{"a string holding U+0000", func(x string) any {
			return entry(x, func(p map[string]any) { p["infoPagador"] = "a\x00b" })
		}, "infoPagador invalid_format"},
		{"a refund with an unknown status", func(x string) any { return refund(x, func(d map[string]any) { d["status"] = "DONE" }) }, "devolucoes[0].status invalid_enum"},
		{"a refund without rtrId", func(x string) any { return refund(x, func(d map[string]any) { delete(d, "rtrId") }) }, "devolucoes[0].rtrId required"},
		{"a refund without horario", func(x string) any { return refund(x, func(d map[string]any) { delete(d, "horario") }) }, "devolucoes[0].horario required"},
		{"a refund of a nature the specification lacks", func(x string) any {
			return refund(x, func(d map[string]any) { d["natureza"] = "OUTRA" })
		}, "devolucoes[0].natureza invalid_enum"},
		{"a refund descricao of 141 characters", func(x string) any {
			return refund(x, func(d map[string]any) { d["descricao"] = strings.Repeat("a", 141) })
		}, "devolucoes[0].descricao too_long"},
	}
	for _, c := range cases {
		t.Run(c.name+" is invalid, and the payment beside it is applied", func(t *testing.T) {
			good, other := e.lcCreate(tok), e.lcCreate(tok)
			res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{c.broken(acqTxID(t, other)), acqPix(acqTxID(t, good), acqNewE2E())}}))
			if len(res) != 2 || res[0].Outcome != "invalid" || !strings.Contains(res[0].Detail, c.detail) || res[0].Status != "" {
				t.Fatalf("results %+v, want the first invalid with %q in its detail", res, c.detail)
			}
			if res[1].Outcome != "applied" || res[1].Status != "PAID" {
				t.Fatalf("the well-formed entry: %+v", res[1])
			}
			if got := e.lcGet(tok, other).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
				t.Fatalf("the charge of the invalid entry is %v", got)
			}
		})
	}
	t.Run("every broken field of one entry is listed in its detail", func(t *testing.T) {
		res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{map[string]any{"valor": "x", "txid": 7}}}))
		for _, want := range []string{"endToEndId required", "horario required", "txid invalid_type", "valor invalid_format"} {
			if !strings.Contains(res[0].Detail, want) {
				t.Errorf("detail %q lacks %q", res[0].Detail, want)
			}
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
}

func TestAcquirerAcceptsWhatTheSpecificationAllows(t *testing.T) {
	t.Parallel()
	e := acqEnv(t, nil)
	_, tok := e.account()
	vendor := map[string]any{"pagador": map[string]any{"nome": "Fulano", "codigoBanco": "00000000"}, "tarifa": "0.00"}

	t.Run("members of a PSP's own, at every depth, are ignored", func(t *testing.T) {
		id := e.lcCreate(tok)
		p := acqPix(acqTxID(t, id), acqNewE2E())
		p["gnExtras"] = vendor
		p["componentesValor"] = map[string]any{"original": map[string]any{"valor": "10.00", "extra": 1}}
		body := map[string]any{"pix": []any{p}, "gnExtras": vendor, "versao": 2}
		if res := acqResults(t, e.acqNotify(body)); res[0].Outcome != "applied" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("an entry without txid is a PIX without a charge: unknown_txid", func(t *testing.T) {
		p := acqPix("", acqNewE2E())
		delete(p, "txid")
		if res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{p}})); res[0].Outcome != "unknown_txid" || res[0].TxID != "" {
			t.Fatalf("%+v", res)
		}
	})
	// A refund the PSP reports back with what pixgate sent (descricao), in every natureza,
	// with a horario that has only some of its members.
	for _, c := range []struct {
		natureza string
		horario  map[string]any
	}{
		{"ORIGINAL", map[string]any{"solicitacao": "2026-11-22T14:30:00Z"}},
		{"RETIRADA", map[string]any{"liquidacao": "2026-11-22T14:30:02Z"}},
		{"MED_OPERACIONAL", map[string]any{}},
		{"MED_FRAUDE", map[string]any{"solicitacao": "2026-11-22T14:30:00Z", "liquidacao": "2026-11-22T14:30:02Z"}},
		{"MED_PIX_AUTOMATICO", map[string]any{"solicitacao": "2026-11-22T14:30:00Z"}},
	} {
		t.Run("a devolution of natureza "+c.natureza+" with descricao and a partial horario is read", func(t *testing.T) {
			_, txid, e2e := e.dvPaid(tok)
			p := acqPix(txid, e2e)
			d := acqDevolucaoOf("D"+c.natureza[:3]+"01", "10.00", "DEVOLVIDO")
			d["natureza"], d["descricao"], d["horario"], d["gnExtras"] = c.natureza, "produto com defeito", c.horario, vendor
			p["devolucoes"] = []any{d}
			res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{p}}))
			// No refund has this id: the entry is read, and the devolution matched to nothing.
			if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "unknown_refund" {
				t.Fatalf("%+v", res)
			}
		})
	}
	t.Run("an accepted dispute completes by a MED_PIX_AUTOMATICO devolution, never by an ORIGINAL one", func(t *testing.T) {
		id := e.lcCreate(tok)
		txid, e2e := acqTxID(t, id), acqNewE2E()
		acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, e2e)}}))
		e.lcStep(tok, id, "med/open", http.StatusOK)
		e.lcStep(tok, id, "med/accept", http.StatusOK)
		notify := func(natureza string) acqResult {
			p := acqPix(txid, e2e)
			d := acqDevolucaoOf("MED"+natureza[:3], "10.00", "DEVOLVIDO")
			d["natureza"] = natureza
			p["devolucoes"] = []any{d}
			return acqResults(t, e.acqNotify(map[string]any{"pix": []any{p}}))[0]
		}
		if res := notify("ORIGINAL"); res.Devolucoes[0].Outcome != "unknown_refund" || res.Status != "PROCESSING_INFRACTION" {
			t.Fatalf("an ORIGINAL devolution: %+v", res)
		}
		if res := notify("MED_PIX_AUTOMATICO"); res.Devolucoes[0].Outcome != "applied" || res.Status != "INFRACTION" {
			t.Fatalf("a MED_PIX_AUTOMATICO devolution: %+v", res)
		}
	})
}

// TestEfiPayoutNoticeOnTheAcquirerWebhookMovesTheWithdrawal posts Efí's own notice of a payout
// (as efitest writes it: no txid, gnExtras.idEnvio) to POST /acquirer/pix: the payout outbox
// reads the payout back and the withdrawal is PROCESSED without waiting for its next check.
func TestEfiPayoutNoticeOnTheAcquirerWebhookMovesTheWithdrawal(t *testing.T) {
	t.Parallel()
	psp := efitest.New(t, efitest.Config{})
	var mu sync.Mutex
	var notices [][]byte
	catch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
			mu.Lock()
			notices = append(notices, body)
			mu.Unlock()
		}
	}))
	t.Cleanup(catch.Close)
	psp.NotifyTo(catch.URL)
	psp.Steer("maria@example.com", efitest.StaysProcessing)
	e := poEnv(t, psp)
	tok := e.poFunded(1)
	id := e.poWithdraw(tok, 400, "maria@example.com")
	e.poRunUntil(tok, id, "PROCESSING")
	idEnvio := domain.PayoutID(id)
	if err := psp.Settle(idEnvio, efitest.Done, ""); err != nil {
		t.Fatal(err)
	}
	var notice []byte
	deadline := time.Now().Add(10 * time.Second)
	for notice == nil {
		mu.Lock()
		if len(notices) > 0 {
			notice = notices[len(notices)-1]
		}
		mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("Efí sent no notice within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := acqResults(t, e.acqNotify(string(notice)))
	if len(res) != 1 || res[0].IDEnvio != idEnvio || res[0].Outcome != "applied" || res[0].Status != "PROCESSED" || res[0].TxID != "" {
		t.Fatalf("results %+v for Efí's notice %s, want the payout applied", res, notice)
	}
	if w := e.poGet(tok, id); w["status"] != "PROCESSED" {
		t.Fatalf("withdrawal %v after the notice", w["status"])
	}
	if res := acqResults(t, e.acqNotify(string(notice))); res[0].Outcome != "unchanged" {
		t.Fatalf("the notice again: %+v", res)
	}
	other := strings.Replace(string(notice), idEnvio, strings.Repeat("0", 32), 1)
	if res := acqResults(t, e.acqNotify(other)); res[0].Outcome != "unknown_payout" {
		t.Fatalf("a notice of a payout pixgate never made: %+v", res)
	}
	e.dvVerify()
}

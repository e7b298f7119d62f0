package httpapi_test

// POST /acquirer/pix read as the API Pix specification asks of clients (docs/API.md, Acquirer
// notifications): what a PSP may add is ignored, each entry is judged alone, and only a body
// without a `pix` array is refused. Its helpers are the shared ones (api_helpers_test.go) and
// acquirer_http_test.go's ("acq").

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestAcquirerBodiesWithoutAPixArray422(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
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
			t.Parallel()
			if fields := problem(t, a.postAcquirer(c.body), http.StatusUnprocessableEntity, "validation_failed"); !slices.Equal(fields, c.want) {
				t.Fatalf("errors = %v, want %v", fields, c.want)
			}
		})
	}
	for _, body := range []string{`{"pix": [`, `[]`, `"pix"`, ``, `{"pix": [], "pix": []}`, "{\"pix\": [], \"x\": \"\xff\"}", `{"pix": [{"txid": "\ud800"}]}`} {
		t.Run(fmt.Sprintf("%q answers 422 malformed_json", body), func(t *testing.T) {
			t.Parallel()
			problem(t, a.postAcquirer(body), http.StatusUnprocessableEntity, "malformed_json")
		})
	}
}

func TestAcquirerMalformedEntryIsInvalidAndTheOthersApply(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	entry := func(txid string, mut func(p map[string]any)) map[string]any {
		p := a.pixPayment(txid, acqNewE2E())
		mut(p)
		return p
	}
	refund := func(txid string, mut func(d map[string]any)) map[string]any {
		return entry(txid, func(p map[string]any) {
			d := devolucao(nil)
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
			return entry(x, func(p map[string]any) { p["endToEndId"] = acquirerE2E[:31] })
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
			t.Parallel()
			good, other := a.webhookCharge(t, tok), a.webhookCharge(t, tok)
			res := a.acquirerNotify(t, map[string]any{"pix": []any{c.broken(pixTxID(t, other)), a.pixPayment(pixTxID(t, good), acqNewE2E())}})
			if len(res) != 2 || res[0].Outcome != "invalid" || !strings.Contains(res[0].Detail, c.detail) || res[0].Status != "" {
				t.Fatalf("results %+v, want the first invalid with %q in its detail", res, c.detail)
			}
			if res[1].Outcome != "applied" || res[1].Status != "PAID" {
				t.Fatalf("the well-formed entry: %+v", res[1])
			}
			if got := a.getTransaction(t, tok, other).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
				t.Fatalf("the charge of the invalid entry is %v", got)
			}
		})
	}
	t.Run("every broken field of one entry is listed in its detail", func(t *testing.T) {
		t.Parallel()
		res := a.acquirerNotify(t, map[string]any{"pix": []any{map[string]any{"valor": "x", "txid": 7}}})
		for _, want := range []string{"endToEndId required", "horario required", "txid invalid_type", "valor invalid_format"} {
			if !strings.Contains(res[0].Detail, want) {
				t.Errorf("detail %q lacks %q", res[0].Detail, want)
			}
		}
	})
	t.Run("1000 entries are accepted", func(t *testing.T) {
		t.Parallel()
		entries := make([]any, 1000)
		for i := range entries {
			entries[i] = a.pixPayment("unknown", acquirerE2E)
		}
		if res := a.acquirerNotify(t, map[string]any{"pix": entries}); len(res) != 1000 {
			t.Fatalf("%d results", len(res))
		}
	})
}

func TestAcquirerAcceptsWhatTheSpecificationAllows(t *testing.T) {
	t.Parallel()
	a, _ := acqAPI(t)
	_, tok := a.account()
	vendor := map[string]any{"pagador": map[string]any{"nome": "Fulano", "codigoBanco": "00000000"}, "tarifa": "0.00"}
	// paid creates a charge of 10.00 and pays it through the callback.
	paid := func(t *testing.T) (id, txid, e2e string) {
		t.Helper()
		id = a.webhookCharge(t, tok)
		txid, e2e = pixTxID(t, id), acqNewE2E()
		if res := a.acquirerNotify(t, map[string]any{"pix": []any{a.pixPayment(txid, e2e)}}); res[0].Outcome != "applied" {
			t.Fatalf("payment: %+v", res)
		}
		return id, txid, e2e
	}

	t.Run("members of a PSP's own, at every depth, are ignored", func(t *testing.T) {
		t.Parallel()
		id := a.webhookCharge(t, tok)
		p := a.pixPayment(pixTxID(t, id), acqNewE2E())
		p["gnExtras"] = vendor
		p["componentesValor"] = map[string]any{"original": map[string]any{"valor": "10.00", "extra": 1}}
		body := map[string]any{"pix": []any{p}, "gnExtras": vendor, "versao": 2}
		if res := a.acquirerNotify(t, body); res[0].Outcome != "applied" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("an entry without txid is a PIX without a charge: unknown_txid", func(t *testing.T) {
		t.Parallel()
		p := a.pixPayment("", acqNewE2E())
		delete(p, "txid")
		if res := a.acquirerNotify(t, map[string]any{"pix": []any{p}}); res[0].Outcome != "unknown_txid" || res[0].TxID != "" {
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
			t.Parallel()
			_, txid, e2e := paid(t)
			p := a.pixPayment(txid, e2e)
			d := acqDevolucaoOf("D"+c.natureza[:3]+"01", "10.00", "DEVOLVIDO")
			d["natureza"], d["descricao"], d["horario"], d["gnExtras"] = c.natureza, "produto com defeito", c.horario, vendor
			p["devolucoes"] = []any{d}
			res := a.acquirerNotify(t, map[string]any{"pix": []any{p}})
			// No refund has this id: the entry is read, and the devolution matched to nothing.
			if res[0].Outcome != "already_applied" || len(res[0].Devolucoes) != 1 || res[0].Devolucoes[0].Outcome != "unknown_refund" {
				t.Fatalf("%+v", res)
			}
		})
	}
	t.Run("an accepted dispute completes by a MED_PIX_AUTOMATICO devolution, never by an ORIGINAL one", func(t *testing.T) {
		t.Parallel()
		id, txid, e2e := paid(t)
		a.sandboxStep(t, tok, id, "med/open")
		a.sandboxStep(t, tok, id, "med/accept")
		notify := func(natureza string) acquirerResult {
			p := a.pixPayment(txid, e2e)
			d := acqDevolucaoOf("MED"+natureza[:3], "10.00", "DEVOLVIDO")
			d["natureza"] = natureza
			p["devolucoes"] = []any{d}
			return a.acquirerNotify(t, map[string]any{"pix": []any{p}})[0]
		}
		if res := notify("ORIGINAL"); res.Devolucoes[0].Outcome != "unknown_refund" || res.Status != "PROCESSING_INFRACTION" {
			t.Fatalf("an ORIGINAL devolution: %+v", res)
		}
		if res := notify("MED_PIX_AUTOMATICO"); res.Devolucoes[0].Outcome != "applied" || res.Status != "INFRACTION" {
			t.Fatalf("a MED_PIX_AUTOMATICO devolution: %+v", res)
		}
	})
}

package apipix_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/ports"
)

func TestTheReceivedPixAreListedPageByPage(t *testing.T) {
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	start := time.Now().Add(-time.Minute)
	const paid = 1001 // pages of 1000, the most the specification lets a page hold
	var first psptest.Pix
	for i := range paid {
		pix, err := p.Pay("", psptest.Payment{Valor: "1.00", StaticTxID: "static" + string(rune('a'+i%26))})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = pix
		}
	}
	end := time.Now().Add(time.Second)
	var got []ports.ReceivedPix
	for page := 0; page < 3; page++ {
		res, err := c.ListReceivedPix(context.Background(), ports.ReceivedPixQuery{Start: start, End: end, Page: page})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if res.Page != page || res.Pages != 2 {
			t.Fatalf("page %d answered as page %d of %d, want of 2", page, res.Page, res.Pages)
		}
		got = append(got, res.Pix...)
		if page+1 >= res.Pages {
			break
		}
	}
	if len(got) != paid {
		t.Fatalf("%d PIX listed, want %d", len(got), paid)
	}
	g := got[0]
	horario, _ := time.Parse(time.RFC3339Nano, first.Horario)
	if g.EndToEndID != first.EndToEndID || g.TxID != "statica" || g.Amount != 100 || !g.PaidAt.Equal(horario) || g.Invalid != "" {
		t.Fatalf("first listed %+v, want %+v", g, first)
	}
	if n := p.Requests(psptest.OpPixList); n != 2 {
		t.Fatalf("%d GET /pix for two pages", n)
	}
}

func TestAMalformedListedPixIsInvalidAndTheOthersAreRead(t *testing.T) {
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	body := `{"parametros": {"inicio": "2026-11-28T00:00:00Z", "fim": "2026-11-28T01:00:00Z",
	  "paginacao": {"paginaAtual": 0, "itensPorPagina": 1000, "quantidadeDePaginas": 1, "quantidadeTotalDeItens": 3}},
	  "pix": [
	    {"endToEndId": "E12345678202611280000aBcDeFgHiJk", "txid": "abc", "valor": "10.00", "horario": "2026-11-28T00:10:00Z",
	     "gnExtras": {"tarifa": "0.01"}, "devolucoes": [{"id": "D1", "rtrId": "D12345678202611280010aBcDeFgHiJk", "valor": "1.00",
	     "natureza": "MED_PIX_AUTOMATICO", "descricao": "x", "horario": {}, "status": "DEVOLVIDO"}]},
	    {"endToEndId": "short", "valor": 10, "horario": "yesterday"},
	    {"endToEndId": "E12345678202611280001aBcDeFgHiJk", "valor": "2.50", "horario": "2026-11-28T00:20:00-03:00"}
	  ]}`
	p.Inject(psptest.Fault{Op: psptest.OpPixList, Status: 200, ContentType: "application/json", Body: []byte(body)}, 1)
	res, err := c.ListReceivedPix(context.Background(), ports.ReceivedPixQuery{Start: time.Now().Add(-time.Hour), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pix) != 3 {
		t.Fatalf("%d entries", len(res.Pix))
	}
	if g := res.Pix[0]; g.Invalid != "" || g.TxID != "abc" || len(g.Devolutions) != 1 || g.Devolutions[0].Nature != "MED_PIX_AUTOMATICO" ||
		g.Devolutions[0].Status != ports.DevolutionReturned || g.Devolutions[0].Amount != 100 {
		t.Fatalf("first %+v", g)
	}
	if g := res.Pix[1]; g.Invalid == "" || !strings.Contains(g.Invalid, "endToEndId") || !strings.Contains(g.Invalid, "horario") {
		t.Fatalf("the malformed entry %+v", g)
	}
	if g := res.Pix[2]; g.Invalid != "" || g.TxID != "" || g.Amount != 250 {
		t.Fatalf("the entry without txid %+v", g)
	}
}

func TestAListingThePSPCannotAnswerIsUnavailable(t *testing.T) {
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, func(cfg *apipix.Config) { cfg.Transport.Timeout = 2 * time.Second })
	p.Inject(psptest.Unavailable("0").On(psptest.OpPixList), -1)
	_, err := c.ListReceivedPix(context.Background(), ports.ReceivedPixQuery{Start: time.Now().Add(-time.Hour), End: time.Now()})
	if !errors.Is(err, ports.ErrAcquirerUnavailable) || !errors.Is(err, psp.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrAcquirerUnavailable", err)
	}
	if n := p.Requests(psptest.OpPixList); n < 2 {
		t.Fatalf("%d GET /pix: a read is retried", n)
	}
}

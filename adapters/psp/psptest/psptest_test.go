package psptest_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

func TestTheServerRequiresAClientCertificateOfItsCA(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	stranger := psptest.NewCA(t, "another CA").IssueClient(t, "pixgate")
	for name, cert := range map[string]*psptest.Certificate{
		"no certificate":                        nil,
		"a client certificate of another CA":    stranger,
		"a server certificate of the fake's CA": p.CA.IssueServer(t, "127.0.0.1"),
	} {
		t.Run(name, func(t *testing.T) {
			c := mtls(p, cert)
			defer c.CloseIdleConnections()
			res, err := c.Get(p.APIURL + "/cob/" + rand.Text())
			if err == nil {
				res.Body.Close()
				t.Fatalf("answered %d", res.StatusCode)
			}
		})
	}
	c := mtls(p, p.Client)
	defer c.CloseIdleConnections()
	res, err := c.Get(p.APIURL + "/cob/" + rand.Text())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("with its certificate and no token: %d", res.StatusCode)
	}
	if n := p.Requests(""); n != 1 {
		t.Fatalf("%d requests counted; only the one with a certificate got through", n)
	}
}

func TestTheTokenEndpoint(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{ClientSecret: "s3cr:t&=", TokenLifetime: 3 * time.Second, TokenStyles: psptest.TokenForm})
	a := &api{t: t, p: p, http: mtls(p, p.Client)}
	defer a.http.CloseIdleConnections()
	form := "application/x-www-form-urlencoded"
	for name, tc := range map[string]struct {
		contentType, body, id, secret string
		status                        int
		code                          string
	}{
		"a form with form-encoded credentials": {form, formBody(), url.QueryEscape(p.ClientID), url.QueryEscape(p.ClientSecret), 200, ""},
		"a form with raw credentials":          {form, formBody(), p.ClientID, p.ClientSecret, 200, ""},
		"a form with known scopes":             {form, formBody("cob.read", "pix.write"), p.ClientID, p.ClientSecret, 200, ""},
		"a wrong secret":                       {form, formBody(), p.ClientID, "s3cr:t", 401, "invalid_client"},
		"an unknown client":                    {form, formBody(), "someone", p.ClientSecret, 401, "invalid_client"},
		"an unknown scope":                     {form, formBody("cob.fly"), p.ClientID, p.ClientSecret, 400, "invalid_scope"},
		"another grant":                        {form, "grant_type=password", p.ClientID, p.ClientSecret, 400, "unsupported_grant_type"},
		"JSON, which this PSP does not take":   {"application/json", `{"grant_type":"client_credentials"}`, p.ClientID, p.ClientSecret, 400, "invalid_request"},
	} {
		t.Run(name, func(t *testing.T) {
			status, raw := a.askToken(tc.contentType, tc.body, tc.id, tc.secret)
			var answer map[string]any
			if err := json.Unmarshal(raw, &answer); err != nil || status != tc.status {
				t.Fatalf("answered %d %s", status, raw)
			}
			if tc.status != 200 {
				if answer["error"] != tc.code {
					t.Fatalf("error %v, want %s", answer["error"], tc.code)
				}
				return
			}
			if answer["token_type"] != "Bearer" || answer["expires_in"] != 3.0 || len(answer["access_token"].(string)) < 32 {
				t.Fatalf("token %v", answer)
			}
		})
	}

	t.Run("a token is refused once it expired", func(t *testing.T) {
		a := connect(t, p)
		a.want(http.StatusNotFound, nil)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
		deadline := time.Now().Add(20 * time.Second)
		for {
			status, _ := a.do(http.MethodGet, "/cob/"+rand.Text(), nil)
			if status == http.StatusUnauthorized {
				break
			}
			if status != http.StatusNotFound || time.Now().After(deadline) {
				t.Fatalf("answered %d, still not 401 after 20 s", status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("a token without the operation's scope is forbidden", func(t *testing.T) {
		a := connect(t, p, "cob.write")
		a.newCob("1.00")
		a.problem(http.StatusForbidden)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
	})

	t.Run("revoked tokens are refused", func(t *testing.T) {
		a := connect(t, p)
		p.RevokeTokens()
		a.problem(http.StatusUnauthorized)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
	})
}

func TestCobs(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)
	p := psptest.New(t, psptest.Config{Clock: func() time.Time { return created }})
	a := connect(t, p)
	id := rand.Text()

	var cob psptest.Cob
	a.want(http.StatusCreated, &cob)(a.do(http.MethodPut, "/cob/"+id, map[string]any{
		"calendario": map[string]any{"expiracao": 600},
		"valor":      map[string]any{"original": "123.45"},
		"chave":      p.Chave,
		"devedor":    map[string]any{"cpf": "12345678909", "nome": "Francisco da Silva"},
		"unknown":    "members the fake does not know are ignored",
	}))
	if cob.TxID != id || cob.Calendario.Criacao != "2026-11-22T15:04:05.000Z" || cob.Calendario.Expiracao != 600 || cob.Revisao != 0 ||
		cob.Status != psptest.CobActive || cob.Valor.Original != "123.45" || cob.Chave != p.Chave || cob.Devedor.CPF != "12345678909" ||
		cob.Loc.ID == 0 || cob.Loc.TipoCob != "cob" || cob.Loc.Location != cob.Location || !strings.HasPrefix(cob.Location, strings.TrimPrefix(p.URL, "https://")+"/qr/v2/") {
		t.Fatalf("created %+v", cob)
	}

	t.Run("its pixCopiaECola is a dynamic BR Code of its location", func(t *testing.T) {
		f := brFields(t, cob.PixCopiaECola)
		if f["00"] != "01" || f["01"] != "12" || f["53"] != "986" || f["58"] != "BR" || f["62"] != "0503***" {
			t.Fatalf("fields %v", f)
		}
		if _, amount := f["54"]; amount {
			t.Fatal("a dynamic code holds an amount")
		}
		if want := "0014br.gov.bcb.pix25" + fmt.Sprintf("%02d", len(cob.Location)) + cob.Location; f["26"] != want {
			t.Fatalf("merchant account %q, want %q", f["26"], want)
		}
	})

	t.Run("GET answers it", func(t *testing.T) {
		var got psptest.Cob
		a.want(http.StatusOK, &got)(a.do(http.MethodGet, "/cob/"+id, nil))
		if got.TxID != id || got.PixCopiaECola != cob.PixCopiaECola || got.Loc != cob.Loc {
			t.Fatalf("read %+v", got)
		}
	})

	t.Run("a txid used already is refused", func(t *testing.T) {
		pr := a.problem(http.StatusBadRequest)(a.do(http.MethodPut, "/cob/"+id, cobBody(p, "1.00")))
		if !strings.HasSuffix(pr.Type, "/CobOperacaoInvalida") || len(pr.Violacoes) != 1 || pr.Violacoes[0].Propriedade != "cob.txid" {
			t.Fatalf("problem %+v", pr)
		}
		if got, _ := p.Cob(id); got.Valor.Original != "123.45" {
			t.Fatal("the refused PUT changed the cob")
		}
	})

	for name, tc := range map[string]struct {
		txid string
		body map[string]any
		prop string
	}{
		"a txid of 25 characters": {strings.Repeat("a", 25), cobBody(p, "1.00"), "txid"},
		"a txid of 36 characters": {strings.Repeat("a", 36), cobBody(p, "1.00"), "txid"},
		"a zero valor":            {"", cobBody(p, "0.00"), "cob.valor.original"},
		"a valor of one decimal":  {"", cobBody(p, "1.0"), "cob.valor.original"},
		"another key":             {"", map[string]any{"calendario": map[string]any{}, "valor": map[string]any{"original": "1.00"}, "chave": "x@example.com"}, "cob.chave"},
		"no valor":                {"", map[string]any{"calendario": map[string]any{}, "chave": p.Chave}, "cob.valor.original"},
		"a negative expiracao":    {"", map[string]any{"calendario": map[string]any{"expiracao": -1}, "valor": map[string]any{"original": "1.00"}, "chave": p.Chave}, "cob.calendario.expiracao"},
		"a debtor with cpf and cnpj": {"", map[string]any{"calendario": map[string]any{}, "valor": map[string]any{"original": "1.00"}, "chave": p.Chave,
			"devedor": map[string]any{"cpf": "12345678909", "cnpj": "12345678000195", "nome": "X"}}, "cob.devedor"},
		"a debtor without a name": {"", map[string]any{"calendario": map[string]any{}, "valor": map[string]any{"original": "1.00"}, "chave": p.Chave,
			"devedor": map[string]any{"cnpj": "12345678000195"}}, "cob.devedor"},
		"a solicitacaoPagador of 141 characters": {"", map[string]any{"calendario": map[string]any{}, "valor": map[string]any{"original": "1.00"}, "chave": p.Chave,
			"solicitacaoPagador": strings.Repeat("é", 141)}, "cob.solicitacaoPagador"},
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			txid := tc.txid
			if txid == "" {
				txid = rand.Text()
			}
			pr := a.problem(http.StatusBadRequest)(a.do(http.MethodPut, "/cob/"+txid, tc.body))
			if len(pr.Violacoes) == 0 || pr.Violacoes[0].Propriedade != tc.prop {
				t.Fatalf("problem %+v, want a violation of %s", pr, tc.prop)
			}
		})
	}

	t.Run("an unknown txid is 404", func(t *testing.T) {
		pr := a.problem(http.StatusNotFound)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
		if !strings.HasSuffix(pr.Type, "/CobNaoEncontrado") {
			t.Fatalf("problem %+v", pr)
		}
	})

	t.Run("PATCH revises an ATIVA cob, then removes it, then refuses", func(t *testing.T) {
		id := a.newCob("10.00")
		var revised psptest.Cob
		a.want(http.StatusOK, &revised)(a.do(http.MethodPatch, "/cob/"+id, map[string]any{"valor": map[string]any{"original": "11.00"}}))
		if revised.Revisao != 1 || revised.Valor.Original != "11.00" || revised.Status != psptest.CobActive {
			t.Fatalf("revised %+v", revised)
		}
		a.problem(http.StatusBadRequest)(a.do(http.MethodPatch, "/cob/"+id, map[string]any{"status": psptest.CobRemovedByUser, "valor": map[string]any{"original": "12.00"}}))
		a.problem(http.StatusBadRequest)(a.do(http.MethodPatch, "/cob/"+id, map[string]any{"status": psptest.CobDone}))
		var removed psptest.Cob
		a.want(http.StatusOK, &removed)(a.do(http.MethodPatch, "/cob/"+id, map[string]any{"status": psptest.CobRemovedByUser}))
		if removed.Status != psptest.CobRemovedByUser || removed.Revisao != 2 {
			t.Fatalf("removed %+v", removed)
		}
		a.problem(http.StatusBadRequest)(a.do(http.MethodPatch, "/cob/"+id, map[string]any{"valor": map[string]any{"original": "1.00"}}))
		if _, err := p.Pay(id, psptest.Payment{}); err == nil {
			t.Fatal("a removed cob was paid")
		}
	})
}

func TestACobWithoutPixCopiaECola(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{OmitPixCopiaECola: true})
	a := connect(t, p)
	var cob map[string]any
	a.want(http.StatusCreated, &cob)(a.do(http.MethodPut, "/cob/"+rand.Text(), cobBody(p, "1.00")))
	if _, ok := cob["pixCopiaECola"]; ok || cob["location"] == "" {
		t.Fatalf("cob %v", cob)
	}
}

func TestPayingACobDeliversItsCallback(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	a := connect(t, p)
	rc := newReceiver(t, p, http.StatusOK)
	a.register(rc)
	id := a.newCob("25.00")

	pix, err := p.Pay(id, psptest.Payment{InfoPagador: "pedido 42"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pix.EndToEndID) != 32 || pix.EndToEndID[0] != 'E' || pix.TxID != id || pix.Valor != "25.00" || pix.InfoPagador != "pedido 42" || pix.Horario == "" {
		t.Fatalf("paid %+v", pix)
	}
	got := rc.received()
	if len(got) != 1 || got[0].path != "/acquirer/pix" || got[0].auth != "" || got[0].peer != p.CallbackClient.Leaf.Subject.CommonName {
		t.Fatalf("received %+v", got)
	}
	if entries := callback(t, got[0].body); len(entries) != 1 || entries[0].EndToEndID != pix.EndToEndID || entries[0].TxID != id || entries[0].Valor != "25.00" {
		t.Fatalf("callback %s", got[0].body)
	}
	var cob psptest.Cob
	a.want(http.StatusOK, &cob)(a.do(http.MethodGet, "/cob/"+id, nil))
	if cob.Status != psptest.CobDone || len(cob.Pix) != 1 || cob.Pix[0].EndToEndID != pix.EndToEndID {
		t.Fatalf("cob after payment %+v", cob)
	}
	if _, err := p.Pay(id, psptest.Payment{}); err == nil {
		t.Fatal("a CONCLUIDA cob was paid again")
	}
	if d := p.Deliveries(); len(d) != 1 || d[0].Status != http.StatusOK || d[0].Err != nil {
		t.Fatalf("deliveries %+v", d)
	}

	t.Run("another valor", func(t *testing.T) {
		pix, err := p.Pay(a.newCob("25.00"), psptest.Payment{Valor: "24.99"})
		if err != nil || pix.Valor != "24.99" {
			t.Fatalf("paid %+v, %v", pix, err)
		}
	})

	t.Run("twice", func(t *testing.T) {
		p.SetCallbacks(psptest.Callbacks{Twice: true})
		defer p.SetCallbacks(psptest.Callbacks{})
		before := len(rc.received())
		if _, err := p.Pay(a.newCob("1.00"), psptest.Payment{}); err != nil {
			t.Fatal(err)
		}
		got := rc.received()[before:]
		if len(got) != 2 || string(got[0].body) != string(got[1].body) {
			t.Fatalf("received %d callbacks", len(got))
		}
	})

	t.Run("dropped", func(t *testing.T) {
		p.SetCallbacks(psptest.Callbacks{Drop: true})
		defer p.SetCallbacks(psptest.Callbacks{})
		before := len(rc.received())
		if _, err := p.Pay(a.newCob("1.00"), psptest.Payment{}); err != nil {
			t.Fatal(err)
		}
		d := p.Deliveries()
		if len(rc.received()) != before || !d[len(d)-1].Dropped {
			t.Fatal("a dropped callback was delivered")
		}
	})

	t.Run("with vendor fields", func(t *testing.T) {
		p.SetCallbacks(psptest.Callbacks{VendorFields: true})
		defer p.SetCallbacks(psptest.Callbacks{})
		before := len(rc.received())
		if _, err := p.Pay(a.newCob("1.00"), psptest.Payment{}); err != nil {
			t.Fatal(err)
		}
		body := rc.received()[before].body
		var raw struct {
			Pix []map[string]json.RawMessage `json:"pix"`
		}
		if err := json.Unmarshal(body, &raw); err != nil || raw.Pix[0]["gnExtras"] == nil || len(callback(t, body)) != 1 {
			t.Fatalf("callback %s", body)
		}
	})

	t.Run("an expired cob cannot be paid", func(t *testing.T) {
		id := a.newCob("1.00")
		if _, err := p.Pay(id, psptest.Payment{Horario: time.Now().Add(2 * time.Hour)}); err == nil {
			t.Fatal("paid after its expiracao")
		}
	})

	t.Run("a PIX without a charge is listed and not notified", func(t *testing.T) {
		before := len(rc.received())
		pix, err := p.Pay("", psptest.Payment{Valor: "3.00"})
		if err != nil || pix.TxID != "" {
			t.Fatalf("paid %+v, %v", pix, err)
		}
		if len(rc.received()) != before {
			t.Fatal("notified")
		}
		if _, ok := p.Pix(pix.EndToEndID); !ok {
			t.Fatal("not kept")
		}
	})
}

func TestThePixListIsPaged(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	a := connect(t, p)
	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	var e2e []string
	for i := range 5 {
		pix, err := p.Pay(a.newCob("1.00"), psptest.Payment{Horario: start.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		e2e = append(e2e, pix.EndToEndID)
	}
	type page struct {
		Parametros struct {
			Paginacao struct {
				PaginaAtual, ItensPorPagina, QuantidadeDePaginas, QuantidadeTotalDeItens int
			}
		}
		Pix []psptest.Pix
	}
	list := func(inicio, fim time.Time, query string) page {
		var pg page
		q := "?inicio=" + url.QueryEscape(inicio.Format(time.RFC3339)) + "&fim=" + url.QueryEscape(fim.Format(time.RFC3339)) + query
		a.want(http.StatusOK, &pg)(a.do(http.MethodGet, "/pix"+q, nil))
		return pg
	}
	var seen []string
	for n, want := range []int{2, 2, 1, 0} {
		pg := list(start, start.Add(time.Minute), fmt.Sprintf("&paginacao.paginaAtual=%d&paginacao.itensPorPagina=2", n))
		pag := pg.Parametros.Paginacao
		if len(pg.Pix) != want || pag.PaginaAtual != n || pag.ItensPorPagina != 2 || pag.QuantidadeDePaginas != 3 || pag.QuantidadeTotalDeItens != 5 {
			t.Fatalf("page %d: %d pix, %+v", n, len(pg.Pix), pag)
		}
		for _, p := range pg.Pix {
			seen = append(seen, p.EndToEndID)
		}
	}
	if strings.Join(seen, ",") != strings.Join(e2e, ",") {
		t.Fatalf("listed %v, want %v in order", seen, e2e)
	}
	if pg := list(start.Add(time.Second), start.Add(3*time.Second), ""); len(pg.Pix) != 3 || pg.Parametros.Paginacao.ItensPorPagina != 100 {
		t.Fatalf("inicio and fim both included: %d pix", len(pg.Pix))
	}
	first, _ := p.Pix(e2e[0])
	if pg := list(start, start.Add(time.Minute), "&txid="+first.TxID); len(pg.Pix) != 1 || pg.Pix[0].EndToEndID != e2e[0] {
		t.Fatalf("by txid: %+v", pg.Pix)
	}
	if pg := list(start.Add(time.Hour), start.Add(2*time.Hour), ""); len(pg.Pix) != 0 || pg.Parametros.Paginacao.QuantidadeDePaginas != 1 {
		t.Fatalf("an empty window: %+v", pg)
	}
	now := url.QueryEscape(time.Now().UTC().Format(time.RFC3339))
	for name, q := range map[string]string{
		"no inicio":              "?fim=" + now,
		"fim before inicio":      "?inicio=" + now + "&fim=" + url.QueryEscape(start.Format(time.RFC3339)),
		"a negative page":        "?inicio=" + now + "&fim=" + now + "&paginacao.paginaAtual=-1",
		"zero items per page":    "?inicio=" + now + "&fim=" + now + "&paginacao.itensPorPagina=0",
		"1001 items per page":    "?inicio=" + now + "&fim=" + now + "&paginacao.itensPorPagina=1001",
		"a date that is not one": "?inicio=yesterday&fim=" + now,
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			pr := a.problem(http.StatusBadRequest)(a.do(http.MethodGet, "/pix"+q, nil))
			if !strings.HasSuffix(pr.Type, "/PixConsultaInvalida") {
				t.Fatalf("problem %+v", pr)
			}
		})
	}
}

func TestDevolutions(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	a := connect(t, p)
	rc := newReceiver(t, p, http.StatusOK)
	a.register(rc)
	pix, err := p.Pay(a.newCob("10.00"), psptest.Payment{})
	if err != nil {
		t.Fatal(err)
	}
	path := func(id string) string { return "/pix/" + pix.EndToEndID + "/devolucao/" + id }

	var d psptest.Devolucao
	a.want(http.StatusCreated, &d)(a.do(http.MethodPut, path("r1"), map[string]any{"valor": "4.00", "natureza": "ORIGINAL", "descricao": "troca"}))
	if d.ID != "r1" || len(d.RtrID) != 32 || d.RtrID[0] != 'D' || d.Valor != "4.00" || d.Status != psptest.DevolutionInProgress || d.Horario.Solicitacao == "" || d.Descricao != "troca" {
		t.Fatalf("devolution %+v", d)
	}
	var read psptest.Devolucao
	a.want(http.StatusOK, &read)(a.do(http.MethodGet, path("r1"), nil))
	if read != d {
		t.Fatalf("read %+v", read)
	}

	t.Run("an id used already is refused", func(t *testing.T) {
		pr := a.problem(http.StatusBadRequest)(a.do(http.MethodPut, path("r1"), map[string]any{"valor": "1.00"}))
		if !strings.HasSuffix(pr.Type, "/PixDevolucaoInvalida") || pr.Violacoes[0].Propriedade != "id" {
			t.Fatalf("problem %+v", pr)
		}
	})

	t.Run("more than the PIX is refused", func(t *testing.T) {
		pr := a.problem(http.StatusBadRequest)(a.do(http.MethodPut, path("r2"), map[string]any{"valor": "6.01"}))
		if pr.Violacoes[0].Propriedade != "devolucao.valor" {
			t.Fatalf("problem %+v", pr)
		}
	})

	for name, tc := range map[string]struct {
		path   string
		body   any
		status int
	}{
		"an id with a dash":       {path("r-3"), map[string]any{"valor": "1.00"}, 400},
		"an id of 36 characters":  {path(strings.Repeat("r", 36)), map[string]any{"valor": "1.00"}, 400},
		"no valor":                {path("r4"), map[string]any{}, 400},
		"another natureza":        {path("r5"), map[string]any{"valor": "1.00", "natureza": "MED_FRAUDE"}, 400},
		"a body that is not JSON": {path("r6"), "[", 400},
		"a PIX the PSP never had": {"/pix/E00000000202611221200aaaaaaaaaaa/devolucao/r7", map[string]any{"valor": "1.00"}, 404},
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			a.problem(tc.status)(a.do(http.MethodPut, tc.path, tc.body))
		})
	}

	t.Run("an unknown devolution is 404", func(t *testing.T) {
		pr := a.problem(http.StatusNotFound)(a.do(http.MethodGet, path("nope"), nil))
		if !strings.HasSuffix(pr.Type, "/PixDevolucaoNaoEncontrada") {
			t.Fatalf("problem %+v", pr)
		}
	})

	t.Run("settled, it is called back with the PIX", func(t *testing.T) {
		before := len(rc.received())
		if err := p.SettleDevolution(pix.EndToEndID, "r1", psptest.DevolutionReturned, ""); err != nil {
			t.Fatal(err)
		}
		got := rc.received()[before:]
		if len(got) != 1 {
			t.Fatalf("%d callbacks", len(got))
		}
		entries := callback(t, got[0].body)
		if len(entries) != 1 || len(entries[0].Devolucoes) != 1 || entries[0].Devolucoes[0].Status != psptest.DevolutionReturned || entries[0].Devolucoes[0].Horario.Liquidacao == "" {
			t.Fatalf("callback %s", got[0].body)
		}
		if err := p.SettleDevolution(pix.EndToEndID, "r1", psptest.DevolutionNotDone, ""); err == nil {
			t.Fatal("a settled devolution was settled again")
		}
	})

	t.Run("steered to NAO_REALIZADO, the PUT answers it and the callback follows", func(t *testing.T) {
		if err := p.SetDevolutionAnswer(psptest.DevolutionNotDone, "Saldo insuficiente"); err != nil {
			t.Fatal(err)
		}
		defer p.SetDevolutionAnswer(psptest.DevolutionInProgress, "")
		before := len(rc.received())
		var d psptest.Devolucao
		a.want(http.StatusCreated, &d)(a.do(http.MethodPut, path("r8"), map[string]any{"valor": "6.00"}))
		if d.Status != psptest.DevolutionNotDone || d.Motivo != "Saldo insuficiente" {
			t.Fatalf("devolution %+v", d)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(rc.received()) == before {
			if time.Now().After(deadline) {
				t.Fatal("no callback within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// What was not returned does not count: the remaining 6.00 can still be asked for.
		a.want(http.StatusCreated, nil)(a.do(http.MethodPut, path("r9"), map[string]any{"valor": "6.00"}))
	})
}

func TestWebhooks(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{ProbeWebhook: true})
	a := connect(t, p)
	key := "/webhook/" + url.PathEscape(p.Chave)
	pr := a.problem(http.StatusNotFound)(a.do(http.MethodGet, key, nil))
	if !strings.HasSuffix(pr.Type, "/WebhookNaoEncontrado") {
		t.Fatalf("problem %+v", pr)
	}
	a.problem(http.StatusBadRequest)(a.do(http.MethodPut, key, map[string]string{"webhookUrl": "http://pixgate.example/acquirer"}))
	a.problem(http.StatusBadRequest)(a.do(http.MethodPut, "/webhook/outra@example.com", map[string]string{"webhookUrl": "https://pixgate.example/acquirer"}))

	failing := newReceiver(t, p, http.StatusInternalServerError)
	a.problem(http.StatusBadRequest)(a.do(http.MethodPut, key, map[string]string{"webhookUrl": failing.srv.URL + "/acquirer"}))
	if got := failing.received(); len(got) != 1 || got[0].path != "/acquirer" {
		t.Fatalf("probe %+v", got)
	}

	rc := newReceiver(t, p, http.StatusOK)
	a.register(rc)
	var hook psptest.Webhook
	a.want(http.StatusOK, &hook)(a.do(http.MethodGet, key, nil))
	if hook.WebhookURL != rc.srv.URL+"/acquirer" || hook.Chave != p.Chave || hook.Criacao == "" {
		t.Fatalf("webhook %+v", hook)
	}
	a.want(http.StatusNoContent, nil)(a.do(http.MethodDelete, key, nil))
	a.problem(http.StatusNotFound)(a.do(http.MethodDelete, key, nil))
	if _, err := p.Pay(a.newCob("1.00"), psptest.Payment{}); err != nil {
		t.Fatal(err)
	}
	if len(rc.received()) != 1 { // the probe
		t.Fatal("a PIX was notified without a webhook")
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	a := connect(t, p)

	t.Run("a fault strikes its operation the times it was told", func(t *testing.T) {
		p.Inject(psptest.Unavailable("3").On(psptest.OpCobGet), 2)
		for range 2 {
			pr := a.problem(http.StatusServiceUnavailable)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
			if !strings.HasSuffix(pr.Type, "/ServicoIndisponivel") {
				t.Fatalf("problem %+v", pr)
			}
		}
		a.problem(http.StatusNotFound)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
		if p.Answered(psptest.OpCobGet, 503) != 2 || p.Answered(psptest.OpCobGet, 404) != 1 || p.Requests(psptest.OpCobGet) != 3 {
			t.Fatalf("counted %d 503, %d 404", p.Answered(psptest.OpCobGet, 503), p.Answered(psptest.OpCobGet, 404))
		}
	})

	t.Run("a fault for any operation spares the token endpoint", func(t *testing.T) {
		p.Inject(psptest.Answer(http.StatusInternalServerError), -1)
		defer p.ClearFaults()
		connect(t, p)
		a.problem(http.StatusInternalServerError)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
	})

	t.Run("a fault after applying: the cob exists, its answer is lost", func(t *testing.T) {
		p.Inject(psptest.HangUp().On(psptest.OpCobPut).AfterApplying(), 1)
		id := rand.Text()
		req, _ := http.NewRequest(http.MethodPut, p.APIURL+"/cob/"+id, strings.NewReader(`{"calendario":{},"valor":{"original":"1.00"},"chave":"`+p.Chave+`"}`))
		req.Header.Set("Authorization", "Bearer "+a.bearer)
		if res, err := a.http.Do(req); err == nil {
			res.Body.Close()
			t.Fatalf("answered %d", res.StatusCode)
		}
		if _, ok := p.Cob(id); !ok {
			t.Fatal("the cob was not created")
		}
		if p.Answered(psptest.OpCobPut, 0) != 1 {
			t.Fatal("the lost answer was not counted")
		}
	})

	t.Run("a slow answer comes late", func(t *testing.T) {
		p.Inject(psptest.Slow(300*time.Millisecond).On(psptest.OpCobGet), 1)
		start := time.Now()
		a.problem(http.StatusNotFound)(a.do(http.MethodGet, "/cob/"+rand.Text(), nil))
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Fatalf("answered in %s", took)
		}
	})

	t.Run("the answers a body fault gives", func(t *testing.T) {
		for _, tc := range []struct {
			f           psptest.Fault
			contentType string
			size        int
		}{
			{psptest.Garbage(), "application/json", -1},
			{psptest.WrongContentType(), "text/html; charset=utf-8", -1},
			{psptest.Oversized(3 << 20), "application/json", 3 << 20},
		} {
			p.Inject(tc.f.On(psptest.OpCobGet), 1)
			req, _ := http.NewRequest(http.MethodGet, p.APIURL+"/cob/"+rand.Text(), nil)
			req.Header.Set("Authorization", "Bearer "+a.bearer)
			res, err := a.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != tc.contentType || tc.size > 0 && len(raw) != tc.size || json.Valid(raw) == (tc.size < 0) {
				t.Fatalf("answered %d %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(raw))
			}
		}
	})
}

func TestASecondAPIMountsOnTheSameServer(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	p.HandleAPI("payout_put", "pix.send", "PUT /v3/gn/pix/{idEnvio}", func(w http.ResponseWriter, r *http.Request) {
		psptest.WriteJSON(w, http.StatusCreated, map[string]string{"idEnvio": r.PathValue("idEnvio"), "status": "EM_PROCESSAMENTO"})
	})
	a := connect(t, p, "pix.send")
	req, _ := http.NewRequest(http.MethodPut, p.URL+"/v3/gn/pix/abc", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+a.bearer)
	res, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || p.Requests("payout_put") != 1 {
		t.Fatalf("answered %d", res.StatusCode)
	}
	cobOnly := connect(t, p, "cob.write")
	req, _ = http.NewRequest(http.MethodPut, p.URL+"/v3/gn/pix/abc", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+cobOnly.bearer)
	if res, err = cobOnly.http.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("without its scope: %d", res.StatusCode)
	}
}

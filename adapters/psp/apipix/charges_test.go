package apipix_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func charge(amount domain.Cents) ports.ChargeRequest {
	return ports.ChargeRequest{TxID: rand.Text(), Amount: amount, ExpirationSeconds: 1800}
}

func TestCreateMakesTheCobAPIPixDescribes(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	r := charge(12345)
	r.PayerRequest = strings.Repeat("é", 150)
	r.Debtor = ports.ChargeDebtor{Document: domain.MustParseDocument("529.982.247-25"), Name: "Maria da Silva"}
	before := time.Now()
	got, err := c.Create(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	cob, ok := p.Cob(r.TxID)
	if !ok || cob.Valor.Original != "123.45" || cob.Chave != p.Chave || cob.Calendario.Expiracao != 1800 ||
		cob.SolicitacaoPagador != strings.Repeat("é", 140) || cob.Devedor == nil || cob.Devedor.CPF != "52998224725" ||
		cob.Devedor.Nome != "Maria da Silva" || cob.Devedor.CNPJ != "" {
		t.Fatalf("the PSP holds %+v", cob)
	}
	if got.TxID != r.TxID || got.Status != ports.ChargeActive || got.Amount != 12345 || got.Key != p.Chave ||
		got.CopyPaste != cob.PixCopiaECola || got.LocationID != cob.Loc.ID || got.Location != cob.Location ||
		got.Revision != 0 || got.ExpirationSeconds != 1800 || got.CreatedAt.Before(before.Add(-time.Second)) {
		t.Fatalf("Create = %+v, the PSP holds %+v", got, cob)
	}

	t.Run("without a description or a named payer, neither is sent", func(t *testing.T) {
		r := charge(100)
		r.Debtor = ports.ChargeDebtor{Document: domain.MustParseDocument("11.222.333/0001-81")}
		if _, err := c.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if cob, _ := p.Cob(r.TxID); cob.SolicitacaoPagador != "" || cob.Devedor != nil {
			t.Fatalf("the PSP holds %+v", cob)
		}
	})
	t.Run("a company pays with its CNPJ", func(t *testing.T) {
		r := charge(100)
		r.Debtor = ports.ChargeDebtor{Document: domain.MustParseDocument("11.222.333/0001-81"), Name: "ACME LTDA"}
		if _, err := c.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if cob, _ := p.Cob(r.TxID); cob.Devedor == nil || cob.Devedor.CNPJ != "11222333000181" || cob.Devedor.CPF != "" {
			t.Fatalf("the PSP holds %+v", cob)
		}
	})
	t.Run("Get reads it back", func(t *testing.T) {
		back, err := c.Get(context.Background(), r.TxID)
		if err != nil || back != got {
			t.Fatalf("Get = %+v, %v; want %+v", back, err, got)
		}
		if _, err := c.Get(context.Background(), rand.Text()); !errors.Is(err, ports.ErrChargeNotFound) {
			t.Fatalf("Get of an unknown txid: %v", err)
		}
	})
}

func TestACobWithoutPixCopiaEColaStillHasItsLocation(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{OmitPixCopiaECola: true})
	got, err := newClient(t, p, nil).Create(context.Background(), charge(500))
	if err != nil || got.CopyPaste != "" || got.Location == "" || strings.Contains(got.Location, "://") {
		t.Fatalf("Create = %+v, %v", got, err)
	}
}

func TestARepeatedCreateMakesOneCob(t *testing.T) {
	t.Parallel()
	t.Run("the same request again answers the charge made", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, nil)
		r := charge(1000)
		first, err := c.Create(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Create(context.Background(), r)
		if err != nil || again != first || p.Cobs() != 1 || p.Requests(psptest.OpCobGet) != 1 {
			t.Fatalf("again = %+v, %v; %d cobs after %d GETs", again, err, p.Cobs(), p.Requests(psptest.OpCobGet))
		}
	})
	t.Run("a PUT whose answer was lost is sent again and its cob read back", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, nil)
		p.Inject(psptest.Unavailable("0").On(psptest.OpCobPut).AfterApplying(), 1)
		r := charge(1000)
		got, err := c.Create(context.Background(), r)
		if err != nil || got.TxID != r.TxID || p.Cobs() != 1 || p.Requests(psptest.OpCobPut) != 2 {
			t.Fatalf("Create = %+v, %v; %d cobs after %d PUTs", got, err, p.Cobs(), p.Requests(psptest.OpCobPut))
		}
	})
	t.Run("a PUT answered garbage is read back", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, nil)
		p.Inject(psptest.Garbage().On(psptest.OpCobPut).AfterApplying(), 1)
		r := charge(1000)
		got, err := c.Create(context.Background(), r)
		if err != nil || got.TxID != r.TxID || p.Cobs() != 1 || p.Requests(psptest.OpCobPut) != 1 || p.Requests(psptest.OpCobGet) != 1 {
			t.Fatalf("Create = %+v, %v; %d cobs", got, err, p.Cobs())
		}
	})
	t.Run("a txid used for another amount is the PSP's refusal", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, nil)
		r := charge(1000)
		if _, err := c.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		r.Amount = 999
		var refused *ports.ChargeRefusedError
		if _, err := c.Create(context.Background(), r); !errors.As(err, &refused) || refused.Status != 400 || !strings.Contains(refused.Detail, "em uso") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestARefusalCarriesThePSPsWords(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 403, 404, 409, 422} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			c := newClient(t, p, nil)
			body := `{"type":"https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida","title":"Cobrança inválida.","status":400,"detail":"A chave não pertence ao usuário recebedor; secret ` + p.ClientSecret + `."}`
			p.Inject(psptest.Fault{Status: status, ContentType: "application/problem+json", Body: []byte(body)}.On(psptest.OpCobPut), 1)
			_, err := c.Create(context.Background(), charge(1000))
			var refused *ports.ChargeRefusedError
			if !errors.As(err, &refused) || !errors.Is(err, ports.ErrChargeRefused) || refused.Status != status ||
				refused.Title != "Cobrança inválida." || !strings.Contains(refused.Detail, "não pertence") {
				t.Fatalf("err = %#v", err)
			}
			if strings.Contains(err.Error(), p.ClientSecret) {
				t.Fatalf("the refusal shows the client secret: %v", err)
			}
			if p.Requests(psptest.OpCobPut) != 1 || p.Requests(psptest.OpCobGet) != 1 || p.Cobs() != 0 {
				t.Fatalf("%d PUTs, %d GETs, %d cobs", p.Requests(psptest.OpCobPut), p.Requests(psptest.OpCobGet), p.Cobs())
			}
		})
	}
	t.Run("a refusal whose read-back is refused too", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, nil)
		p.Inject(psptest.Answer(http.StatusForbidden), 2) // the PUT, then the GET
		if _, err := c.Create(context.Background(), charge(1000)); !errors.Is(err, ports.ErrChargeRefused) {
			t.Fatalf("err = %v, want the PUT's refusal", err)
		}
	})
	t.Run("a key of another account", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		c := newClient(t, p, func(cfg *apipix.Config) { cfg.Key = "someone@else.example" })
		_, err := c.Create(context.Background(), charge(1000))
		var refused *ports.ChargeRefusedError
		if !errors.As(err, &refused) || refused.Status != 400 || !strings.Contains(refused.Detail, "cob.chave") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestAPSPThatCannotBeReachedIsUnavailable(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]psptest.Fault{
		"503 every time":      psptest.Unavailable("0"),
		"429 every time":      {Status: http.StatusTooManyRequests, RetryAfter: "0"},
		"401 every time":      psptest.Unauthorized(),
		"a hang-up":           psptest.HangUp(),
		"no answer in time":   psptest.Slow(time.Minute),
		"an oversized answer": psptest.Oversized(2 << 20),
		"an HTML page":        psptest.WrongContentType(),
		"garbage":             psptest.Garbage(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			c := newClient(t, p, func(cfg *apipix.Config) { cfg.Transport.Timeout = 2 * time.Second })
			f.Op = ""
			p.Inject(f, -1)
			start := time.Now()
			_, err := c.Create(context.Background(), charge(1000))
			if !errors.Is(err, ports.ErrChargeUnavailable) || errors.Is(err, ports.ErrChargeRefused) {
				t.Fatalf("err = %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
			if strings.Contains(err.Error(), p.ClientSecret) {
				t.Fatalf("the error shows the client secret: %v", err)
			}
		})
	}
}

func TestRemoveEndsAnActiveCobOnce(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	r := charge(1000)
	if _, err := c.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	p.Inject(psptest.Unavailable("0").On(psptest.OpCobPatch).AfterApplying(), 1)
	got, err := c.Remove(context.Background(), r.TxID)
	if err != nil || got.Status != ports.ChargeRemovedByUs || got.Revision != 1 {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	if again, err := c.Remove(context.Background(), r.TxID); err != nil || again.Status != ports.ChargeRemovedByUs {
		t.Fatalf("Remove again = %+v, %v", again, err)
	}
	if _, err := p.Pay(r.TxID, psptest.Payment{}); err == nil {
		t.Fatal("a removed cob was paid")
	}

	t.Run("a paid cob cannot be removed", func(t *testing.T) {
		r := charge(1000)
		if _, err := c.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Pay(r.TxID, psptest.Payment{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Remove(context.Background(), r.TxID); !errors.Is(err, ports.ErrChargeRefused) {
			t.Fatalf("Remove of a paid cob: %v", err)
		}
	})
	t.Run("an unknown cob is not found", func(t *testing.T) {
		if _, err := c.Remove(context.Background(), rand.Text()); !errors.Is(err, ports.ErrChargeNotFound) {
			t.Fatalf("Remove of an unknown cob: %v", err)
		}
	})
}

func TestARequestOutOfShapeIsRefusedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	for _, r := range []ports.ChargeRequest{
		{TxID: "short", Amount: 1, ExpirationSeconds: 60},
		{TxID: rand.Text() + "/..", Amount: 1, ExpirationSeconds: 60},
		{TxID: rand.Text(), Amount: 0, ExpirationSeconds: 60},
		{TxID: rand.Text(), Amount: 1, ExpirationSeconds: 0},
	} {
		if _, err := c.Create(context.Background(), r); err == nil || errors.Is(err, ports.ErrChargeUnavailable) || errors.Is(err, ports.ErrChargeRefused) {
			t.Fatalf("%+v: %v", r, err)
		}
	}
	if n := p.Requests(""); n != 0 {
		t.Fatalf("%d requests reached the PSP", n)
	}
}

package psptest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
)

// putWebhook is PUT /webhook/{chave}: the URL the PSP posts the key's PIX to (followed by
// /pix).
func (p *PSP) putWebhook(w http.ResponseWriter, r *http.Request) {
	chave := r.PathValue("chave")
	var req struct {
		WebhookURL *string `json:"webhookUrl"`
	}
	if !DecodeJSON(w, r, &req, "WebhookOperacaoInvalida", "Webhook inválido.") {
		return
	}
	var vs []Violacao
	if chave != p.Chave {
		vs = append(vs, Violacao{Propriedade: "chave", Razao: "O parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário recebedor."})
	}
	if req.WebhookURL == nil || !httpsURL(*req.WebhookURL) {
		vs = append(vs, Violacao{Propriedade: "webhook.webhookUrl", Razao: "Campo webhook.webhookUrl não respeita o schema."})
	}
	if len(vs) > 0 {
		webhookInvalid(w, "A presente requisição busca criar um webhook sem respeitar o schema ou, ainda, com sentido semanticamente inválido.", vs...)
		return
	}
	if p.cfg.ProbeWebhook {
		if d := p.Deliver(*req.WebhookURL, struct{}{}); d.Err != nil || d.Status < 200 || d.Status > 299 {
			webhookInvalid(w, "A URL do webhook não respondeu com sucesso à notificação de teste.")
			return
		}
	}
	now := p.now()
	p.mu.Lock()
	p.webhooks[chave] = Webhook{WebhookURL: *req.WebhookURL, Chave: chave, Criacao: stamp(now)}
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func webhookInvalid(w http.ResponseWriter, detail string, vs ...Violacao) {
	WriteProblem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido.", detail, vs...)
}

// getWebhook is GET /webhook/{chave}.
func (p *PSP) getWebhook(w http.ResponseWriter, r *http.Request) {
	hook, ok := p.Webhook(r.PathValue("chave"))
	if !ok {
		webhookMissing(w)
		return
	}
	WriteJSON(w, http.StatusOK, hook)
}

// deleteWebhook is DELETE /webhook/{chave}.
func (p *PSP) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	_, ok := p.webhooks[r.PathValue("chave")]
	delete(p.webhooks, r.PathValue("chave"))
	p.mu.Unlock()
	if !ok {
		webhookMissing(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func webhookMissing(w http.ResponseWriter) {
	WriteProblem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado.", "O webhook denotado por {chave} não encontra-se estabelecido.")
}

// Webhook answers the webhook registered for chave.
func (p *PSP) Webhook(chave string) (Webhook, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hook, ok := p.webhooks[chave]
	return hook, ok
}

func httpsURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && u.Fragment == "" && len(raw) <= 2048
}

// Callbacks are the switches of the callbacks the fake delivers.
type Callbacks struct {
	// Drop keeps callbacks from being sent (they are recorded, Dropped): only the listing
	// GET /pix tells of the PIX.
	Drop bool
	// Twice sends each callback twice, as a PSP that retries a callback it thinks was lost.
	Twice bool
	// VendorFields adds members the specification does not define, as PSPs do (Efí's
	// gnExtras in each PIX and devolution, one at the top).
	VendorFields bool
}

// SetCallbacks sets the switches of the callbacks delivered from now on.
func (p *PSP) SetCallbacks(c Callbacks) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cbMode = c
}

// Delivery is one callback the fake posted, or would have.
type Delivery struct {
	URL  string
	Body []byte
	// Status is the receiver's answer; 0 when none came (Err says why) or when Dropped.
	Status  int
	Err     error
	Dropped bool
}

// Deliveries answers the callbacks posted (and dropped) so far, in order.
func (p *PSP) Deliveries() []Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Delivery(nil), p.deliveries...)
}

// notify posts the PIX to its key's webhook URL followed by /pix, as the specification's
// callback says: POST, JSON {"pix": [...]}, mutual TLS, no Authorization header. Without a
// webhook for the key nothing is sent.
func (p *PSP) notify(pix Pix) {
	p.mu.Lock()
	hook, ok := p.webhooks[pix.Chave]
	mode := p.cbMode
	p.mu.Unlock()
	if !ok {
		return
	}
	target := hook.WebhookURL + "/pix"
	body := callbackBody(pix, mode.VendorFields)
	if mode.Drop {
		raw, _ := json.Marshal(body)
		p.record(Delivery{URL: target, Body: raw, Dropped: true})
		return
	}
	p.Deliver(target, body)
	if mode.Twice {
		p.Deliver(target, body)
	}
}

// notifyLater is notify from a goroutine of its own, which the fake's end waits for.
func (p *PSP) notifyLater(pix Pix) {
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		p.notify(pix)
	}()
}

// Deliver posts body as JSON to target the way the fake posts its callbacks (mutual TLS with
// CallbackClient, no Authorization header, 10 s at most), records the delivery and answers
// it. An API mounted with HandleAPI sends its own callbacks through it.
func (p *PSP) Deliver(target string, body any) Delivery {
	raw, err := json.Marshal(body)
	d := Delivery{URL: target, Body: raw, Err: err}
	if err == nil {
		var req *http.Request
		req, d.Err = http.NewRequestWithContext(p.ctx, http.MethodPost, target, bytes.NewReader(raw))
		if d.Err == nil {
			req.Header.Set("Content-Type", "application/json")
			var res *http.Response
			if res, d.Err = p.callbacks.Do(req); d.Err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
				res.Body.Close()
				d.Status = res.StatusCode
			}
		}
	}
	p.record(d)
	return d
}

func (p *PSP) record(d Delivery) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deliveries = append(p.deliveries, d)
}

// callbackBody is {"pix": [pix]}, with members of a vendor's own when vendor is set.
func callbackBody(pix Pix, vendor bool) any {
	if !vendor {
		return map[string][]Pix{"pix": {pix}}
	}
	raw, _ := json.Marshal(pix)
	var entry map[string]any
	_ = json.Unmarshal(raw, &entry)
	entry["gnExtras"] = map[string]any{"pagador": map[string]string{"nome": "Pagador de Teste", "codigoBanco": "00000000"}, "tarifa": "0.00"}
	if devs, ok := entry["devolucoes"].([]any); ok {
		for _, d := range devs {
			if m, ok := d.(map[string]any); ok {
				m["gnExtras"] = map[string]string{"tipo": "devolucao"}
			}
		}
	}
	return map[string]any{"pix": []any{entry}, "psptest": map[string]string{"versao": "1"}}
}

// Package efitest is a fake of Efí's payout API ("envio de Pix") for tests, mounted on a
// psptest fake PSP: the same HTTPS server with client certificates required, the same OAuth
// 2.0 tokens that expire, the same faults and counters, and Efí's payout endpoints beside API
// Pix, with state:
//
//   - PUT /v3/gn/pix/{idEnvio} (and the older /v2/gn/pix/{idEnvio}) makes a payout from the
//     paying key (the PSP's Chave) to favorecido.chave, and answers 201 with its status; a
//     second PUT with the id answers 409 id_envio_duplicado; a refusal answers 4xx {"nome",
//     "mensagem"} and makes nothing;
//   - GET /v2/gn/pix/enviados/id-envio/{idEnvio} reads a payout back, 404 when there is none.
//
// A test steers what becomes of the payouts to a key (Steer): processed (REALIZADO), not done
// (NAO_REALIZADO), refused at once, left processing, or answered in a status pixgate does not
// know; and limits the paying account's balance (SetBalance). A payout with an end ends
// Config.SettleAfter after it was made (at its first read back when 0), or when the test says
// (Settle), and Efí's notice of it is posted to the URL NotifyTo names, as Efí posts to the
// paying key's webhook. Faults come from psptest (Inject with OpPayoutPut, OpPayoutGet): an API
// that is down, slow, or loses its answer after making the payout.
//
// It is test support: production code never imports it. It shares nothing with the adapter
// it tests.
package efitest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// The operations the fake counts and faults target.
const (
	OpPayoutPut = "payout_put"
	OpPayoutGet = "payout_get"
)

// The statuses of a payout, as Efí names them, and the one the fake answers for
// StaysUnknown, which pixgate does not know.
const (
	InProgress = "EM_PROCESSAMENTO"
	Done       = "REALIZADO"
	NotDone    = "NAO_REALIZADO"
	Unknown    = "EM_ANALISE_MANUAL"
)

// Outcome is what becomes of a payout.
type Outcome int

const (
	// Processed: EM_PROCESSAMENTO, then REALIZADO.
	Processed Outcome = iota
	// NotProcessed: EM_PROCESSAMENTO, then NAO_REALIZADO with a reason.
	NotProcessed
	// Refused: the PUT is refused (400 chave_invalida): nothing is made.
	Refused
	// StaysProcessing: EM_PROCESSAMENTO until the test settles it.
	StaysProcessing
	// StaysUnknown: a status pixgate does not know, until the test settles it.
	StaysUnknown
)

// NotDoneReason is the reason a payout NotProcessed ends with.
const NotDoneReason = "Conta do usuário recebedor encerrada"

// Config tunes the fake.
type Config struct {
	// PSP configures the server it is mounted on.
	PSP psptest.Config
	// SettleAfter is how long after it was made a payout with an end (Processed,
	// NotProcessed) gets it; 0 means at its first read back.
	SettleAfter time.Duration
}

// Payout is one payout the fake holds.
type Payout struct {
	IDEnvio    string
	EndToEndID string
	Amount     int64 // cents
	Payer, Key string
	Status     string
	Reason     string // NAO_REALIZADO's
	CreatedAt  time.Time
}

// Efi is the fake: a psptest.PSP (embedded: its URL, CA, client certificate, credentials,
// faults and counters) serving Efí's payout API too. Safe for concurrent use.
type Efi struct {
	*psptest.PSP
	cfg Config

	mu       sync.Mutex
	payouts  map[string]*payout
	outcomes map[string]Outcome
	fallback Outcome
	balance  int64
	limited  bool
	notifyTo string
	puts     map[string]int
	closed   bool
	timers   []*time.Timer
	pending  sync.WaitGroup
}

type payout struct {
	Payout
	outcome Outcome
}

// New starts the fake for the test t; it stops when t ends.
func New(t testing.TB, cfg Config) *Efi {
	t.Helper()
	e := &Efi{PSP: psptest.New(t, cfg.PSP), cfg: cfg, payouts: map[string]*payout{}, outcomes: map[string]Outcome{}, puts: map[string]int{}}
	for _, version := range []string{"v2", "v3"} {
		e.HandleAPI(OpPayoutPut, "pix.send", "PUT /"+version+"/gn/pix/{idEnvio}", e.put)
	}
	e.HandleAPI(OpPayoutGet, "gn.pix.send.read", "GET /v2/gn/pix/enviados/id-envio/{idEnvio}", e.get)
	t.Cleanup(func() {
		e.mu.Lock()
		e.closed = true
		for _, tm := range e.timers {
			if tm.Stop() {
				e.pending.Done() // never to fire
			}
		}
		e.mu.Unlock()
		e.pending.Wait()
	})
	return e
}

// Steer makes the payouts to key end as o (the ones made from now on); other keys end as
// SteerOthers says (Processed unless told).
func (e *Efi) Steer(key string, o Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.outcomes[key] = o
}

// SteerOthers sets the outcome of the payouts to keys not steered.
func (e *Efi) SteerOthers(o Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fallback = o
}

// SetBalance limits the paying account to cents: a payout it does not cover is refused
// (saldo_insuficiente), and one NAO_REALIZADO gives its amount back.
func (e *Efi) SetBalance(cents int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.balance, e.limited = cents, true
}

// Balance is what the paying account holds, when limited.
func (e *Efi) Balance() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.balance
}

// NotifyTo makes the fake post its notices of payouts that end to url (Efí posts them to the
// paying key's webhook URL followed by /pix); empty posts nothing.
func (e *Efi) NotifyTo(url string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notifyTo = url
}

// Payout answers the payout idEnvio.
func (e *Efi) Payout(idEnvio string) (Payout, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.payouts[idEnvio]
	if !ok {
		return Payout{}, false
	}
	return p.Payout, true
}

// Payouts answers every payout made, in the order of their ids.
func (e *Efi) Payouts() []Payout {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Payout, 0, len(e.payouts))
	for _, p := range e.payouts {
		out = append(out, p.Payout)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IDEnvio < out[j].IDEnvio })
	return out
}

// Puts is how many PUTs named idEnvio and got past the fake's faults and token check,
// whatever was answered.
func (e *Efi) Puts(idEnvio string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.puts[idEnvio]
}

// Settle ends the payout idEnvio now as status (REALIZADO or NAO_REALIZADO, with reason), as
// Efí would, and posts its notice.
func (e *Efi) Settle(idEnvio, status, reason string) error {
	if status != Done && status != NotDone {
		return fmt.Errorf("efitest: a payout ends %s or %s, not %s", Done, NotDone, status)
	}
	e.mu.Lock()
	p, ok := e.payouts[idEnvio]
	if !ok || p.Status == Done || p.Status == NotDone {
		e.mu.Unlock()
		return fmt.Errorf("efitest: no payout %s in progress", idEnvio)
	}
	e.end(p, status, reason)
	e.mu.Unlock()
	e.notify(p.Payout)
	return nil
}

// problem is Efí's error answer.
func problem(w http.ResponseWriter, status int, nome, mensagem string) {
	psptest.WriteJSON(w, status, map[string]string{"nome": nome, "mensagem": mensagem})
}

type putBody struct {
	Valor   string `json:"valor"`
	Pagador struct {
		Chave       string `json:"chave"`
		InfoPagador string `json:"infoPagador"`
	} `json:"pagador"`
	Favorecido struct {
		Chave string `json:"chave"`
	} `json:"favorecido"`
}

// put is PUT /v3/gn/pix/{idEnvio}.
func (e *Efi) put(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idEnvio")
	e.mu.Lock()
	e.puts[id]++
	e.mu.Unlock()
	if !validID(id) {
		problem(w, http.StatusBadRequest, "valor_invalido", "O campo idEnvio deve ter de 1 a 35 letras e dígitos")
		return
	}
	var body putBody
	if !psptest.DecodeJSON(w, r, &body, "RequisicaoInvalida", "Requisição inválida") {
		return
	}
	cents, ok := parseValor(body.Valor)
	switch {
	case !ok:
		problem(w, http.StatusBadRequest, "valor_invalido", "O campo valor deve ser um valor positivo com duas casas decimais")
		return
	case body.Pagador.Chave != e.Chave:
		problem(w, http.StatusBadRequest, "chave_invalida", "A chave do pagador não pertence à conta autenticada")
		return
	case body.Favorecido.Chave == "" || len(body.Favorecido.Chave) > 77:
		problem(w, http.StatusBadRequest, "valor_invalido", "O campo favorecido.chave é obrigatório")
		return
	}
	now := time.Now().UTC()
	e.mu.Lock()
	if _, taken := e.payouts[id]; taken {
		e.mu.Unlock()
		problem(w, http.StatusConflict, "id_envio_duplicado", "O idEnvio informado já foi usado em outro envio")
		return
	}
	outcome, steered := e.outcomes[body.Favorecido.Chave]
	if !steered {
		outcome = e.fallback
	}
	switch {
	case outcome == Refused:
		e.mu.Unlock()
		problem(w, http.StatusBadRequest, "chave_invalida", "A chave do favorecido não existe no DICT")
		return
	case e.limited && cents > e.balance:
		e.mu.Unlock()
		problem(w, http.StatusUnprocessableEntity, "saldo_insuficiente", "Saldo insuficiente para realizar o envio")
		return
	}
	if e.limited {
		e.balance -= cents
	}
	p := &payout{Payout: Payout{IDEnvio: id, EndToEndID: "E09089356" + now.Format("200601021504") + "API" + rand.Text()[:8],
		Amount: cents, Payer: body.Pagador.Chave, Key: body.Favorecido.Chave, Status: InProgress, CreatedAt: now}, outcome: outcome}
	if outcome == StaysUnknown {
		p.Status = Unknown
	}
	e.payouts[id] = p
	answer := map[string]any{"idEnvio": id, "e2eId": p.EndToEndID, "valor": body.Valor,
		"horario": map[string]string{"solicitacao": stamp(now)}, "status": p.Status}
	if e.cfg.SettleAfter > 0 && (outcome == Processed || outcome == NotProcessed) {
		e.pending.Add(1)
		e.timers = append(e.timers, time.AfterFunc(e.cfg.SettleAfter, func() {
			defer e.pending.Done()
			e.settleDue(id)
		}))
	}
	e.mu.Unlock()
	psptest.WriteJSON(w, http.StatusCreated, answer)
}

// get is GET /v2/gn/pix/enviados/id-envio/{idEnvio}.
func (e *Efi) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idEnvio")
	if e.cfg.SettleAfter == 0 {
		e.settleDue(id)
	}
	e.mu.Lock()
	p, ok := e.payouts[id]
	var snap Payout
	if ok {
		snap = p.Payout
	}
	e.mu.Unlock()
	if !ok {
		psptest.WriteProblem(w, http.StatusNotFound, "PixEnviadoNaoEncontrado", "Não Encontrado", "Pix enviado não encontrado para o idEnvio informado.")
		return
	}
	psptest.WriteJSON(w, http.StatusOK, view(snap))
}

// view is a payout as Efí shows it (GET, and the notice's entry).
func view(p Payout) map[string]any {
	v := map[string]any{
		"endToEndId": p.EndToEndID, "idEnvio": p.IDEnvio, "valor": fmt.Sprintf("%d.%02d", p.Amount/100, p.Amount%100),
		"chave": p.Payer, "status": p.Status, "horario": map[string]string{"solicitacao": stamp(p.CreatedAt)},
		"favorecido": map[string]any{"chave": p.Key},
	}
	if p.Status == NotDone {
		v["gnExtras"] = map[string]any{"erro": map[string]string{"codigo": "AC14", "origem": "PSP do usuário recebedor", "motivo": p.Reason}}
	}
	return v
}

// settleDue ends the payout id as its outcome says, if it has an end and has none yet.
func (e *Efi) settleDue(id string) {
	e.mu.Lock()
	p, ok := e.payouts[id]
	if !ok || p.Status != InProgress || (p.outcome != Processed && p.outcome != NotProcessed) {
		e.mu.Unlock()
		return
	}
	if p.outcome == Processed {
		e.end(p, Done, "")
	} else {
		e.end(p, NotDone, NotDoneReason)
	}
	snap := p.Payout
	e.mu.Unlock()
	e.notify(snap)
}

// end gives p its end. The caller holds the lock.
func (e *Efi) end(p *payout, status, reason string) {
	p.Status, p.Reason = status, reason
	if status == NotDone && e.limited {
		e.balance += p.Amount
	}
}

// notify posts Efí's notice of the payout p to the NotifyTo URL, from a goroutine of its own.
func (e *Efi) notify(p Payout) {
	e.mu.Lock()
	target, closed := e.notifyTo, e.closed
	if target == "" || closed {
		e.mu.Unlock()
		return
	}
	e.pending.Add(1)
	e.mu.Unlock()
	entry := view(p)
	entry["tipo"] = "SOLICITACAO"
	entry["horario"] = stamp(time.Now())
	extras := map[string]any{"idEnvio": p.IDEnvio}
	if p.Status == NotDone {
		extras["erro"] = map[string]string{"codigo": "AC14", "origem": "PSP do usuário recebedor", "motivo": p.Reason}
	}
	entry["gnExtras"] = extras
	delete(entry, "favorecido")
	go func() {
		defer e.pending.Done()
		e.Deliver(target, map[string]any{"pix": []any{entry}})
	}()
}

func validID(id string) bool {
	return len(id) >= 1 && len(id) <= 35 && strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// parseValor reads a positive amount in reais with two decimals.
func parseValor(s string) (int64, bool) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 2 || whole == "" || len(whole) > 10 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	return n, err == nil && n > 0
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

package psptest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// pixRecord is a PIX received and when, for the listing's filter.
type pixRecord struct {
	at  time.Time
	pix Pix
}

// Payment is a payer's PIX, as a test makes one.
type Payment struct {
	// Valor is what is paid, reais with two decimals; "" pays the cob's valor.original.
	Valor       string
	InfoPagador string
	// Horario is when the PSP settled it; zero means the fake's clock now.
	Horario time.Time
	// StaticTxID, for a PIX without a cob (txid ""), is the txid the payer's app read from a
	// static BR Code (its field 62-05): the PIX is listed with it and, as a PIX with a txid,
	// notified.
	StaticTxID string
}

// Pay settles a PIX paying the cob txid, which must be ATIVA and not expired at the payment's
// horario: the cob becomes CONCLUIDA, the PIX gets its endToEndId, and the callback is
// delivered to the key's webhook (as Callbacks say) before Pay returns. An empty txid is a PIX
// sent to the key without a charge (pay.Valor then required): it is listed, and not notified,
// as the specification notifies only PIX with a txid, unless it came from a static code that
// named one (pay.StaticTxID).
func (p *PSP) Pay(txid string, pay Payment) (Pix, error) {
	at := pay.Horario
	if at.IsZero() {
		at = p.now()
	}
	at = at.UTC()
	p.mu.Lock()
	chave, valor := p.Chave, pay.Valor
	var cob *Cob
	if txid != "" {
		cob = p.cobs[txid]
		if cob == nil {
			p.mu.Unlock()
			return Pix{}, fmt.Errorf("psptest: no cob %q", txid)
		}
		if cob.Status != CobActive {
			p.mu.Unlock()
			return Pix{}, fmt.Errorf("psptest: cob %q is %s, it cannot be paid", txid, cob.Status)
		}
		criacao, err := time.Parse(time.RFC3339Nano, cob.Calendario.Criacao)
		if err == nil && at.After(criacao.Add(time.Duration(cob.Calendario.Expiracao)*time.Second)) {
			p.mu.Unlock()
			return Pix{}, fmt.Errorf("psptest: cob %q expired before %s", txid, stamp(at))
		}
		chave = cob.Chave
		if valor == "" {
			valor = cob.Valor.Original
		}
	}
	if cents, ok := parseValor(valor); !ok || cents == 0 {
		p.mu.Unlock()
		return Pix{}, fmt.Errorf("psptest: %q is no valor to pay", valor)
	}
	if cob != nil {
		cob.Status = CobDone
	}
	if cob == nil && pay.StaticTxID != "" {
		if !alnum(pay.StaticTxID, 1, 35) {
			p.mu.Unlock()
			return Pix{}, fmt.Errorf("psptest: %q is no txid", pay.StaticTxID)
		}
		txid = pay.StaticTxID
	}
	rec := &pixRecord{at: at, pix: Pix{
		EndToEndID:       endToEnd("E", at),
		TxID:             txid,
		Valor:            valor,
		ComponentesValor: &ComponentesValor{Original: &ValorComponente{Valor: valor}},
		Chave:            chave,
		Horario:          stamp(at),
		InfoPagador:      pay.InfoPagador,
	}}
	p.pix = append(p.pix, rec)
	p.byE2E[rec.pix.EndToEndID] = rec
	paid := rec.pix.clone()
	p.mu.Unlock()
	if txid != "" {
		p.notify(paid)
	}
	return paid, nil
}

// Pix answers a copy of the PIX e2eid, with its devolutions.
func (p *PSP) Pix(e2eid string) (Pix, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, ok := p.byE2E[e2eid]
	if !ok {
		return Pix{}, false
	}
	return rec.pix.clone(), true
}

// listPix is GET /pix: the PIX received from inicio to fim (both included), optionally of one
// txid, in pages.
func (p *PSP) listPix(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var vs []Violacao
	bad := func(prop, reason string) { vs = append(vs, Violacao{Razao: reason, Propriedade: prop}) }
	inicio, err := time.Parse(time.RFC3339Nano, q.Get("inicio"))
	if err != nil {
		bad("inicio", "O parâmetro inicio não respeita o schema.")
	}
	fim, err := time.Parse(time.RFC3339Nano, q.Get("fim"))
	if err != nil {
		bad("fim", "O parâmetro fim não respeita o schema.")
	}
	if len(vs) == 0 && fim.Before(inicio) {
		bad("fim", "O timestamp representado pelo parâmetro fim é anterior ao timestamp representado pelo parâmetro inicio.")
	}
	page, perPage := 0, 100
	if s := q.Get("paginacao.paginaAtual"); s != "" {
		if page, err = strconv.Atoi(s); err != nil || page < 0 {
			bad("paginacao.paginaAtual", "O parâmetro paginacao.paginaAtual é negativo ou não respeita o schema.")
		}
	}
	if s := q.Get("paginacao.itensPorPagina"); s != "" {
		if perPage, err = strconv.Atoi(s); err != nil || perPage < 1 || perPage > 1000 {
			bad("paginacao.itensPorPagina", "O parâmetro paginacao.itensPorPagina não respeita o schema (1 a 1000).")
		}
	}
	txid := q.Get("txid")
	if txid != "" && !alnum(txid, 1, 35) {
		bad("txid", "O parâmetro txid não respeita o schema.")
	}
	if len(vs) > 0 {
		WriteProblem(w, http.StatusBadRequest, "PixConsultaInvalida", "Consulta inválida.",
			"Os parâmetros de consulta à lista de pix recebidos não respeitam o schema ou não fazem sentido semanticamente.", vs...)
		return
	}
	p.mu.Lock()
	var found []*pixRecord
	for _, rec := range p.pix {
		if !rec.at.Before(inicio) && !rec.at.After(fim) && (txid == "" || rec.pix.TxID == txid) {
			found = append(found, rec)
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if !found[i].at.Equal(found[j].at) {
			return found[i].at.Before(found[j].at)
		}
		return found[i].pix.EndToEndID < found[j].pix.EndToEndID
	})
	list := []Pix{}
	for i := page * perPage; i < len(found) && i < (page+1)*perPage; i++ {
		list = append(list, found[i].pix.clone())
	}
	p.mu.Unlock()
	WriteJSON(w, http.StatusOK, map[string]any{
		"parametros": map[string]any{
			"inicio": inicio.UTC().Format(time.RFC3339Nano),
			"fim":    fim.UTC().Format(time.RFC3339Nano),
			"paginacao": map[string]int{
				"paginaAtual":            page,
				"itensPorPagina":         perPage,
				"quantidadeDePaginas":    max(1, (len(found)+perPage-1)/perPage),
				"quantidadeTotalDeItens": len(found),
			},
		},
		"pix": list,
	})
}

// getPix is GET /pix/{e2eid}.
func (p *PSP) getPix(w http.ResponseWriter, r *http.Request) {
	pix, ok := p.Pix(r.PathValue("e2eid"))
	if !ok {
		WriteProblem(w, http.StatusNotFound, "PixNaoEncontrado", "Pix não encontrado.", "Pix não encontrado para o e2eid informado.")
		return
	}
	WriteJSON(w, http.StatusOK, pix)
}

// putDevolution is PUT /pix/{e2eid}/devolucao/{id}. An id already used for the PIX, or a sum
// of devolutions above its valor, is refused (400 PixDevolucaoInvalida); a new devolution gets
// the status SetDevolutionAnswer steers (EM_PROCESSAMENTO unless told).
func (p *PSP) putDevolution(w http.ResponseWriter, r *http.Request) {
	e2eid, id := r.PathValue("e2eid"), r.PathValue("id")
	var req struct {
		Valor     *string `json:"valor"`
		Natureza  *string `json:"natureza"`
		Descricao *string `json:"descricao"`
	}
	if !DecodeJSON(w, r, &req, "PixDevolucaoInvalida", "Devolução inválida.") {
		return
	}
	var vs []Violacao
	bad := func(prop, reason string) { vs = append(vs, Violacao{Razao: reason, Propriedade: prop}) }
	if !alnum(id, 1, 35) {
		bad("id", "O parâmetro id não respeita o schema.")
	}
	var cents int64
	if req.Valor == nil {
		bad("devolucao.valor", "O campo devolucao.valor não respeita o schema.")
	} else if c, ok := parseValor(*req.Valor); !ok || c == 0 {
		bad("devolucao.valor", "O campo devolucao.valor não respeita o schema.")
	} else {
		cents = c
	}
	natureza := "ORIGINAL"
	if req.Natureza != nil {
		natureza = *req.Natureza
		if natureza != "ORIGINAL" && natureza != "RETIRADA" {
			bad("devolucao.natureza", "O campo devolucao.natureza não respeita o schema.")
		}
	}
	if req.Descricao != nil && utf8.RuneCountInString(*req.Descricao) > 140 {
		bad("devolucao.descricao", "O campo devolucao.descricao não respeita o schema.")
	}
	if len(vs) > 0 {
		devolutionInvalid(w, vs...)
		return
	}
	now := p.now()
	p.mu.Lock()
	rec, ok := p.byE2E[e2eid]
	if !ok {
		p.mu.Unlock()
		WriteProblem(w, http.StatusNotFound, "NaoEncontrado", "Não Encontrado", "Pix não encontrado para o e2eid informado.")
		return
	}
	var sum int64
	for _, d := range rec.pix.Devolucoes {
		if d.ID == id {
			p.mu.Unlock()
			devolutionInvalid(w, Violacao{Propriedade: "id", Razao: "A presente requisição de devolução apresenta um {id} já utilizado por outra requisição de devolução para o {e2eid} em questão."})
			return
		}
		if c, ok := parseValor(d.Valor); ok && d.Status != DevolutionNotDone {
			sum += c
		}
	}
	if paid, _ := parseValor(rec.pix.Valor); sum+cents > paid {
		p.mu.Unlock()
		devolutionInvalid(w, Violacao{Propriedade: "devolucao.valor", Razao: "A presente requisição de devolução, em conjunto com as demais prévias devoluções, excederia o valor do pix originário."})
		return
	}
	d := Devolucao{
		ID:       id,
		RtrID:    endToEnd("D", now),
		Valor:    formatValor(cents),
		Natureza: natureza,
		Horario:  DevolucaoHorario{Solicitacao: stamp(now)},
		Status:   p.devStatus,
	}
	if req.Descricao != nil {
		d.Descricao = *req.Descricao
	}
	settle(&d, p.devStatus, p.devMotivo, now)
	rec.pix.Devolucoes = append(rec.pix.Devolucoes, d)
	snapshot := rec.pix.clone()
	p.mu.Unlock()
	WriteJSON(w, http.StatusCreated, d)
	if d.Status != DevolutionInProgress {
		// From a goroutine of its own, so that the answer, which leaves when this handler
		// returns, does not wait for the callback's delivery.
		p.notifyLater(snapshot)
	}
}

// settle gives a devolution its status, and what goes with a final one.
func settle(d *Devolucao, status, motivo string, now time.Time) {
	d.Status = status
	switch status {
	case DevolutionReturned:
		d.Horario.Liquidacao = stamp(now)
		d.Motivo = motivo
	case DevolutionNotDone:
		d.Motivo = motivo
		if d.Motivo == "" {
			d.Motivo = "Devolução não realizada pelo PSP."
		}
	}
}

func devolutionInvalid(w http.ResponseWriter, vs ...Violacao) {
	WriteProblem(w, http.StatusBadRequest, "PixDevolucaoInvalida", "Devolução inválida.",
		"A presente requisição de devolução não respeita o schema ou não faz sentido semanticamente.", vs...)
}

// getDevolution is GET /pix/{e2eid}/devolucao/{id}.
func (p *PSP) getDevolution(w http.ResponseWriter, r *http.Request) {
	d, ok := p.Devolution(r.PathValue("e2eid"), r.PathValue("id"))
	if !ok {
		WriteProblem(w, http.StatusNotFound, "PixDevolucaoNaoEncontrada", "Devolução não encontrada.", "Devolução não encontrada para o e2eid informado.")
		return
	}
	WriteJSON(w, http.StatusOK, d)
}

// Devolution answers the devolution id of the PIX e2eid.
func (p *PSP) Devolution(e2eid, id string) (Devolucao, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rec, ok := p.byE2E[e2eid]; ok {
		for _, d := range rec.pix.Devolucoes {
			if d.ID == id {
				return d, true
			}
		}
	}
	return Devolucao{}, false
}

// SetDevolutionAnswer sets the status new devolutions get: DEVOLVIDO or NAO_REALIZADO (with
// motivo) settles them at once, and their callback follows the answer; EM_PROCESSAMENTO, the
// default, waits for SettleDevolution.
func (p *PSP) SetDevolutionAnswer(status, motivo string) error {
	if status != DevolutionInProgress && status != DevolutionReturned && status != DevolutionNotDone {
		return fmt.Errorf("psptest: %q is not a devolution status", status)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.devStatus, p.devMotivo = status, motivo
	return nil
}

// SettleDevolution ends a devolution EM_PROCESSAMENTO as DEVOLVIDO or NAO_REALIZADO (motivo
// says why) and delivers the callback, the PIX with its devolucoes, before it returns.
func (p *PSP) SettleDevolution(e2eid, id, status, motivo string) error {
	if status != DevolutionReturned && status != DevolutionNotDone {
		return fmt.Errorf("psptest: %q is not a final devolution status", status)
	}
	now := p.now()
	p.mu.Lock()
	rec, ok := p.byE2E[e2eid]
	if !ok {
		p.mu.Unlock()
		return fmt.Errorf("psptest: no pix %q", e2eid)
	}
	i := -1
	for j, d := range rec.pix.Devolucoes {
		if d.ID == id {
			i = j
		}
	}
	if i < 0 || rec.pix.Devolucoes[i].Status != DevolutionInProgress {
		p.mu.Unlock()
		return errors.New("psptest: no devolution " + id + " in progress for " + e2eid)
	}
	settle(&rec.pix.Devolucoes[i], status, motivo, now)
	snapshot := rec.pix.clone()
	p.mu.Unlock()
	p.notify(snapshot)
	return nil
}

// endToEnd is an id as the SPI writes them: kind (E for a payment, D for a return), the
// ISPB of the PSP, the minute and 11 random characters: 32 characters [a-zA-Z0-9].
func endToEnd(kind string, at time.Time) string {
	return kind + "12345678" + at.UTC().Format("200601021504") + rand.Text()[:11]
}

package psptest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// cobRequest is the body of PUT and PATCH /cob/{txid} (CobSolicitada, CobRevisada); pointers
// tell a member left out from one sent empty.
type cobRequest struct {
	Calendario *struct {
		Expiracao *int64 `json:"expiracao"`
	} `json:"calendario"`
	Devedor *Devedor `json:"devedor"`
	Valor   *struct {
		Original            *string `json:"original"`
		ModalidadeAlteracao *int    `json:"modalidadeAlteracao"`
	} `json:"valor"`
	Chave              *string         `json:"chave"`
	SolicitacaoPagador *string         `json:"solicitacaoPagador"`
	InfoAdicionais     []InfoAdicional `json:"infoAdicionais"`
	Loc                *struct {
		ID int64 `json:"id"`
	} `json:"loc"`
	Status *string `json:"status"`
}

// changes tells whether the request changes anything but the status.
func (c cobRequest) changes() bool {
	return c.Calendario != nil || c.Devedor != nil || c.Valor != nil || c.Chave != nil ||
		c.SolicitacaoPagador != nil || c.InfoAdicionais != nil || c.Loc != nil
}

// check lists the rules of the specification the request breaks; creating, the members
// CobSolicitada requires must be there.
func (p *PSP) checkCob(c cobRequest, creating bool) []Violacao {
	var vs []Violacao
	bad := func(prop, reason string) { vs = append(vs, Violacao{Razao: reason, Propriedade: prop}) }
	if creating {
		if c.Calendario == nil {
			bad("cob.calendario", "O objeto cob.calendario não respeita o schema.")
		}
		if c.Valor == nil || c.Valor.Original == nil {
			bad("cob.valor.original", "O campo cob.valor.original não respeita o schema.")
		}
		if c.Chave == nil {
			bad("cob.chave", "O campo cob.chave não respeita o schema.")
		}
	}
	if c.Calendario != nil && c.Calendario.Expiracao != nil && (*c.Calendario.Expiracao <= 0 || *c.Calendario.Expiracao > 1<<31-1) {
		bad("cob.calendario.expiracao", "O campo cob.calendario.expiracao é igual ou menor que zero.")
	}
	if c.Valor != nil && c.Valor.Original != nil {
		if cents, ok := parseValor(*c.Valor.Original); !ok {
			bad("cob.valor.original", "O campo cob.valor.original não respeita o schema.")
		} else if cents == 0 {
			bad("cob.valor.original", "O campo cob.valor.original é zero.")
		}
	}
	if c.Valor != nil && c.Valor.ModalidadeAlteracao != nil && *c.Valor.ModalidadeAlteracao != 0 && *c.Valor.ModalidadeAlteracao != 1 {
		bad("cob.valor.modalidadeAlteracao", "O campo cob.valor.modalidadeAlteracao não respeita o schema.")
	}
	if c.Chave != nil {
		switch {
		case *c.Chave == "" || len(*c.Chave) > 77:
			bad("cob.chave", "O campo cob.chave não respeita o schema.")
		case *c.Chave != p.Chave:
			bad("cob.chave", "O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.")
		}
	}
	if c.Devedor != nil {
		if reason := checkDevedor(*c.Devedor); reason != "" {
			bad("cob.devedor", reason)
		}
	}
	if c.SolicitacaoPagador != nil && utf8.RuneCountInString(*c.SolicitacaoPagador) > maxSolicitacao {
		bad("cob.solicitacaoPagador", "O campo solicitacaoPagador não respeita o schema.")
	}
	if len(c.InfoAdicionais) > maxInfoAdicionais {
		bad("cob.infoAdicionais", "O objeto infoAdicionais não respeita o schema.")
	}
	for _, ia := range c.InfoAdicionais {
		if ia.Nome == "" || utf8.RuneCountInString(ia.Nome) > 50 || utf8.RuneCountInString(ia.Valor) > 200 {
			bad("cob.infoAdicionais", "O objeto infoAdicionais não respeita o schema.")
			break
		}
	}
	if c.Loc != nil {
		bad("cob.loc.id", "O location referenciado por cob.loc.id inexiste.")
	}
	return vs
}

// checkDevedor applies PessoaFisica and PessoaJuridica: a cpf or a cnpj, never both, with a
// name.
func checkDevedor(d Devedor) string {
	switch {
	case d.CPF != "" && d.CNPJ != "":
		return "Os campos cob.devedor.cpf e cob.devedor.cnpj estão preenchidos ao mesmo tempo."
	case d.CPF == "" && d.CNPJ == "":
		return "O objeto cob.devedor não respeita o schema: falta cpf ou cnpj."
	case d.CPF != "" && (len(d.CPF) != 11 || !digits(d.CPF)):
		return "O campo cob.devedor.cpf não respeita o schema."
	case d.CNPJ != "" && (len(d.CNPJ) != 14 || strings.IndexFunc(d.CNPJ, func(r rune) bool { return !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z') }) >= 0):
		return "O campo cob.devedor.cnpj não respeita o schema."
	case d.Nome == "" || utf8.RuneCountInString(d.Nome) > 200:
		return "O campo cob.devedor.nome não respeita o schema."
	}
	return ""
}

// putCob is PUT /cob/{txid}: a new immediate charge. A txid already used is refused (400), as
// the specification's CobOperacaoInvalida says.
func (p *PSP) putCob(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	var req cobRequest
	if !DecodeJSON(w, r, &req, "CobOperacaoInvalida", "Cobrança inválida.") {
		return
	}
	vs := p.checkCob(req, true)
	if !alnum(txid, 26, 35) {
		vs = append(vs, Violacao{Razao: "O campo txid não respeita o schema.", Propriedade: "txid"})
	}
	if len(vs) > 0 {
		cobInvalid(w, vs...)
		return
	}
	now := p.now()
	p.mu.Lock()
	if _, used := p.cobs[txid]; used {
		p.mu.Unlock()
		cobInvalid(w, Violacao{Razao: "O campo cob.txid encontra-se em uso.", Propriedade: "cob.txid"})
		return
	}
	p.lastLoc++
	location := strings.TrimPrefix(p.URL, "https://") + "/qr/v2/" + randomHex(16)
	cob := &Cob{
		Calendario: Calendario{Criacao: stamp(now), Expiracao: defaultExpiracao},
		TxID:       txid,
		Loc:        Loc{ID: p.lastLoc, Location: location, TipoCob: "cob", Criacao: stamp(now)},
		Location:   location,
		Status:     CobActive,
		Chave:      *req.Chave,
	}
	applyCob(cob, req)
	if !p.cfg.OmitPixCopiaECola {
		cob.PixCopiaECola = brCode(location, p.cfg.MerchantName, p.cfg.MerchantCity)
	}
	p.cobs[txid] = cob
	answer := cob.clone()
	p.mu.Unlock()
	WriteJSON(w, http.StatusCreated, answer)
}

// applyCob copies what a request sets onto a cob.
func applyCob(cob *Cob, req cobRequest) {
	if req.Calendario != nil && req.Calendario.Expiracao != nil {
		cob.Calendario.Expiracao = int(*req.Calendario.Expiracao)
	}
	if req.Valor != nil {
		if req.Valor.Original != nil {
			cob.Valor.Original = *req.Valor.Original
		}
		if req.Valor.ModalidadeAlteracao != nil {
			m := *req.Valor.ModalidadeAlteracao
			cob.Valor.ModalidadeAlteracao = &m
		}
	}
	if req.Chave != nil {
		cob.Chave = *req.Chave
	}
	if req.Devedor != nil {
		d := *req.Devedor
		cob.Devedor = &d
	}
	if req.SolicitacaoPagador != nil {
		cob.SolicitacaoPagador = *req.SolicitacaoPagador
	}
	if req.InfoAdicionais != nil {
		cob.InfoAdicionais = append([]InfoAdicional(nil), req.InfoAdicionais...)
	}
}

// getCob is GET /cob/{txid}, with the PIX that paid it.
func (p *PSP) getCob(w http.ResponseWriter, r *http.Request) {
	cob, ok := p.Cob(r.PathValue("txid"))
	if !ok {
		WriteProblem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada.", "Cobrança não encontrada para o txid informado.")
		return
	}
	WriteJSON(w, http.StatusOK, cob)
}

// patchCob is PATCH /cob/{txid}: a revision of an ATIVA cob, or its removal by the receiver.
func (p *PSP) patchCob(w http.ResponseWriter, r *http.Request) {
	var req cobRequest
	if !DecodeJSON(w, r, &req, "CobOperacaoInvalida", "Cobrança inválida.") {
		return
	}
	if vs := p.checkCob(req, false); len(vs) > 0 {
		cobInvalid(w, vs...)
		return
	}
	if req.Status != nil && *req.Status != CobRemovedByUser {
		cobInvalid(w, Violacao{Razao: "O campo cob.status não respeita o schema.", Propriedade: "cob.status"})
		return
	}
	if req.Status != nil && req.changes() {
		cobInvalid(w, Violacao{Razao: "A cobrança está ATIVA, e a presente requisição propõe alterar seu status para REMOVIDA_PELO_USUARIO_RECEBEDOR juntamente com outras alterações.", Propriedade: "cob.status"})
		return
	}
	p.mu.Lock()
	cob, ok := p.cobs[r.PathValue("txid")]
	if !ok {
		p.mu.Unlock()
		WriteProblem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada.", "Cobrança não encontrada para o txid informado.")
		return
	}
	if cob.Status != CobActive {
		p.mu.Unlock()
		cobInvalid(w, Violacao{Razao: "A cobrança não está ATIVA, e a presente requisição busca alterá-la.", Propriedade: "cob.status"})
		return
	}
	if req.Status != nil {
		cob.Status = *req.Status
	}
	applyCob(cob, req)
	if req.Status != nil || req.changes() {
		cob.Revisao++
	}
	answer := cob.clone()
	p.mu.Unlock()
	WriteJSON(w, http.StatusOK, answer)
}

func cobInvalid(w http.ResponseWriter, vs ...Violacao) {
	WriteProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida.",
		"A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o schema ou está semanticamente errada.", vs...)
}

// Cob answers a copy of the cob txid as GET /cob/{txid} would, with the PIX that paid it.
func (p *PSP) Cob(txid string) (Cob, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cob, ok := p.cobs[txid]
	if !ok {
		return Cob{}, false
	}
	c := cob.clone()
	for _, rec := range p.pix {
		if rec.pix.TxID == txid {
			c.Pix = append(c.Pix, rec.pix.clone())
		}
	}
	return c, true
}

// Cobs is how many cobs the fake holds.
func (p *PSP) Cobs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.cobs)
}

// RemoveCob marks the cob REMOVIDA_PELO_PSP, as a PSP may on its own.
func (p *PSP) RemoveCob(txid string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cob, ok := p.cobs[txid]
	if !ok {
		return fmt.Errorf("psptest: no cob %q", txid)
	}
	if cob.Status != CobActive {
		return fmt.Errorf("psptest: cob %q is %s", txid, cob.Status)
	}
	cob.Status = CobRemovedByPSP
	cob.Revisao++
	return nil
}

// brCode writes a dynamic BR Code, as the Manual de Padrões para Iniciação do Pix defines it:
// the GUI and the payload location in merchant account information (26), no amount, point of
// initiation 12, txid "***" (62-05), and the CRC16 (63).
func brCode(location, name, city string) string {
	tlv := func(id, v string) string { return id + fmt.Sprintf("%02d", len(v)) + v }
	s := tlv("00", "01") +
		tlv("01", "12") +
		tlv("26", tlv("00", "br.gov.bcb.pix")+tlv("25", location)) +
		tlv("52", "0000") +
		tlv("53", "986") +
		tlv("58", "BR") +
		tlv("59", name) +
		tlv("60", city) +
		tlv("62", tlv("05", "***")) +
		"6304"
	return s + fmt.Sprintf("%04X", crc16(s))
}

// crc16 is CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), the BR Code's checksum.
func crc16(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// parseValor reads API Pix's \d{1,10}\.\d{2} into centavos.
func parseValor(s string) (int64, bool) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(whole) < 1 || len(whole) > 10 || len(frac) != 2 || !digits(whole) || !digits(frac) {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, true
}

// formatValor writes centavos as API Pix's valor.
func formatValor(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func digits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// alnum tells whether s is lo to hi characters [a-zA-Z0-9].
func alnum(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// stamp writes a time as the fake dates everything: RFC 3339, UTC, milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

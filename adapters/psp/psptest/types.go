package psptest

// The API Pix shapes the fake answers and keeps, as the specification names them. They are
// for tests to read the fake's state; adapters keep their own.

// Cob is an immediate charge (CobCompleta).
type Cob struct {
	Calendario         Calendario      `json:"calendario"`
	TxID               string          `json:"txid"`
	Revisao            int             `json:"revisao"`
	Loc                Loc             `json:"loc"`
	Location           string          `json:"location"`
	Status             string          `json:"status"`
	Devedor            *Devedor        `json:"devedor,omitempty"`
	Valor              Valor           `json:"valor"`
	Chave              string          `json:"chave"`
	SolicitacaoPagador string          `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []InfoAdicional `json:"infoAdicionais,omitempty"`
	PixCopiaECola      string          `json:"pixCopiaECola,omitempty"`
	Pix                []Pix           `json:"pix,omitempty"`
}

// The statuses of a Cob.
const (
	CobActive        = "ATIVA"
	CobDone          = "CONCLUIDA"
	CobRemovedByUser = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	CobRemovedByPSP  = "REMOVIDA_PELO_PSP"
)

// The specification's default and limits of a cob.
const (
	defaultExpiracao  = 86400
	maxSolicitacao    = 140
	maxInfoAdicionais = 50
)

// Calendario is a cob's creation time (RFC 3339, set by the PSP) and lifetime in seconds.
type Calendario struct {
	Criacao   string `json:"criacao"`
	Expiracao int    `json:"expiracao"`
}

// Loc is a cob's payload location.
type Loc struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao"`
}

// Valor is a cob's amount, reais with two decimals.
type Valor struct {
	Original            string `json:"original"`
	ModalidadeAlteracao *int   `json:"modalidadeAlteracao,omitempty"`
}

// Devedor is a cob's debtor: a cpf or a cnpj, with a name.
type Devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome,omitempty"`
}

// InfoAdicional is one of a cob's infoAdicionais.
type InfoAdicional struct {
	Nome  string `json:"nome"`
	Valor string `json:"valor"`
}

// Pix is a PIX received.
type Pix struct {
	EndToEndID       string            `json:"endToEndId"`
	TxID             string            `json:"txid,omitempty"`
	Valor            string            `json:"valor"`
	ComponentesValor *ComponentesValor `json:"componentesValor,omitempty"`
	Chave            string            `json:"chave,omitempty"`
	Horario          string            `json:"horario"`
	InfoPagador      string            `json:"infoPagador,omitempty"`
	Devolucoes       []Devolucao       `json:"devolucoes,omitempty"`
}

// ComponentesValor explains a Pix's valor; for an immediate charge, only original.
type ComponentesValor struct {
	Original *ValorComponente `json:"original,omitempty"`
}

// ValorComponente is one part of a Pix's valor.
type ValorComponente struct {
	Valor string `json:"valor"`
}

// Devolucao is a devolution of a Pix.
type Devolucao struct {
	ID        string           `json:"id"`
	RtrID     string           `json:"rtrId"`
	Valor     string           `json:"valor"`
	Natureza  string           `json:"natureza,omitempty"`
	Descricao string           `json:"descricao,omitempty"`
	Horario   DevolucaoHorario `json:"horario"`
	Status    string           `json:"status"`
	Motivo    string           `json:"motivo,omitempty"`
}

// The statuses of a Devolucao.
const (
	DevolutionInProgress = "EM_PROCESSAMENTO"
	DevolutionReturned   = "DEVOLVIDO"
	DevolutionNotDone    = "NAO_REALIZADO"
)

// DevolucaoHorario is when a devolution was asked for and settled.
type DevolucaoHorario struct {
	Solicitacao string `json:"solicitacao,omitempty"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}

// Webhook is the webhook of a PIX key.
type Webhook struct {
	WebhookURL string `json:"webhookUrl"`
	Chave      string `json:"chave"`
	Criacao    string `json:"criacao"`
}

// Problem is an RFC 7807 answer (the specification's Problema).
type Problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
}

// Violacao is one rule a request broke.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
	Valor       string `json:"valor,omitempty"`
}

// clone copies c deeply: the fake hands out copies only.
func (c Cob) clone() Cob {
	if c.Devedor != nil {
		d := *c.Devedor
		c.Devedor = &d
	}
	if c.Valor.ModalidadeAlteracao != nil {
		m := *c.Valor.ModalidadeAlteracao
		c.Valor.ModalidadeAlteracao = &m
	}
	c.InfoAdicionais = append([]InfoAdicional(nil), c.InfoAdicionais...)
	pix := c.Pix
	c.Pix = nil
	for _, p := range pix {
		c.Pix = append(c.Pix, p.clone())
	}
	return c
}

func (p Pix) clone() Pix {
	if p.ComponentesValor != nil {
		cv := *p.ComponentesValor
		if cv.Original != nil {
			o := *cv.Original
			cv.Original = &o
		}
		p.ComponentesValor = &cv
	}
	p.Devolucoes = append([]Devolucao(nil), p.Devolucoes...)
	return p
}

package psptest

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Fault is how the fake misbehaves for a request: it waits Delay, then answers Status with Body
// labelled ContentType (a problem fitting the status when Body is nil; no Content-Type at all
// when ContentType is empty), or hangs up. A Fault without Status or
// HangUp only delays the real answer.
type Fault struct {
	// Op is the operation it hits; "" means any API operation (not the token endpoint, which
	// is hit only by naming OpToken).
	Op          string
	Status      int
	RetryAfter  string // the Retry-After header, when not empty
	ContentType string
	Body        []byte
	Delay       time.Duration
	// HangUp drops the connection without an answer.
	HangUp bool
	// Applied carries the request out first (the cob is created, the devolution recorded)
	// and then misbehaves: the PSP acted but its answer is lost, late or wrong.
	Applied bool
}

// On aims f at the operation op.
func (f Fault) On(op string) Fault { f.Op = op; return f }

// AfterApplying makes f strike once the request was carried out.
func (f Fault) AfterApplying() Fault { f.Applied = true; return f }

func (f Fault) answers() bool { return f.Status != 0 || f.HangUp }

// Unavailable answers 503 ServicoIndisponivel with Retry-After retryAfter ("" for none).
func Unavailable(retryAfter string) Fault {
	return Fault{Status: http.StatusServiceUnavailable, RetryAfter: retryAfter}
}

// Answer answers status with the problem API Pix would send for it.
func Answer(status int) Fault { return Fault{Status: status} }

// Unauthorized answers 401, as for a token the PSP no longer accepts.
func Unauthorized() Fault { return Fault{Status: http.StatusUnauthorized} }

// Slow delays the real answer by d (a long d: a PSP that never answers).
func Slow(d time.Duration) Fault { return Fault{Delay: d} }

// HangUp drops the connection without an answer.
func HangUp() Fault { return Fault{HangUp: true} }

// Garbage answers 200 labelled JSON with a body that is not JSON.
func Garbage() Fault {
	return Fault{Status: http.StatusOK, ContentType: "application/json", Body: []byte("<html><body>502 Bad Gateway</body></html>\x00\xff")}
}

// Oversized answers 200 with valid JSON of n bytes.
func Oversized(n int) Fault {
	pad := max(n-len(`{"pad":""}`), 0)
	body := append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), pad)...), `"}`...)
	return Fault{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// WrongContentType answers 200 with an HTML page, as a proxy's maintenance page would be.
func WrongContentType() Fault {
	return Fault{Status: http.StatusOK, ContentType: "text/html; charset=utf-8", Body: []byte("<html><body>Em manutenção</body></html>")}
}

// queued is a fault and how many more requests it hits (-1: until cleared).
type queued struct {
	f    Fault
	left int
}

// Inject makes the next times requests of f.Op misbehave as f; times < 0 means every request
// until ClearFaults. Faults injected earlier strike first.
func (p *PSP) Inject(f Fault, times int) {
	if times == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &queued{f: f, left: max(times, -1)})
}

// ClearFaults drops every fault not played yet.
func (p *PSP) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// takeFault finds the fault for a request of op, and counts it played.
func (p *PSP) takeFault(op string) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.faults {
		if q.f.Op != op && (q.f.Op != "" || op == OpToken) {
			continue
		}
		if q.left > 0 {
			q.left--
			if q.left == 0 {
				p.faults = slices.Delete(p.faults, i, i+1)
			}
		}
		return q.f, true
	}
	return Fault{}, false
}

// play answers the fault f.
func (p *PSP) play(w http.ResponseWriter, f Fault) {
	if f.HangUp {
		panic(http.ErrAbortHandler) // net/http closes the connection and logs nothing
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Body == nil {
		p.problemFor(w, f.Status)
		return
	}
	if f.ContentType != "" {
		w.Header().Set("Content-Type", f.ContentType)
	} else {
		w.Header()["Content-Type"] = nil // no label at all: net/http would sniff one
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write(f.Body)
}

// problemFor answers the problem API Pix sends with status.
func (p *PSP) problemFor(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusUnauthorized:
		unauthorized(w)
	case status == http.StatusForbidden:
		WriteProblem(w, status, "AcessoNegado", "Acesso Negado", "Requisição de participante autenticado que viola alguma regra de autorização.")
	case status == http.StatusNotFound:
		WriteProblem(w, status, "NaoEncontrado", "Não Encontrado", "Entidade não encontrada.")
	case status == http.StatusServiceUnavailable:
		WriteProblem(w, status, "ServicoIndisponivel", "Serviço Indisponível", "Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.")
	case status == http.StatusGatewayTimeout:
		WriteProblem(w, status, "IndisponibilidadePorTempoEsgotado", "Tempo Esgotado", "O serviço demorou além do esperado para retornar.")
	case status >= 500:
		WriteProblem(w, status, "ErroInternoDoServidor", "Erro Interno do Servidor", "Condição inesperada ao processar requisição.")
	case status >= 400:
		WriteProblem(w, status, "RequisicaoInvalida", "Requisição Inválida", "Requisição inválida ("+strconv.Itoa(status)+").")
	default:
		w.WriteHeader(status)
	}
}

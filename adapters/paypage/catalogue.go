package paypage

import (
	"strconv"
	"strings"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// labels are the page's words in one language.
type labels struct {
	Title, PayTo, Amount, HowTo, QRAlt, CodeLabel, Copy, Copied, CopyFailed, ExpiresIn, Footer string
	Awaiting, Paid, Expired, Failed, Pending, Refunding, Refunded, Review, Returning, Returned string
	NotFoundTitle, NotFoundText, TooManyTitle, TooManyText, ErrorTitle, ErrorText              string
}

var languages = map[string]labels{
	"pt-BR": {
		Title: "Pagamento PIX", PayTo: "Pagar a", Amount: "Valor", HowTo: "Pague com o app do seu banco",
		QRAlt: "QR code PIX desta cobrança", CodeLabel: "Código PIX copia e cola", Copy: "Copiar código",
		Copied: "Código copiado. Cole-o no app do seu banco.", CopyFailed: "Não foi possível copiar: o código está selecionado, copie-o manualmente.",
		ExpiresIn: "Expira em", Footer: "Esta página se atualiza sozinha quando o pagamento é confirmado.",
		Awaiting: "Aguardando pagamento", Paid: "Pago", Expired: "Expirado", Failed: "Cobrança indisponível",
		Pending: "Gerando a cobrança", Refunding: "Reembolso em andamento", Refunded: "Reembolsado",
		Review: "Pagamento em análise", Returning: "Devolução em andamento", Returned: "Devolvido",
		NotFoundTitle: "Cobrança não encontrada", NotFoundText: "Confira o link que você recebeu.",
		TooManyTitle: "Muitas tentativas", TooManyText: "Aguarde alguns segundos e recarregue a página.",
		ErrorTitle: "Serviço indisponível", ErrorText: "Tente novamente em alguns instantes.",
	},
	"en": {
		Title: "PIX payment", PayTo: "Pay to", Amount: "Amount", HowTo: "Pay with your bank's app",
		QRAlt: "PIX QR code of this charge", CodeLabel: "PIX copy and paste code", Copy: "Copy code",
		Copied: "Code copied. Paste it in your bank's app.", CopyFailed: "Could not copy: the code is selected, copy it by hand.",
		ExpiresIn: "Expires in", Footer: "This page updates itself when the payment is confirmed.",
		Awaiting: "Awaiting payment", Paid: "Paid", Expired: "Expired", Failed: "Charge unavailable",
		Pending: "Preparing the charge", Refunding: "Refund in progress", Refunded: "Refunded",
		Review: "Payment under review", Returning: "Return in progress", Returned: "Returned",
		NotFoundTitle: "Charge not found", NotFoundText: "Check the link you received.",
		TooManyTitle: "Too many requests", TooManyText: "Wait a few seconds and reload the page.",
		ErrorTitle: "Service unavailable", ErrorText: "Try again in a moment.",
	},
}

// pageLanguage picks pt-BR or en from Accept-Language: the supported language with the highest
// weight, pt-BR when neither is asked for.
func pageLanguage(accept string) string {
	lang, best := "pt-BR", 0.0
	for _, part := range strings.Split(accept, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		var candidate string
		switch primary {
		case "pt":
			candidate = "pt-BR"
		case "en":
			candidate = "en"
		default:
			continue
		}
		if q > best {
			lang, best = candidate, q
		}
	}
	return lang
}

// pageState names what the page shows for a charge's state (the same names as page.js).
func pageState(st application.PaymentState) string {
	switch st.Status {
	case domain.TxPixQRCodeGenerated:
		if st.Expired {
			return "expired"
		}
		return "awaiting"
	case domain.TxPaid:
		return "paid"
	case domain.TxFailed:
		if st.Expired {
			return "expired"
		}
		return "failed"
	case domain.TxProcessingRefund:
		return "refunding"
	case domain.TxRefunded:
		return "refunded"
	case domain.TxBlocked:
		return "review"
	case domain.TxProcessingInfraction:
		return "returning"
	case domain.TxInfraction:
		return "returned"
	}
	return "pending"
}

func (l labels) state(name string) string {
	return map[string]string{
		"awaiting": l.Awaiting, "paid": l.Paid, "expired": l.Expired, "failed": l.Failed, "pending": l.Pending,
		"refunding": l.Refunding, "refunded": l.Refunded, "review": l.Review, "returning": l.Returning, "returned": l.Returned,
	}[name]
}

// withNotFound puts another title and text in the place of the not-found page's.
func withNotFound(t labels, title, text string) labels {
	t.NotFoundTitle, t.NotFoundText = title, text
	return t
}

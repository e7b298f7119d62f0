package paypage

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
	"time"
)

//go:embed assets/page.html assets/page.css assets/page.js
var assets embed.FS

// page is the parsed template and the Content-Security-Policy that allows exactly its inline
// style and script.
type page struct {
	tmpl   *template.Template
	style  template.CSS
	script template.JS
	csp    string
}

func loadPage() *page {
	read := func(name string) string {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			panic("paypage: the embedded payment page lacks " + name)
		}
		return string(b)
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	style, script := read("page.css"), read("page.js")
	return &page{
		tmpl:   template.Must(template.New("page").Parse(read("page.html"))),
		style:  template.CSS(style),
		script: template.JS(script),
		csp: "default-src 'none'; script-src " + hash(script) + "; style-src " + hash(style) +
			"; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
}

// view is the template's data.
type view struct {
	Lang      string
	T         labels
	Style     template.CSS
	Script    template.JS
	Found     bool
	Merchant  string
	Amount    string
	Status    string
	StateKey  string
	StateText string
	Awaiting  bool
	HasPix    bool
	QR        template.URL // our own PNG as a data: URI
	Code      string
	ExpiresAt string
	// ExpiresInMs counts down from the server's clock, so that a payer's wrong clock does
	// not move the expiry.
	ExpiresInMs int64
	Countdown   string
	StatusURL   string
	EventsURL   string
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, v view) {
	v.Style, v.Script = h.page.style, h.page.script
	var body bytes.Buffer
	if err := h.page.tmpl.Execute(&body, v); err != nil {
		h.logError(r, err, http.StatusInternalServerError)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
}

// dataURI is a PNG as a data: URI, as the merchant API's qrCodeBase64 writes it.
func dataURI(png []byte) template.URL {
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
}

// isoString writes an instant as the merchant API writes its dates: UTC, milliseconds.
func isoString(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

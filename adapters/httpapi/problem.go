package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// FieldError is one broken rule of a request: the field's path as sent ("items[0].unitPrice",
// a query parameter's name, "id" for a path parameter), a short snake_case code and a message.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// problem is an RFC 9457 problem details body with pixgate's extensions.
type problem struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Code      string       `json:"code"`
	Detail    string       `json:"detail,omitempty"`
	Instance  string       `json:"instance"`
	RequestID string       `json:"requestId"`
	Errors    []FieldError `json:"errors,omitempty"`
}

const problemContentType = "application/problem+json"

// rfc9110Titles are the reason phrases RFC 9110 renamed; net/http still has the old ones.
var rfc9110Titles = map[int]string{
	http.StatusUnprocessableEntity:   "Unprocessable Content",
	http.StatusRequestEntityTooLarge: "Content Too Large",
}

func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string, fields []FieldError) {
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	p := problem{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code,
		Detail: detail, Instance: r.URL.Path, RequestID: requestIDFrom(r.Context()), Errors: fields,
	}
	if t, ok := rfc9110Titles[status]; ok {
		p.Title = t
	}
	w.Header().Set("Content-Type", problemContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// validationFailed answers 422 validation_failed listing every broken rule.
func validationFailed(w http.ResponseWriter, r *http.Request, fields []FieldError) {
	detail := "1 field is invalid"
	switch {
	case len(fields) >= maxFieldErrors:
		// The decoder stopped counting at the bound: say so rather than give a wrong total.
		sort.SliceStable(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
		fields = fields[:maxFieldErrors]
		detail = fmt.Sprintf("at least %d fields are invalid; the first %d are listed", maxFieldErrors, maxFieldErrors)
	case len(fields) != 1:
		detail = fmt.Sprintf("%d fields are invalid", len(fields))
	}
	writeProblem(w, r, http.StatusUnprocessableEntity, "validation_failed", detail, fields)
}

// writeJSON encodes v straight into the answer (the same bytes as json.Marshal and a newline,
// without an intermediate copy: lookups are the hottest path). Our own response types always
// encode, so an error here can only be the client going away.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

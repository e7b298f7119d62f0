package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// Bounds of what one request can make the decoder do and the answer say. The API reports
// every broken rule at once; past these bounds a request is an attack or a bug, and an
// answer many times its size would serve the attacker, so the list stops.
const (
	maxFieldErrors = 100  // field errors reported in one answer
	maxArrayLen    = 1000 // elements of any array decoded; longer arrays are too_long at once
)

// errMalformedJSON: the body is not JSON, its top level is not an object, or it breaks the
// strict rules of checkStrictJSON (the error then wraps the rule it broke too).
var errMalformedJSON = errors.New("malformed JSON")

// nulMessage is the invalid_format message of a string holding U+0000, which no field of the
// API accepts: stores, logs and the systems merchants feed truncate or choke on it.
const nulMessage = "must not contain the character U+0000"

// rawObject holds a JSON object kept as JSON (metadata): compact, keys sorted.
type rawObject []byte

// decodeJSON reads a JSON object from the request body into dst, a pointer to a struct whose
// fields are pointers (nil means absent or null), slices of structs or rawObject, named by
// their json tags. It reports every field of the wrong JSON type (invalid_type) and every
// unknown field (unknown_field) together, rather than stopping at the first, and returns the
// body's generic form (for fingerprints). A string holding U+0000 is invalid_format on its
// field. Body-level failures come back as errors: errMalformedJSON (a repeated member name,
// invalid UTF-8 and an escaped lone surrogate included, refused before decoding), or
// *http.MaxBytesError for a body over the limit.
func decodeJSON(r *http.Request, dst any) (map[string]any, []FieldError, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, nil, err
		}
		return nil, nil, errMalformedJSON
	}
	return decodeJSONBytes(body, dst)
}

func decodeJSONBytes(body []byte, dst any) (map[string]any, []FieldError, error) {
	if err := checkStrictJSON(body); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errMalformedJSON, err)
	}
	return decodeCheckedJSON(body, dst)
}

// decodeCheckedJSON decodes a body checkStrictJSON accepted (the benchmark also times it alone:
// it is the decoder as it was before the strict check).
func decodeCheckedJSON(body []byte, dst any) (map[string]any, []FieldError, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, errMalformedJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errMalformedJSON // trailing data after the object
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errMalformedJSON
	}
	var fields []FieldError
	fillStruct("", obj, reflect.ValueOf(dst).Elem(), &fields)
	return obj, fields, nil
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func invalidType(path, want string) FieldError {
	return FieldError{Field: path, Code: "invalid_type", Message: "must be " + want}
}

var rawObjectType = reflect.TypeOf(rawObject(nil))

func fillStruct(prefix string, src map[string]any, dst reflect.Value, errs *[]FieldError) {
	t := dst.Type()
	known := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			known[name] = i
		}
	}
	for key, val := range src {
		if len(*errs) >= maxFieldErrors {
			return
		}
		i, ok := known[key]
		if !ok {
			*errs = append(*errs, FieldError{Field: joinPath(prefix, key), Code: "unknown_field", Message: "is not a field of this request"})
			continue
		}
		if val == nil {
			continue // null is absent
		}
		fillValue(joinPath(prefix, key), val, dst.Field(i), errs)
	}
}

func fillValue(path string, val any, dst reflect.Value, errs *[]FieldError) {
	if dst.Type() == rawObjectType {
		obj, ok := val.(map[string]any)
		if !ok {
			*errs = append(*errs, invalidType(path, "an object"))
			return
		}
		if holdsNUL(obj) {
			*errs = append(*errs, FieldError{Field: path, Code: "invalid_format", Message: nulMessage})
			return
		}
		b, err := json.Marshal(obj)
		if err != nil {
			*errs = append(*errs, invalidType(path, "an object"))
			return
		}
		dst.SetBytes(b)
		return
	}
	switch dst.Kind() {
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		if fillScalar(path, val, elem.Elem(), errs) {
			dst.Set(elem)
		}
	case reflect.Slice:
		arr, ok := val.([]any)
		if !ok {
			*errs = append(*errs, invalidType(path, "an array"))
			return
		}
		if len(arr) > maxArrayLen {
			*errs = append(*errs, FieldError{Field: path, Code: "too_long", Message: fmt.Sprintf("must have at most %d elements", maxArrayLen)})
			return
		}
		out := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, el := range arr {
			if len(*errs) >= maxFieldErrors {
				break
			}
			p := fmt.Sprintf("%s[%d]", path, i)
			if el == nil {
				*errs = append(*errs, invalidType(p, "an object"))
				continue
			}
			fillScalar(p, el, out.Index(i), errs)
		}
		dst.Set(out)
	default:
		fillScalar(path, val, dst, errs)
	}
}

// fillScalar sets dst (a string, int64, bool, string slice element or struct) from val and
// tells whether it matched the JSON type.
func fillScalar(path string, val any, dst reflect.Value, errs *[]FieldError) bool {
	switch dst.Kind() {
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			*errs = append(*errs, invalidType(path, "a string"))
			return false
		}
		if strings.IndexByte(s, 0) >= 0 {
			*errs = append(*errs, FieldError{Field: path, Code: "invalid_format", Message: nulMessage})
			return false
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			*errs = append(*errs, invalidType(path, "a boolean"))
			return false
		}
		dst.SetBool(b)
	case reflect.Int64, reflect.Int:
		n, ok := val.(json.Number)
		if !ok || !isIntegerLiteral(string(n)) {
			*errs = append(*errs, invalidType(path, "an integer"))
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			*errs = append(*errs, FieldError{Field: path, Code: "out_of_range", Message: "is far too large"})
			return false
		}
		dst.SetInt(i)
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			*errs = append(*errs, invalidType(path, "an object"))
			return false
		}
		// Set even when inner fields were wrong, so that the rest of the object is validated.
		fillStruct(path, obj, dst, errs)
	default:
		panic("httpapi: unsupported request field kind " + dst.Kind().String())
	}
	return true
}

// holdsNUL tells whether a name or a string anywhere in v holds U+0000.
func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case map[string]any:
		for k, el := range v {
			if strings.IndexByte(k, 0) >= 0 || holdsNUL(el) {
				return true
			}
		}
	case []any:
		for _, el := range v {
			if holdsNUL(el) {
				return true
			}
		}
	}
	return false
}

// isIntegerLiteral accepts JSON integers only: no fraction, no exponent ("100.0" and "1e3"
// are refused, as docs/API.md, Creating a transaction says).
func isIntegerLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

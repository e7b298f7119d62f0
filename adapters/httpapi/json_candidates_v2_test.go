//go:build goexperiment.jsonv2

package httpapi

import (
	"bytes"
	jsonv2 "encoding/json/v2"
)

func stdlibJSONv2Candidates() []jsonCandidate {
	return []jsonCandidate{{"encoding-json-v2", func(b []byte, v *transactionView) ([]byte, error) {
		w := bytes.NewBuffer(b)
		err := jsonv2.MarshalWrite(w, v)
		return w.Bytes(), err
	}}}
}

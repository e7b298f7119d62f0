//go:build goexperiment.jsonv2

package main

import (
	"bytes"
	jsonv2 "encoding/json/v2"

	"github.com/pixgate/pixgate/adapters/httpapi"
)

func stdlibJSONv2Candidates() []jsonCandidate {
	return []jsonCandidate{{"encoding-json-v2", func(b []byte, a *httpapi.TransactionAnswer) ([]byte, error) {
		w := bytes.NewBuffer(b)
		err := jsonv2.MarshalWrite(w, a.View())
		return w.Bytes(), err
	}}}
}

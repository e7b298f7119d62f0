//go:build !goexperiment.jsonv2

package main

// Without GOEXPERIMENT=jsonv2, Go 1.26 has no encoding/json/v2 to compare.
func stdlibJSONv2Candidates() []jsonCandidate { return nil }

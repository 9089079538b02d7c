//go:build goexperiment.jsonv2

package main

import jsonv2 "encoding/json/v2"

// With GOEXPERIMENT=jsonv2 (still an experiment in Go 1.26), the standard library's v2 joins the
// candidates, and encoding/json itself runs on the v2 engine.
func init() {
	libraries = append(libraries, library{"encoding/json/v2 (GOEXPERIMENT)", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }})
}

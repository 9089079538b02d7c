package events

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecode decodes the captured events (golden scenarios and TPC-DS corpus) with Decode,
// and with encoding/json into any as the baseline; `go run ./bench -parts decodelibs` compares
// more candidates in interleaved rounds.
func BenchmarkDecode(b *testing.B) {
	evs := capturedEvents(b)
	var size int64
	for _, data := range evs {
		size += int64(len(data))
	}
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for name, data := range evs {
				if _, err := Decode(data); err != nil {
					b.Fatalf("%s: %v", name, err)
				}
			}
		}
	})
	b.Run("encoding-json-any", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range evs {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

package main

import (
	stdjson "encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	segment "github.com/segmentio/encoding/json"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

// A library is one JSON decoding candidate: unmarshal bytes into a Go value the library's way.
type library struct {
	name      string
	unmarshal func([]byte, any) error
}

// libraries are the candidates of part decodelibs, the encoding/json baseline first. A build with
// GOEXPERIMENT=jsonv2 adds the standard library's encoding/json/v2 (decodelibs_jsonv2.go), and
// runs encoding/json itself on the v2 engine.
var libraries = []library{
	{"encoding/json", stdjson.Unmarshal},
	{"go-json-experiment/json", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }},
	{"goccy/go-json", goccy.Unmarshal},
	{"bytedance/sonic", sonic.Unmarshal},
	{"bytedance/sonic std", sonic.ConfigStd.Unmarshal},
	{"segmentio/encoding", segment.Unmarshal},
}

// decodeWith decodes an event into events.Envelope with lib and validates it the way events.Decode
// does (not the version checks: a few string comparisons).
func decodeWith(lib library) func([]byte) (*events.Envelope, error) {
	return func(b []byte) (*events.Envelope, error) {
		var env events.Envelope
		if err := lib.unmarshal(b, &env); err != nil {
			return nil, err
		}
		return &env, env.Validate()
	}
}

// benchDecodeLibs compares the JSON libraries on the corpus: Unmarshal into any, decode into
// events.Envelope, and decode + plan.Extract; plus events.Decode as it is in this tree. Every
// figure is the median of interleaved rounds, and every ratio is CPU time against encoding/json
// Unmarshal into any measured in the same rounds. It then feeds each library the same malformed
// and non-strict events and prints what it says.
func benchDecodeLibs(r *report, evs []event, rounds int, roundTime time.Duration) error {
	type kind struct {
		name string
		f    func([]byte) error
	}
	kinds := []kind{{"encoding/json Unmarshal(any)", unmarshalAny}}
	for _, lib := range libraries[1:] {
		kinds = append(kinds, kind{lib.name + " Unmarshal(any)", func(b []byte) error { var v any; return lib.unmarshal(b, &v) }})
	}
	for _, lib := range libraries {
		dec := decodeWith(lib)
		kinds = append(kinds,
			kind{lib.name + " decode", func(b []byte) error { _, err := dec(b); return err }},
			kind{lib.name + " decode+extract", func(b []byte) error {
				env, err := dec(b)
				if err != nil {
					return err
				}
				_, err = plan.Extract(env)
				return err
			}})
	}
	kinds = append(kinds,
		kind{"events.Decode (this tree)", decodeOnly},
		kind{"events.Decode+Extract (this tree)", decodeExtract})

	for _, k := range kinds { // warm up, and check that every candidate decodes the whole corpus
		if _, err := measure(evs, 0, k.f); err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
	}
	results := make([][]rate, len(kinds))
	for i := 0; i < rounds; i++ {
		for k, kind := range kinds {
			x, err := measure(evs, roundTime, kind.f)
			if err != nil {
				return fmt.Errorf("%s: %w", kind.name, err)
			}
			results[k] = append(results[k], x)
		}
		r.notef("decodelibs: round %d of %d done (load average %s)", i+1, rounds, loadAvg())
	}
	// Per round, the ratio of each kind's CPU time per byte to the baseline's in the same round;
	// the median of those ratios is the figure (robust to a round slowed by the neighbours).
	perByte := func(x rate) float64 { return x.seconds / float64(x.bytes) }
	fmt.Println()
	fmt.Printf("decodelibs: %d rounds of ≥%s per candidate, interleaved; load average %s\n\n", rounds, roundTime, loadAvg())
	fmt.Println("| candidate | CPU time / encoding/json Unmarshal(any) (median, min..max of rounds) | MB per CPU-s | allocs/event | KB allocated/event |")
	fmt.Println("|---|---|---|---|---|")
	for k := range kinds {
		var ratios []float64
		for i := range rounds {
			ratios = append(ratios, perByte(results[k][i])/perByte(results[0][i]))
		}
		slices.Sort(ratios)
		rs := slices.Clone(results[k])
		slices.SortFunc(rs, func(a, b rate) int {
			switch {
			case a.mbps() < b.mbps():
				return -1
			case a.mbps() > b.mbps():
				return 1
			}
			return 0
		})
		m := rs[len(rs)/2]
		fmt.Printf("| %s | %.2f (%.2f..%.2f) | %.1f | %.0f | %.0f |\n", kinds[k].name, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1],
			m.mbps(), m.allocsPerEvent(), m.bytesPerEvent()/1024)
		if kinds[k].name == "events.Decode+Extract (this tree)" {
			ratio := ratios[len(ratios)/2]
			r.add(row{part: "a", metric: "decode+extract CPU time (events.Decode+plan.Extract) / encoding/json Unmarshal(any)",
				value: fmt.Sprintf("%.1f MB/CPU-s", m.mbps()), baseline: fmt.Sprintf("%.1f MB/CPU-s", rs[0].mbps()*0+medianRate(results[0]).mbps()),
				target: "≤ 0.7", result: fmt.Sprintf("ratio %.2f", ratio), met: ratio <= 0.7})
		}
	}
	fmt.Println()
	printStrictness(evs)
	return nil
}

func medianRate(rs []rate) rate {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b rate) int {
		switch {
		case a.mbps() < b.mbps():
			return -1
		case a.mbps() > b.mbps():
			return 1
		}
		return 0
	})
	return rs[len(rs)/2]
}

// printStrictness prints how each candidate handles the malformed and non-strict variants of a
// real event: what it says (does it say where?) or that it accepted the input.
func printStrictness(evs []event) {
	var base []byte
	for _, e := range evs { // a small real event with at least 18 nodes
		if len(e.data) < 40_000 && strings.Count(string(e.data), `"class":"org.`) >= 18 && (base == nil || len(e.data) < len(base)) {
			base = e.data
		}
	}
	if base == nil {
		base = evs[0].data
	}
	s := string(base)
	// nodes[17].output[0].exprId as a string: the first "exprId": after node 17 starts.
	typeErr := s
	if i := strings.Index(s, `{"id":17,`); i > 0 {
		if j := strings.Index(s[i:], `"exprId":`); j > 0 {
			k := i + j + len(`"exprId":`)
			end := k + strings.IndexAny(s[k:], ",}")
			typeErr = s[:k] + `"x` + s[k:end] + `"` + s[end:]
		}
	}
	cases := []struct{ name, in string }{
		{"truncated at 2/3", s[:len(s)*2/3]},
		{"exprId as a string in nodes[17]", typeErr},
		{`"EventId" for "eventId"`, strings.Replace(s, `"eventId":`, `"EventId":`, 1)},
		{`duplicate "eventId"`, strings.Replace(s, `"eventId":`, `"eventId":"dup","eventId":`, 1)},
		{`duplicate "class" in nodes[3]`, strings.Replace(s, `{"id":3,"class":`, `{"id":3,"class":"x","class":`, 1)},
		{`invalid UTF-8 in "eventId"`, strings.Replace(s, `"eventId":"`, "\"eventId\":\"\xff", 1)},
		{"a second value after the event", s + ` {}`},
	}
	cands := append(slices.Clone(libraries), library{"events.Decode (this tree)", func(b []byte, _ any) error { _, err := events.Decode(b); return err }})
	fmt.Printf("Errors and strictness (a %d-byte TPC-DS event, changed):\n\n", len(base))
	fmt.Print("| candidate |")
	for _, c := range cases {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Print("\n|---|")
	for range cases {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, lib := range cands {
		fmt.Printf("| %s |", lib.name)
		for _, c := range cases {
			var env events.Envelope
			err := lib.unmarshal([]byte(c.in), &env)
			msg := "accepted"
			if err != nil {
				msg = err.Error()
				if len(msg) > 160 {
					msg = msg[:160] + "…"
				}
				msg = "`" + strings.ReplaceAll(msg, "|", `\|`) + "`"
			}
			fmt.Printf(" %s |", msg)
		}
		fmt.Println()
	}
	fmt.Println()
}

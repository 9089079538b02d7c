package events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// FuzzDecode: Decode never panics, fails only with ErrInvalid or ErrUnsupportedVersion, what it
// accepts satisfies Validate (every node reference points forward, so plans are acyclic), and what
// it accepts encoding/json decodes to exactly the same Envelope (the strict decoder only ever
// rejects more).
//
// Seeds are small on purpose: the inputs of TestDecodeErrors and TestDecodeLenient and the
// smallest captured events (under 2.5 KB). Seeded with every captured event (up to 80 KB), the
// fuzzer spent its time mutating and minimizing large inputs: 412 executions in 2 minutes.
//
//	go test ./events -run '^$' -fuzz FuzzDecode -fuzztime 10m -parallel 1
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../plan/testdata/spark-*/*/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) < 2500 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("Decode error %v is neither ErrInvalid nor ErrUnsupportedVersion", err)
			}
			return
		}
		if err := env.Validate(); err != nil {
			t.Fatalf("Decode accepted an event that Validate rejects: %v", err)
		}
		var want Envelope
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("Decode accepted what encoding/json rejects: %v", err)
		}
		if !reflect.DeepEqual(env, &want) {
			t.Fatalf("Decode and encoding/json differ:\n%+v\n%+v", env, &want)
		}
	})
}

// fuzzSeeds are the hand-written inputs of the decode tests.
func fuzzSeeds() []string {
	seeds := []string{minimal}
	for _, tc := range decodeErrorCases {
		seeds = append(seeds, tc.in)
	}
	for _, in := range lenientCases {
		seeds = append(seeds, in)
	}
	slices.Sort(seeds)
	return slices.Compact(seeds)
}

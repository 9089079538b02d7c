package events

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: Decode never panics, fails only with ErrInvalid or ErrUnsupportedVersion, and what
// it accepts satisfies Validate (every node reference points forward, so plans are acyclic).
// Seeds: every captured event and the malformed inputs of TestDecodeErrors.
//
//	go test ./events -run '^$' -fuzz FuzzDecode -fuzztime 2m
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("../plan/testdata/spark-*/*/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{minimal, ``, `[1,2]`, `{"schemaVersion":"2.0"}`, `{"schemaVersion":"1.0","eventId":"e"}`} {
		f.Add([]byte(s))
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
	})
}

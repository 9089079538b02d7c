package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/colline/colline/events"
)

// FuzzExtract feeds mutated events to decode + extract: neither may panic, and extracting the
// same event twice must give the same lineage (the graph relies on it: a redelivered event must
// change nothing). Seeds: every captured event, whole and degraded (testdata/degraded).
//
//	go test ./plan -run '^$' -fuzz FuzzExtract -fuzztime 10m
func FuzzExtract(f *testing.F) {
	degraded, _ := filepath.Glob("testdata/degraded/spark-*/*/*.json")
	for _, file := range append(capturedEvents(f), degraded...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := events.Decode(data)
		if err != nil {
			return
		}
		// not Extract: its recover would hide the panics we look for (a budget's is no bug)
		first, err := extractOrBudget(env)
		if err != nil {
			return
		}
		again, err := events.Decode(data)
		if err != nil {
			t.Fatalf("second decode of the same bytes failed: %v", err)
		}
		if second, _ := extractOrBudget(again); !reflect.DeepEqual(first, second) {
			t.Fatalf("extract is not deterministic:\n%+v\n%+v", first, second)
		}
	})
}

func capturedEvents(tb testing.TB) []string {
	files, err := filepath.Glob("testdata/spark-*/*/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captured events under testdata/spark-*: %v", err)
	}
	return files
}

// extractOrBudget is extract, with only its explicit refusals recovered (a budget, an incomplete
// plan).
func extractOrBudget(env *events.Envelope) (lin *Lineage, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, ok := p.(error)
			if !ok || !(errors.Is(e, ErrTooComplex) || errors.Is(e, ErrUnsupported)) {
				panic(p) // a refusal is no bug, any other panic is
			}
			err = e
		}
	}()
	return extract(env, DefaultBudget), nil
}

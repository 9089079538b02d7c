package events

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// capturedEvents returns every event the real listener captured: the golden scenarios and the
// TPC-DS corpus (gzipped).
func capturedEvents(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, _ := filepath.Glob("../plan/testdata/spark-*/*/*.json")
	hive, _ := filepath.Glob("../plan/testdata/hive-*/*/*.json")
	files = append(files, hive...)
	gz, _ := filepath.Glob("../plan/testdata/tpcds/spark-*/*.json.gz")
	if len(files) == 0 || len(gz) == 0 {
		tb.Fatal("no captured events under plan/testdata")
	}
	out := map[string][]byte{}
	for _, f := range append(files, gz...) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			z, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				tb.Fatal(err)
			}
			if data, err = io.ReadAll(z); err != nil {
				tb.Fatal(err)
			}
		}
		out[f] = data
	}
	return out
}

// Every captured event decodes, strictly, to exactly what encoding/json's reflection makes of it.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for name, data := range capturedEvents(t) {
		got, err := Decode(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var want Envelope
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: Decode differs from encoding/json", name)
		}
	}
}

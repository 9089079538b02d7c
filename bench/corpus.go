package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// event is one captured event of the TPC-DS corpus.
type event struct {
	name   string // spark-3.5/q14a.nested
	data   []byte // the JSON
	nested bool   // the CTAS's inner insert: no lineage of its own
}

// loadCorpus reads every q*.json and q*.json.gz under dir/spark-*/, in name order.
func loadCorpus(dir string) ([]event, error) {
	var files []string
	for _, pat := range []string{"spark-*/q*.json", "spark-*/q*.json.gz"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no events under %s/spark-*/ (run make tpcds-capture)", dir)
	}
	out := make([]event, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f, ".gz") {
			z, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if b, err = io.ReadAll(z); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
		}
		name := filepath.Join(filepath.Base(filepath.Dir(f)), strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".gz"), ".json"))
		out = append(out, event{name: name, data: b, nested: strings.HasSuffix(name, ".nested")})
	}
	return out, nil
}

func totalBytes(evs []event) int64 {
	var n int64
	for _, e := range evs {
		n += int64(len(e.data))
	}
	return n
}

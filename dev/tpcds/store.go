//go:build ignore

// store names, compacts and (above a size budget) gzips the events that dev/tpcds/capture had the
// listener write, one directory per Spark line:
//
//	go run ./dev/tpcds/store.go -in <capture dir> -out plan/testdata/tpcds/spark-3.5 -queries "q1 q2 ..." -spark 3.5_2.12
//
// Each event is matched to its query by its write target: the CTAS event writes table
// tpcds_out.<q> (stored as <q>.json), the nested insert before it writes the path
// .../tpcds_out.db/<q> (stored as <q>.nested.json). The JSON is compacted with json.Compact, which
// keeps every value byte for byte. When the line's files together exceed -gzip-above bytes, or the
// files already in -out are gzipped, every file is stored as .json.gz instead (deterministic: no
// name, no time in the gzip header). The old files of the queries in -queries are removed first;
// other queries' files stay.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type event struct {
	Markers struct {
		NestedWrite bool `json:"nestedWrite"`
	} `json:"markers"`
	Query struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"query"`
	Nodes []struct {
		Class string `json:"class"`
		Write *struct {
			Dataset struct {
				Namespace []string `json:"namespace"`
				Name      string   `json:"name"`
				Location  string   `json:"location"`
				Paths     []string `json:"paths"`
			} `json:"dataset"`
		} `json:"write"`
	} `json:"nodes"`
}

var outPath = regexp.MustCompile(`tpcds_out\.db/(q[0-9]+[a-z]?)/?$`)

func main() {
	in := flag.String("in", "", "directory the listener wrote the events to")
	out := flag.String("out", "", "corpus directory of one Spark line")
	list := flag.String("queries", "", "space-separated query names that were run")
	spark := flag.String("spark", "", "Spark line, for messages")
	gzipAbove := flag.Int64("gzip-above", 20<<20, "gzip every file when the line's compact JSON exceeds this many bytes")
	flag.Parse()
	if err := run(*in, *out, strings.Fields(*list), *spark, *gzipAbove); err != nil {
		fmt.Fprintln(os.Stderr, "store:", err)
		os.Exit(1)
	}
}

func run(in, out string, queries []string, spark string, gzipAbove int64) error {
	files, err := filepath.Glob(filepath.Join(in, "*.json"))
	if err != nil {
		return err
	}
	// The listener names files <seq>-<executionId>-<RootClass>.json: order by seq.
	seq := func(p string) int {
		n, _ := strconv.Atoi(strings.SplitN(filepath.Base(p), "-", 2)[0])
		return n
	}
	sort.Slice(files, func(a, b int) bool { return seq(files[a]) < seq(files[b]) })

	stored := map[string][]byte{} // file name -> compact JSON
	failed := map[string]bool{}   // file name -> the stored event has status failure
	var unmatched []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var ev event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		q := queryOf(&ev)
		if q == "" {
			unmatched = append(unmatched, fmt.Sprintf("%s (status %s %s)", filepath.Base(f), ev.Query.Status, ev.Query.Error))
			continue
		}
		name := q + ".json"
		if ev.Markers.NestedWrite {
			name = q + ".nested.json"
		}
		// A query that failed and was captured again by the fallback has several events of one
		// kind: keep the last successful one.
		if _, dup := stored[name]; dup {
			if ev.Query.Status != "success" {
				fmt.Fprintf(os.Stderr, "store: Spark %s: %s: dropped %s, a later attempt's failure event\n", spark, name, filepath.Base(f))
				continue
			}
			fmt.Fprintf(os.Stderr, "store: Spark %s: %s: replaced by %s, a later attempt\n", spark, name, filepath.Base(f))
		}
		failed[name] = ev.Query.Status != "success"
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		buf.WriteByte('\n')
		stored[name] = buf.Bytes()
	}
	for name, bad := range failed {
		if bad {
			fmt.Fprintf(os.Stderr, "store: Spark %s: %s is a failure event (no successful attempt)\n", spark, name)
		}
	}

	var total int64
	for _, b := range stored {
		total += int64(len(b))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Replace the files of the queries run, and only those: a partial run (TPCDS_QUERIES) keeps
	// the rest. It stays gzipped if the corpus it joins is.
	for _, q := range queries {
		for _, name := range []string{q + ".json", q + ".nested.json"} {
			for _, f := range []string{name, name + ".gz"} {
				if err := os.Remove(filepath.Join(out, f)); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
		}
	}
	kept, _ := filepath.Glob(filepath.Join(out, "q*.json.gz"))
	zip := total > gzipAbove || len(kept) > 0

	var written int64
	for name, b := range stored {
		if zip {
			var z bytes.Buffer
			w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			w.Write(b)
			if err := w.Close(); err != nil {
				return err
			}
			b, name = z.Bytes(), name+".gz"
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
		written += int64(len(b))
	}

	var missing []string
	for _, q := range queries {
		_, ctas := stored[q+".json"]
		_, nested := stored[q+".nested.json"]
		switch {
		case !ctas && !nested:
			missing = append(missing, q)
		case !ctas:
			missing = append(missing, q+" (CTAS event)")
		case !nested:
			missing = append(missing, q+" (nested event)")
		}
	}
	fmt.Fprintf(os.Stderr, "store: Spark %s: %d events of %d queries, %.1f MB compact JSON, %.1f MB on disk (gzip %v) in %s\n",
		spark, len(stored), len(queries), float64(total)/1e6, float64(written)/1e6, zip, out)
	for _, u := range unmatched {
		fmt.Fprintf(os.Stderr, "store: Spark %s: event of no TPC-DS query, not stored: %s\n", spark, u)
	}
	if len(missing) > 0 {
		return fmt.Errorf("Spark %s: %d queries not captured: %s", spark, len(missing), strings.Join(missing, ", "))
	}
	return nil
}

// queryOf returns the query an event belongs to, from its write target, or "".
func queryOf(ev *event) string {
	for _, n := range ev.Nodes {
		if n.Write == nil {
			continue
		}
		d := n.Write.Dataset
		if len(d.Namespace) == 1 && d.Namespace[0] == "tpcds_out" && d.Name != "" {
			return d.Name
		}
		for _, p := range append([]string{d.Location}, d.Paths...) {
			if m := outPath.FindStringSubmatch(p); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

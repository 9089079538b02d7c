package openlineage_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
)

var update = flag.Bool("update", false, "rewrite testdata/sidebyside-*.txt from the current comparison")

// The side-by-side comparison of docs/openlineage.md: openlineage-spark and colline's listener
// ran in the same Spark session over the golden scenarios (dev/openlineage/capture-spark), and
// their column lineage is compared pair by pair, (source column, target column), with the
// transformation types each gives the pair. colline's side is plan.Extract of its captured events;
// OpenLineage's is the columnLineage facet of every event of the scenario (START, RUNNING and
// COMPLETE carry the same lineage; the union is taken), its `dataset` dependencies (filter, join,
// group, sort) spread over every written column as colline spreads its row-level dependencies.
//
// Datasets meet by name: a table by db.table (OpenLineage names tables by location and gives the
// table in the symlinks facet), a path by scheme and path. testdata/sidebyside-spark-<line>.txt
// holds the result (counts per scenario, totals, then every pair found by one side only and every
// pair whose types differ); a diff is a change in either extractor to review:
// go test ./openlineage -run TestSideBySide -update rewrites it.
func TestSideBySide(t *testing.T) {
	lines, _ := filepath.Glob("testdata/spark-*")
	if len(lines) == 0 {
		t.Fatal("no testdata/spark-* (run dev/openlineage/capture-spark)")
	}
	for _, dir := range lines {
		line := strings.TrimPrefix(filepath.Base(dir), "spark-")
		t.Run(line, func(t *testing.T) {
			olFiles, _ := filepath.Glob(filepath.Join(dir, "*", "openlineage.jsonl"))
			var sc []scenario
			for _, f := range olFiles {
				colline, _ := filepath.Glob(filepath.Join(filepath.Dir(f), "colline", "*.json"))
				sc = append(sc, scenario{filepath.Base(filepath.Dir(f)), colline, f})
			}
			checkComparison(t, "spark "+line, sc, filepath.Join("testdata", "sidebyside-spark-"+line+".txt"))
		})
	}
}

// The same comparison over TPC-DS: the 103 queries as CTAS over the empty TPC-DS schema.
// openlineage-spark's events are in testdata/tpcds/spark-<x.y>/<q>.jsonl.gz
// (dev/openlineage/capture-tpcds); colline's are the TPC-DS corpus of plan/testdata/tpcds/
// (dev/tpcds/capture), the CTAS event and its nested insert.
func TestSideBySideTPCDS(t *testing.T) {
	lines, _ := filepath.Glob("testdata/tpcds/spark-*")
	if len(lines) == 0 {
		t.Skip("no testdata/tpcds (run dev/openlineage/capture-tpcds)")
	}
	for _, dir := range lines {
		line := strings.TrimPrefix(filepath.Base(dir), "spark-")
		t.Run(line, func(t *testing.T) {
			olFiles, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
			sort.Slice(olFiles, func(i, j int) bool { return naturalLess(filepath.Base(olFiles[i]), filepath.Base(olFiles[j])) })
			var sc []scenario
			for _, f := range olFiles {
				q := strings.TrimSuffix(filepath.Base(f), ".jsonl.gz")
				colline, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "tpcds", "spark-"+line, q+".*json.gz"))
				if len(colline) == 0 {
					t.Errorf("%s: no colline events for %s in plan/testdata/tpcds/spark-%s", f, q, line)
				}
				sc = append(sc, scenario{q, colline, f})
			}
			checkComparison(t, "tpcds spark "+line, sc, filepath.Join("testdata", "sidebyside-tpcds-spark-"+line+".txt"))
		})
	}
}

// naturalLess orders q2 before q10 and q14a before q14b.
func naturalLess(a, b string) bool {
	na, nb := leadingNumber(a), leadingNumber(b)
	if na != nb {
		return na < nb
	}
	return a < b
}

func leadingNumber(s string) int {
	n, seen := 0, false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n = n*10 + int(r-'0')
			seen = true
		} else if seen {
			break
		}
	}
	return n
}

type scenario struct {
	name    string
	colline []string // colline event files (.json or .json.gz)
	ol      string   // openlineage-spark events, one per line (.jsonl or .jsonl.gz)
}

func checkComparison(t *testing.T, what string, sc []scenario, golden string) {
	got, total := compare(t, sc)
	if total.pairs() == 0 {
		t.Fatal("no column lineage on either side: nothing was compared")
	}
	t.Logf("%s, %d scenarios: %d pairs both find (%d with the same types, %d with the same strongest type), %d only colline, %d only openlineage-spark",
		what, len(sc), total.both, total.sameTypes, total.sameStrongest, total.onlyColline, total.onlyOL)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./openlineage -run TestSideBySide -update, then review it)", err)
	}
	if string(want) != got {
		t.Errorf("comparison differs from %s; rerun with -update and review the diff", golden)
	}
}

type counts struct{ both, sameTypes, sameStrongest, onlyColline, onlyOL int }

func (c counts) pairs() int { return c.both + c.onlyColline + c.onlyOL }

// pairs maps "source -> target" to the set of TYPE/SUBTYPE the pair has.
type pairs map[string]map[string]bool

func (p pairs) add(src, dst, typ string) {
	k := src + " -> " + dst
	if p[k] == nil {
		p[k] = map[string]bool{}
	}
	p[k][typ] = true
}

func compare(t *testing.T, scenarios []scenario) (string, counts) {
	var sum, detail strings.Builder
	var total counts
	fmt.Fprintf(&sum, "%-36s %6s %6s %6s %6s %6s %6s\n", "scenario", "both", "same", "strong", "colln", "ol", "olerr")
	for _, s := range scenarios {
		name := s.name
		col := collinePairs(t, s.colline)
		ol, failed := olPairs(t, s.ol)
		var c counts
		var onlyC, onlyO, diff []string
		for k, ct := range col {
			if ot, ok := ol[k]; ok {
				c.both++
				if strongest(ct) == strongest(ot) {
					c.sameStrongest++
				}
				if setString(ct) == setString(ot) {
					c.sameTypes++
				} else {
					diff = append(diff, fmt.Sprintf("  types  %s: colline %s, openlineage %s", k, setString(ct), setString(ot)))
				}
			} else {
				c.onlyColline++
				onlyC = append(onlyC, fmt.Sprintf("  colline %s %s", k, setString(ct)))
			}
		}
		for k, ot := range ol {
			if _, ok := col[k]; !ok {
				c.onlyOL++
				onlyO = append(onlyO, fmt.Sprintf("  ol      %s %s", k, setString(ot)))
			}
		}
		total.both += c.both
		total.sameTypes += c.sameTypes
		total.sameStrongest += c.sameStrongest
		total.onlyColline += c.onlyColline
		total.onlyOL += c.onlyOL
		fmt.Fprintf(&sum, "%-36s %6d %6d %6d %6d %6d %6d\n", name, c.both, c.sameTypes, c.sameStrongest, c.onlyColline, c.onlyOL, failed)
		if len(onlyC)+len(onlyO)+len(diff) > 0 {
			sort.Strings(onlyC)
			sort.Strings(onlyO)
			sort.Strings(diff)
			fmt.Fprintf(&detail, "\n== %s\n", name)
			for _, l := range append(append(onlyC, onlyO...), diff...) {
				detail.WriteString(l + "\n")
			}
		}
	}
	fmt.Fprintf(&sum, "%-36s %6d %6d %6d %6d %6d\n", "TOTAL", total.both, total.sameTypes, total.sameStrongest, total.onlyColline, total.onlyOL)
	head := "# (source column -> target column) pairs: both = found by both; same = of those, with the same\n" +
		"# set of TYPE/SUBTYPE; strong = of those, with the same strongest TYPE/SUBTYPE under colline's\n" +
		"# precedence (docs/lineage-semantics.md), which keeps one per pair; colln = colline only; ol =\n" +
		"# openlineage-spark only; olerr = openlineage-spark events of the scenario whose columnLineage facet\n" +
		"# could not be read. Generated by TestSideBySide (go test ./openlineage -run TestSideBySide -update).\n"
	return head + sum.String() + detail.String(), total
}

// collinePairs runs colline's extractor over the events its listener captured for a scenario.
func collinePairs(t *testing.T, files []string) pairs {
	out := pairs{}
	for _, f := range files {
		data := readFile(t, f)
		env, err := events.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		lin, err := plan.Extract(env)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		keys := map[string]string{} // colline dataset key → comparison name
		for _, d := range lin.Reads {
			keys[d.Key] = collineName(d)
		}
		for _, w := range lin.Writes {
			keys[w.Key] = collineName(w.Dataset)
		}
		for _, e := range lin.Edges {
			for _, t := range e.Transformations {
				out.add(columnName(keys, e.Source), columnName(keys, e.Target), t.Type+"/"+t.Subtype)
			}
		}
		// row-level dependencies apply to every written column, as openlineage-spark's
		// dataset-level ones do below
		for _, e := range lin.RowDeps {
			for _, w := range lin.Writes {
				if w.Key != e.Target {
					continue
				}
				for _, c := range w.Columns {
					for _, t := range e.Transformations {
						out.add(columnName(keys, e.Source), columnName(keys, c.Key), t.Type+"/"+t.Subtype)
					}
				}
			}
		}
	}
	return out
}

func collineName(d plan.Dataset) string {
	switch d.Kind {
	case "table", "view":
		return "table:" + strings.ToLower(d.Name)
	case "path":
		return d.Namespace + ":" + strings.TrimRight(d.Name, "/")
	}
	return d.Namespace + "/" + d.Name
}

// columnName turns a colline column key (dataset key + "#" + column) into the comparison's name.
func columnName(keys map[string]string, key string) string {
	i := strings.LastIndexByte(key, '#')
	ds, col := key[:i], key[i+1:]
	if n, ok := keys[ds]; ok {
		ds = n
	}
	return ds + "#" + col
}

// olPairs reads openlineage-spark's events of a scenario; failed counts events whose facets could
// not be decoded.
func olPairs(t *testing.T, file string) (pairs, int) {
	data := readFile(t, file)
	var evs []*openlineage.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		e, err := openlineage.Decode(sc.Bytes())
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		evs = append(evs, e)
	}
	// table identities of path-named datasets, from every symlinks facet of the scenario
	tables := map[string]string{}
	for _, e := range evs {
		for _, d := range append(append([]openlineage.Dataset{}, e.Inputs...), e.Outputs...) {
			links, _ := d.Symlinks()
			for _, l := range links {
				if l.Type == "TABLE" {
					tables[d.Namespace+"|"+d.Name] = "table:" + strings.ToLower(l.Name)
				}
			}
		}
	}
	name := func(ns, n string) string {
		if tn, ok := tables[ns+"|"+n]; ok {
			return tn
		}
		if !strings.Contains(ns, "://") {
			return ns + ":" + strings.TrimRight(n, "/")
		}
		return ns + "/" + n
	}
	out := pairs{}
	failed := 0
	for _, e := range evs {
		for _, d := range e.Outputs {
			cl, err := d.ColumnLineage()
			if err != nil {
				failed++
				continue
			}
			if cl == nil {
				continue
			}
			target := name(d.Namespace, d.Name)
			written := map[string]bool{}
			for f := range cl.Fields {
				written[strings.ToLower(f)] = true
			}
			if schema, _ := d.Schema(); len(schema) > 0 {
				for _, f := range schema {
					written[strings.ToLower(f.Name)] = true
				}
			}
			for f, fl := range cl.Fields {
				for _, in := range fl.InputFields {
					for _, tr := range in.Transformations {
						out.add(name(in.Namespace, in.Name)+"#"+strings.ToLower(in.Field), target+"#"+strings.ToLower(f), tr.Type+"/"+tr.Subtype)
					}
				}
			}
			for _, in := range cl.Dataset {
				for f := range written {
					for _, tr := range in.Transformations {
						out.add(name(in.Namespace, in.Name)+"#"+strings.ToLower(in.Field), target+"#"+f, tr.Type+"/"+tr.Subtype)
					}
				}
			}
		}
	}
	return out, failed
}

func setString(s map[string]bool) string {
	var l []string
	for k := range s {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}

// readFile reads a file, gunzipping a .gz.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// strongest is the TYPE/SUBTYPE colline's precedence keeps of a set (docs/lineage-semantics.md,
// "Precedence"): DIRECT beats INDIRECT; AGGREGATION > TRANSFORMATION > IDENTITY; CONDITIONAL >
// WINDOW > JOIN > FILTER > GROUP_BY > SORT.
func strongest(set map[string]bool) string {
	rank := map[string]int{
		"DIRECT/AGGREGATION": 13, "DIRECT/TRANSFORMATION": 12, "DIRECT/IDENTITY": 11,
		"INDIRECT/CONDITIONAL": 6, "INDIRECT/WINDOW": 5, "INDIRECT/JOIN": 4, "INDIRECT/FILTER": 3,
		"INDIRECT/GROUP_BY": 2, "INDIRECT/SORT": 1,
	}
	best, br := "", -1
	for k := range set {
		if r := rank[k]; r > br || (r == br && k < best) {
			best, br = k, r
		}
	}
	return best
}

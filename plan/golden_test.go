package plan

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

var update = flag.Bool("update", false, "rewrite the .golden files from the current output")

// The golden corpus: plan/testdata/scenarios/<name>.sql|.java was run on real Spark by
// dev/capture, which stored the listener's events under testdata/spark-<line>/<name>/. Each
// testdata/spark-<line>/<name>.golden holds the lineage of those events as rendered by render.
// The goldens were reviewed against the SQL (docs/lineage-semantics.md), so a diff here is a
// change of behaviour to review, not noise: `go test ./plan -run TestGolden -update` rewrites them.
func TestGolden(t *testing.T) {
	lines, _ := filepath.Glob("testdata/spark-*")
	if len(lines) == 0 {
		t.Fatal("no testdata/spark-* directories")
	}
	scenarios := scenarioNames(t)
	for _, lineDir := range lines {
		line := strings.TrimPrefix(filepath.Base(lineDir), "spark-")
		for _, name := range goldenNames(t, lineDir, line, scenarios) {
			t.Run(line+"/"+name, func(t *testing.T) {
				checkGolden(t, filepath.Join(lineDir, name), filepath.Join(lineDir, name+".golden"), renderDir(t, filepath.Join(lineDir, name)))
			})
		}
	}
}

// checkGolden compares got, the rendered lineage of what, with the golden file, or rewrites the
// file with -update.
func checkGolden(t *testing.T, what, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./plan -run %s -update, then review the new file)", err, strings.SplitN(t.Name(), "/", 2)[0])
	}
	if got != string(want) {
		t.Errorf("lineage of %s differs from %s:\n%s", what, golden, diff(string(want), got))
	}
}

// scenarioNames maps each scenario of testdata/scenarios to the Spark lines it runs on
// (nil: all), from its "-- spark: 4.1" header.
func scenarioNames(t *testing.T) map[string][]string {
	files, _ := filepath.Glob("testdata/scenarios/*")
	out := map[string][]string{}
	for _, f := range files {
		ext := filepath.Ext(f)
		if ext != ".sql" && ext != ".java" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var only []string
		for _, l := range strings.Split(string(data), "\n") {
			v, ok := strings.CutPrefix(l, "-- spark: ")
			if !ok {
				v, ok = strings.CutPrefix(l, "// spark: ")
			}
			if ok {
				only = strings.Fields(v)
				break
			}
		}
		out[strings.TrimSuffix(filepath.Base(f), ext)] = only
	}
	return out
}

// goldenNames lists what line must have a golden for: every scenario that runs on it (on a line
// that keeps goldens without being ci, as 2.4: the scenarios captured for it), and every other
// captured directory that has one (skeleton, coverage).
func goldenNames(t *testing.T, lineDir, line string, scenarios map[string][]string) []string {
	seen := map[string]bool{}
	ci := ciLine(t, line)
	for name, only := range scenarios {
		if _, err := os.Stat(filepath.Join(lineDir, name)); !ci && err != nil {
			continue
		}
		if len(only) == 0 || contains(only, line) {
			seen[name] = true
		}
	}
	goldens, _ := filepath.Glob(filepath.Join(lineDir, "*.golden"))
	for _, g := range goldens {
		seen[strings.TrimSuffix(filepath.Base(g), ".golden")] = true
	}
	dirs, _ := os.ReadDir(lineDir)
	for _, d := range dirs {
		if d.IsDir() && !seen[d.Name()] && *update {
			seen[d.Name()] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ciLine reports whether the golden line x.y has a line flagged ci in dev/spark/lines.
func ciLine(t *testing.T, line string) bool {
	data, err := os.ReadFile("../dev/spark/lines")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && !strings.HasPrefix(f[0], "#") && strings.HasPrefix(f[0], line+"_") && contains(f[2:], "ci") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// renderDir renders the lineage of every event of one scenario, in capture order.
func renderDir(t *testing.T, dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		return "# no events\n"
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n", filepath.Base(f))
		env, err := events.Decode(data)
		if err != nil {
			fmt.Fprintf(&b, "decode error: %v\n", err)
			continue
		}
		lin, err := Extract(env)
		if err != nil {
			fmt.Fprintf(&b, "extract error: %v\n", err)
			continue
		}
		b.WriteString(render(env, lin))
	}
	return b.String()
}

// render is the golden form of one event's lineage: facts about the event, then reads, writes,
// identity changes, unknown classes, then one line per transformation of every column edge and
// of every row-level dependency (source column => written dataset), sorted:
//
//	source -> target TYPE/SUBTYPE [masked] ["expression"]
//	source => dataset INDIRECT/SUBTYPE ["expression"]
//
// The expression is shown for everything but IDENTITY (which has none worth reading).
func render(env *events.Envelope, lin *Lineage) string {
	var b strings.Builder
	if env.Query.Status != "success" {
		fmt.Fprintf(&b, "status %s\n", env.Query.Status)
	}
	if env.Markers.NestedWrite {
		b.WriteString("nested write: no lineage taken\n")
	}
	for p, what := env.Parent, "parent"; p != nil; p, what = p.Root, "root" {
		fmt.Fprintf(&b, "%s %s/%s %s\n", what, p.Namespace, p.Name, p.RunID)
	}
	if lin.Degraded {
		b.WriteString("degraded: table-level lineage only, column lineage missing\n")
	}
	for _, r := range lin.Reads {
		fmt.Fprintf(&b, "read %s %s (%s)\n", r.Kind, r.Key, columnNames(r.Columns))
	}
	for _, w := range lin.Writes {
		fmt.Fprintf(&b, "write %s %s %s (%s)\n", w.Kind, w.Key, w.Mode, columnNames(w.Columns))
	}
	for _, c := range lin.Changes {
		b.WriteString("change " + c.String() + "\n")
	}
	for _, cls := range slices.Sorted(maps.Keys(lin.Unknown)) {
		fmt.Fprintf(&b, "unknown %s %d\n", cls, lin.Unknown[cls])
	}
	lines := renderEdges("->", lin.Edges)
	lines = append(lines, renderEdges("=>", lin.RowDeps)...)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// renderEdges renders one line per transformation of every edge, sorted.
func renderEdges(arrow string, edges []Edge) []string {
	var lines []string
	for _, e := range edges {
		if len(e.Transformations) == 0 {
			lines = append(lines, fmt.Sprintf("%s %s %s without transformations", e.Source, arrow, e.Target))
		}
		for _, x := range e.Transformations {
			l := fmt.Sprintf("%s %s %s %s", e.Source, arrow, e.Target, x)
			if x.Subtype != Identity && x.Expr != "" {
				l += " " + strconv.Quote(x.Expr)
			}
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

func columnNames(cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// diff shows the lines only in want (-) and only in got (+), in order.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[l]++
	}
	for _, l := range g {
		inG[l]++
	}
	var b strings.Builder
	for _, l := range w {
		if inG[l] == 0 {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if inW[l] == 0 {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

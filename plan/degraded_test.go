package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// The degraded corpus: `dev/capture --degraded` ran every golden scenario on real Spark with the
// listener's cap at 4 KB (spark.colline.event.maxBytes=4000), so the listener degraded every
// larger event by levels (docs/event-format.md, markers.truncated) and captured it under
// testdata/degraded/spark-<line>/<scenario>/. The same statements in the same order as the golden
// corpus, so event k of a scenario there is event k of testdata/spark-<line>/<scenario>/.

// TestDegraded renders the lineage of every event of the degraded corpus with its level into
// testdata/degraded/spark-<line>.golden (-update rewrites it), and checks it against the whole
// events of the same statements: a degraded event keeps exactly the table-level lineage (the
// datasets read, with their columns unless level 3 removed them; the datasets written with their
// modes and columns; the DDL changes) and claims no column lineage; an event under the cap is
// extracted exactly as its whole twin. Each level occurs on each line.
func TestDegraded(t *testing.T) {
	lines, _ := filepath.Glob("testdata/degraded/spark-*")
	if len(lines) == 0 {
		t.Fatal("no testdata/degraded/spark-* directories (dev/capture --degraded)")
	}
	for _, lineDir := range lines {
		if info, err := os.Stat(lineDir); err != nil || !info.IsDir() {
			continue
		}
		line := filepath.Base(lineDir)
		t.Run(line, func(t *testing.T) {
			dirs, _ := filepath.Glob(filepath.Join(lineDir, "*"))
			levels := map[int]int{}
			var b strings.Builder
			for _, dir := range dirs {
				if info, err := os.Stat(dir); err != nil || !info.IsDir() {
					continue
				}
				scenario := filepath.Base(dir)
				files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
				whole, _ := filepath.Glob(filepath.Join("testdata", line, scenario, "*.json"))
				slices.Sort(files)
				slices.Sort(whole)
				if len(files) != len(whole) {
					t.Errorf("%s: %d events, the golden corpus has %d for the same statements", dir, len(files), len(whole))
					continue
				}
				for k, f := range files {
					if root(f) != root(whole[k]) {
						t.Errorf("%s: event %d is a %s, the golden corpus's a %s", dir, k, root(f), root(whole[k]))
						continue
					}
					env, lin := extractFile(t, f)
					wenv, wlin := extractFile(t, whole[k])
					level := degradedLevel(env)
					levels[level]++
					fmt.Fprintf(&b, "== %s/%s (level %d)\n", scenario, filepath.Base(f), level)
					b.WriteString(render(env, lin))
					if level == 0 {
						if got, want := render(env, lin), render(wenv, wlin); got != want {
							t.Errorf("%s is not degraded, yet its lineage differs from %s:\n%s", f, whole[k], diff(want, got))
						}
						continue
					}
					if msg := sameTableLevel(lin, wlin, level); msg != "" {
						t.Errorf("%s (level %d) against %s: %s", f, level, whole[k], msg)
					}
				}
			}
			for l := 1; l <= 3; l++ {
				if levels[l] == 0 {
					t.Errorf("no event at level %d (levels %v): re-capture with a cap that reaches it", l, levels)
				}
			}
			t.Logf("%s: events by level %v", line, levels)
			checkGolden(t, lineDir, lineDir+".golden", b.String())
		})
	}
}

// TestTableLevelOfEveryCapture MUTATES every captured event of the golden corpus (expressions
// and outputs kept, markers.truncated set): the table-level extraction finds the same reads,
// writes and changes as the full one, so its rule for what a run reads (what the writes' queries
// reach through the plan tree, and the subquery plans the root does not reach) agrees with
// resolution on every real plan, not only on those the cap degraded.
func TestTableLevelOfEveryCapture(t *testing.T) {
	for _, f := range capturedEvents(t) {
		data, err := readEvent(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			continue
		}
		full, err := Extract(env)
		if err != nil {
			continue
		}
		env.Markers.Truncated = true
		lin, err := Extract(env)
		if err != nil {
			t.Errorf("%s marked degraded: %v", f, err)
			continue
		}
		if msg := sameTableLevel(lin, full, 1); msg != "" {
			t.Errorf("%s marked degraded: %s", f, msg)
		}
	}
}

// sameTableLevel compares the lineage of a degraded event with that of the whole event: "" when
// the degraded one says Degraded, has no column lineage, and has the same reads (with the same
// columns below level 3), writes (mode, columns; a persistent view's below level 3) and changes.
func sameTableLevel(lin, whole *Lineage, level int) string {
	if !lin.Degraded || len(lin.Edges)+len(lin.RowDeps) > 0 {
		return fmt.Sprintf("Degraded %v with %d edges and %d row-level dependencies, want Degraded and none", lin.Degraded, len(lin.Edges), len(lin.RowDeps))
	}
	// struct fields come from expressions (GetStructField, …), which a degraded event lacks: the
	// table level is the datasets' own columns
	top := func(cs []Column) []Column {
		return slices.DeleteFunc(slices.Clone(cs), func(c Column) bool { return c.Parent != "" })
	}
	reads := func(l *Lineage, cols bool) []string {
		var out []string
		for _, d := range l.Reads {
			s := d.Key
			if cols {
				s += " (" + columnNames(top(d.Columns)) + ")"
			}
			out = append(out, s)
		}
		return out
	}
	if got, want := reads(lin, level < 3), reads(whole, level < 3); !slices.Equal(got, want) {
		return fmt.Sprintf("reads %q, want %q", got, want)
	}
	writes := func(l *Lineage) []string {
		var out []string
		for _, w := range l.Writes {
			s := w.Key + " " + w.Mode
			if w.Kind != "view" || level < 3 {
				s += " (" + columnNames(top(w.Columns)) + ")" // level 3 drops a view's output, its columns
			}
			out = append(out, s)
		}
		return out
	}
	if got, want := writes(lin), writes(whole); !slices.Equal(got, want) {
		return fmt.Sprintf("writes %q, want %q", got, want)
	}
	changes := func(l *Lineage) []string {
		var out []string
		for _, c := range l.Changes {
			out = append(out, c.String())
		}
		return out
	}
	if got, want := changes(lin), changes(whole); !slices.Equal(got, want) {
		return fmt.Sprintf("changes %q, want %q", got, want)
	}
	return ""
}

// degradedLevel tells how far the listener degraded env (docs/event-format.md): 0 not at all
// (markers.truncated false); 1 when some node still has args or a node without a dataset still
// has outputs (level 1 drops only expressions); 2 when only dataset leaves have outputs; else 3.
func degradedLevel(env *events.Envelope) int {
	if !env.Markers.Truncated {
		return 0
	}
	leaf := false
	for i := range env.Nodes {
		n := &env.Nodes[i]
		if len(n.Args) > 0 || n.Dataset == nil && len(n.Output) > 0 {
			return 1
		}
		leaf = leaf || len(n.Output) > 0
	}
	if leaf {
		return 2
	}
	return 3
}

// root is the root class of a captured event, from its file name (NNNN-<RootClass>.json).
func root(file string) string {
	base := filepath.Base(file)
	return base[strings.LastIndexByte(base, '-')+1:]
}

func extractFile(t *testing.T, file string) (*events.Envelope, *Lineage) {
	t.Helper()
	data, err := readEvent(file)
	if err != nil {
		t.Fatal(err)
	}
	env, err := events.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	lin, err := Extract(env)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return env, lin
}

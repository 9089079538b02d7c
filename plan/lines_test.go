package plan

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// Spark 4 rewrites NULLIF and BETWEEN through common expressions (With, CommonExpressionDef,
// CommonExpressionRef), where 3.5 rewrites NULLIF into an IF and parses BETWEEN into two
// comparisons. The roles of every conditional-family function must not depend on that:
// roles_conditional_family, captured on both lines, gives the same reads, writes and roles
// (source, target, type, subtype, masking; not the expression text, which Spark prints
// differently) on 3.5 and 4.1.
func TestConditionalRolesSameOnEveryLine(t *testing.T) {
	const scenario = "roles_conditional_family"
	var want []string
	var wantLine string
	for _, line := range []string{"3.5", "4.1"} {
		got := roleLines(t, filepath.Join("testdata", "spark-"+line, scenario))
		if len(got) == 0 {
			t.Fatalf("%s: no lineage in testdata/spark-%s/%s", scenario, line, scenario)
		}
		if want == nil {
			want, wantLine = got, line
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: roles on %s differ from %s:\n%s", scenario, line, wantLine,
				diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
		}
	}
	// the case: NULLIF(a, b) is a's value and is decided by a = b
	for _, l := range []string{
		"src#a -> values_of#f_nullif DIRECT/TRANSFORMATION",
		"src#a -> values_of#f_nullif INDIRECT/CONDITIONAL",
		"src#b -> values_of#f_nullif INDIRECT/CONDITIONAL",
	} {
		if !slices.Contains(want, l) {
			t.Errorf("%s: no %q", scenario, l)
		}
	}
}

// roleLines renders the lineage of a scenario's events without event-specific detail: the
// datasets read and written, and one line per role, with keys shortened to the table's name.
func roleLines(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []string
	short := func(key string) string {
		if _, rest, ok := strings.Cut(key, "/"); ok {
			if i := strings.LastIndexByte(rest, '.'); i >= 0 && !strings.Contains(rest[:i], "#") {
				return rest[i+1:]
			}
			return rest
		}
		return key
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		lin, err := Extract(env)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range lin.Reads {
			out = append(out, "read "+short(r.Key)+" ("+columnNames(r.Columns)+")")
		}
		for _, w := range lin.Writes {
			out = append(out, "write "+short(w.Key)+" "+w.Mode+" ("+columnNames(w.Columns)+")")
		}
		for arrow, list := range map[string][]Edge{"->": lin.Edges, "=>": lin.RowDeps} {
			for _, e := range list {
				for _, x := range e.Transformations {
					out = append(out, short(e.Source)+" "+arrow+" "+short(e.Target)+" "+x.String())
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Events of listeners before format 1.5 carry no commonId: a CommonExpressionRef stands for the
// definitions of the nearest With, which is exact for what Spark 4.1 rewrites (one definition per
// With). The 4.1 capture without its ids gives the same lineage.
func TestCommonExpressionsWithoutIDs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "spark-4.1", "roles_conditional_family", "*.json"))
	if len(files) == 0 {
		t.Fatal("no capture of roles_conditional_family on 4.1")
	}
	var strip func(x *events.Expr) int
	strip = func(x *events.Expr) int {
		n := 0
		if x.CommonID != nil {
			x.CommonID, n = nil, 1
		}
		for k := range x.Children {
			n += strip(&x.Children[k])
		}
		return n
	}
	stripped := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		want := render(env, mustExtract(t, env))
		for i := range env.Nodes {
			for role := range env.Nodes[i].Exprs {
				for k := range env.Nodes[i].Exprs[role] {
					stripped += strip(&env.Nodes[i].Exprs[role][k])
				}
			}
		}
		if got := render(env, mustExtract(t, env)); got != want {
			t.Errorf("%s without commonId:\n%s", filepath.Base(f), diff(want, got))
		}
	}
	if stripped == 0 {
		t.Fatal("the 4.1 capture has no commonId to strip")
	}
}

func mustExtract(t *testing.T, env *events.Envelope) *Lineage {
	t.Helper()
	lin, err := Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	return lin
}

// The writes a foreachBatch function makes read the micro-batch, which stands for the streaming
// query's sources: in stream_foreach_batch (a Kafka source, two micro-batches, a MERGE and an
// INSERT into Delta tables per batch) every write reads the topic, and every micro-batch of the
// query gives each target byte-identical lineage (so a re-run fingerprint holds across batches).
func TestMicroBatchesShareLineage(t *testing.T) {
	for _, line := range []string{"3.5", "4.1"} {
		t.Run(line, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join("testdata", "spark-"+line, "stream_foreach_batch", "*.json"))
			byTarget := map[string][]string{} // query id + written dataset → rendered lineage per batch
			batches := map[int64]bool{}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				env, err := events.Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				st := env.Query.Stream
				if st == nil || env.Query.FuncName == "stream" {
					continue
				}
				lin := mustExtract(t, env)
				if len(lin.Writes) == 0 {
					continue // the function's temporary view of the batch: no job ran, no batch id to name
				}
				if st.BatchID == nil || st.RunID == "" {
					t.Errorf("%s: query.stream %+v, want the run and the batch", filepath.Base(f), *st)
					continue
				}
				batches[*st.BatchID] = true
				kafka := false
				for _, r := range lin.Reads {
					kafka = kafka || r.Kind == "kafka"
				}
				if !kafka {
					t.Errorf("%s: the micro-batch write reads no Kafka topic: %v", filepath.Base(f), lin.Reads)
				}
				for _, w := range lin.Writes {
					byTarget[st.ID+" "+w.Key] = append(byTarget[st.ID+" "+w.Key], render(env, lin))
				}
			}
			if len(batches) < 2 || len(byTarget) < 2 {
				t.Fatalf("micro-batches %v writing %d targets, want 2 batches writing 2 targets", batches, len(byTarget))
			}
			for target, renders := range byTarget {
				if len(renders) != len(batches) {
					t.Errorf("%s: written in %d of %d micro-batches", target, len(renders), len(batches))
				}
				for k := 1; k < len(renders); k++ {
					if renders[k] != renders[0] {
						t.Errorf("%s: micro-batch lineage differs:\n%s", target, diff(renders[0], renders[k]))
					}
				}
			}
		})
	}
}

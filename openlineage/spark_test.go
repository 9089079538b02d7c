package openlineage_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
)

// Every event colline emits validates against the spec: FromSpark over every event the listener
// captured (the golden scenarios of Spark 3.5 and 4.1, TPC-DS, the side-by-side runs), each
// event checked against the core schema and every facet against its own schema, none left
// unchecked. Taken back in by the accept side (Event.Lineage), each event gives the same column
// edges and row-level dependencies colline extracted.
func TestEmittedEventsValidate(t *testing.T) {
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, g := range []string{"../plan/testdata/spark-*/*/*.json", "../plan/testdata/connect/spark-*/*/*.json", "../plan/testdata/tpcds/spark-*/*.json.gz", "testdata/spark-*/*/colline/*.json", "testdata/dbt/spark-colline/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 500 {
		t.Fatalf("only %d captured listener events", len(files))
	}
	var emitted, edges, checked int
	kinds := map[string]int{}
	for _, f := range files {
		env, err := events.Decode(readFile(t, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		lin, err := plan.Extract(env)
		if err != nil {
			continue // an unsupported plan is dead-lettered, never emitted
		}
		data, err := openlineage.FromSpark(env, lin)
		if err != nil {
			t.Errorf("%s: FromSpark: %v", f, err)
			continue
		}
		rep, err := v.Validate(data)
		if err != nil {
			t.Errorf("%s: emitted event does not validate: %v", f, err)
			continue
		}
		if len(rep.Unchecked) > 0 {
			t.Errorf("%s: facets not checked against a schema: %+v", f, rep.Unchecked)
		}
		emitted++
		checked += len(rep.Checked)
		for _, c := range rep.Checked {
			kinds[c[strings.LastIndexByte(c, '/')+1:]]++
		}
		back, err := openlineage.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := back.Lineage(openlineage.Names{})
		if err != nil {
			t.Errorf("%s: the emitted event does not map back: %v", f, err)
			continue
		}
		if a, b := edgeSet(lin), edgeSet(got); !slices.Equal(a, b) {
			t.Errorf("%s: edges emitted and taken back differ:\n%s\n---\n%s", f, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		edges += len(lin.Edges) + len(lin.RowDeps)
	}
	t.Logf("%d listener events emitted as RunEvents, all valid: %d facets checked against their schemas (%v), %d column edges and row-level dependencies round-tripped",
		emitted, checked, kinds, edges)
}

// edgeSet renders a lineage's edges and row-level dependencies with their transformations.
func edgeSet(l *plan.Lineage) []string {
	var out []string
	for _, list := range [][]plan.Edge{l.Edges, l.RowDeps} {
		for _, e := range list {
			var ts []string
			for _, x := range e.Transformations {
				ts = append(ts, x.String()+" "+x.Expr)
			}
			slices.Sort(ts)
			out = append(out, e.Source+" -> "+e.Target+" "+strings.Join(ts, "; "))
		}
	}
	slices.Sort(out)
	return out
}

// The runId of an event is stable (a replay emits the same one), and differs between events.
func TestRunIDStable(t *testing.T) {
	a, b := openlineage.RunID("7bc6673b-01bb-41a5-bb6b-4d5ea6143141"), openlineage.RunID("7bc6673b-01bb-41a5-bb6b-4d5ea6143141")
	if a != b || a == openlineage.RunID("other") || a == openlineage.AppRunID("7bc6673b-01bb-41a5-bb6b-4d5ea6143141") {
		t.Errorf("RunID not stable or not distinct: %s %s", a, b)
	}
}

// The events the listener degraded (plan/testdata/degraded: captured with dev/capture --degraded)
// are emitted valid, with their inputs and outputs but no columnLineage facet, and say so in the
// run facet colline_degraded: the only facet left unchecked, as a producer's own facet.
func TestEmittedDegradedEvents(t *testing.T) {
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../plan/testdata/degraded/spark-*/*/*.json")
	if len(files) < 100 {
		t.Fatalf("only %d captured degraded events", len(files))
	}
	emitted := 0
	for _, f := range files {
		env, err := events.Decode(readFile(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		lin, err := plan.Extract(env)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !lin.Degraded {
			continue // a small command (DDL) the listener had no need to degrade
		}
		data, err := openlineage.FromSpark(env, lin)
		if err != nil {
			t.Fatalf("%s: FromSpark: %v", f, err)
		}
		rep, err := v.Validate(data)
		if err != nil {
			t.Fatalf("%s: emitted event does not validate: %v", f, err)
		}
		if len(rep.Unchecked) != 1 || rep.Unchecked[0].Location != "/run/facets/"+openlineage.DegradedFacet {
			t.Errorf("%s: unchecked facets %+v, want only /run/facets/%s", f, rep.Unchecked, openlineage.DegradedFacet)
		}
		if strings.Contains(string(data), `"columnLineage":{`) {
			t.Errorf("%s: a degraded event emitted with a columnLineage facet", f)
		}
		if len(lin.Writes) > 0 && !strings.Contains(string(data), `"outputs":[{`) {
			t.Errorf("%s: its writes are not outputs", f)
		}
		emitted++
	}
	if emitted < 100 {
		t.Errorf("only %d of %d captured events are degraded", emitted, len(files))
	}
	t.Logf("%d degraded events emitted valid, marked %s, without columnLineage", emitted, openlineage.DegradedFacet)
}

// The writes of a foreachBatch micro-batch (stream_foreach_batch) name the streaming query's run
// as their parent, the run the stream's own event emitted (its job <app>.<query name>); a
// row-level dependency of one UNION branch (roles_several's union_branch_filter) lists the rows it
// decides in rowsFrom.
func TestEmittedMicroBatchesAndBranchRows(t *testing.T) {
	type ev struct {
		Run struct {
			RunID  string `json:"runId"`
			Facets struct {
				Parent struct {
					Run struct{ RunID string } `json:"run"`
					Job struct{ Name string }  `json:"job"`
				} `json:"parent"`
			} `json:"facets"`
		} `json:"run"`
		Job     struct{ Name string } `json:"job"`
		Outputs []struct {
			Facets struct {
				ColumnLineage struct {
					Dataset []struct {
						Field           string `json:"field"`
						Transformations []struct {
							Subtype  string                             `json:"subtype"`
							RowsFrom []struct{ Namespace, Name string } `json:"rowsFrom"`
						} `json:"transformations"`
					} `json:"dataset"`
				} `json:"columnLineage"`
			} `json:"facets"`
		} `json:"outputs"`
	}
	emit := func(f string) ev {
		env, err := events.Decode(readFile(t, f))
		if err != nil {
			t.Fatal(err)
		}
		lin, err := plan.Extract(env)
		if err != nil {
			t.Fatal(err)
		}
		data, err := openlineage.FromSpark(env, lin)
		if err != nil {
			t.Fatal(err)
		}
		var e ev
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	dir := "../plan/testdata/spark-3.5/stream_foreach_batch/"
	stream, merge := emit(dir+"0002-WriteToStream.json"), emit(dir+"0004-MergeIntoCommand.json")
	if stream.Job.Name != "colline-capture.orders_upsert" {
		t.Errorf("the stream's job %q, want colline-capture.orders_upsert", stream.Job.Name)
	}
	if p := merge.Run.Facets.Parent; p.Run.RunID != stream.Run.RunID || p.Job.Name != stream.Job.Name {
		t.Errorf("the MERGE's parent %+v, want the stream's run %s of %s", p, stream.Run.RunID, stream.Job.Name)
	}
	union := emit("../plan/testdata/spark-3.5/roles_several/0004-InsertIntoHadoopFsRelationCommand.json")
	var rows []string
	for _, o := range union.Outputs {
		for _, d := range o.Facets.ColumnLineage.Dataset {
			for _, tr := range d.Transformations {
				for _, r := range tr.RowsFrom {
					rows = append(rows, d.Field+" "+tr.Subtype+" "+r.Namespace+" "+r.Name)
				}
			}
		}
	}
	if want := []string{"status FILTER spark_catalog roles_several.orders"}; !slices.Equal(rows, want) {
		t.Errorf("rowsFrom %q, want %q", rows, want)
	}
}

// A listener event's scheduler run (events.Parent, since 1.5) is the top of the parent facet's
// hierarchy: the facet's root is the scheduler's root run, else its run; the parent stays the
// Spark application. A run id that is not a UUID (colline's own keys allow any) gives no root,
// since the spec wants one; both events validate.
func TestEmittedParentRoot(t *testing.T) {
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../plan/testdata/spark-3.5/skeleton/*.json")
	if len(files) == 0 {
		t.Fatal("no skeleton events")
	}
	env, err := events.Decode(readFile(t, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	lin, err := plan.Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	const task, dag = "0199a1f2-5c3e-7d41-9a57-3f1f1d0b9c11", "0199a1f2-5c3e-7d41-9a57-3f1f1d0b9c10"
	for _, tc := range []struct {
		parent *events.Parent
		want   string // the root's run id, "" for none
	}{
		{&events.Parent{Namespace: "airflow", Name: "dag.task", RunID: task, Root: &events.Parent{Namespace: "airflow", Name: "dag", RunID: dag}}, dag},
		{&events.Parent{Namespace: "airflow", Name: "dag.task", RunID: task}, task},
		{&events.Parent{Namespace: "ds", Name: "wf.task", RunID: "42"}, ""},
	} {
		env.Parent = tc.parent
		data, err := openlineage.FromSpark(env, lin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Validate(data); err != nil {
			t.Errorf("parent %+v: the emitted event does not validate: %v", tc.parent, err)
		}
		e, err := openlineage.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if s := string(e.Run.Facets["parent"]); strings.Contains(s, `"root"`) {
			got = s[strings.Index(s, `"root"`):]
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("parent %+v: the facet's root is %q, want run %q", tc.parent, got, tc.want)
		}
	}
}

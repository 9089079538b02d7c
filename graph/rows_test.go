package graph

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// fixture is a hand-built batch (a unit-test input, not what Spark emits): job "etl/load" copies
// file a into table b, job "etl/report" aggregates b into table c, so lineage crosses jobs.
func fixture(prefix string, at time.Time, runSuffix string) []record.Item {
	ds := func(name, kind string, cols ...string) plan.Dataset {
		d := plan.Dataset{Key: prefix + name, Namespace: prefix + "ns", Name: name, Kind: kind}
		for _, c := range cols {
			d.Columns = append(d.Columns, plan.Column{Key: d.Key + "#" + c, Name: c, Type: "string"})
		}
		return d
	}
	a := ds("a", "path", "id", "amount")
	a.Location = "file:/data/a"
	b := ds("b", "table", "id", "amount")
	c := ds("c", "table", "total")
	env := func(id, name string) *events.Envelope {
		return &events.Envelope{
			SchemaVersion: "1.0",
			EventID:       prefix + id + runSuffix,
			EmittedAt:     at.Add(time.Second).Format(time.RFC3339Nano),
			Producer:      events.Producer{Spark: "3.5.8"},
			App:           events.App{ID: "local-1", Name: name, Namespace: prefix + "etl"},
			Query:         events.Query{ExecutionID: 3, FuncName: "command", Status: "success", EndedAt: at.Format(time.RFC3339Nano)},
		}
	}
	return []record.Item{
		{
			Event: env("run-load", "load"),
			Lineage: &plan.Lineage{
				Reads:  []plan.Dataset{a},
				Writes: []plan.Write{{Dataset: b, Mode: "overwrite"}},
				Edges: []plan.Edge{
					{Source: a.Columns[0].Key, Target: b.Columns[0].Key, Transformations: tf(plan.Direct, plan.Identity, "id")},
					{Source: a.Columns[1].Key, Target: b.Columns[1].Key, Transformations: append(tf(plan.Direct, plan.TransformationSub, "amount * 100"), tf(plan.Indirect, plan.Conditional, "amount > 0")...)},
				},
				RowDeps: []plan.Edge{{Source: a.Columns[1].Key, Target: b.Key, Transformations: tf(plan.Indirect, plan.FilterSub, "amount > 0")}},
			},
		},
		{
			Event: env("run-report", "report"),
			Lineage: &plan.Lineage{
				Reads:  []plan.Dataset{b},
				Writes: []plan.Write{{Dataset: c, Mode: "append"}},
				Edges: []plan.Edge{
					{Source: b.Columns[1].Key, Target: c.Columns[0].Key, Transformations: tf(plan.Direct, plan.Aggregation, "sum(amount)")},
				},
				RowDeps: []plan.Edge{{Source: b.Columns[0].Key, Target: c.Key, Transformations: tf(plan.Indirect, plan.GroupBy, "id")}},
			},
		},
	}
}

// tf is one transformation, as a list.
func tf(typ, subtype, expr string) []plan.Transformation {
	return []plan.Transformation{{Type: typ, Subtype: subtype, Expr: expr}}
}

// ddl is a hand-built DDL event of job "etl/admin": rename c to c2, truncate b, drop a, and an
// alter of b that keeps its columns, adds b.extra and drops b.gone.
func ddl(prefix string, at time.Time, runSuffix string) record.Item {
	it := fixture(prefix, at, runSuffix)[0]
	it.Event.EventID = prefix + "run-admin" + runSuffix
	it.Event.App.Name = "admin"
	ds := func(name string) plan.Dataset {
		return plan.Dataset{Key: prefix + name, Namespace: prefix + "ns", Name: name, Kind: "table"}
	}
	c2 := ds("c2")
	it.Lineage = &plan.Lineage{Changes: []plan.Change{
		{Action: plan.ChangeRename, Dataset: ds("c"), To: &c2},
		{Action: plan.ChangeTruncate, Dataset: ds("b")},
		{Action: plan.ChangeDrop, Dataset: ds("a")},
		{Action: plan.ChangeAlter, Dataset: withColumns(ds("b"), "extra"), Dropped: []plan.Column{{Key: prefix + "b#gone", Name: "gone"}}},
	}}
	return it
}

func withColumns(d plan.Dataset, names ...string) plan.Dataset {
	for _, n := range names {
		d.Columns = append(d.Columns, plan.Column{Key: plan.ColumnKey(d.Key, n), Name: n, Type: "string"})
	}
	return d
}

var t0 = time.Date(2026, 11, 30, 10, 15, 2, 100_000_000, time.UTC)

func TestBuildRows(t *testing.T) {
	r, err := buildRows(fixture("", t0, ""))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(n int, f func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"jobs", keys(len(r.jobs), func(i int) string { return r.jobs[i].key }), []string{"etl/load", "etl/report"}},
		{"datasets", keys(len(r.datasets), func(i int) string { return r.datasets[i].key }), []string{"a", "b", "c"}},
		{"columns", keys(len(r.columns), func(i int) string { return r.columns[i].key }), []string{"a#amount", "a#id", "b#amount", "b#id", "c#total"}},
		{"runs", keys(len(r.runs), func(i int) string { return r.runs[i].key + " " + r.runs[i].jobKey }), []string{"run-load etl/load", "run-report etl/report"}},
		{"reads", keys(len(r.reads), func(i int) string { return r.reads[i].run + ">" + r.reads[i].dataset }), []string{"run-load>a", "run-report>b"}},
		{"wrote", keys(len(r.wrote), func(i int) string { return r.wrote[i].run + ">" + r.wrote[i].dataset + " " + r.wrote[i].mode }), []string{"run-load>b overwrite", "run-report>c append"}},
		{"feeds", keys(len(r.feeds), func(i int) string {
			f := r.feeds[i]
			return f.source + ">" + f.target + " " + f.job + " " + fmt.Sprint(f.ts)
		}), []string{
			"a#amount>b#amount etl/load [DIRECT/TRANSFORMATION INDIRECT/CONDITIONAL]",
			"a#id>b#id etl/load [DIRECT/IDENTITY]",
			"b#amount>c#total etl/report [DIRECT/AGGREGATION]",
		}},
		{"decides", keys(len(r.decides), func(i int) string {
			x := r.decides[i]
			return x.source + ">" + x.target + " " + x.job + " " + fmt.Sprint(x.ts)
		}), []string{
			"a#amount>b etl/load [INDIRECT/FILTER]",
			"b#id>c etl/report [INDIRECT/GROUP_BY]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	if got := r.datasets[0]; got.first != t0 || got.last != t0 || got.location != "file:/data/a" {
		t.Errorf("dataset a = %+v", got)
	}
}

func TestBuildRowsMergesObservations(t *testing.T) {
	later := t0.Add(time.Hour)
	old := fixture("", t0, "")
	newer := fixture("", later, "-2")
	// The newer event does not know the location of a and types b#id differently.
	newer[0].Lineage.Reads[0].Location = ""
	newer[0].Lineage.Writes[0].Columns[0].Type = "bigint"
	newer[0].Lineage.Edges[0].Transformations = tf(plan.Direct, plan.Identity, "cast(id as bigint)")

	for _, order := range [][]record.Item{append(append([]record.Item{}, old...), newer...), append(append([]record.Item{}, newer...), old...)} {
		r, err := buildRows(order)
		if err != nil {
			t.Fatal(err)
		}
		a := r.datasets[0]
		if a.first != t0 || a.last != later || a.location != "file:/data/a" {
			t.Errorf("dataset a = %+v, want first %v last %v and the known location", a, t0, later)
		}
		var bid columnRow
		for _, c := range r.columns {
			if c.key == "b#id" {
				bid = c
			}
		}
		if bid.dataType != "bigint" {
			t.Errorf("b#id type = %q, want the newer event's bigint", bid.dataType)
		}
		f := r.feeds[1] // a#id>b#id
		if f.ts[0].Expr != "cast(id as bigint)" || f.lastRun != "run-load-2" || f.first != t0 || f.last != later {
			t.Errorf("feed = %+v", f)
		}
		if len(r.runs) != 4 {
			t.Errorf("runs = %d, want 4", len(r.runs))
		}
	}
}

// An item record.Check refuses is one the writer refuses, naming it, when it was not checked
// before (record's tests hold the cases), and a write the graph rejects for good.
func TestInvalidItemIsRejected(t *testing.T) {
	bad := fixture("", t0, "")[0]
	bad.Lineage.Edges[0].Transformations = nil
	if _, err := buildRows([]record.Item{fixture("", t0, "")[1], bad}); !errors.Is(err, record.ErrInvalidItem) || !IsRejected(err) || !strings.Contains(err.Error(), "item 1") {
		t.Errorf("buildRows = %v, want item 1 invalid, an ErrInvalidItem that IsRejected", err)
	}
}

func TestBuildRowsChanges(t *testing.T) {
	later := t0.Add(time.Minute)
	r, err := buildRows(append(fixture("", t0, ""), ddl("", t0, ""), ddl("", later, "-2")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.datasets) != 4 || r.datasets[3].key != "c2" || r.datasets[3].last != later {
		t.Errorf("datasets = %+v, want a, b, c and the new c2", r.datasets)
	}
	want := []markRow{{dataset: "a", droppedAt: later}, {dataset: "b", truncated: later}}
	if !reflect.DeepEqual(r.marks, want) {
		t.Errorf("marks = %+v, want %+v", r.marks, want)
	}
	if len(r.renames) != 1 || r.renames[0].from != "c" || r.renames[0].to != "c2" || r.renames[0].first != t0 ||
		r.renames[0].last != later || r.renames[0].lastRun != "run-admin-2" {
		t.Errorf("renames = %+v", r.renames)
	}
	if len(r.changed) != 8 || r.changed[0] != (changedRow{run: "run-admin", dataset: "a", action: plan.ChangeDrop}) {
		t.Errorf("changed = %+v", r.changed)
	}
	if len(r.colMarks) != 1 || r.colMarks[0] != (columnMarkRow{column: "b#gone", droppedAt: later}) {
		t.Errorf("column marks = %+v, want b#gone dropped at the later alter", r.colMarks)
	}
	added := false
	for _, c := range r.columns {
		added = added || (c.key == "b#extra" && c.datasetKey == "b" && c.dataType == "string")
	}
	if !added {
		t.Errorf("columns = %+v, want b#extra from the alter", r.columns)
	}
	bad := ddl("", t0, "")
	bad.Lineage.Changes[0].To = nil
	if err := record.Check(&bad); !errors.Is(err, record.ErrInvalidItem) || !strings.Contains(err.Error(), "renames c to nothing") {
		t.Errorf("Check(rename without target) = %v", err)
	}
}

// Rows hold only what a Neo4j property can be: scalars and lists of scalars, never maps.
func TestStatementsAreFlat(t *testing.T) {
	sts, err := Statements(append(fixture("", t0, ""), ddl("", t0, ""), olRun("", t0, "START"), nested("", t0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		// existing: a read of its own shape (existing.go); lineages: the LINEAGEs that the read
		// found, none in Statements (as for an empty graph), whose rows are newLineages' shape.
		if len(st.rows) == 0 && st.name != "existing" && st.name != "lineages" {
			t.Errorf("statement %s has no rows", st.name)
		}
		for _, row := range st.rows {
			for k, v := range row {
				switch v.(type) {
				case nil, string, bool, int64, time.Time, []string, []bool:
				default:
					t.Errorf("statement %s: param %s is %T, want a scalar or a list of scalars (Neo4j properties)", st.name, k, v)
				}
			}
		}
	}
}

// olRun is a hand-built OpenLineage run (a unit-test input): job "ol/model" (child of run
// "parent" of job "ol/dag") copies b.amount into d, reported by one event of type eventType at.
func olRun(prefix string, at time.Time, eventType string) record.Item {
	b := plan.Dataset{Key: prefix + "b", Namespace: prefix + "ns", Name: "b", Kind: "table",
		Columns: []plan.Column{{Key: prefix + "b#amount", Name: "amount"}}}
	d := plan.Dataset{Key: prefix + "d", Namespace: prefix + "ns", Name: "d", Kind: "table",
		Columns: []plan.Column{{Key: prefix + "d#amount", Name: "amount", Type: "DOUBLE"}}}
	return record.Item{
		OpenLineage: &record.OpenLineage{Kind: "RunEvent", EventType: eventType, EventTime: at, Producer: "https://example/dbt",
			JobNamespace: prefix + "ol", JobName: "model", RunID: prefix + "run-ol",
			Parent: &record.ParentRun{RunID: prefix + "parent", JobNamespace: prefix + "ol", JobName: "dag"}},
		Lineage: &plan.Lineage{
			Reads:  []plan.Dataset{b},
			Writes: []plan.Write{{Dataset: d}},
			Edges:  []plan.Edge{{Source: b.Columns[0].Key, Target: d.Columns[0].Key, Transformations: tf(plan.Direct, plan.TransformationSub, "")}},
		},
	}
}

// The events of one OpenLineage run merge into one Run whatever their order: running until a
// terminal event, then the newest terminal status; startedAt is the START, endedAt the terminal
// event's time. The parent facet adds the parent's job and run.
func TestOpenLineageRunMerge(t *testing.T) {
	start, running, complete := olRun("", t0, "START"), olRun("", t0.Add(time.Second), "RUNNING"), olRun("", t0.Add(2*time.Second), "COMPLETE")
	for _, order := range [][]record.Item{{start, running, complete}, {complete, running, start}, {running, complete, start, complete}} {
		r, err := buildRows(order)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range r.runs {
			got = append(got, fmt.Sprintf("%s %s %s %v %v", x.key, x.jobKey, x.status, timeOrNil(x.startedAt), timeOrNil(x.endedAt)))
		}
		want := []string{
			fmt.Sprintf("parent ol/dag  <nil> <nil>"),
			fmt.Sprintf("run-ol ol/model success %v %v", t0, t0.Add(2*time.Second)),
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("runs = %q, want %q", got, want)
		}
		if len(r.parents) != 1 || r.parents[0] != (parentRow{run: "run-ol", parent: "parent"}) {
			t.Errorf("parents = %+v", r.parents)
		}
		if len(r.jobs) != 2 || r.jobs[0].key != "ol/dag" || r.jobs[1].key != "ol/model" {
			t.Errorf("jobs = %+v", r.jobs)
		}
	}
	fail := olRun("", t0.Add(3*time.Second), "FAIL")
	r, _ := buildRows([]record.Item{fail, complete, olRun("", t0.Add(4*time.Second), "RUNNING")})
	if x := r.runs[1]; x.status != StatusFailure || !x.endedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("a later FAIL after COMPLETE, then RUNNING: %s at %v, want failure at %v", x.status, x.endedAt, t0.Add(3*time.Second))
	}
}

// nested is a hand-built event of job "etl/nested" that writes struct field c#total.eur of table c
// from field a#amount.eur of path a: columns with their fields (plan.Column.Parent).
func nested(prefix string, at time.Time) record.Item {
	it := fixture(prefix, at, "")[1]
	it.Event.EventID = prefix + "run-nested"
	it.Event.App.Name = "nested"
	a, c := it.Lineage.Reads[0], it.Lineage.Writes[0]
	a.Columns = append(append([]plan.Column(nil), a.Columns...), plan.Column{Key: a.Columns[1].Key + ".eur", Name: "amount.eur", Parent: a.Columns[1].Key})
	c.Columns = append(append([]plan.Column(nil), c.Columns...), plan.Column{Key: c.Columns[0].Key + ".eur", Name: "total.eur", Parent: c.Columns[0].Key})
	it.Lineage = &plan.Lineage{
		Reads:  []plan.Dataset{a},
		Writes: []plan.Write{c},
		Edges:  []plan.Edge{{Source: a.Columns[2].Key, Target: c.Columns[1].Key, Transformations: tf(plan.Direct, plan.Identity, "")}},
	}
	return it
}

func TestFieldsHangOffTheirParents(t *testing.T) {
	r, err := buildRows([]record.Item{nested("", t0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.columns {
		got = append(got, c.key+" parent="+c.parent)
	}
	want := "b#amount parent=|b#amount.eur parent=b#amount|b#id parent=|c#total parent=|c#total.eur parent=c#total"
	if strings.Join(got, "|") != want {
		t.Errorf("columns = %s, want %s", strings.Join(got, "|"), want)
	}
	bad := nested("", t0)
	bad.Lineage.Reads[0].Columns[2].Parent = "b#nothing"
	if err := record.Check(&bad); !errors.Is(err, record.ErrInvalidItem) || !strings.Contains(err.Error(), `has parent "b#nothing"`) {
		t.Errorf("Check(field without its parent) = %v", err)
	}
}

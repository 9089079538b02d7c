package record

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

var t0 = time.Date(2026, 11, 30, 10, 15, 2, 100_000_000, time.UTC)

// load is a hand-built item (a unit-test input, not what Spark emits): job "etl/load" copies
// columns id and amount of file a into table b, keeping the rows whose amount is positive.
func load() Item {
	columns := func(key string, names ...string) []plan.Column {
		var out []plan.Column
		for _, n := range names {
			out = append(out, plan.Column{Key: key + "#" + n, Name: n, Type: "string"})
		}
		return out
	}
	role := func(typ, subtype, expr string) []plan.Transformation {
		return []plan.Transformation{{Type: typ, Subtype: subtype, Expr: expr}}
	}
	a := plan.Dataset{Key: "a", Namespace: "ns", Name: "a", Kind: "path", Columns: columns("a", "id", "amount")}
	b := plan.Dataset{Key: "b", Namespace: "ns", Name: "b", Kind: "table", Columns: columns("b", "id", "amount")}
	return Item{
		Event: &events.Envelope{EventID: "run-load", EmittedAt: t0.Add(time.Second).Format(time.RFC3339Nano),
			App:   events.App{Name: "load", Namespace: "etl"},
			Query: events.Query{Status: "success", EndedAt: t0.Format(time.RFC3339Nano)}},
		Lineage: &plan.Lineage{
			Reads:  []plan.Dataset{a},
			Writes: []plan.Write{{Dataset: b}},
			Edges: []plan.Edge{
				{Source: "a#id", Target: "b#id", Transformations: role(plan.Direct, plan.Identity, "")},
				{Source: "a#amount", Target: "b#amount", Transformations: role(plan.Direct, plan.TransformationSub, "amount * 100")},
			},
			RowDeps: []plan.Edge{{Source: "a#amount", Target: "b", Transformations: role(plan.Indirect, plan.FilterSub, "amount > 0")}},
		},
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Item)
		want   string
	}{
		{"ok", func(*Item) {}, ""},
		{"no lineage", func(it *Item) { it.Lineage = nil }, "without event or lineage"},
		{"no event id", func(it *Item) { it.Event.EventID = "" }, "empty event id"},
		{"no app name", func(it *Item) { it.Event.App.Name = "" }, "empty app name"},
		{"no time", func(it *Item) { it.Event.Query.EndedAt = ""; it.Event.EmittedAt = "yesterday" }, "neither a valid query.endedAt nor emittedAt"},
		{"empty dataset key", func(it *Item) { it.Lineage.Writes[0].Key = "" }, "writes[0] has an empty key"},
		{"empty column key", func(it *Item) { it.Lineage.Reads[0].Columns[1].Key = "" }, "reads[0] (a) column 1 has an empty key"},
		{"edge end not a column", func(it *Item) { it.Lineage.Edges[1].Target = "b#nope" }, `edge 1 (a#amount -> b#nope): column "b#nope" is not a column`},
		{"row dependency to a dataset not written", func(it *Item) { it.Lineage.RowDeps[0].Target = "a" }, `row-level dependency 0 (a#amount => a): not from a column to a written dataset`},
		{"edge without transformations", func(it *Item) { it.Lineage.Edges[0].Transformations = nil }, `edge 0 (a#id -> b#id) has no transformation`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := load()
			tc.mutate(&it)
			err := Check(&it)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidItem) {
				t.Errorf("Check = %v, want ErrInvalidItem", err)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEventTime(t *testing.T) {
	env := &events.Envelope{EmittedAt: "2026-11-30T10:15:03Z", Query: events.Query{EndedAt: "2026-11-30T11:15:02.1+01:00"}}
	if got, _ := EventTime(env); !got.Equal(t0) || got.Location() != time.UTC {
		t.Errorf("EventTime = %v, want the query end time %v in UTC", got, t0)
	}
	env.Query.EndedAt = ""
	if got, _ := EventTime(env); !got.Equal(t0.Add(900 * time.Millisecond)) {
		t.Errorf("EventTime without endedAt = %v, want emittedAt", got)
	}
}

// A listener event's run is CHILD_OF the scheduler's run it names (events.Parent, with its root);
// a write of a foreachBatch micro-batch is CHILD_OF its streaming query's run instead, with the
// scheduler's runs above that one, so the chain reads write → stream run → task run → DAG run.
// The stream's own event (funcName stream, eventId = its run id) has the scheduler's run.
func TestParentSchedulerAndStream(t *testing.T) {
	sched := &events.Parent{Namespace: "airflow", Name: "dag.task", RunID: "task-run",
		Root: &events.Parent{Namespace: "airflow", Name: "dag", RunID: "dag-run"}}
	chain := func(p *ParentRun) string {
		var out []string
		for ; p != nil; p = p.Root {
			out = append(out, p.JobNamespace+"/"+p.JobName+"@"+p.RunID)
		}
		return strings.Join(out, " < ")
	}
	batch := int64(3)
	for _, tc := range []struct {
		name string
		env  events.Envelope
		want string
	}{
		{"plain write", events.Envelope{EventID: "e1", App: events.App{Namespace: "ns", Name: "app"}, Parent: sched},
			"airflow/dag.task@task-run < airflow/dag@dag-run"},
		{"plain write, no scheduler", events.Envelope{EventID: "e1", App: events.App{Namespace: "ns", Name: "app"}}, ""},
		{"stream run", events.Envelope{EventID: "run-1", App: events.App{Namespace: "ns", Name: "app"}, Parent: sched,
			Query: events.Query{FuncName: "stream", Stream: &events.Stream{ID: "q", RunID: "run-1"}}},
			"airflow/dag.task@task-run < airflow/dag@dag-run"},
		{"foreachBatch write", events.Envelope{EventID: "e2", App: events.App{Namespace: "ns", Name: "app"}, Parent: sched,
			Query: events.Query{FuncName: "command", Stream: &events.Stream{ID: "q", RunID: "run-1", BatchID: &batch}}},
			"ns/app@run-1 < airflow/dag.task@task-run < airflow/dag@dag-run"},
		{"foreachBatch write, no scheduler", events.Envelope{EventID: "e2", App: events.App{Namespace: "ns", Name: "app"},
			Query: events.Query{FuncName: "command", Stream: &events.Stream{ID: "q", RunID: "run-1", BatchID: &batch}}},
			"ns/app@run-1"},
	} {
		env := tc.env
		if got := chain(Item{Event: &env}.Parent()); got != tc.want {
			t.Errorf("%s: parents %q, want %q", tc.name, got, tc.want)
		}
	}
}

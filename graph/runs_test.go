package graph

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// A listener event names its Spark Connect operation and its scheduler's run (schema 1.5): the
// Run keeps the operation, is CHILD_OF the scheduler's run (under that run's job), which is
// CHILD_OF its root run; Reader.Runs answers by the application id and by either parent run,
// with the runs' reads, writes and lineage; a redelivery changes nothing.
func TestRunsOfAppAndParent(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	items := fixture(p, t0, "")
	app := p + "local-42"
	task, dag := p+"task-run", p+"dag-run"
	for i, it := range items {
		it.Event.App.ID = app
		it.Event.Parent = &events.Parent{Namespace: p + "airflow", Name: "nightly.load", RunID: task,
			Root: &events.Parent{Namespace: p + "airflow", Name: "nightly", RunID: dag}}
		it.Event.Query.Connect = &events.Connect{UserID: "alice", SessionID: "s-1", OperationID: "op-" + string(rune('a'+i)), ClientType: "_SPARK_CONNECT_PYTHON"}
	}
	items[1].Event.Parent = nil // the report was not launched by the scheduler
	for range 2 {
		if err := w.Write(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	byApp, err := r.Runs(ctx, RunQuery{App: app})
	if err != nil {
		t.Fatal(err)
	}
	if len(byApp.Runs) != 2 || byApp.Truncated {
		t.Fatalf("runs of %s: %+v", app, byApp.Runs)
	}
	load := byApp.Runs[0]
	if load.Key != p+"run-load" || !reflect.DeepEqual(load.Parent, &RunRef{Key: task, Job: p + "airflow/nightly.load"}) ||
		!reflect.DeepEqual(load.Connect, &RunConnect{UserID: "alice", SessionID: "s-1", OperationID: "op-a", ClientType: "_SPARK_CONNECT_PYTHON"}) {
		t.Errorf("run %s: parent %+v, connect %+v", load.Key, load.Parent, load.Connect)
	}
	if byApp.Runs[1].Parent != nil {
		t.Errorf("the report has parent %+v, want none", byApp.Runs[1].Parent)
	}
	if got := strings.Join(byApp.Reads, " ") + " | " + strings.Join(byApp.Writes, " "); got != p+"a "+p+"b | "+p+"b "+p+"c" {
		t.Errorf("reads | writes = %s", got)
	}
	if len(byApp.Edges) != 5 {
		t.Errorf("%d edges, want the 3 FEEDS and 2 DECIDES_ROWS of the two runs: %+v", len(byApp.Edges), byApp.Edges)
	}

	for _, q := range []RunQuery{{Parent: task}, {Parent: task, ParentJob: p + "airflow/nightly.load"}, {Parent: dag}} {
		under, err := r.Runs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, x := range under.Runs {
			keys = append(keys, strings.TrimPrefix(x.Key, p))
		}
		want := "run-load"
		if q.Parent == dag {
			want = "run-load task-run" // the task's run is under the DAG run too
		}
		if strings.Join(keys, " ") != want || len(under.Edges) != 3 {
			t.Errorf("runs under %s: %v with %d edges; want %s with the load's 3", q.Parent, keys, len(under.Edges), want)
		}
	}
	if _, err := r.Runs(ctx, RunQuery{Parent: task, ParentJob: p + "airflow/other"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("parent of another job: %v, want not found", err)
	}
	if _, err := r.Runs(ctx, RunQuery{App: p + "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown application: %v, want not found", err)
	}
	if one, err := r.Runs(ctx, RunQuery{App: app, Limit: 1}); err != nil || len(one.Runs) != 1 || !one.Truncated {
		t.Errorf("limit 1: %v, %+v", err, one)
	}
}

func TestParseParent(t *testing.T) {
	for in, want := range map[string][2]string{
		"0199a1f2":                  {"0199a1f2", ""},
		"airflow/dag.task/0199a1f2": {"0199a1f2", "airflow/dag.task"},
		"kafka://k1:9092/ns/job/r1": {"r1", "kafka://k1:9092/ns/job"},
		"airflow/dag.task/":         {"", "airflow/dag.task"},
	} {
		if run, job := ParseParent(in); run != want[0] || job != want[1] {
			t.Errorf("ParseParent(%q) = %q, %q; want %q, %q", in, run, job, want[0], want[1])
		}
	}
}

package graph

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/plan"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// summary renders a subgraph on a few lines: columns with distance, then edges.
func summary(sg *Subgraph, prefix string) []string {
	var out []string
	for _, c := range sg.Columns {
		out = append(out, strings.TrimPrefix(c.Key, prefix)+" "+string(rune('0'+c.Distance)))
	}
	for _, e := range sg.Edges {
		s := e.Kind + " " + strings.TrimPrefix(e.Source, prefix) + ">" + strings.TrimPrefix(e.Target, prefix) + " " + strings.TrimPrefix(e.Job, prefix)
		if e.Stale {
			s += " stale"
		}
		out = append(out, s)
	}
	return out
}

func TestWalk(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	walk := func(w Walk) *Subgraph {
		t.Helper()
		if w.MaxColumns == 0 {
			w.MaxColumns, w.MaxEdges = 100, 100
		}
		sg, err := r.Walk(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		return sg
	}
	for _, tc := range []struct {
		name                string
		walk                Walk
		want                []string
		steps               int
		truncated, complete bool
	}{
		{"upstream across jobs, through a row-level dependency", Walk{From: []string{p + "c#total"}, Direction: Upstream, Steps: 5}, []string{
			"c#total 0", "b#amount 1", "b#id 1", "a#amount 2", "a#id 2",
			"DECIDES_ROWS a#amount>b etl/load", "DECIDES_ROWS b#id>c etl/report",
			"FEEDS a#amount>b#amount etl/load", "FEEDS a#id>b#id etl/load", "FEEDS b#amount>c#total etl/report",
		}, 2, false, true},
		{"one step", Walk{From: []string{p + "c#total"}, Direction: Upstream, Steps: 1}, []string{
			"c#total 0", "b#amount 1", "b#id 1", "DECIDES_ROWS b#id>c etl/report", "FEEDS b#amount>c#total etl/report",
		}, 1, false, false},
		{"downstream: deciding b's rows reaches every column of b", Walk{From: []string{p + "a#amount"}, Direction: Downstream, Steps: 5}, []string{
			"a#amount 0", "b#amount 1", "b#id 1", "c#total 2",
			"DECIDES_ROWS a#amount>b etl/load", "DECIDES_ROWS b#id>c etl/report",
			"FEEDS a#amount>b#amount etl/load", "FEEDS b#amount>c#total etl/report",
		}, 2, false, true},
		{"a step over the column bound is not taken", Walk{From: []string{p + "c#total"}, Direction: Upstream, Steps: 5, MaxColumns: 2, MaxEdges: 100}, []string{
			"c#total 0",
		}, 0, true, false},
		{"a step over the edge bound is not taken", Walk{From: []string{p + "c#total"}, Direction: Upstream, Steps: 5, MaxColumns: 100, MaxEdges: 3}, []string{
			"c#total 0", "b#amount 1", "b#id 1", "DECIDES_ROWS b#id>c etl/report", "FEEDS b#amount>c#total etl/report",
		}, 1, true, false},
		{"as of before the first run: nothing yet", Walk{From: []string{p + "c#total"}, Direction: Upstream, Steps: 5, AsOf: t0.Add(-time.Minute)}, []string{
			"c#total 0",
		}, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sg := walk(tc.walk)
			if got := summary(sg, p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if sg.Steps != tc.steps || sg.Truncated != tc.truncated || sg.Complete != tc.complete {
				t.Errorf("steps %d truncated %v complete %v, want %d %v %v", sg.Steps, sg.Truncated, sg.Complete, tc.steps, tc.truncated, tc.complete)
			}
		})
	}

	// The edge's facts as stored: every role with its expression, the run, the times.
	sg := walk(Walk{From: []string{p + "b#amount"}, Direction: Upstream, Steps: 1})
	i := slices.IndexFunc(sg.Edges, func(e Edge) bool { return e.Kind == Feeds })
	want := Edge{Kind: Feeds, Source: p + "a#amount", Target: p + "b#amount", Job: p + "etl/load",
		Roles: []Role{{Type: "DIRECT", Subtype: "TRANSFORMATION", Expr: "amount * 100"}, {Type: "INDIRECT", Subtype: "CONDITIONAL", Expr: "amount > 0"}},
		Type:  "DIRECT", Subtype: "TRANSFORMATION", FirstSeen: &t0, LastSeen: &t0, LastRun: p + "run-load"}
	if i < 0 || !reflect.DeepEqual(sg.Edges[i], want) {
		t.Errorf("edge %+v, want %+v", sg.Edges, want)
	}

	// Impact: every column downstream but the start, with distance and the jobs that reach it.
	im := walk(Walk{From: []string{p + "a#amount"}, Direction: Downstream, Steps: 5}).Impact()
	var got []string
	for _, x := range im {
		got = append(got, strings.TrimPrefix(x.Key, p)+" "+string(rune('0'+x.Distance))+" "+strings.TrimPrefix(strings.Join(x.Jobs, ","), p))
	}
	if want := []string{"b#amount 1 etl/load", "b#id 1 etl/load", "c#total 2 etl/report"}; !reflect.DeepEqual(got, want) {
		t.Errorf("impact %v, want %v", got, want)
	}

	// A later application run of etl/load (another app id) writes b without a#id -> b#id: that
	// FEEDS is stale now, and was not as of before that run.
	later := t0.Add(time.Hour)
	again := fixture(p, later, "-2")[:1]
	again[0].Event.App.ID = "local-2"
	again[0].Lineage.Edges = again[0].Lineage.Edges[1:]
	if err := w.Write(ctx, again); err != nil {
		t.Fatal(err)
	}
	up := Walk{From: []string{p + "b#id"}, Direction: Upstream, Steps: 1}
	if got := summary(walk(up), p); !slices.Contains(got, "FEEDS a#id>b#id etl/load stale") {
		t.Errorf("now: %v, want a#id>b#id stale", got)
	}
	up.AsOf = later.Add(-time.Minute)
	if got := summary(walk(up), p); !slices.Contains(got, "FEEDS a#id>b#id etl/load") {
		t.Errorf("as of before the second run: %v, want a#id>b#id not stale", got)
	}

	// Bad walks are refused with what was wrong.
	for _, bad := range []Walk{
		{From: []string{p + "c#total"}, Direction: Upstream, Steps: 0, MaxColumns: 1, MaxEdges: 1},
		{From: []string{p + "c#total"}, Direction: Upstream, Steps: MaxSteps + 1, MaxColumns: 1, MaxEdges: 1},
		{From: []string{p + "c#total"}, Direction: "sideways", Steps: 1, MaxColumns: 1, MaxEdges: 1},
		{Direction: Upstream, Steps: 1, MaxColumns: 1, MaxEdges: 1},
		{From: []string{p + "nope#x"}, Direction: Upstream, Steps: 1, MaxColumns: 1, MaxEdges: 1},
	} {
		if _, err := r.Walk(ctx, bad); !errors.Is(err, ErrWalk) {
			t.Errorf("Walk(%+v): %v, want ErrWalk", bad, err)
		}
	}
	if _, err := r.Walk(ctx, Walk{From: []string{p + "nope#x"}, Direction: Upstream, Steps: 1, MaxColumns: 1, MaxEdges: 1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown start: %v, want ErrNotFound", err)
	}
}

func TestDetails(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, fixture(p, t0.Add(time.Hour), "-2")); err != nil {
		t.Fatal(err)
	}
	job, err := r.Job(ctx, p+"etl/load", 10)
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "load" || job.RunCount != 2 || job.Statuses["success"] != 2 || len(job.Runs) != 2 ||
		job.Runs[0].Key != p+"run-load-2" || !reflect.DeepEqual(job.Runs[0].Writes, []string{p + "b"}) ||
		len(job.Reads) != 1 || job.Reads[0].Dataset != p+"a" || job.Reads[0].Runs != 2 || len(job.Writes) != 1 || job.Writes[0].Dataset != p+"b" {
		t.Errorf("job: %+v", job)
	}
	col, err := r.Column(ctx, p+"b#amount")
	if err != nil {
		t.Fatal(err)
	}
	if col.Name != "amount" || col.Dataset != p+"b" || col.DataType != "string" || !reflect.DeepEqual(col.Writers, []string{p + "etl/load"}) {
		t.Errorf("column: %+v", col)
	}
	ds, err := r.Dataset(ctx, p+"b")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Columns) != 2 || ds.Columns[0].Name != "amount" || !reflect.DeepEqual(ds.Writers, []string{p + "etl/load"}) || !reflect.DeepEqual(ds.Readers, []string{p + "etl/report"}) {
		t.Errorf("dataset: %+v", ds)
	}
	run, err := r.Run(ctx, p+"run-report")
	if err != nil {
		t.Fatal(err)
	}
	if run.Job != p+"etl/report" || run.Status != "success" || run.ExecutionID != 3 || !reflect.DeepEqual(run.Reads, []string{p + "b"}) {
		t.Errorf("run: %+v", run)
	}
	for _, err := range []error{
		func() error { _, err := r.Job(ctx, p+"none", 1); return err }(),
		func() error { _, err := r.Column(ctx, p+"none#x"); return err }(),
		func() error { _, err := r.Dataset(ctx, p+"none"); return err }(),
		func() error { _, err := r.Run(ctx, p+"none"); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown key: %v, want ErrNotFound", err)
		}
	}
}

func TestSearch(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	// Names unique to this test: u is 8 hex digits from the prefix.
	u := strings.TrimSuffix(strings.TrimPrefix(p, "test-"), "/")
	items := fixture(p, t0, "")
	for i := range items {
		items[i].Event.App.Name = "job_" + u + "_" + items[i].Event.App.Name
		rename := func(ds *plan.Dataset) {
			ds.Name = "db_" + u + "." + ds.Name
			ds.Columns = slices.Clone(ds.Columns) // shared by the reads and writes of the fixture
			for k := range ds.Columns {
				ds.Columns[k].Name = "col_" + u + "_" + ds.Columns[k].Name
			}
		}
		for k := range items[i].Lineage.Reads {
			rename(&items[i].Lineage.Reads[k])
		}
		for k := range items[i].Lineage.Writes {
			rename(&items[i].Lineage.Writes[k].Dataset)
		}
	}
	if err := w.Write(ctx, items); err != nil {
		t.Fatal(err)
	}
	find := func(q string, limit int) []string {
		t.Helper()
		hits, err := r.Search(ctx, q, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.Kind+" "+strings.TrimPrefix(h.Key, p)+" "+h.Match)
		}
		return out
	}
	for _, tc := range []struct {
		q     string
		limit int
		want  []string
	}{
		{"col_" + u + "_am", 10, []string{"column a#amount prefix", "column b#amount prefix"}},
		{u + "_amount", 10, []string{"column a#amount substring", "column b#amount substring"}},
		{"db_" + u + ".b", 10, []string{"dataset b exact"}},
		{"db_" + u + ".b.col_" + u + "_i", 10, []string{"column b#id prefix"}},
		{"job_" + u, 10, []string{"job etl/job_" + u + "_load prefix", "job etl/job_" + u + "_report prefix"}},
		{"_" + u + "_rep", 10, []string{"job etl/job_" + u + "_report substring"}},
		{"col_" + u, 2, []string{"column a#amount prefix", "column b#amount prefix"}}, // 2 per kind, by name
		{"nothing-" + u, 10, nil},
		{"", 10, nil},
	} {
		if got := find(tc.q, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q, %d) = %v, want %v", tc.q, tc.limit, got, tc.want)
		}
	}
	if _, err := r.Search(ctx, "x", MaxHits+1); err == nil {
		t.Error("Search over MaxHits: no error")
	}
}

// TestReaderIsReadOnly: the Reader's transactions are read transactions; Neo4j refuses a write.
func TestReaderIsReadOnly(t *testing.T) {
	d := testDriver(t)
	r := NewReader(d, "")
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	_, err := r.query(context.Background(), `CREATE (:Dataset {key: $k})`, map[string]any{"k": p + "probe"})
	if err == nil {
		t.Fatal("a CREATE through the Reader succeeded")
	}
	if !strings.Contains(err.Error(), "read") {
		t.Errorf("error %v does not say it is a read transaction", err)
	}
}

// wipe deletes what a test wrote under prefix.
func wipe(t *testing.T, d neo4j.DriverWithContext, prefix string) {
	if err := stack.WipeKeys(context.Background(), d, prefix); err != nil {
		t.Error(err)
	}
}

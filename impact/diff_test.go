package impact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/colline/colline/plan"
)

func ds(key string, cols ...string) plan.Dataset {
	d := plan.Dataset{Key: key, Kind: "table"}
	for _, c := range cols {
		name, typ, _ := strings.Cut(c, ":")
		d.Columns = append(d.Columns, plan.Column{Key: key + "#" + name, Name: name, Type: typ})
	}
	return d
}

func edge(src, dst string, ts ...string) plan.Edge {
	e := plan.Edge{Source: src, Target: dst}
	for _, t := range ts {
		role, expr, _ := strings.Cut(t, " ")
		typ, sub, _ := strings.Cut(role, "/")
		e.Transformations = append(e.Transformations, plan.Transformation{Type: typ, Subtype: sub, Expr: expr})
	}
	return e
}

const (
	src = "spark_catalog/db.src"
	out = "spark_catalog/db.out"
)

func base() *plan.Lineage {
	return &plan.Lineage{
		Writes: []plan.Write{{Dataset: ds(out, "a:int", "b:string")}},
		Edges: []plan.Edge{
			edge(src+"#x", out+"#a", "DIRECT/IDENTITY"),
			edge(src+"#y", out+"#b", "DIRECT/TRANSFORMATION upper(y)"),
		},
		RowDeps: []plan.Edge{edge(src+"#z", out, "INDIRECT/FILTER (z > ?)")},
	}
}

func render(cs []Change) string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, fmt.Sprintf("%s %s %s breaking=%v affected=%d", c.Kind, c.Column, c.Source, c.Breaking, len(c.Affected)))
	}
	return strings.Join(lines, "\n")
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(l *plan.Lineage)
		want   string
	}{
		{"no change", func(*plan.Lineage) {}, ""},
		{"column removed", func(l *plan.Lineage) {
			l.Writes[0].Dataset = ds(out, "a:int")
			l.Edges = l.Edges[:1]
		}, "column_removed " + out + "#b  breaking=true affected=1\n" +
			"edge_removed " + out + "#b " + src + "#y breaking=false affected=1"},
		{"column retyped", func(l *plan.Lineage) { l.Writes[0].Dataset = ds(out, "a:bigint", "b:string") },
			"column_retyped " + out + "#a  breaking=true affected=1"},
		{"type case is no change", func(l *plan.Lineage) { l.Writes[0].Dataset = ds(out, "a:INT", "b:string") }, ""},
		{"column added", func(l *plan.Lineage) { l.Writes[0].Dataset = ds(out, "a:int", "b:string", "c:int") },
			"column_added " + out + "#c  breaking=false affected=1"},
		{"expression changed", func(l *plan.Lineage) { l.Edges[1] = edge(src+"#y", out+"#b", "DIRECT/TRANSFORMATION lower(y)") },
			"edge_changed " + out + "#b " + src + "#y breaking=false affected=1"},
		{"role added", func(l *plan.Lineage) {
			l.Edges[1] = edge(src+"#y", out+"#b", "DIRECT/TRANSFORMATION upper(y)", "INDIRECT/CONDITIONAL y")
		}, "edge_changed " + out + "#b " + src + "#y breaking=false affected=1"},
		{"new source", func(l *plan.Lineage) {
			l.Edges = append(l.Edges, edge(src+"#w", out+"#a", "DIRECT/AGGREGATION sum(w)"))
		},
			"edge_added " + out + "#a " + src + "#w breaking=false affected=1"},
		{"filter changed: every column affected", func(l *plan.Lineage) { l.RowDeps[0] = edge(src+"#z", out, "INDIRECT/FILTER (z < ?)") },
			"rows_changed  " + src + "#z breaking=false affected=2"},
		{"filter removed", func(l *plan.Lineage) { l.RowDeps = nil }, "rows_removed  " + src + "#z breaking=false affected=2"},
		{"no longer written", func(l *plan.Lineage) { *l = plan.Lineage{} }, "dataset_removed   breaking=true affected=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := render(Diff([]*plan.Lineage{base()}, []*plan.Lineage{n})); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Several statements of one side are one lineage: two inserts into the same table in two events
// are compared as one write.
func TestDiffMergesEvents(t *testing.T) {
	a, b := base(), base()
	b.Edges, b.RowDeps = []plan.Edge{b.Edges[1]}, nil
	a.Edges = a.Edges[:1]
	if got := render(Diff([]*plan.Lineage{base()}, []*plan.Lineage{a, b})); got != "" {
		t.Errorf("split into two events: %s", got)
	}
	added := &plan.Lineage{Writes: []plan.Write{{Dataset: ds("spark_catalog/db.new", "c:int")}},
		Edges: []plan.Edge{edge(src+"#x", "spark_catalog/db.new#c", "DIRECT/IDENTITY")}}
	got := render(Diff([]*plan.Lineage{base()}, []*plan.Lineage{base(), added}))
	want := "dataset_added   breaking=false affected=1\nedge_added spark_catalog/db.new#c " + src + "#x breaking=false affected=1"
	if got != want {
		t.Errorf("a new dataset:\n%s\nwant\n%s", got, want)
	}
}

func TestReportExit(t *testing.T) {
	removed := Change{Kind: ColumnRemoved, Dataset: out, Column: out + "#b", Breaking: true, Affected: []string{out + "#b"}}
	altered := Change{Kind: EdgeChanged, Dataset: out, Column: out + "#a", Affected: []string{out + "#a"}}
	down := map[string][]Downstream{
		out + "#b": {{Column: "spark_catalog/db.next#b", Dataset: "spark_catalog/db.next", Hops: 1, Jobs: []string{"default/next"}}},
		out + "#a": {{Column: "spark_catalog/db.next#a", Dataset: "spark_catalog/db.next", Hops: 1, Jobs: []string{"default/next"}},
			{Column: "spark_catalog/db.last#a", Dataset: "spark_catalog/db.last", Hops: 2, Jobs: []string{"default/next", "default/last"}}},
	}
	for _, tc := range []struct {
		name    string
		changes []Change
		down    map[string][]Downstream
		failOn  string
		exit    int
	}{
		{"breaking with a reader", []Change{removed}, down, FailOnBreaking, ExitBreaking},
		{"breaking without a reader", []Change{removed}, nil, FailOnBreaking, ExitOK},
		{"breaking, never fail", []Change{removed}, down, FailOnNever, ExitOK},
		{"altering", []Change{altered}, down, FailOnBreaking, ExitOK},
		{"altering, fail on alter", []Change{altered}, down, FailOnAlter, ExitAlters},
		{"both, fail on alter: breaking wins", []Change{altered, removed}, down, FailOnAlter, ExitBreaking},
		{"no change", nil, down, FailOnAlter, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReport(tc.changes, tc.down, tc.failOn)
			if r.Exit != tc.exit {
				t.Errorf("exit %d, want %d (%+v)", r.Exit, tc.exit, r.Summary)
			}
		})
	}
	r := NewReport([]Change{altered, removed}, down, FailOnBreaking)
	if r.Summary.DownstreamColumns != 3 || len(r.Summary.DownstreamDatasets) != 2 || strings.Join(r.Summary.DownstreamJobs, ",") != "default/next" {
		t.Errorf("summary %+v: want 3 columns in 2 datasets, read by default/next", r.Summary)
	}
	if got := r.Changes[0].Downstream; len(got) != 2 || got[0].Hops != 1 || got[1].Hops != 2 {
		t.Errorf("downstream not nearest first: %+v", got)
	}
}

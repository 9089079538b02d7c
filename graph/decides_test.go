package graph

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/colline/colline/plan"
)

// A row-level dependency of some UNION branches only (plan.Transformation.Rows) keeps its scope in
// the graph: DECIDES_ROWS.rows, one entry per role, read back by every reader; a role of every row
// keeps none.
func TestDecidesRowsKeepsItsRows(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	items := fixture(p, t0, "")
	load := items[0].Lineage
	a := load.Reads[0]
	load.RowDeps = []plan.Edge{{Source: a.Columns[1].Key, Target: load.Writes[0].Key, Transformations: []plan.Transformation{
		{Type: plan.Indirect, Subtype: plan.FilterSub, Expr: "amount > 0", Rows: a.Key},
		{Type: plan.Indirect, Subtype: plan.JoinSub, Expr: "a.id = x.id"},
	}}}
	if err := w.Write(ctx, items); err != nil {
		t.Fatal(err)
	}
	lin, err := r.Written(ctx, []string{load.Writes[0].Key}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(lin.RowDeps) != 1 || !slices.Equal(lin.RowDeps[0].Transformations, load.RowDeps[0].Transformations) {
		t.Errorf("read back %+v, want %+v", lin.RowDeps, load.RowDeps)
	}
	rows, err := r.Edges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, e := range rows {
		if e.Kind == DecidesRows && e.Target == load.Writes[0].Key {
			roles = e.Roles
		}
	}
	if want := []string{"INDIRECT/FILTER rows from " + a.Key, "INDIRECT/JOIN"}; !slices.Equal(roles, want) {
		t.Errorf("DECIDES_ROWS roles %q, want %q", roles, want)
	}
	sg, err := r.Walk(ctx, Walk{From: []string{load.Writes[0].Columns[1].Key}, Direction: Upstream, Steps: 2, MaxColumns: 100, MaxEdges: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sg.Edges {
		if e.Kind == DecidesRows {
			for _, ro := range e.Roles {
				got = append(got, ro.Subtype+" ["+strings.Join(ro.Rows, ",")+"]")
			}
		}
	}
	if want := []string{"FILTER [" + a.Key + "]", "JOIN []"}; !slices.Equal(got, want) {
		t.Errorf("walk's DECIDES_ROWS roles %q, want %q", got, want)
	}
}

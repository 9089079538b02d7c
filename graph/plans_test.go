package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/graph"
)

// TestWritePlansIgnoreStatistics (make plans; it wipes the graph, so COLLINE_TEST_WIPE_GRAPH must
// be set) is why Write may tell Neo4j never to replan its statements: each one plans the same on
// an empty graph as on one that holds three copies of the TPC-DS corpus, so the first plan is as
// good as any later one. CacheProperties, which only reads a property early, is left out of the
// comparison: it does not change how the store is reached.
func TestWritePlansIgnoreStatistics(t *testing.T) {
	ctx := context.Background()
	d := aidDriver(ctx, t, "COLLINE_TEST_WIPE_GRAPH")
	raws := tpcdsRaw(t)
	qs, err := queries(tpcdsCopy(t, raws, 0)[:100])
	if err != nil {
		t.Fatal(err)
	}
	empty := writePlans(ctx, t, d, qs)
	w := graph.NewWriter(d, "")
	for c := range 3 {
		items := tpcdsCopy(t, raws, c)
		for i := 0; i < len(items); i += 100 {
			if err := w.Write(ctx, items[i:min(i+100, len(items))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := neo4j.ExecuteQuery(ctx, d, "CALL db.resampleOutdatedIndexes()", nil, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	full := writePlans(ctx, t, d, qs)
	if len(empty) == 0 || len(empty) != len(full) {
		t.Fatalf("%d plans on the empty graph, %d on the full one", len(empty), len(full))
	}
	for i := range empty {
		if empty[i] != full[i] {
			t.Errorf("the plan depends on the statistics.\nOn the empty graph:\n%s\nOn the full graph:\n%s", empty[i], full[i])
		}
	}
	t.Logf("%d statements plan the same on the empty and the full graph", len(empty))
}

// writePlans returns the plan of each statement of qs that has rows, planned afresh (the query
// caches cleared) in a transaction that is rolled back: one operator a line, with its details,
// indented by depth, CacheProperties left out.
func writePlans(ctx context.Context, t *testing.T, d neo4j.DriverWithContext, qs []query) []string {
	t.Helper()
	if _, err := neo4j.ExecuteQuery(ctx, d, "CALL db.clearQueryCaches()", nil, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
	defer s.Close(ctx)
	tx, err := s.BeginTransaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var plans []string
	for _, q := range qs {
		if q.rows == 0 {
			continue
		}
		var b strings.Builder
		var walk func(p neo4j.Plan, depth int)
		walk = func(p neo4j.Plan, depth int) {
			if op, _, _ := strings.Cut(p.Operator(), "@"); op != "CacheProperties" {
				fmt.Fprintf(&b, "%s%s %v\n", strings.Repeat("  ", depth), op, p.Arguments()["Details"])
				depth++
			}
			for _, c := range p.Children() {
				walk(c, depth)
			}
		}
		walk(runIn(ctx, t, tx, "EXPLAIN ", q).Plan(), 0)
		plans = append(plans, q.Name()+":\n"+b.String())
	}
	return plans
}

package graph_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// TestNoEagerTPCDS is TestNoEager on real batches: Write's own statements for TPC-DS batches of
// 100 events, run with PROFILE in a transaction that is rolled back, so that the plans are the
// ones Write executes (EXPLAIN outside a transaction planned the columns statement without the
// Eager that its execution had). No statement may plan an Eager operator or a scan. Each round
// writes, in one transaction, a batch with targets of its own (what is new is created), the same
// batch again (it exists: merged and confirmed), and the other Spark line's events of the same
// queries (new versions of the same jobs' lineage: superseded and merged), so that every
// statement runs with rows.
func TestNoEagerTPCDS(t *testing.T) {
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if uri == "" {
		t.Skip("COLLINE_TEST_NEO4J_URI is not set; run `dev/services start neo4j` and set it to bolt://127.0.0.1:17687")
	}
	ctx := context.Background()
	d, err := graph.NewDriver(uri, os.Getenv("COLLINE_TEST_NEO4J_USER"), os.Getenv("COLLINE_TEST_NEO4J_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if err := graph.NewWriter(d, "").Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	raws := tpcdsRaw(t)
	items := tpcdsCopy(t, raws, 1000+rand.IntN(1_000_000)) // targets no other test has
	half := len(items) / 2                                 // Spark 3.5's events, then 4.1's
	ran := map[string]bool{}
	const size = 100
	for b := 0; b*size < half; b += 2 {
		batch := items[b*size : min((b+1)*size, half)]
		other := items[half+b*size : min(half+(b+1)*size, len(items))]
		s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// the same batch again confirms its datasets' schemas; with their columns in another
		// order it changes them (schema supersede, columns)
		for _, write := range [][]record.Item{batch, batch, reordered(batch), other} {
			err := graph.WriteIn(ctx, tx, write, "PROFILE ", func(name string, rows int, sum neo4j.ResultSummary) {
				ran[name] = true
				eachOperator(sum.Profile(), 0, func(op string, p neo4j.ProfiledPlan, _ int) {
					if op == "Eager" {
						t.Errorf("batch %d: %s plans an Eager operator over %d rows (%v)", b, name, p.Records(), p.Arguments()["Details"])
					}
					if strings.Contains(op, "Scan") {
						t.Errorf("batch %d: %s plans a scan (%s) instead of index seeks and Expand(Into)", b, name, op)
					}
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		tx.Rollback(ctx)
		s.Close(ctx)
	}
	sts, err := graph.Statements(items[:size])
	if err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, st := range sts {
		if !ran[st.Name()] && !slices.Contains([]string{"parents", "marks", "columnMarks", "renames", "changed", "fields", "fieldLinks"}, st.Name()) {
			missed = append(missed, st.Name())
		}
	}
	if len(missed) > 0 {
		t.Errorf("statements that never ran with rows on the TPC-DS batches: %v", missed)
	}
}

// reordered is items with every dataset's columns listed in reverse order (another schema of the
// same columns), each item a copy.
func reordered(items []record.Item) []record.Item {
	out := make([]record.Item, len(items))
	for i, it := range items {
		lin := *it.Lineage
		rev := func(d plan.Dataset) plan.Dataset {
			d.Columns = slices.Clone(d.Columns)
			slices.Reverse(d.Columns)
			return d
		}
		lin.Reads = slices.Clone(lin.Reads)
		for k := range lin.Reads {
			lin.Reads[k] = rev(lin.Reads[k])
		}
		lin.Writes = slices.Clone(lin.Writes)
		for k := range lin.Writes {
			lin.Writes[k].Dataset = rev(lin.Writes[k].Dataset)
		}
		it.Lineage = &lin
		out[i] = it
	}
	return out
}

package graph_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/graph"
)

// TestNoEagerTPCDS is TestNoEager on real batches: the statements of TPC-DS batches of 100
// events, run with PROFILE in a transaction that is rolled back, so that the plans are the ones
// Write executes (EXPLAIN outside a transaction planned the columns statement without the Eager
// that its execution had). No statement may plan an Eager operator or a scan.
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
	items := tpcdsItems(t)
	const size = 100
	for b := 0; b*size < len(items); b += 2 {
		batch := items[b*size : min((b+1)*size, len(items))]
		{
			qs, err := queries(batch)
			if err != nil {
				t.Fatal(err)
			}
			s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
			tx, err := s.BeginTransaction(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range qs {
				if q.rows == 0 {
					continue // Write does not send it
				}
				sum := runIn(ctx, t, tx, "PROFILE ", q)
				eachOperator(sum.Profile(), 0, func(op string, p neo4j.ProfiledPlan, _ int) {
					if op == "Eager" {
						t.Errorf("batch %d: %s plans an Eager operator over %d rows (%v)", b, q.Name(), p.Records(), p.Arguments()["Details"])
					}
					if strings.Contains(op, "Scan") {
						t.Errorf("batch %d: %s plans a scan (%s) instead of index seeks and Expand(Into)", b, q.Name(), op)
					}
				})
			}
			tx.Rollback(ctx)
			s.Close(ctx)
		}
	}
}

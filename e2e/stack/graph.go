package stack

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// WipeGraph deletes every relationship, then every node, of the graph d reaches, in batches that
// are each a transaction of their own (one DETACH DELETE of a million-edge graph would need the
// whole graph in one transaction's state). Constraints and indexes stay. It returns how long it
// took. Only ever point it at a test or benchmark database.
func WipeGraph(ctx context.Context, d neo4j.DriverWithContext) (time.Duration, error) {
	start := time.Now()
	for _, q := range []string{
		`MATCH ()-[r]->() WITH r LIMIT 50000 DELETE r RETURN count(*) AS n`,
		`MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS n`,
	} {
		for {
			res, err := neo4j.ExecuteQuery(ctx, d, q, nil, neo4j.EagerResultTransformer)
			if err != nil {
				return 0, fmt.Errorf("wipe the graph: %w", err)
			}
			if n, _ := res.Records[0].Get("n"); n.(int64) == 0 {
				break
			}
		}
	}
	return time.Since(start), nil
}

// WipeKeys deletes the nodes whose key starts with prefix (and their relationships): the part of
// a shared graph one test wrote.
func WipeKeys(ctx context.Context, d neo4j.DriverWithContext, prefix string) error {
	_, err := neo4j.ExecuteQuery(ctx, d, `MATCH (n) WHERE n.key STARTS WITH $p DETACH DELETE n`,
		map[string]any{"p": prefix}, neo4j.EagerResultTransformer)
	if err != nil {
		return fmt.Errorf("delete the nodes of keys %s*: %w", prefix, err)
	}
	return nil
}

// Snapshot renders, sorted, every node that mine selects (a Cypher clause binding n, run with
// params) and every relationship touching one of them, with all their properties: the part of a
// shared graph one test wrote, to compare before and after. t fails at once on an error.
func Snapshot(ctx context.Context, t testing.TB, d neo4j.DriverWithContext, mine string, params map[string]any) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		mine + " RETURN labels(n) AS a, properties(n) AS b, '' AS c",
		mine + " MATCH (n)-[r]-(y) RETURN type(r) AS a, properties(r) AS b, coalesce(startNode(r).key, '') + ' -> ' + coalesce(endNode(r).key, '') AS c",
	} {
		res, err := neo4j.ExecuteQuery(ctx, d, q, params, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("snapshot of the graph: %v", err)
		}
		for _, r := range res.Records {
			out = append(out, fmt.Sprintf("%v %v %v", r.Values[0], r.Values[1], r.Values[2]))
		}
	}
	sort.Strings(out)
	return out
}

// TestNeo4jURI returns COLLINE_TEST_NEO4J_URI, or skips t when it is not set.
func TestNeo4jURI(t testing.TB) string {
	t.Helper()
	u := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if u == "" {
		t.Skip("COLLINE_TEST_NEO4J_URI is not set; run `dev/services start` and set it to its Bolt URI (bolt://127.0.0.1:17687 by default)")
	}
	return u
}

// Neo4j connects to the stack's Neo4j (no authentication), checks that it answers, and closes the
// driver when t ends; t fails at once, naming dev/services, when Neo4j is not reachable.
func (s *Stack) Neo4j(ctx context.Context, t testing.TB) neo4j.DriverWithContext {
	t.Helper()
	driver, err := neo4j.NewDriverWithContext(s.Neo4jURI, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = driver.Close(context.Background()) })
	if err := driver.VerifyConnectivity(ctx); err != nil {
		t.Fatalf("Neo4j is not reachable at %s (start it with dev/services start): %v", s.Neo4jURI, err)
	}
	return driver
}

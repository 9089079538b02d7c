package graph_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/graph"
)

// TestDigestTPCDS (COLLINE_DIGEST=1) wipes the graph, writes the TPC-DS corpus in batches of 100
// twice (the second pass a replay) and prints the counts and a digest of every node and
// relationship with its properties: the same corpus must give the same digest whatever the
// writer's statement layout. A measuring aid for comparing two writers, not a check.
func TestDigestTPCDS(t *testing.T) {
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if os.Getenv("COLLINE_DIGEST") == "" || uri == "" {
		t.Skip("COLLINE_DIGEST and COLLINE_TEST_NEO4J_URI not set")
	}
	ctx := context.Background()
	d, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	wipe(t, d)
	items := tpcdsItems(t)
	w := graph.NewWriter(d, "")
	for pass := 0; pass < 2; pass++ {
		for b := 0; b*100 < len(items); b++ {
			if err := w.Write(ctx, items[b*100:min((b+1)*100, len(items))]); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		for _, q := range []string{
			`MATCH (n) WHERE NOT n:GraphModel RETURN labels(n)[0] + ' ' + coalesce(n.key, '') AS id, properties(n) AS props`,
			`MATCH (a)-[r]->(b) RETURN a.key + ' -' + type(r) + '-> ' + b.key AS id, properties(r) AS props`,
		} {
			res, err := neo4j.ExecuteQuery(ctx, d, q, nil, neo4j.EagerResultTransformer)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range res.Records {
				id, _ := rec.Get("id")
				props, _ := rec.Get("props")
				m := props.(map[string]any)
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				var b strings.Builder
				fmt.Fprint(&b, id)
				for _, k := range keys {
					fmt.Fprintf(&b, " %s=%v", k, m[k])
				}
				lines = append(lines, b.String())
			}
		}
		slices.Sort(lines)
		counts := map[string]int{}
		props := 0
		for _, l := range lines {
			f := strings.Fields(l)
			kind := f[0]
			if len(f) > 1 && strings.HasPrefix(f[1], "-") {
				kind = f[1]
			}
			counts[kind]++
			props += strings.Count(l, "=")
		}
		t.Logf("pass %d: %d elements, %d properties, %v, sha256 %x", pass, len(lines), props, counts, sha256.Sum256([]byte(strings.Join(lines, "\n"))))
		if f := os.Getenv("COLLINE_DIGEST_OUT"); f != "" {
			os.WriteFile(fmt.Sprintf("%s.%d", f, pass), []byte(strings.Join(lines, "\n")), 0o644)
		}
	}
}

package graph_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
)

// TestDigestTPCDS (COLLINE_DIGEST=1) wipes the graph, writes the TPC-DS corpus in batches of 100
// twice (the second pass a replay) and prints the counts and a digest of every node and
// relationship with its properties: the same corpus must give the same digest whatever the
// writer's statement layout. A measuring aid for comparing two writers, not a check.
func TestDigestTPCDS(t *testing.T) {
	ctx := context.Background()
	d := aidDriver(ctx, t, "COLLINE_DIGEST")
	items := tpcdsItems(t)
	w := graph.NewWriter(d, "")
	for pass := 0; pass < 2; pass++ {
		for b := 0; b*100 < len(items); b++ {
			if err := w.Write(ctx, items[b*100:min((b+1)*100, len(items))]); err != nil {
				t.Fatal(err)
			}
		}
		lines := stack.Snapshot(ctx, t, d, "MATCH (n) WHERE NOT n:GraphModel", nil)
		counts := map[string]int{} // by label set or relationship type; a relationship is seen from both ends
		for _, l := range lines {
			counts[strings.Fields(l)[0]]++
		}
		t.Logf("pass %d: %d lines, %v, sha256 %x", pass, len(lines), counts, sha256.Sum256([]byte(strings.Join(lines, "\n"))))
		if f := os.Getenv("COLLINE_DIGEST_OUT"); f != "" {
			os.WriteFile(fmt.Sprintf("%s.%d", f, pass), []byte(strings.Join(lines, "\n")), 0o644)
		}
	}
}

package graph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// The retention steps against a real Neo4j. The prune statements act on the whole graph, which
// other tests share, so this test's events are dated 1971: it prunes with cut-offs in 1971 and
// first checks that no other data is that old (it would be deleted).

var (
	t1971    = time.Date(1971, 1, 10, 12, 0, 0, 0, time.UTC)
	cut1971  = time.Date(1971, 2, 1, 0, 0, 0, 0, time.UTC) // after t1971, before t1971b
	t1971b   = time.Date(1971, 3, 1, 12, 0, 0, 0, time.UTC)
	cutLater = time.Date(1971, 6, 1, 0, 0, 0, 0, time.UTC) // after everything written here
)

// foreignOld counts runs and lineage relationships older than before outside prefix.
func foreignOld(t *testing.T, d neo4j.DriverWithContext, prefix string, before time.Time) int64 {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), d, `CALL () {
  MATCH (r:Run) WHERE coalesce(r.endedAt, r.emittedAt) < $before AND NOT r.key STARTS WITH $p RETURN count(*) AS n
  UNION ALL
  MATCH (s)-[f:FEEDS|DECIDES_ROWS]->() WHERE f.lastSeen < $before AND NOT s.key STARTS WITH $p RETURN count(*) AS n
  UNION ALL
  MATCH (j:Job)-[l:LINEAGE]->() WHERE l.lastSeen < $before AND NOT j.key STARTS WITH $p RETURN count(*) AS n
} RETURN sum(n) AS n`, map[string]any{"before": before, "p": prefix}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.Records[0].Get("n")
	return n.(int64)
}

func TestRetention(t *testing.T) {
	d := testDriver(t)
	w := NewWriter(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	if n := foreignOld(t, d, p, cutLater); n > 0 {
		t.Skipf("the database holds %d runs or edges of other tests dated before %s; the prune would delete them", n, cutLater)
	}
	// load and report in January; report again in March: its edges are confirmed, load's are not
	old := fixture(p, t1971, "-jan")
	if err := w.Write(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, fixture(p, t1971b, "-mar")[1:]); err != nil {
		t.Fatal(err)
	}
	lines := func(what string) []string {
		var out []string
		for _, l := range snapshot(t, d, p) {
			if strings.Contains(l, what) {
				out = append(out, strings.ReplaceAll(l, p, ""))
			}
		}
		return out
	}
	preview := previewRows(t, d, p, cut1971)
	if want := []string{"etl/load|1|2|1", "etl/report|1|0|0"}; !slices.Equal(preview, want) {
		t.Errorf("preview (job|runs|FEEDS|DECIDES_ROWS) before the prune = %q, want %q", preview, want)
	}

	// Runs ended before February, one per transaction: the two January runs, in two batches.
	var batches []int64
	for {
		n, err := w.PruneRuns(ctx, cut1971, 1)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, n)
		if n < 1 {
			break
		}
	}
	if !slices.Equal(batches, []int64{1, 1, 0}) {
		t.Errorf("PruneRuns batches of 1 = %v, want [1 1 0]", batches)
	}
	if got := lines("Run "); len(got) != 1 || !strings.Contains(got[0], "run-report-mar") {
		t.Errorf("runs left = %q, want the March report run only", got)
	}
	for _, rel := range []string{"-HAS_RUN->", "-READ->", "-WROTE->"} {
		if got := lines(rel); len(got) != 1 || !strings.HasPrefix(got[0], "run-report-mar") && !strings.Contains(got[0], "run-report-mar") {
			t.Errorf("%s left = %q, want the March run's only", rel, got)
		}
	}
	if got := lines("Job "); len(got) != 2 {
		t.Errorf("jobs left = %q, want both (retention keeps jobs)", got)
	}

	// Edges not seen since February: load's two FEEDS and its DECIDES_ROWS are marked, once. They
	// are load's current edges: its LINEAGE into b is marked (a superseded edge, with a lastSeen of
	// its own, is marked by PruneEdges; there is none here).
	lineages, feeds, decides := int64(0), int64(0), int64(0)
	for {
		n, f, x, err := w.PruneLineages(ctx, cut1971, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		lineages, feeds, decides = lineages+n, feeds+f, decides+x
		if n == 0 {
			break
		}
	}
	if lineages != 1 || feeds != 2 || decides != 1 {
		t.Errorf("LINEAGEs marked stale = %d with %d FEEDS and %d DECIDES_ROWS, want 1 with 2 and 1", lineages, feeds, decides)
	}
	mark := func(relType string, before time.Time) int64 {
		var total int64
		for {
			n, err := w.PruneEdges(ctx, relType, before, 1, false)
			if err != nil {
				t.Fatal(err)
			}
			total += n
			if n == 0 {
				return total
			}
		}
	}
	if n := mark(Feeds, cut1971) + mark(DecidesRows, cut1971); n != 0 {
		t.Errorf("superseded edges marked stale = %d, want 0", n)
	}
	if n, _, _, err := w.PruneLineages(ctx, cut1971, 10, false); err != nil || n != 0 {
		t.Errorf("LINEAGEs marked again = %d, %v; want 0 (already stale)", n, err)
	}
	stale := func() []string {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, d, staleEdges, map[string]any{"p": p}, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rec := range res.Records {
			e, _ := rec.Get("edge")
			out = append(out, strings.ReplaceAll(e.(string), p, ""))
		}
		slices.Sort(out)
		return out
	}
	want := []string{"a#amount -DECIDES_ROWS-> b", "a#amount -FEEDS-> b#amount", "a#id -FEEDS-> b#id"}
	if got := stale(); !slices.Equal(got, want) {
		t.Errorf("stale relationships = %q, want %q", got, want)
	}
	if got := previewStale(t, d, p, cut1971); got != 3 {
		t.Errorf("preview's alreadyStale = %d, want 3", got)
	}

	// The same old event again (a redelivery) leaves them stale; a newer run of load clears them.
	if err := w.Write(ctx, old[:1]); err != nil {
		t.Fatal(err)
	}
	if got := stale(); !slices.Equal(got, want) {
		t.Errorf("after a redelivery of the old event: stale = %q, want %q", got, want)
	}
	if err := w.Write(ctx, fixture(p, t1971b, "-mar")[:1]); err != nil {
		t.Fatal(err)
	}
	if got := stale(); len(got) != 0 {
		t.Errorf("after a newer run of load: stale = %q, want none", got)
	}

	// Deleting: everything is older than June; the preview counts what the deletes then remove.
	preview = previewRows(t, d, p, cutLater)
	if want := []string{"etl/load|2|2|1", "etl/report|1|1|1"}; !slices.Equal(preview, want) {
		t.Errorf("preview before deleting = %q, want %q", preview, want)
	}
	feeds, decides = 0, 0
	for { // every current edge is superseded (its LINEAGE's lastSeen, before June), then deleted below
		n, _, _, err := w.PruneLineages(ctx, cutLater, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	for _, x := range []struct {
		rel string
		n   *int64
	}{{Feeds, &feeds}, {DecidesRows, &decides}} {
		for {
			n, err := w.PruneEdges(ctx, x.rel, cutLater, 2, true)
			if err != nil {
				t.Fatal(err)
			}
			if n > 2 {
				t.Errorf("a %s batch of limit 2 touched %d", x.rel, n)
			}
			*x.n += n
			if n < 2 {
				break
			}
		}
	}
	if feeds != 3 || decides != 2 {
		t.Errorf("deleted FEEDS %d, DECIDES_ROWS %d; want 3 and 2 (what the preview counted)", feeds, decides)
	}
	if got := lines("-FEEDS->"); len(got) != 0 {
		t.Errorf("FEEDS left = %q", got)
	}
	if got := lines("-LINEAGE->"); len(got) != 0 {
		t.Errorf("LINEAGEs left = %q", got)
	}
	if _, err := w.PruneEdges(ctx, "HAS_COLUMN", cutLater, 2, true); err == nil {
		t.Error("PruneEdges(HAS_COLUMN) = nil error, want a refusal")
	}
	if n := foreignOld(t, d, p, cutLater); n > 0 {
		t.Errorf("%d foreign runs or edges older than %s appeared during the test", n, cutLater)
	}
}

// staleEdges lists the lineage relationships under $p that are stale, read as docs/graph-model.md
// says: a current edge's stale is its LINEAGE's.
const staleEdges = `MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS]->(t) WHERE s.key STARTS WITH $p
OPTIONAL MATCH (:Job {key: f.job})-[l:LINEAGE]->(ds:Dataset) WHERE ds.key = CASE WHEN t:Dataset THEN t.key ELSE t.datasetKey END
WITH s, f, t, l WHERE f.stale OR (f.lastSeen IS NULL AND l.stale)
RETURN s.key + ' -' + type(f) + '-> ' + t.key AS edge`

// previewRows runs neo4jbrowser/queries/11-retention-preview.cypher with ages that put the
// cut-off at before, and returns its rows for prefix as job|runs|feeds|decidesRows.
func previewRows(t *testing.T, d neo4j.DriverWithContext, prefix string, before time.Time) []string {
	t.Helper()
	var out []string
	for _, rec := range preview(t, d, before) {
		job, _ := rec.Get("job")
		if s, _ := job.(string); strings.HasPrefix(s, prefix) {
			out = append(out, strings.Join([]string{strings.TrimPrefix(s, prefix), cellOf(rec, "runs"), cellOf(rec, "feeds"), cellOf(rec, "decidesRows")}, "|"))
		}
	}
	slices.Sort(out)
	return out
}

func previewStale(t *testing.T, d neo4j.DriverWithContext, prefix string, before time.Time) int64 {
	t.Helper()
	var n int64
	for _, rec := range preview(t, d, before) {
		job, _ := rec.Get("job")
		if s, _ := job.(string); strings.HasPrefix(s, prefix) {
			v, _ := rec.Get("alreadyStale")
			n += v.(int64)
		}
	}
	return n
}

func preview(t *testing.T, d neo4j.DriverWithContext, before time.Time) []*neo4j.Record {
	t.Helper()
	q, err := os.ReadFile(filepath.Join("..", "neo4jbrowser", "queries", "11-retention-preview.cypher"))
	if err != nil {
		t.Fatal(err)
	}
	// the query counts in whole days back from now: the cut-off lands within the day of before,
	// and this test's times are weeks from its cut-offs
	days := int64(time.Since(before).Hours() / 24)
	res, err := neo4j.ExecuteQuery(context.Background(), d, string(q), map[string]any{"runDays": days, "edgeDays": days}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	return res.Records
}

func cellOf(rec *neo4j.Record, key string) string {
	v, _ := rec.Get(key)
	return fmt.Sprint(v)
}

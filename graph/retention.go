package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Retention: bounded prune steps over old runs and old lineage relationships, for the retention
// package's schedule. Each call is one short write transaction touching at most limit elements,
// so it holds few locks for little time next to the consumer's writes; a caller repeats it until
// it returns fewer than limit. Times are compared with the event times the writer stores (a run's
// endedAt, else emittedAt; a superseded edge's lastSeen; a LINEAGE's lastSeen for its current
// edges, version.go), never with the time of writing.
//
//	stale edge: (:Column)-[:FEEDS|DECIDES_ROWS {..., stale: true}]->(...)
//	stale current edges: (:Job)-[:LINEAGE {..., stale: true}]->(:Dataset)
//
// A stale mark is cleared by the writer as soon as a newer event confirms the edge (or the
// LINEAGE).

// Lock order. A prune transaction and a consumer's write touch the same nodes (an old run's job
// and datasets are those of its new runs; an edge's columns are those its job writes again). The
// writer locks in the order of its statements (elements: jobs, datasets, columns, then
// relationships, each sorted by key); a prune transaction that locked in another order deadlocks
// with it, and the driver's retry backs the write off for seconds (measured: 25 s for one write
// while 600 runs were pruned). So each prune statement first locks the nodes it will change in
// the writer's order (SET then REMOVE a property: an exclusive lock, no change), then changes
// them; the write then waits for one small transaction at most. That order made deadlocks rare,
// not impossible: on the 10M graph (docs/benchmarks.md, 2026-12-07) the writer's datasets
// statement still deadlocked with runs being pruned, five times in a day's pruning, and each
// lost write waited 2–6 s for the driver's retry (that was before the writer took each node's
// lock first, element.go's lock order, which ended the same statement's deadlocks with a
// second writer). So a Writer also runs its prune steps apart
// from its own writes (Writer.turns): within one consumer they never overlap. Writes of other
// consumers still rely on the lock order, and a transaction that loses a deadlock starts again at
// once (deadlock.go; Writer.Retries counts them).
const lockNodes = `SET n.retentionLock = true REMOVE n.retentionLock`

// pruneRuns deletes up to $limit runs with everything attached to them (HAS_RUN, READ, WROTE,
// CHANGED); the jobs and datasets stay. A run without endedAt is judged by emittedAt.
const pruneRuns = `CALL () {
  MATCH (r:Run) WHERE r.endedAt < $before RETURN r
  UNION
  MATCH (r:Run) WHERE r.endedAt IS NULL AND r.emittedAt < $before RETURN r
}
WITH r LIMIT $limit
WITH collect(r) AS runs
CALL (runs) {
  UNWIND runs AS r MATCH (n:Job)-[:HAS_RUN]->(r)
  WITH DISTINCT n ORDER BY n.key ` + lockNodes + `
}
CALL (runs) {
  UNWIND runs AS r MATCH (r)-[:READ|WROTE|CHANGED]->(n:Dataset)
  WITH DISTINCT n ORDER BY n.key ` + lockNodes + `
}
UNWIND runs AS r
DETACH DELETE r
RETURN count(*) AS n`

// pruneEdges returns the statement that marks stale (del false) or deletes up to $limit
// relationships of relType (one of Feeds, DecidesRows; never spliced from input) last seen before
// $before (superseded edges: a current edge has no lastSeen of its own, pruneLineages handles
// it), in the writer's order: the end nodes first when deleting (datasets before columns),
// then the relationships by (source, target, job).
func pruneEdges(relType string, del bool) string {
	pick := `MATCH (s:Column)-[f:` + relType + `]->(t) WHERE f.lastSeen < $before`
	if !del {
		return pick + ` AND f.stale IS NULL
WITH s, f, t LIMIT $limit
WITH s, f, t ORDER BY s.key, t.key, f.job
SET f.stale = true
RETURN count(*) AS n`
	}
	return pick + `
WITH s, f, t LIMIT $limit
WITH collect({s: s, f: f, t: t}) AS picked
CALL (picked) {
  UNWIND picked AS x WITH x.t AS n WHERE n:Dataset
  WITH DISTINCT n ORDER BY n.key ` + lockNodes + `
}
CALL (picked) {
  UNWIND picked AS x UNWIND [x.s, x.t] AS n WITH n WHERE n:Column
  WITH DISTINCT n ORDER BY n.key ` + lockNodes + `
}
UNWIND picked AS x
WITH x ORDER BY x.s.key, x.t.key, x.f.job
WITH x.f AS f
DELETE f
RETURN count(*) AS n`
}

// pruneLineages marks stale (del false) up to $limit LINEAGEs last seen before $before, which
// marks their current edges, and counts those; or (del true) supersedes the current edges of up
// to $limit of them (each gets the LINEAGE's lastSeen and lastRun, which are before $before) and
// deletes the LINEAGEs, so that the next runs of their jobs write their edges again, and the
// prune of superseded edges deletes them. Datasets are locked first, as the writer does.
func pruneLineages(del bool) string {
	pick := `MATCH (j:Job)-[l:LINEAGE]->(d:Dataset) WHERE l.lastSeen < $before`
	if !del {
		pick += ` AND l.stale IS NULL`
	}
	q := pick + `
WITH j, l, d LIMIT $limit
WITH collect({j: j, l: l, d: d}) AS picked
CALL (picked) {
  UNWIND picked AS x WITH x.d AS n
  WITH DISTINCT n ORDER BY n.key ` + lockNodes + `
}
UNWIND picked AS x
WITH x.j.key AS job, x.l AS l, x.d AS d ORDER BY job, d.key
CALL (job, l, d) {
  MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(:Column)<-[f:FEEDS {job: job}]-(:Column)
  WHERE f.lastSeen IS NULL
  ` + supersede("f", del) + `
  RETURN count(f) AS feeds
}
CALL (job, l, d) {
  MATCH (d)<-[x:DECIDES_ROWS {job: job}]-(:Column)
  WHERE x.lastSeen IS NULL
  ` + supersede("x", del) + `
  RETURN count(x) AS decides
}
`
	if del {
		q += `DELETE l
`
	} else {
		q += `SET l.stale = true
`
	}
	return q + `RETURN count(*) AS n, sum(feeds) AS feeds, sum(decides) AS decides`
}

// supersede is the SET of pruneLineages on a current edge x when deleting: it takes its
// LINEAGE's lastSeen and lastRun; marking stale changes nothing on it.
func supersede(x string, del bool) string {
	if !del {
		return "WITH " + x
	}
	return "SET " + x + ".lastSeen = l.lastSeen, " + x + ".lastRun = l.lastRun\n  WITH " + x
}

// PruneLineages marks stale (del false) at most limit LINEAGEs not confirmed since before, and so
// their current edges; or (del true) supersedes the current edges of at most limit of them and
// deletes them (PruneEdges then deletes those edges). It returns how many LINEAGEs, and how many
// FEEDS and DECIDES_ROWS they held as current edges.
func (w *Writer) PruneLineages(ctx context.Context, before time.Time, limit int, del bool) (lineages, feeds, decides int64, err error) {
	rec, err := w.prune(ctx, pruneLineages(del), before, limit)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("graph prune LINEAGE last seen before %s: %w", before.UTC().Format(time.RFC3339), err)
	}
	lineages, _ = get[int64](rec, "n")
	feeds, _ = get[int64](rec, "feeds")
	decides, _ = get[int64](rec, "decides")
	return lineages, feeds, decides, nil
}

// PruneRuns deletes at most limit runs whose query ended before before, and returns how many.
func (w *Writer) PruneRuns(ctx context.Context, before time.Time, limit int) (int64, error) {
	rec, err := w.prune(ctx, pruneRuns, before, limit)
	if err != nil {
		return 0, fmt.Errorf("graph prune runs ended before %s: %w", before.UTC().Format(time.RFC3339), err)
	}
	n, _ := get[int64](rec, "n")
	return n, nil
}

// PruneEdges marks stale (del false) or deletes (del true) at most limit relationships of relType
// (Feeds or DecidesRows) last seen before before, and returns how many. Marking skips those
// already marked.
func (w *Writer) PruneEdges(ctx context.Context, relType string, before time.Time, limit int, del bool) (int64, error) {
	if relType != Feeds && relType != DecidesRows {
		return 0, fmt.Errorf("graph prune: %q is not %s or %s", relType, Feeds, DecidesRows)
	}
	rec, err := w.prune(ctx, pruneEdges(relType, del), before, limit)
	if err != nil {
		return 0, fmt.Errorf("graph prune %s last seen before %s: %w", relType, before.UTC().Format(time.RFC3339), err)
	}
	n, _ := get[int64](rec, "n")
	return n, nil
}

// prune runs one prune statement with $before and $limit in its own transaction, in its turn
// (Writer.turns), and returns its one record. Like a write, it starts again at once after a
// deadlock (deadlock.go).
func (w *Writer) prune(ctx context.Context, query string, before time.Time, limit int) (*neo4j.Record, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("limit %d is not positive", limit)
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout())
	defer cancel()
	w.turns.Lock()
	defer w.turns.Unlock()
	rec, err := w.executeWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, query, map[string]any{"before": before, "limit": limit})
		if err != nil {
			return nil, err
		}
		return res.Single(ctx)
	})
	if err != nil {
		return nil, err
	}
	return rec.(*neo4j.Record), nil
}

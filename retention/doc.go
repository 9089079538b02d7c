// Package retention prunes the lineage graph on a schedule: runs whose query ended more than
// RunDays ago are deleted (with their READ, WROTE, CHANGED and HAS_RUN relationships; jobs and
// datasets stay), and FEEDS and DECIDES_ROWS relationships no event has confirmed for EdgeDays
// are marked stale or deleted, as the operator chooses (EdgeAction).
//
// It never blocks ingestion: it runs on its own goroutine and its own transactions, each touching
// at most BatchSize elements (graph.Writer.PruneRuns, PruneEdges), with a pause between them, so
// the consumer's writes wait at most for one small transaction. A failed batch (a deadlock with a
// consumer write, Neo4j away) is retried with backoff a few times, then the pass stops and the
// next one, an Interval later, starts over; nothing it does needs to be undone, and a pass that
// was cut short is simply continued by the next. Several consumers pruning the same graph do the
// same work twice, harmlessly.
//
// docs/operations.md ("Retention") has the variables, the metrics and the Cypher that previews
// what a pass would remove (neo4jbrowser/queries/11-retention-preview.cypher).
package retention

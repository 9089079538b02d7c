// Package graph keeps column lineage in Neo4j: the schema bootstrap, the batched idempotent Writer
// and a few read queries for tests, demos and operators.
//
// The model:
//
//	(:Dataset {key, namespace, name, kind, location, firstSeen, lastSeen, schema, schemaSince, schemaSeen})-[:HAS_COLUMN]->
//	  (:Column {key, name, table, datasetKey, dataType, position, firstSeen, lastSeen, schema})
//	(:Column)-[:FEEDS {job, roles, exprs, masked, type, subtype, firstSeen, lastSeen?, lastRun?}]->(:Column)
//	(:Column)-[:DECIDES_ROWS {job, roles, exprs, firstSeen, lastSeen?, lastRun?}]->(:Dataset)
//	(:Job)-[:LINEAGE {fingerprint, since, firstSeen, lastSeen, lastRun, stale?}]->(:Dataset)
//	(:Job {key, namespace, name, firstSeen, lastSeen})-[:HAS_RUN]->
//	  (:Run {key, status, endedAt, appId, executionId, funcName, sparkVersion, emittedAt, startedAt, producer, degraded, overBudget?, analyzed?})
//	(:Run)-[:CHILD_OF]->(:Run)   an OpenLineage run's parent
//	(:Run)-[:READ]->(:Dataset)
//	(:Run)-[:WROTE {mode, columnLineage}]->(:Dataset)        columnLineage "missing": a degraded event, or over a budget
//
// DDL commands (plan.Lineage.Changes) add: Dataset.droppedAt and Dataset.truncatedAt (the newest
// drop or truncation; a dataset exists while droppedAt is absent or older than its lastSeen),
// (:Dataset)-[:RENAMED_TO {firstSeen, lastSeen, lastRun}]->(:Dataset) from the old identity to the
// new one, and (:Run)-[:CHANGED {action}]->(:Dataset) for the run that did it. A load is a write
// (Run WROTE) from the path it read (Run READ).
//
// Keys: Dataset and Column keys are the ones plan built (never rebuilt here); a Job key is
// app.namespace + "/" + app.name (record.JobKey), so every run of the same Spark application name is one job; a
// Run key is the event id. An OpenLineage item (record.Item.OpenLineage) has the job namespace/name and
// the runId: the events of one run merge into one Run (run.go). There is one FEEDS relationship per (source column, target column,
// job) with every role (plan.Transformation) as parallel lists, and one DECIDES_ROWS per (source
// column, written dataset, job) for the row-level dependencies. This is graph model 4
// (ModelVersion, stamped on a GraphModel node); docs/graph-model.md has the details.
//
// Re-runs (version.go): a job's lineage into each dataset is a version with a fingerprint, held
// by its LINEAGE. A run with the same fingerprint writes its run and confirms the LINEAGE, not its
// edges; the version's current edges have no lastSeen and lastRun of their own (the LINEAGE's).
// Readers take coalesce(edge.lastSeen, LINEAGE.lastSeen) (walk.go).
// Likewise a dataset's listing of its columns is a version (schema.go): a run that lists them as
// the stored schema moves the dataset's schemaSeen and writes no column. A current column's
// lastSeen is the newer of its own and schemaSeen (ColumnLastSeen).
//
// Retention (retention.go): bounded prune steps delete old runs and mark stale (stale: true) or
// delete FEEDS and DECIDES_ROWS not seen for a while (superseded edges by their own lastSeen,
// current ones by their LINEAGE's); the writer clears the stale mark when a newer event confirms
// the edge. Prune statements lock in the writer's order, so they cannot deadlock
// with it.
//
// Idempotence: every write is a MERGE on a constraint-backed key (or on the job property of
// FEEDS) followed by SETs. The time of an event is its query end time (emittedAt when that is
// missing), never the wall clock, so writing the same event again changes nothing at all, and a
// later event only moves lastSeen forward (and firstSeen backward). Descriptive properties (a
// column's dataType, an edge's type and expr, ...) take the values of the newest event seen; an
// older event replayed later does not overwrite them. Nothing is counted on relationships:
// counters would break on redelivery.
package graph

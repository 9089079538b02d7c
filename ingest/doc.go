// Package ingest is the consumer loop: it fetches plan events from Kafka, turns each into an item
// (record.Item; Processor, by default process.Step), writes batches to the graph and commits the
// offsets.
//
// Delivery is at least once and keeps the order within a partition; the argument is written once,
// at the top of loop.go. The files are the layers of the loop:
//   - loop.go: Params, New and the core Run: batches in order, at most one in flight.
//   - fetch.go: fetch a batch (count, bytes, time window) and process it into items and dead letters;
//     with a graph.Writer, prepare its write (graph.Prepare) while the batch before is written.
//   - deliver.go: write → emit (OpenLineage, optional) → dead letters → commit, splitting a batch
//     the graph rejects.
//   - retry.go: retries with backoff, and readiness (Ready) while anything is being retried.
//   - idle.go: ExitWhenIdle, a wrapper around the core; backlog.go: what "the backlog" is.
//   - kafka.go: the kafka-go reader, dead-letter writer and clients; metrics.go, monitor.go: metrics.
//   - memory.go: a lower soft memory limit while a message of BatchMaxBytes or more is in hand.
//
// Errors are either permanent or not:
//   - Permanent: the message itself is bad (larger than MaxEventBytes, nested deeper than
//     process.MaxNesting, invalid JSON, an unsupported schema version, an invalid event, an
//     unsupported plan, lineage the graph cannot store). The message goes to the dead-letter topic
//     with the reason in its headers, is counted, and is committed, so one bad message never
//     blocks a partition. When Neo4j rejects a batch because of its data, the batch is written
//     again message by message to find the culprit.
//   - Anything else (Neo4j or Kafka unreachable, timeouts, a failed commit): the operation is
//     retried in place, with capped exponential backoff and jitter, for as long as it takes.
//     Meanwhile Ready reports not ready. Nothing is skipped.
//
// A batch keeps each message's original value until it is committed, and each item's lineage,
// but not the decoded plan (withoutPlan): a dead letter, even one found at write time, carries
// the original bytes.
//
// Metrics: Metrics, registered on the caller's registry; Monitor feeds kafka-go's reader
// statistics (as deltas) and the group's lag per partition. docs/operations.md lists them all.
package ingest

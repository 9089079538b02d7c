// Package ingest is the consumer loop: it fetches plan events from Kafka, turns each into lineage
// (process.Step), writes batches to the graph and commits the offsets.
//
// Delivery is at least once. Offsets are committed only after the batch they belong to is in
// Neo4j (or, for a message that can never be written, on the dead-letter topic); a crash or a
// rebalance before the commit redelivers the batch, and the graph writes are idempotent, so a
// redelivery changes nothing.
//
// Ordering: one loop goroutine handles the messages of all its partitions in fetch order, so the
// order within a partition (events of one Spark application, keyed by app id) is kept. Batches are
// bounded by a message count, by the bytes of their values and by a time window. While batch n is
// written, dead-lettered and committed in the background, the loop fetches and decodes batch n+1
// (a Processor does no I/O); batch n+1 is written only after batch n is committed, so writes and
// commits keep the fetch order, and no offset is committed before its batch is written. A
// message's value is dropped once it is decoded; see deadLetter.message for what that means for
// a dead letter found at write time.
//
// Errors are either permanent or not:
//   - Permanent: the message itself is bad (larger than MaxEventBytes, nested deeper than
//     process.MaxNesting, invalid JSON, an unsupported schema version, an invalid event, an unsupported
//     plan, lineage the graph cannot store). The message goes to
//     the dead-letter topic with the reason in its headers, is counted, and is committed, so one
//     bad message never blocks a partition. When Neo4j rejects a batch because of its data, the
//     batch is written again message by message to find the culprit.
//   - Anything else (Neo4j or Kafka unreachable, timeouts, a failed commit): the operation is
//     retried in place, with capped exponential backoff and jitter, for as long as it takes.
//     Meanwhile Ready reports not ready. Nothing is skipped: kafka-go never redelivers a message
//     the loop has moved past, so the loop never moves past one that is not written.
//
// Metrics: Metrics, registered on the caller's registry; Monitor feeds kafka-go's reader
// statistics (as deltas) and the group's lag per partition. docs/operations.md lists them all.
//
// Shutdown: when the context given to Run ends, the loop stops fetching, writes and commits the
// batches in hand (at most two: the one being written and the one decoded) within the shutdown
// timeout, and returns. If the timeout expires first, what is not committed is redelivered to the
// next consumer.
package ingest

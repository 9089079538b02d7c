// Package emit publishes OpenLineage events for what colline extracts from Spark plans: one
// COMPLETE or FAIL RunEvent per listener event written to the graph (openlineage.FromSpark), to
// an HTTP endpoint (Marquez's POST /api/v1/lineage, DataHub's OpenLineage endpoint) or to a Kafka
// topic.
//
// Delivery: the consumer loop calls Emitter.Emit after a batch is in the graph and before its
// offsets are committed (ingest.Params.Emitter), and retries it in place with backoff until it
// succeeds, while readiness reports "retrying emit". An event is therefore emitted at least once:
// a crash or an endpoint that is down delays the batch, never loses it. A retried batch is sent
// again from its first event; run ids are stable (openlineage.RunID), so a receiver merges the
// repeats as it merges an OpenLineage producer's own retries.
//
// What a sink refuses for good (an HTTP 4xx other than 408 and 429: the receiver will never take
// that event) is logged and counted (colline_openlineage_emitted_total{result="rejected"}) and
// not retried: one event a receiver dislikes must not stop the lineage of all the others.
// Everything else (connection errors, timeouts, 5xx, 408, 429, Kafka errors) is an error Emit
// returns, for the loop to retry.
package emit

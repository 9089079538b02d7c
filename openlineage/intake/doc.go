// Package intake takes OpenLineage events in. Step is the processing step of one event (limits,
// the spec's schemas, the lineage mapping, the edge budget, record.Check), the same for both
// ways in: Topic, the consumer's processor of the OpenLineage topic (openlineage's Kafka
// transport), and Handler, colline's OpenLineage HTTP endpoint: POST /api/v1/lineage, where
// OpenLineage's HTTP transport (openlineage-spark, dbt-ol, Airflow, Flink, ...) posts one event
// per request, answered as Marquez answers it (201 Created with an empty body).
//
// The endpoint does not write the graph: it runs the consumer's own processing step on the event
// (Step: limits, the spec's schemas, the lineage mapping, record.Check), answers 400
// with the reason when the event would be dead-lettered, and otherwise publishes the event,
// unchanged, to the OpenLineage topic, keyed as openlineage's Kafka transport keys it. The
// consumer loop (package ingest) reads that topic like any other, so HTTP events get the same
// delivery: at least once, idempotent, in order per job.
//
// 201 is answered only after Kafka acknowledged the event (acks=all): an event the client saw
// accepted is durable. When Kafka cannot take it, the answer is 503 with Retry-After, and the
// client's transport retries; nothing is buffered in the consumer.
//
// Who may write what: with keys (Keys, from COLLINE_OPENLINEAGE_HTTP_KEYS_FILE, or the one
// APIKey), a request must carry "Authorization: Bearer <key>" (the transport's auth type
// api_key), compared in constant time, failures throttled per address; each key is bound to the
// jobs and datasets it may write, so that one team's producer can neither write another's jobs
// nor drop another's datasets (403, counted by key). Without keys the consumer warns at start.
//
// No client holds the door (package guard): the method, a browser's cross-origin request, the key
// and the Content-Type (JSON only: a web form cannot post here) are checked before the body is
// read; the body is then read ahead, at a minimum rate, before one of MaxConcurrent slots is
// taken (503 with Retry-After beyond); it is capped (413 above the cap, after gzip decoding when
// Content-Encoding is gzip, as the transport's compression sends it); the publish has its
// deadline. TLS is an option of the consumer (COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE).
package intake

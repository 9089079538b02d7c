// Command bench measures colline against the targets of docs/benchmarks.md, each figure next to a
// baseline measured in the same run:
//
//	go run ./bench [-parts decode,e2e,fresh,rss,reads,listener] [flags]     (make bench)
//
// Parts:
//   - decode: events.Decode + plan.Extract over the TPC-DS corpus vs json.Unmarshal into any.
//   - e2e: the corpus replayed through real Kafka into the real consumer loop and real Neo4j, vs
//     the same loop with a naive writer (one transaction per edge).
//   - fresh: time from an event's production to its edges being committed in Neo4j, at a steady
//     rate.
//   - rss: peak RSS of the consumer binary (default settings) consuming synthetic 20 MB plans, vs
//     the same binary consuming one small TPC-DS plan.
//   - reads: p50/p99 of the lineage queries over a generated graph of ≥1M column edges, vs a
//     one-hop lookup.
//   - listener: the driver time the colline listener adds per TPC-DS CTAS (p50, p99) in one Spark
//     3.5 driver, vs the same run without a listener and with OpenLineage 1.53, and the ratio
//     (bench/overhead/run.sh; -listener-queries, default 10 queries, -listener-rounds,
//     -listener-jar). Needs Kafka only; about 2 minutes.
//   - hostile (not in the default; no services): plan/hostile's shapes (mutations of a captured
//     event) at two sizes each, extraction time and peak RSS per size in a child process, and the
//     ratios between the sizes (about 2 for twice the size: linear).
//   - hostile-write (not in the default): the shapes whose lineage the edges budget bounds, each at
//     the largest size within it (-hostile-edges, default the default budget), written to Neo4j
//     through process.Step and graph.Writer: write time, Neo4j's CPU time (-hostile-neo4j-pid) and
//     peak RSS of the writing process. The longest write of a batch the consumer can form.
//   - intake (not in the default): the OpenLineage endpoint of the consumer binary under a stream
//     of captured events over HTTP, one in ten invalid: events/s, every valid one in the graph,
//     every invalid one a 400 with its reason, peak RSS; vs the Kafka transport (-intake-events,
//     -intake-clients).
//   - ui-load (not in the default): the explorer's API with 50 readers at once on part e's graph,
//     p50/p99 vs one reader, and saturated (-ui-load-readers, -ui-load-duration, -ui-load-think).
//
// It is not a test; the short variants of intake and ui-load are (load_test.go, in make test,
// on the dev services without wiping the graph). The e2e, fresh, rss, reads, ui and ui-load parts
// WIPE THE NEO4J GRAPH (batched deletes) before they run and at the end, and create (then delete) their own Kafka topics. Kafka
// and Neo4j are the dev services (dev/services start): COLLINE_TEST_KAFKA_BROKERS and
// COLLINE_TEST_NEO4J_URI override their addresses.
package main

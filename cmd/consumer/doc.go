// Command consumer is the colline consumer: it reads the plan events the Spark listener publishes
// to Kafka, extracts column lineage and keeps it in Neo4j. Delivery is at least once with
// idempotent writes; see package ingest for the guarantees and package graph for the model.
//
// It takes no arguments; it is configured from COLLINE_* environment variables (package config;
// run it with -h for the table). It serves /metrics, /healthz and /readyz on COLLINE_HTTP_ADDR.
// The first SIGTERM or interrupt stops fetching, finishes the batch in hand within
// COLLINE_SHUTDOWN_TIMEOUT and exits 0; a second one kills it. With COLLINE_EXIT_WHEN_IDLE set it
// also exits 0 on its own once the backlog present at start is consumed and the topic is idle.
//
// Exit codes: 0 stopped cleanly, 1 configuration or runtime error (including a batch left
// uncommitted at the shutdown deadline), 2 usage.
//
// The version is stamped at build time:
//
//	go build -ldflags "-X main.version=1.2.3" ./cmd/consumer
package main

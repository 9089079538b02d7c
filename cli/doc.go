// Package cli is the offline colline command: it reads plan events captured from the listener
// (spark.colline.output.dir, or messages saved from the Kafka topic) and shows their column
// lineage (explain) or writes it to Neo4j through graph.Writer (replay), without Kafka; `colline ui`
// serves the lineage explorer (package ui) with its configuration from config.UI; `colline tags`
// loads column tags and reports where they go (package tags, docs/tags.md).
//
// Inputs are files or directories (every *.json and *.jsonl below them, in lexical order). A file
// holds one event or several concatenated JSON values (one per line, as kafka-console-consumer
// prints them). Every input goes through process.Step, the consumer's own processing step (size
// and nesting limits, decoding, extraction, graph checks), so what explain prints is what the
// consumer would write, and an event the consumer would dead-letter is an error naming the reason.
package cli

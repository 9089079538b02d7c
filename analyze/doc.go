// Package analyze is colline's client of its analyzer: a JVM with one local Spark session that
// parses and analyzes SQL with Spark's own parser and analyzer and never runs it
// (io.colline.listener.analyze.Server, in the listener jar, so that the events come from the
// listener's own serializer). Start launches it through dev/spark-analyze and waits until it is
// ready, with a fresh bearer token of its own; Client speaks its HTTP API (docs/analyze.md);
// GraphTables turns datasets read from the graph into Tables, schemas as data (never SQL text),
// which the analyzer registers with Spark's catalog API after parsing each type on its own.
//
// The analyzer runs nothing it is sent: statements are parsed and analyzed, those that would load
// code or read files are refused, and what a script defines is registered by colline's code.
//
// The analyzer answers per statement: the event the listener would have published for it (marked
// analyzed), a skip or a refusal with its reason, or Spark's parse or analysis error with the line and column
// in the file. The events are bytes of the listener's format: callers decode them with events and
// process, as every other event.
package analyze

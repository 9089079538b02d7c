// Package analyze is colline's client of its analyzer: a JVM with one local Spark session that
// parses and analyzes SQL with Spark's own parser and analyzer and never runs it
// (io.colline.listener.analyze.Server, in the listener jar, so that the events come from the
// listener's own serializer). Start launches it through dev/spark-analyze and waits until it is
// ready; Client speaks its HTTP API (docs/analyze.md); DDL turns datasets read from the graph
// into schema statements the analyzer can apply.
//
// The analyzer answers per statement: the event the listener would have published for it (marked
// analyzed), a skip with its reason, or Spark's parse or analysis error with the line and column
// in the file. The events are bytes of the listener's format: callers decode them with events and
// process, as every other event.
package analyze

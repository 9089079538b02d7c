// Package events is the contract between the Spark listener and the consumer: the envelope the
// listener publishes to Kafka, its decoding and its validation. The format is documented in
// docs/event-format.md and docs/event.schema.json.
package events

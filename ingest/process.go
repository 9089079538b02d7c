package ingest

import (
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// Processor turns one Kafka message into an item (record.Item). Every error it returns is permanent: the
// same message fails the same way, and goes to the dead-letter topic. It must not do I/O.
type Processor interface {
	Process(msg kafka.Message) (record.Item, error)
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(msg kafka.Message) (record.Item, error)

// Process calls f.
func (f ProcessorFunc) Process(msg kafka.Message) (record.Item, error) { return f(msg) }

// Extractor is the consumer's Processor: process.Step on the message value, timed in the decode
// and extract stages, with unknown plan node classes and events over a budget counted.
type Extractor struct {
	Metrics  *Metrics       // nil: not measured
	MaxBytes int            // process.Step.MaxBytes. Default: process.DefaultMaxBytes.
	Budget   plan.Budget    // process.Step.Budget. Default: plan.DefaultBudget.
	Clusters alias.Clusters // process.Step.Clusters (COLLINE_KAFKA_CLUSTERS). Default: none.
}

// Process implements Processor.
func (x Extractor) Process(msg kafka.Message) (record.Item, error) {
	step := process.Step{MaxBytes: x.MaxBytes, Budget: x.Budget, Clusters: x.Clusters}
	if x.Metrics != nil {
		step.Observe = x.Metrics.ObserveStage
	}
	it, err := step.Item(msg.Value)
	if err == nil && x.Metrics != nil {
		x.Metrics.countUnknown(it.Lineage.Unknown)
		x.Metrics.CountOverBudget(it.Lineage)
	}
	return it, err
}

// Topics routes each message to the Processor of its topic: the plan topic to the Extractor, the
// OpenLineage topic to OpenLineage's (intake.Topic, package openlineage/intake). A message of another topic is an error (it
// goes to the dead-letter topic, reason other).
type Topics map[string]Processor

// Process implements Processor.
func (t Topics) Process(msg kafka.Message) (record.Item, error) {
	p, ok := t[msg.Topic]
	if !ok {
		return record.Item{}, fmt.Errorf("no processor for topic %q", msg.Topic)
	}
	return p.Process(msg)
}

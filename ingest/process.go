package ingest

import (
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
)

// Processor turns one Kafka message into a graph item. Every error it returns is permanent: the
// same message fails the same way, and goes to the dead-letter topic. It must not do I/O.
type Processor interface {
	Process(msg kafka.Message) (graph.Item, error)
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(msg kafka.Message) (graph.Item, error)

// Process calls f.
func (f ProcessorFunc) Process(msg kafka.Message) (graph.Item, error) { return f(msg) }

// Extractor is the consumer's Processor: process.Step on the message value, timed in the decode
// and extract stages, with unknown plan node classes counted.
type Extractor struct {
	Metrics  *Metrics    // nil: not measured
	MaxBytes int         // process.Step.MaxBytes. Default: process.DefaultMaxBytes.
	Budget   plan.Budget // process.Step.Budget. Default: plan.DefaultBudget.
}

// Process implements Processor.
func (x Extractor) Process(msg kafka.Message) (graph.Item, error) {
	step := process.Step{MaxBytes: x.MaxBytes, Budget: x.Budget}
	if x.Metrics != nil {
		step.Observe = func(stage string, d time.Duration) { x.Metrics.stage.WithLabelValues(stage).Observe(d.Seconds()) }
	}
	it, err := step.Item(msg.Value)
	if err == nil && x.Metrics != nil {
		x.Metrics.countUnknown(it.Lineage.Unknown)
	}
	return it, err
}

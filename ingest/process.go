package ingest

import (
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/openlineage"
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
// and extract stages, with unknown plan node classes and events over a budget counted.
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
		x.Metrics.countOverBudget(it.Lineage)
	}
	return it, err
}

// Topics routes each message to the Processor of its topic: the plan topic to the Extractor, the
// OpenLineage topic to an OpenLineage processor. A message of another topic is an error (it
// goes to the dead-letter topic, reason other).
type Topics map[string]Processor

// Process implements Processor.
func (t Topics) Process(msg kafka.Message) (graph.Item, error) {
	p, ok := t[msg.Topic]
	if !ok {
		return graph.Item{}, fmt.Errorf("no processor for topic %q", msg.Topic)
	}
	return p.Process(msg)
}

// OpenLineage is the Processor of the OpenLineage topic: process.OpenLineage on the message
// value (one event, as openlineage's Kafka transport writes it), timed like the Extractor, with
// ignored facet problems counted.
type OpenLineage struct {
	Step    process.OpenLineage // Validator required; Observe and Ignored are set from Metrics
	Metrics *Metrics            // nil: not measured
}

// Process implements Processor.
func (o OpenLineage) Process(msg kafka.Message) (graph.Item, error) {
	step := o.Step
	if o.Metrics != nil {
		step.Observe = func(stage string, d time.Duration) { o.Metrics.stage.WithLabelValues(stage).Observe(d.Seconds()) }
		step.Ignored = func(schema string, _ openlineage.Problem) { o.Metrics.countIgnored(schema) }
	}
	it, err := step.Item(msg.Value)
	if err == nil && o.Metrics != nil {
		o.Metrics.countOverBudget(it.Lineage)
	}
	return it, err
}

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
// and extract stages (or reuse), with unknown plan node classes and events over a budget counted.
type Extractor struct {
	Metrics  *Metrics       // nil: not measured
	MaxBytes int            // process.Step.MaxBytes. Default: process.DefaultMaxBytes.
	Budget   plan.Budget    // process.Step.Budget. Default: plan.DefaultBudget.
	Clusters alias.Clusters // process.Step.Clusters (COLLINE_KAFKA_CLUSTERS). Default: none.
	Reuse    *process.Reuse // process.Step.Reuse (COLLINE_PLAN_REUSE_MB). Default: none.
}

// Process implements Processor.
func (x Extractor) Process(msg kafka.Message) (record.Item, error) {
	step := process.Step{MaxBytes: x.MaxBytes, Budget: x.Budget, Clusters: x.Clusters, Reuse: x.Reuse}
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

// NewReuse returns a process.Reuse of mb MiB for an Extractor, nil (none) when mb is 0 or below.
func NewReuse(mb int) *process.Reuse {
	if mb <= 0 {
		return nil
	}
	return process.NewReuse(int64(mb) << 20)
}

// HeldBytes is what the Extractor keeps between messages: its Reuse's lineage, counted twice (the
// Reuse's figure is an estimate of the strings and structs, without the allocator's rounding and
// the map's own room).
func (x Extractor) HeldBytes() int64 {
	if x.Reuse == nil {
		return 0
	}
	return 2 * x.Reuse.Bytes()
}

// Topics routes each message to the Processor of its topic: the plan topic to the Extractor, the
// OpenLineage topic to OpenLineage's (intake.Topic, package openlineage/intake). A message of another topic is an error (it
// goes to the dead-letter topic, reason other).
type Topics map[string]Processor

// HeldBytes is what the topics' processors keep between messages (Extractor.HeldBytes).
func (t Topics) HeldBytes() int64 {
	var n int64
	for _, p := range t {
		if h, ok := p.(holder); ok {
			n += h.HeldBytes()
		}
	}
	return n
}

// Process implements Processor.
func (t Topics) Process(msg kafka.Message) (record.Item, error) {
	p, ok := t[msg.Topic]
	if !ok {
		return record.Item{}, fmt.Errorf("no processor for topic %q", msg.Topic)
	}
	return p.Process(msg)
}

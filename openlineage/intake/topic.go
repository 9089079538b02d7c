package intake

import (
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// Topic is the consumer's Processor of the OpenLineage topic (ingest.Topics routes its messages
// here): Step on the message value, one event as openlineage's Kafka transport writes it, timed
// in the loop's decode and extract stages, with ignored facet problems counted.
type Topic struct {
	Step    Step    // Validator required; Observe and Ignored are set from Metrics
	Metrics metrics // *ingest.Metrics; nil: not measured
}

// metrics is what Topic reports to; *ingest.Metrics satisfies it.
type metrics interface {
	ObserveStage(stage string, d time.Duration)
	CountIgnored(schema string)
	CountOverBudget(lin *plan.Lineage)
}

// Process implements ingest.Processor.
func (t Topic) Process(msg kafka.Message) (record.Item, error) {
	step := t.Step
	if t.Metrics != nil {
		step.Observe = t.Metrics.ObserveStage
		step.Ignored = func(schema string, _ openlineage.Problem) { t.Metrics.CountIgnored(schema) }
	}
	it, err := step.Item(msg.Value)
	if err == nil && t.Metrics != nil {
		t.Metrics.CountOverBudget(it.Lineage)
	}
	return it, err
}

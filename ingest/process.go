package ingest

import (
	"errors"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
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

// Extractor is the consumer's Processor: events.Decode, plan.Extract and graph.Check, timed in
// the decode and extract stages, with unknown plan node classes counted.
type Extractor struct {
	Metrics *Metrics // nil: not measured
}

// Process implements Processor.
func (x Extractor) Process(msg kafka.Message) (graph.Item, error) {
	start := time.Now()
	env, err := events.Decode(msg.Value)
	if x.Metrics != nil {
		x.Metrics.stage.WithLabelValues(stageDecode).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return graph.Item{}, err
	}
	start = time.Now()
	lin, err := plan.Extract(env)
	if err == nil {
		err = graph.Check(graph.Item{Event: env, Lineage: lin})
	}
	if x.Metrics != nil {
		x.Metrics.stage.WithLabelValues(stageExtract).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return graph.Item{Event: env}, err
	}
	if x.Metrics != nil {
		x.Metrics.countUnknown(lin.Unknown)
	}
	return graph.Item{Event: env, Lineage: lin}, nil
}

// Dead-letter reasons, the value of the colline.reason header and of the reason label.
const (
	ReasonInvalidJSON        = "invalid_json"        // not JSON
	ReasonUnsupportedVersion = "unsupported_version" // a schema major version this consumer does not read
	ReasonInvalidEvent       = "invalid_event"       // JSON, but not a valid event
	ReasonUnsupportedPlan    = "unsupported_plan"    // plan.Extract failed
	ReasonInvalidLineage     = "invalid_lineage"     // the lineage cannot be stored as it is (graph.ErrInvalidItem)
	ReasonWriteRejected      = "write_rejected"      // Neo4j rejected the event's data
	ReasonOther              = "other"               // a Processor error of no known kind
)

var reasons = []string{
	ReasonInvalidJSON, ReasonUnsupportedVersion, ReasonInvalidEvent, ReasonUnsupportedPlan,
	ReasonInvalidLineage, ReasonWriteRejected, ReasonOther,
}

// reason classifies a permanent error.
func reason(err error) string {
	switch {
	case errors.Is(err, events.ErrInvalidJSON):
		return ReasonInvalidJSON
	case errors.Is(err, events.ErrUnsupportedVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, events.ErrInvalid):
		return ReasonInvalidEvent
	case errors.Is(err, plan.ErrUnsupported):
		return ReasonUnsupportedPlan
	case errors.Is(err, graph.ErrInvalidItem):
		return ReasonInvalidLineage
	}
	return ReasonOther
}

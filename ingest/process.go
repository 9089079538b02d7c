package ingest

import (
	"errors"
	"fmt"
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

// Extractor is the consumer's Processor: size and nesting limits, events.Decode, plan.Extract and
// graph.Check, timed in the decode and extract stages, with unknown plan node classes counted.
type Extractor struct {
	Metrics *Metrics // nil: not measured
	// MaxBytes is the largest message value decoded; a larger one fails with ErrTooLarge before
	// any parsing, which bounds the memory one message can take. Default: DefaultMaxEventBytes.
	MaxBytes int
	// Budget bounds the work of extracting one event (plan.Budget; zero fields: plan.DefaultBudget).
	// A plan over budget fails with plan.ErrTooComplex.
	Budget plan.Budget
}

// DefaultMaxEventBytes is the default of Extractor.MaxBytes: 32 MiB, so that plans of 20 MB and
// more are decoded. The listener compresses its messages, so a plan above the topic's 16 MiB
// max.message.bytes still fits the topic; the reader's default fetch (32 MiB) holds it.
const DefaultMaxEventBytes = 32 << 20

// MaxNesting is the deepest nesting of JSON arrays and objects decoded: encoding/json's own limit.
// A deeper message fails with ErrTooDeep.
const MaxNesting = 10000

// Permanent errors of Extractor, besides those of events, plan and graph.
var (
	ErrTooLarge = errors.New("message too large")
	ErrTooDeep  = errors.New("message nested too deeply")
)

// Process implements Processor.
func (x Extractor) Process(msg kafka.Message) (graph.Item, error) {
	limit := x.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxEventBytes
	}
	if len(msg.Value) > limit {
		return graph.Item{}, fmt.Errorf("%w: %d bytes, the limit is %d (COLLINE_MAX_EVENT_BYTES)", ErrTooLarge, len(msg.Value), limit)
	}
	start := time.Now()
	if d := nesting(msg.Value, MaxNesting); d > MaxNesting {
		return graph.Item{}, fmt.Errorf("%w: more than %d levels of arrays and objects", ErrTooDeep, MaxNesting)
	}
	env, err := events.Decode(msg.Value)
	if x.Metrics != nil {
		x.Metrics.stage.WithLabelValues(stageDecode).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return graph.Item{}, err
	}
	start = time.Now()
	lin, err := plan.ExtractWithin(env, x.Budget)
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
	ReasonTooLarge           = "too_large"           // larger than COLLINE_MAX_EVENT_BYTES
	ReasonTooDeep            = "too_deep"            // JSON nested deeper than MaxNesting levels
	ReasonInvalidJSON        = "invalid_json"        // not JSON (including an empty message)
	ReasonUnsupportedVersion = "unsupported_version" // a schema major version this consumer does not read
	ReasonInvalidEvent       = "invalid_event"       // JSON, but not a valid event
	ReasonTooComplex         = "too_complex"         // the plan is over a budget of plan.Budget (COLLINE_MAX_PLAN_*)
	ReasonUnsupportedPlan    = "unsupported_plan"    // plan.Extract failed
	ReasonInvalidLineage     = "invalid_lineage"     // the lineage cannot be stored as it is (graph.ErrInvalidItem)
	ReasonWriteRejected      = "write_rejected"      // Neo4j rejected the event's data
	ReasonOther              = "other"               // a Processor error of no known kind
)

var reasons = []string{
	ReasonTooLarge, ReasonTooDeep, ReasonInvalidJSON, ReasonUnsupportedVersion, ReasonInvalidEvent, ReasonTooComplex, ReasonUnsupportedPlan,
	ReasonInvalidLineage, ReasonWriteRejected, ReasonOther,
}

// reason classifies a permanent error.
func reason(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrTooDeep):
		return ReasonTooDeep
	case errors.Is(err, events.ErrInvalidJSON):
		return ReasonInvalidJSON
	case errors.Is(err, events.ErrUnsupportedVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, events.ErrInvalid):
		return ReasonInvalidEvent
	case errors.Is(err, plan.ErrTooComplex):
		return ReasonTooComplex
	case errors.Is(err, plan.ErrUnsupported):
		return ReasonUnsupportedPlan
	case errors.Is(err, graph.ErrInvalidItem):
		return ReasonInvalidLineage
	}
	return ReasonOther
}

// nesting returns the depth of the deepest array or object in data, scanning no further once it
// exceeds limit. It does not validate the JSON: events.Decode does. Brackets inside strings do not
// count.
func nesting(data []byte, limit int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

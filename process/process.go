// Package process turns one message value (one event as the listener sent it, or a record of
// Hive's LineageLogger) into an item (record.Item):
// the size and nesting limits, events.Decode, plan.Extract and record.Check. It is the one
// processing step of colline: the consumer, the CLI, the benchmarks and the fault harness all call
// it, so a value is judged the same way everywhere. It is pure: no I/O, no Kafka.
//
// Every error it returns is permanent (the same value fails the same way); Reason names its kind,
// the value of the consumer's colline.reason dead-letter header.
package process

import (
	"errors"
	"fmt"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// DefaultMaxBytes is the default of Step.MaxBytes: 32 MiB, so that plans of 20 MB and more are
// decoded. The listener compresses its messages, so a plan above the topic's 16 MiB
// max.message.bytes still fits the topic.
const DefaultMaxBytes = 32 << 20

// MaxNesting is the deepest nesting of JSON arrays and objects decoded: encoding/json's own limit,
// and jsontext's, which events.Decode and events.DecodeLineageLog enforce. A deeper value fails
// with ErrTooDeep.
const MaxNesting = 10000

// Errors of the limits; the others come from events, plan and graph.
var (
	ErrTooLarge = errors.New("message too large")
	ErrTooDeep  = errors.New("message nested too deeply")
)

// Stages timed by Step.Observe.
const (
	StageDecode  = "decode"  // the limits and events.Decode
	StageExtract = "extract" // plan.Extract and record.Check
	StageReuse   = "reuse"   // a plan found in Step.Reuse: the limits, the head's decoding and record.Check
)

// Step is the processing step. The zero value applies the default limits and times nothing.
type Step struct {
	// MaxBytes is the largest value decoded; a larger one fails with ErrTooLarge before any
	// parsing, which bounds the memory one value can take. Default: DefaultMaxBytes.
	MaxBytes int
	// Budget bounds the work of extracting one event (zero fields: plan.DefaultBudget); of a plan
	// over it, the item holds table-level lineage only, marked (plan.Lineage.OverBudget).
	Budget plan.Budget
	// Observe, when set, receives the time each stage took.
	Observe func(stage string, d time.Duration)
	// LineageLog completes the records of Hive's LineageLogger, which a value may be instead of a
	// colline event (events.IsLineageLog): the time of a record without one (the CLI gives the
	// file's modification time; zero: such a record is invalid) and the job namespace.
	LineageLog events.LineageLogOptions
	// Clusters names the Kafka cluster of bootstrap servers (COLLINE_KAFKA_CLUSTERS): a topic the
	// event names through a server of a cluster is keyed by the cluster (events.Dataset.Cluster).
	// Nil: by the first server the job gave.
	Clusters alias.Clusters
	// Reuse, when set, remembers the lineage of the plans extracted, and a re-run that sends one of
	// them again gets it without its plan being decoded or extracted: its item's Event has no
	// Nodes. One Reuse serves one configuration of the fields above.
	Reuse *Reuse
}

// Item turns value into an item. On an error after decoding, the item still holds the event
// (for logs and dead letters) but no lineage.
func (s Step) Item(value []byte) (record.Item, error) {
	if err := Limits(value, s.MaxBytes); err != nil {
		return record.Item{}, err
	}
	start := time.Now()
	var env *events.Envelope
	var err error
	var key reuseKey
	var planBytes []byte
	switch {
	case events.IsLineageLog(value):
		env, err = events.DecodeLineageLog(value, s.LineageLog)
	case s.Reuse != nil:
		if head, p, ok := events.DecodeHead(value); ok {
			key, planBytes = s.Reuse.key(head, p), p
			if lin := s.Reuse.get(key); lin != nil {
				it := record.Item{Event: head, Lineage: lin}
				err := record.Check(&it)
				s.observe(StageReuse, start)
				if err != nil {
					return record.Item{Event: head}, err
				}
				return it, nil
			}
		}
		var p []byte
		env, p, err = events.DecodeWithPlan(value)
		if len(p) != len(planBytes) {
			planBytes = nil // not a plan to remember: its nodes are not the event's last key
		}
	default:
		env, err = events.Decode(value)
	}
	if err != nil {
		// The decoders refuse a value nested deeper than MaxNesting (jsontext's own limit, the
		// same: TestDecodersRefuseTooDeep), so only a value that failed can be too deep: the
		// nesting is scanned then, to name that reason, not on every event.
		if derr := Depth(value); derr != nil {
			err = derr
		}
	}
	s.observe(StageDecode, start)
	if err != nil {
		return record.Item{}, err
	}
	start = time.Now()
	nameClusters(env, s.Clusters)
	it, err := lineage(env, s.Budget)
	if err == nil && planBytes != nil {
		s.Reuse.put(key, it.Lineage)
	}
	s.observe(StageExtract, start)
	return it, err
}

// lineage extracts the lineage of env and checks that the graph can store it.
func lineage(env *events.Envelope, b plan.Budget) (record.Item, error) {
	lin, err := plan.ExtractWithin(env, b)
	if err != nil {
		return record.Item{Event: env}, err
	}
	it := record.Item{Event: env, Lineage: lin}
	if err := record.Check(&it); err != nil {
		return record.Item{Event: env}, err
	}
	return it, nil
}

// nameClusters sets the cluster of every Kafka dataset of env that names none, from the servers
// it names (the sources', the targets' and those of DDL).
func nameClusters(env *events.Envelope, c alias.Clusters) {
	if len(c) == 0 {
		return
	}
	name := func(d *events.Dataset) {
		if d != nil && d.Kind == "kafka" && d.Cluster == "" {
			d.Cluster = c.Of(d.Servers)
		}
	}
	for i := range env.Nodes {
		n := &env.Nodes[i]
		name(n.Dataset)
		if n.Write != nil {
			name(&n.Write.Dataset)
		}
	}
}

// Limits checks the size of a value against max (0: DefaultMaxBytes), before any parsing.
func Limits(value []byte, max int) error {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	if len(value) > max {
		return fmt.Errorf("%w: %d bytes, the limit is %d (COLLINE_MAX_EVENT_BYTES)", ErrTooLarge, len(value), max)
	}
	return nil
}

// Depth checks the nesting of a value against MaxNesting.
func Depth(value []byte) error {
	if nesting(value, MaxNesting) > MaxNesting {
		return fmt.Errorf("%w: more than %d levels of arrays and objects", ErrTooDeep, MaxNesting)
	}
	return nil
}

func (s Step) observe(stage string, start time.Time) {
	if s.Observe != nil {
		s.Observe(stage, time.Since(start))
	}
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

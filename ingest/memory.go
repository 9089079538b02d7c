package ingest

import (
	"cmp"
	"runtime/debug"

	"github.com/segmentio/kafka-go"
)

// largeFactor is how many times its size a message of BatchMaxBytes or more (a batch of its own)
// may take in memory while the loop holds it: its value in the batch being written or decoded,
// its decoded plan while it is extracted, the message the loop fetched next, and kafka-go's
// read-ahead (the message in its queue, the one it is sending, and the buffer it decompressed
// them into, about 1.4 times a message). Each copy is about the size of the message: six of them.
const largeFactor = 6

// pacerBase is what the consumer takes without any message in hand, as the soft memory limit
// counts it (heap and runtime, not the binary): the Go runtime, the Neo4j driver, kafka-go's
// connections, the metrics. A consumer that consumed one small plan peaked at 18–21 MiB RSS, of
// which about 10 MiB is the binary. It is a constant: what the process holds when the first
// large message arrives already includes kafka-go's read-ahead of the next ones.
const pacerBase = 16 << 20

// pacer tightens the garbage collector while the loop holds a large message. At GOGC=100 the heap
// grows to twice its live data before a collection. With a few messages of tens of MB live, that
// doubling, not the data, makes the peak: five 20 MB plans took a 230–260 MiB peak RSS for about
// 130 MB live. While the loop holds a message of at least BatchMaxBytes, the pacer sets the soft
// memory limit to pacerBase plus largeFactor times the largest such message, the most the loop
// and kafka-go hold of it by design; the collector then runs as often as it takes to stay under
// that. A limit set by the operator (GOMEMLIMIT, or a container's, see config.SetMemoryLimit)
// stays the ceiling: the pacer only ever lowers the limit, and puts the operator's back once no
// such message is in hand. The soft limit never fails an allocation: if the estimate is short,
// the runtime caps the collector's CPU (at about half).
type pacer struct {
	held  func() int64 // what the processor keeps between messages (heldBytes), 0 when nil
	min   int          // the size of a large message: BatchMaxBytes
	on    bool         // Params.NoPacing unset
	ceil  int64        // the limit when the loop started: the operator's, math.MaxInt64 when none
	limit int64        // the limit set, 0: none (ceil is in force)
	sets  int          // how many times a limit was set, for tests
}

func newPacer(min int, on bool) *pacer {
	return &pacer{min: min, on: on, ceil: debug.SetMemoryLimit(-1)}
}

// hold sets the limit for the largest message value the loop now holds (0: none).
func (p *pacer) hold(largest int) {
	if !p.on {
		return
	}
	if largest < p.min {
		if p.limit != 0 {
			debug.SetMemoryLimit(p.ceil)
			p.limit = 0
		}
		return
	}
	limit := pacerBase + largeFactor*int64(largest)
	if p.held != nil {
		limit += p.held()
	}
	if limit >= p.ceil {
		limit = 0 // the operator's limit is already tighter
	}
	if limit != p.limit {
		debug.SetMemoryLimit(cmp.Or(limit, p.ceil))
		p.limit = limit
		p.sets++
	}
}

// holder is a Processor that keeps memory between messages (Extractor with a process.Reuse):
// HeldBytes says how much, which the pacer adds to pacerBase.
type holder interface{ HeldBytes() int64 }

// heldBytes returns the HeldBytes of p, nil when p keeps nothing.
func heldBytes(p Processor) func() int64 {
	if h, ok := p.(holder); ok {
		return h.HeldBytes
	}
	return nil
}

// stop puts the limit of the start back.
func (p *pacer) stop() { p.hold(0) }

// largest is the largest value among msgs.
func largest(msgs []kafka.Message) int {
	n := 0
	for _, m := range msgs {
		n = max(n, len(m.Value))
	}
	return n
}

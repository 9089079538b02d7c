package ingest

import (
	"context"
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/record"
)

// limitWriter records the soft memory limit in force during each write, by batch.
type limitWriter struct {
	mu     sync.Mutex
	limits []int64
}

func (w *limitWriter) Write(_ context.Context, _ []record.Item) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.limits = append(w.limits, debug.SetMemoryLimit(-1))
	return nil
}

func (w *limitWriter) got() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int64(nil), w.limits...)
}

// TestLargeMessageTightensTheGCOnlyWhileInHand: with no memory limit set, a message of
// BatchMaxBytes or more is written under a soft limit of pacerBase plus largeFactor times its
// size; small messages before it and after it is gone are written without a limit, and Run
// leaves none. An operator's limit stays the ceiling.
func TestLargeMessageTightensTheGCOnlyWhileInHand(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("a memory limit is set (GOMEMLIMIT?)")
	}
	const large = 4096
	big := strings.Repeat("x", large)
	processor := ProcessorFunc(func(m kafka.Message) (record.Item, error) {
		if len(m.Value) >= large {
			m.Value = []byte("ok")
		}
		return fakeProcessor(m)
	})
	run := func(t *testing.T) []int64 {
		w := &limitWriter{}
		h := newHarness(t, func(p *Params) {
			p.Processor, p.Writer, p.BatchMaxBytes, p.BatchSize = processor, w, large, 1
		})
		stop := h.start(t)
		for i, v := range []string{"ok", big, "ok", "ok"} {
			h.reader.send(0, v)
			eventually(t, "the batch written", func() bool { return len(w.got()) == i+1 })
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		return w.got()
	}

	got := run(t)
	// the third message is fetched while the large one is still in hand (its batch is delivered
	// in the background until the loop waits for it), the fourth once it is gone
	want := []int64{math.MaxInt64, pacerBase + largeFactor*large, pacerBase + largeFactor*large, math.MaxInt64}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("limit during write %d = %d, want %d (all: %v)", i, got[i], want[i], got)
		}
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("limit after Run = %d, want none", l)
	}

	// an operator's limit stays the ceiling: above the pacer's, the pacer lowers it while the
	// large message is in hand and puts it back; below, it is left alone
	defer debug.SetMemoryLimit(math.MaxInt64)
	for _, operator := range []int64{1 << 30, 1 << 20} {
		debug.SetMemoryLimit(operator)
		got := run(t)
		for i, w := range want {
			if w == math.MaxInt64 || operator < w {
				w = operator
			}
			if got[i] != w {
				t.Errorf("with the operator's limit %d, limit during write %d = %d, want %d (all: %v)", operator, i, got[i], w, got)
			}
		}
		if l := debug.SetMemoryLimit(-1); l != operator {
			t.Errorf("limit after Run = %d, want the operator's %d", l, operator)
		}
	}
}

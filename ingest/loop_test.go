package ingest

import (
	"context"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

func TestCommitAfterWrite(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.send(0, "ok", "ok", "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 3 })
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := []string{"write 0@0,0@1,0@2", "commit 0@0,0@1,0@2"}
	if got := h.j.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("journal = %q, want %q", got, want)
	}
	if got := testutil.ToFloat64(h.metrics.messages.WithLabelValues(resultOK)); got != 3 {
		t.Errorf("ok messages = %v, want 3", got)
	}
	if got := testutil.ToFloat64(h.metrics.edges); got != 6 {
		t.Errorf("edges = %v, want 6", got)
	}
	if got := testutil.ToFloat64(h.metrics.lastEvent); got != float64(time.Date(2026, 11, 30, 10, 15, 2, 0, time.UTC).Unix()) {
		t.Errorf("last event timestamp = %v", got)
	}
}

func TestOrderIsKeptAcrossBatchesAndPartitions(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.BatchSize = 3 })
	var want []string
	for i := range 4 {
		h.reader.send(0, "ok")
		h.reader.send(1, "ok", "ok")
		want = append(want, "0@"+strconv.Itoa(i), "1@"+strconv.Itoa(2*i), "1@"+strconv.Itoa(2*i+1))
	}
	stop := h.start(t)
	eventually(t, "all commits", func() bool { return len(h.reader.committed()) == 12 })
	stop()
	if got := h.writer.written(); !reflect.DeepEqual(got, want) {
		t.Errorf("written = %v, want fetch order %v", got, want)
	}
	commits := h.j.starting("commit")
	if len(commits) != 4 {
		t.Errorf("commits = %q, want 4 batches of 3", commits)
	}
	for _, part := range []int{0, 1} {
		var offs []int64
		for _, m := range h.reader.committed() {
			if m.Partition == part {
				offs = append(offs, m.Offset)
			}
		}
		if !slices.IsSorted(offs) {
			t.Errorf("partition %d committed out of order: %v", part, offs)
		}
	}
}

func TestBatchWaitBoundsLatency(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.BatchSize = 1000; p.BatchWait = 30 * time.Millisecond })
	h.reader.send(0, "ok")
	stop := h.start(t)
	start := time.Now()
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	if d := time.Since(start); d > time.Second {
		t.Errorf("a lone message waited %v for its batch", d)
	}
	stop()
}

// TestBatchesFollowTheWriter: a message that finds the writer free is written at once, not after
// BatchWait (a minute here); messages that come while a batch is being written join the next
// batch, which goes as soon as that write is done.
func TestBatchesFollowTheWriter(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	h := newHarness(t, func(p *Params) { p.BatchWait = time.Minute })
	h.writer.fail = func(call int, _ []record.Item) error {
		if call == 1 {
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	h.reader.send(0, "ok")
	stop := h.start(t)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("a lone message waited for BatchWait although the writer was free")
	}
	h.reader.send(0, "ok", "ok")
	time.Sleep(50 * time.Millisecond) // both are fetched while the first write is held
	close(release)
	eventually(t, "all commits", func() bool { return len(h.reader.committed()) == 3 })
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	writes := h.j.starting("write ")
	if want := []string{"write 0@0", "write 0@1,0@2"}; !reflect.DeepEqual(writes, want) {
		t.Errorf("writes %q, want %q", writes, want)
	}
}

// TestBatchMaxEdgesSplitsBatches: a batch ends before the item whose lineage would take it past
// BatchMaxEdges (an "ok" item has 2, a "wide" one 10); the messages left over come next, each
// processed once, and everything is written and committed in fetch order.
func TestBatchMaxEdgesSplitsBatches(t *testing.T) {
	var mu sync.Mutex
	processed := map[string]int{}
	h := newHarness(t, func(p *Params) {
		p.BatchMaxEdges = 5
		p.BatchWait = 200 * time.Millisecond
		p.Processor = ProcessorFunc(func(m kafka.Message) (record.Item, error) {
			mu.Lock()
			processed[strconv.FormatInt(m.Offset, 10)]++
			mu.Unlock()
			if string(m.Value) != "wide" {
				return fakeProcessor(m)
			}
			it, err := fakeProcessor(kafka.Message{Partition: m.Partition, Offset: m.Offset, Value: []byte("ok")})
			it.Lineage = &plan.Lineage{Edges: make([]plan.Edge, 10)}
			return it, err
		})
	})
	h.reader.send(0, "ok", "ok", "ok", "json", "wide", "ok", "ok")
	stop := h.start(t)
	eventually(t, "all commits", func() bool { return len(h.reader.committed()) == 7 })
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	writes := h.j.starting("write ")
	want := []string{"write 0@0,0@1", "write 0@2", "write 0@4", "write 0@5,0@6"}
	if !reflect.DeepEqual(writes, want) {
		t.Errorf("writes %q, want %q", writes, want)
	}
	for off, n := range processed {
		if n != 1 {
			t.Errorf("message at offset %s processed %d times, want once", off, n)
		}
	}
	if len(processed) != 7 {
		t.Errorf("processed %d messages, want 7", len(processed))
	}
}

func TestShutdownFinishesTheBatchInHand(t *testing.T) {
	release := make(chan struct{})
	writing := make(chan struct{})
	h := newHarness(t, nil)
	h.writer.fail = func(call int, _ []record.Item) error {
		close(writing)
		<-release
		return nil
	}
	h.reader.send(0, "ok", "ok")
	stop := h.start(t)
	<-writing
	errc := make(chan error, 1)
	go func() { errc <- stop() }()
	time.Sleep(20 * time.Millisecond) // SIGTERM arrives while the batch is being written
	h.reader.send(0, "ok")            // and is not fetched any more
	close(release)
	if err := <-errc; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := ids(h.reader.committed()); got != "0@0,0@1" {
		t.Errorf("committed %s, want the batch in hand 0@0,0@1", got)
	}
}

func TestShutdownTimeoutLeavesTheBatchUncommitted(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.ShutdownTimeout = 30 * time.Millisecond })
	h.writer.fail = func(int, []record.Item) error { return &neo4j.ConnectivityError{Inner: io.EOF} }
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a retry", func() bool { return testutil.ToFloat64(h.metrics.retries.WithLabelValues(opWrite)) > 0 })
	start := time.Now()
	err := stop()
	if err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Errorf("Run = %v, want an error saying the batch is not committed", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v with a 30ms timeout", d)
	}
	if len(h.reader.committed()) != 0 {
		t.Error("committed an unwritten batch")
	}
}

func TestReaderClosedStopsTheLoop(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.fetchErrs = []error{io.EOF}
	if err := h.loop.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "reader closed") {
		t.Errorf("Run = %v, want reader closed", err)
	}
}

func TestNewRequiresTheSeams(t *testing.T) {
	_, err := New(Params{ExitWhenIdle: time.Second})
	if err == nil || !strings.Contains(err.Error(), "Fetcher Committer Writer DeadLetters Backlog") {
		t.Errorf("New = %v", err)
	}
}

package ingest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// fakeProcessor understands tiny message values instead of events (a unit-test stand-in for
// Extractor): "ok" and "poison" become items whose event id is partition@offset ("poison" ones
// are refused by rejectPoison), "json", "version", "event", "plan" fail like Decode and Extract.
var fakeProcessor = ProcessorFunc(func(m kafka.Message) (record.Item, error) {
	id := strconv.Itoa(m.Partition) + "@" + strconv.FormatInt(m.Offset, 10)
	switch v := string(m.Value); v {
	case "ok", "poison":
		if v == "poison" {
			id += "!"
		}
		return record.Item{
			Event:   &events.Envelope{EventID: id, EmittedAt: "2026-11-30T10:15:02Z", App: events.App{ID: "app-1", Name: "job"}},
			Lineage: &plan.Lineage{Edges: make([]plan.Edge, 2)},
		}, nil
	case "json":
		return record.Item{}, fmt.Errorf("%w: at byte 1", events.ErrInvalidJSON)
	case "version":
		return record.Item{}, fmt.Errorf("%w: 2.0", events.ErrUnsupportedVersion)
	case "event":
		return record.Item{}, fmt.Errorf("%w: eventId is missing", events.ErrInvalid)
	case "plan":
		return record.Item{}, fmt.Errorf("%w: boom", plan.ErrUnsupported)
	}
	return record.Item{}, fmt.Errorf("fake processor: unexpected value %q", m.Value)
})

// rejectPoison fails, as Neo4j would for bad data, every batch holding a poison item.
func rejectPoison(_ int, items []record.Item) error {
	for _, it := range items {
		if strings.HasSuffix(it.Event.EventID, "!") {
			return &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.TypeError", Msg: "bad value"}
		}
	}
	return nil
}

// harness wires a Loop to fakes.
type harness struct {
	j       *journal
	reader  *fakeReader
	writer  *fakeWriter
	dlq     *fakeProducer
	metrics *Metrics
	loop    *Loop
}

func newHarness(t *testing.T, tweak func(*Params)) *harness {
	t.Helper()
	j := &journal{}
	h := &harness{j: j, reader: newFakeReader(j), writer: &fakeWriter{j: j}, dlq: &fakeProducer{j: j}, metrics: NewMetrics(nil)}
	p := Params{
		Fetcher: h.reader, Committer: h.reader, Writer: h.writer, DeadLetters: h.dlq,
		Processor: fakeProcessor, Metrics: h.metrics, Version: "test-1",
		BatchSize: 100, BatchWait: 20 * time.Millisecond, ShutdownTimeout: 2 * time.Second,
		Backoff: Backoff{Min: time.Millisecond, Max: 4 * time.Millisecond},
	}
	if tweak != nil {
		tweak(&p)
	}
	l, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	h.loop = l
	return h
}

// start runs the loop until the test ends or stop is called; stop returns Run's error.
func (h *harness) start(t *testing.T) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.loop.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

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
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
)

// journal records what the fakes did, in order, across all of them.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

// fakeReader is an in-memory fetcher and committer.
type fakeReader struct {
	j          *journal
	msgs       chan kafka.Message
	mu         sync.Mutex
	fetchErrs  []error
	commitErrs []error
	commits    [][]kafka.Message
	next       map[int]int64
}

func newFakeReader(j *journal) *fakeReader {
	return &fakeReader{j: j, msgs: make(chan kafka.Message, 1000), next: map[int]int64{}}
}

// send queues messages; value is the message value, part its partition.
func (r *fakeReader) send(part int, values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		r.msgs <- kafka.Message{Topic: "colline.plans", Partition: part, Offset: r.nextOffset(part), Key: []byte("app-1"), Value: []byte(v),
			Headers: []kafka.Header{{Key: "orig", Value: []byte("h")}}}
	}
}

// nextOffset returns the next offset of partition part; r.mu is held.
func (r *fakeReader) nextOffset(part int) int64 {
	o := r.next[part]
	r.next[part]++
	return o
}

func (r *fakeReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	r.mu.Lock()
	if len(r.fetchErrs) > 0 {
		err := r.fetchErrs[0]
		r.fetchErrs = r.fetchErrs[1:]
		r.mu.Unlock()
		return kafka.Message{}, err
	}
	r.mu.Unlock()
	select {
	case <-ctx.Done():
		return kafka.Message{}, ctx.Err()
	case m := <-r.msgs:
		return m, nil
	}
}

func (r *fakeReader) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.commitErrs) > 0 {
		err := r.commitErrs[0]
		r.commitErrs = r.commitErrs[1:]
		r.j.add("commit failed: %v", err)
		return err
	}
	r.commits = append(r.commits, msgs)
	r.j.add("commit %s", ids(msgs))
	return nil
}

func (r *fakeReader) committed() []kafka.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kafka.Message
	for _, c := range r.commits {
		out = append(out, c...)
	}
	return out
}

// ids renders messages as partition@offset.
func ids(msgs []kafka.Message) string {
	s := make([]string, len(msgs))
	for i, m := range msgs {
		s[i] = fmt.Sprintf("%d@%d", m.Partition, m.Offset)
	}
	return strings.Join(s, ",")
}

// fakeWriter records batches; fail decides, per call, whether a batch fails.
type fakeWriter struct {
	j       *journal
	mu      sync.Mutex
	calls   int
	batches [][]graph.Item
	fail    func(call int, items []graph.Item) error
}

func (w *fakeWriter) Write(ctx context.Context, items []graph.Item) error {
	w.mu.Lock()
	w.calls++
	call := w.calls
	fail := w.fail
	w.mu.Unlock()
	if fail != nil {
		if err := fail(call, items); err != nil {
			w.j.add("write failed %s: %v", itemIDs(items), err)
			return err
		}
	}
	w.mu.Lock()
	w.batches = append(w.batches, items)
	w.mu.Unlock()
	w.j.add("write %s", itemIDs(items))
	return nil
}

func (w *fakeWriter) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, b := range w.batches {
		for _, it := range b {
			out = append(out, it.Event.EventID)
		}
	}
	return out
}

func itemIDs(items []graph.Item) string {
	s := make([]string, len(items))
	for i, it := range items {
		s[i] = it.Event.EventID
	}
	return strings.Join(s, ",")
}

// fakeProducer records dead letters; errs are returned by the first calls.
type fakeProducer struct {
	j    *journal
	mu   sync.Mutex
	errs []error
	sent []kafka.Message
}

func (p *fakeProducer) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		err := p.errs[0]
		p.errs = p.errs[1:]
		return err
	}
	p.sent = append(p.sent, msgs...)
	for _, m := range msgs {
		p.j.add("dead letter %s", header(m, HeaderSourcePartition)+"@"+header(m, HeaderSourceOffset))
	}
	return nil
}

func (p *fakeProducer) messages() []kafka.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]kafka.Message(nil), p.sent...)
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// fakeProcessor understands tiny message values instead of events (a unit-test stand-in for
// Extractor): "ok" and "poison" become items whose event id is partition@offset ("poison" ones
// are refused by rejectPoison), "json", "version", "event", "plan" fail like Decode and Extract.
var fakeProcessor = ProcessorFunc(func(m kafka.Message) (graph.Item, error) {
	id := strconv.Itoa(m.Partition) + "@" + strconv.FormatInt(m.Offset, 10)
	switch v := string(m.Value); v {
	case "ok", "poison":
		if v == "poison" {
			id += "!"
		}
		return graph.Item{
			Event:   &events.Envelope{EventID: id, EmittedAt: "2026-11-30T10:15:02Z", App: events.App{ID: "app-1", Name: "job"}},
			Lineage: &plan.Lineage{Edges: make([]plan.Edge, 2)},
		}, nil
	case "json":
		return graph.Item{}, fmt.Errorf("%w: at byte 1", events.ErrInvalidJSON)
	case "version":
		return graph.Item{}, fmt.Errorf("%w: 2.0", events.ErrUnsupportedVersion)
	case "event":
		return graph.Item{}, fmt.Errorf("%w: eventId is missing", events.ErrInvalid)
	case "plan":
		return graph.Item{}, fmt.Errorf("%w: boom", plan.ErrUnsupported)
	}
	return graph.Item{}, fmt.Errorf("fake processor: unexpected value %q", m.Value)
})

// rejectPoison fails, as Neo4j would for bad data, every batch holding a poison item.
func rejectPoison(_ int, items []graph.Item) error {
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

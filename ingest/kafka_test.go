package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// TestLoopAgainstRealKafkaAndNeo4j runs the loop against the services of dev/services: a fresh
// topic pair, two events and one broken message, consumed with ExitWhenIdle.
func TestLoopAgainstRealKafkaAndNeo4j(t *testing.T) {
	k, uri := stack.TestKafka(t), stack.TestNeo4jURI(t)
	addrs := k.Brokers
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, dlqTopic, group := k.TestTopics(t, "ingest", 2, 0)
	suffix := stack.NewID()

	src, mid, out := "src_"+suffix, "mid_"+suffix, "out_"+suffix
	w := NewProducer(addrs, topic, 0, nil) // any synchronous producer will do
	err := w.WriteMessages(ctx,
		kafka.Message{Key: []byte("app-a"), Value: eventFor(t, "ev-1-"+suffix, src, mid)},
		kafka.Message{Key: []byte("app-b"), Value: eventFor(t, "ev-2-"+suffix, mid, out)},
		kafka.Message{Key: []byte("app-a"), Value: []byte("{not json")},
	)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	driver, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	store := graph.NewWriter(driver, "")
	metrics := NewMetrics(nil)

	consume := func() {
		t.Helper()
		runUntilIdle(ctx, t, addrs, topic, dlqTopic, group, 0, Params{Writer: store, Setup: store.Bootstrap, Metrics: metrics})
	}
	consume()
	// a graph.Writer is given each batch prepared ahead (graph.Prepare), not its items
	prepared, written := histCount(t, metrics, stagePrepare), histCount(t, metrics, stageWrite)
	if prepared == 0 || prepared != written {
		t.Errorf("%d batches prepared ahead, %d written: want every batch prepared", prepared, written)
	}

	down, err := graph.NewReader(driver, "").Downstream(ctx, "spark_catalog/db."+src+"#name", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"spark_catalog/db." + mid + "#name", "spark_catalog/db." + out + "#name"}; strings.Join(down, " ") != strings.Join(want, " ") {
		t.Errorf("downstream of src.name = %v, want %v (across the two events)", down, want)
	}

	dr := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: dlqTopic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer dr.Close()
	m, err := dr.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if header(m, HeaderReason) != process.ReasonInvalidJSON || string(m.Value) != "{not json" || header(m, HeaderSourceTopic) != topic {
		t.Errorf("dead letter: value %q headers %v", m.Value, m.Headers)
	}

	targets, err := Backlog{Brokers: addrs, Topics: []string{topic}, Group: group}.Targets(ctx)
	if err != nil || len(targets) != 0 {
		t.Errorf("backlog after consuming = %v, %v; want nothing left", targets, err)
	}
	start := time.Now()
	consume() // nothing left: exits after the idle time
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a second run over a consumed topic took %v", d)
	}
}

// blockingWriter writes the first batches it is given, then fails every write the way an
// unreachable Neo4j does, until its context ends.
type blockingWriter struct {
	mu      sync.Mutex
	allow   int // batches written before the outage
	written int // events written
	failed  int // failed calls
	calls   chan struct{}
}

func (w *blockingWriter) Write(ctx context.Context, items []record.Item) error {
	w.mu.Lock()
	if w.allow > 0 {
		w.allow--
		w.written += len(items)
		w.mu.Unlock()
		return nil
	}
	w.failed++
	first := w.failed == 1
	w.mu.Unlock()
	if first { // fail at once, then hang like a dead connection
		return &neo4j.ConnectivityError{Inner: io.EOF}
	}
	select {
	case w.calls <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return &neo4j.ConnectivityError{Inner: ctx.Err()}
}

// TestShutdownNeverCommitsPastAnUnwrittenBatch runs the loop on real Kafka with a graph that
// stops accepting writes after the first batch; on shutdown the loop gives up within the deadline
// and the group's committed offsets stop exactly at the written batch.
func TestShutdownNeverCommitsPastAnUnwrittenBatch(t *testing.T) {
	k := stack.TestKafka(t)
	addrs := k.Brokers
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, dlqTopic, group := k.TestTopics(t, "ingest", 1, 0)
	suffix := stack.NewID()
	const total, batch = 30, 10
	var msgs []kafka.Message
	for i := range total {
		msgs = append(msgs, kafka.Message{Key: []byte("app"), Value: eventFor(t, fmt.Sprintf("ev-%d-%s", i, suffix), "src", "out")})
	}
	w := NewProducer(addrs, topic, 0, nil)
	err := w.WriteMessages(ctx, msgs...)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	reader := NewReader(ReaderOptions{Brokers: addrs, Topics: []string{topic}, Group: group, MaxWait: 100 * time.Millisecond}, nil)
	dlq := NewProducer(addrs, dlqTopic, 0, nil)
	defer dlq.Close()
	store := &blockingWriter{allow: 1, calls: make(chan struct{}, 1)}
	loop, err := New(Params{
		Fetcher: reader, Committer: reader, Writer: store, DeadLetters: dlq, Version: "it",
		BatchSize: batch, BatchWait: 2 * time.Second, ShutdownTimeout: 500 * time.Millisecond,
		Backoff: Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- loop.Run(runCtx) }()
	select {
	case <-store.calls: // the second batch is being retried: Neo4j is "down"
	case <-ctx.Done():
		t.Fatal("the second batch never reached the writer")
	}
	if loop.Ready() == nil {
		t.Error("ready while a write is being retried")
	}
	start := time.Now()
	stop()
	runErr := <-errc
	took := time.Since(start)
	if err := reader.Close(); err != nil {
		t.Errorf("close reader: %v", err)
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "not committed") {
		t.Errorf("Run = %v, want an error saying the batch was not committed", runErr)
	}
	if took > 3*time.Second {
		t.Errorf("shutdown took %v with a 500ms deadline", took)
	}
	lag, err := Backlog{Brokers: addrs, Topics: []string{topic}, Group: group}.Lag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if store.written != batch || lag[Partition{topic, 0}] != total-batch {
		t.Errorf("written %d, group lag %d: want the first %d written and committed and the other %d not committed", store.written, lag[Partition{topic, 0}], batch, total-batch)
	}
	t.Logf("shutdown in %v; written %d events, committed offset %d of %d", took, store.written, total-lag[Partition{topic, 0}], total)
}

// rejectingWriter rejects, as Neo4j rejects an item for its data, every batch that holds the
// event reject; it records the events it wrote and whether any item still held its decoded plan.
type rejectingWriter struct {
	mu       sync.Mutex
	reject   string
	written  []string
	withPlan int
}

func (w *rejectingWriter) Write(_ context.Context, items []record.Item) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, it := range items {
		if it.Event != nil && (it.Event.Nodes != nil || it.Event.Hive != nil) {
			w.withPlan++
		}
		if it.ID() == w.reject {
			return fmt.Errorf("%w: event %s rejected by the test", record.ErrInvalidItem, w.reject)
		}
	}
	for _, it := range items {
		w.written = append(w.written, it.ID())
	}
	return nil
}

// TestWriteTimeDeadLetterCarriesTheOriginalBytes runs the loop on real Kafka with a graph that
// rejects one of three events at write time: its dead letter carries the message's original
// bytes (indented JSON, which decoding and encoding again would not give back), key and headers,
// and no item reaches the writer with its decoded plan.
func TestWriteTimeDeadLetterCarriesTheOriginalBytes(t *testing.T) {
	k := stack.TestKafka(t)
	addrs := k.Brokers
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, dlqTopic, group := k.TestTopics(t, "ingest", 1, 0)
	suffix := stack.NewID()

	indented := func(v []byte) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, v, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	ids := []string{"ev-1-" + suffix, "ev-2-" + suffix, "ev-3-" + suffix}
	var msgs []kafka.Message
	for _, id := range ids {
		msgs = append(msgs, kafka.Message{Key: []byte("app-" + id), Value: indented(eventFor(t, id, "src", "out")),
			Headers: []kafka.Header{{Key: "origin", Value: []byte(id)}, {Key: HeaderReason, Value: []byte("forged")}, {Key: HeaderSourceOffset, Value: []byte("999")}}})
	}
	w := NewProducer(addrs, topic, 0, nil)
	err := w.WriteMessages(ctx, msgs...)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	store := &rejectingWriter{reject: ids[1]}
	runUntilIdle(ctx, t, addrs, topic, dlqTopic, group, 100*time.Millisecond, Params{Writer: store, BatchWait: time.Second})
	if want := []string{ids[0], ids[2]}; strings.Join(store.written, " ") != strings.Join(want, " ") {
		t.Errorf("written %v, want %v", store.written, want)
	}
	if store.withPlan != 0 {
		t.Errorf("%d items reached the writer with their decoded plan", store.withPlan)
	}

	dr := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: dlqTopic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer dr.Close()
	m, err := dr.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Value, msgs[1].Value) {
		t.Errorf("dead letter value is not the original bytes:\n got %.200q\nwant %.200q", m.Value, msgs[1].Value)
	}
	if string(m.Key) != string(msgs[1].Key) || header(m, "origin") != ids[1] || header(m, HeaderReason) != process.ReasonInvalidLineage ||
		header(m, HeaderSourceOffset) != "1" || header(m, HeaderValueOmitted) != "" {
		t.Errorf("dead letter key %q headers %v", m.Key, m.Headers)
	}
	seen := map[string]int{}
	for _, h := range m.Headers {
		if h.Key == "colline.value.reencoded" {
			t.Errorf("dead letter marked as re-encoded: %v", m.Headers)
		}
		seen[h.Key]++
	}
	// the producer's colline.* headers cannot pass for colline's (issue 29)
	if seen[HeaderReason] != 1 || seen[HeaderSourceOffset] != 1 || header(m, "incoming."+HeaderReason) != "forged" || header(m, "incoming."+HeaderSourceOffset) != "999" {
		t.Errorf("dead letter headers %v: want colline's once, the forged ones renamed incoming.colline.*", m.Headers)
	}
}

// runUntilIdle runs a loop with p's writer and settings over topic (consumer group group, dead
// letters to dlqTopic) on real Kafka until it has been idle for 2 s, then closes its reader and
// dead-letter producer. maxWait is the reader's (0: the default).
func runUntilIdle(ctx context.Context, t *testing.T, addrs []string, topic, dlqTopic, group string, maxWait time.Duration, p Params) {
	t.Helper()
	reader := NewReader(ReaderOptions{Brokers: addrs, Topics: []string{topic}, Group: group, MaxWait: maxWait}, nil)
	dlq := NewProducer(addrs, dlqTopic, 0, nil)
	p.Fetcher, p.Committer, p.DeadLetters, p.Version = reader, reader, dlq, "it"
	p.ExitWhenIdle = 2 * time.Second
	p.Backlog = Backlog{Brokers: addrs, Topics: []string{topic}, Group: group}
	loop, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	runErr := loop.Run(ctx)
	if err := reader.Close(); err != nil {
		t.Errorf("close reader: %v", err)
	}
	dlq.Close()
	if runErr != nil {
		t.Fatalf("Run = %v", runErr)
	}
}

package ingest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/record"
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

// starting returns the lines that start with prefix, in order.
func (j *journal) starting(prefix string) []string {
	var out []string
	for _, l := range j.get() {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
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
	batches [][]record.Item
	fail    func(call int, items []record.Item) error
}

func (w *fakeWriter) Write(ctx context.Context, items []record.Item) error {
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

func itemIDs(items []record.Item) string {
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

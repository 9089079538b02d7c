package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// pending is a message that became an item to write. It keeps the message with its original
// value and headers, so that a dead letter found at write time carries the original bytes, and
// an item without the decoded plan (withoutPlan): the write needs only the lineage and the
// event's fields outside the plan.
type pending struct {
	msg  kafka.Message
	item record.Item
}

// batch is a fetched batch once processed: msgs to commit, items to write, dead letters to publish.
type batch struct {
	msgs     []kafka.Message
	items    []pending
	dead     []deadLetter
	bytes    int             // the values' total size
	prepared *graph.Prepared // the items' write, prepared ahead (prepare); nil: Write does it all
}

// collect fetches one batch: it waits for a first message, then takes more (fetchMore) for up to
// BatchWait, BatchSize messages or BatchMaxBytes. stop is true when the loop should end after this batch.
// The messages the last batch left over (see process) come first, as a batch of their own: they
// were fetched before anything collect could fetch now.
func (l *Loop) collect(ctx context.Context) (msgs []kafka.Message, stop bool, err error) {
	if len(l.rest) > 0 {
		msgs, l.rest = l.rest, nil
		return msgs, false, nil
	}
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil { // FetchMessage may still return a buffered message after ctx ended
			return nil, true, nil
		}
		m, err := l.p.Fetcher.FetchMessage(ctx)
		switch {
		case err == nil:
			l.recovered(opFetch)
			msgs = append(msgs, m)
		case ctx.Err() != nil:
			return nil, true, nil
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe):
			return nil, true, fmt.Errorf("kafka reader closed: %w", err)
		default:
			l.failing(opFetch, err, attempt)
			if !sleep(ctx, l.p.Backoff.Delay(attempt)) {
				return nil, true, nil
			}
			continue
		}
		break
	}
	deadline := time.Now().Add(l.p.BatchWait)
	bytes := len(msgs[0].Value)
	for len(msgs) < l.p.BatchSize && bytes < l.p.BatchMaxBytes && ctx.Err() == nil {
		m, err := l.fetchMore(ctx, deadline)
		if err != nil {
			break // window over, shutdown, or an error the next collect deals with
		}
		msgs = append(msgs, m)
		bytes += len(m.Value)
	}
	return msgs, false, nil
}

// quietGap is how long a batch waits for another message once the writer is free: long enough
// for what the reader already holds, short enough not to matter next to a write.
const quietGap = 5 * time.Millisecond

// fetchMore fetches the next message of a batch until deadline. While the batch before is being
// delivered, waiting costs nothing, so it waits until deadline or until that delivery ends; once
// the writer is free, it takes only a message that comes within quietGap.
func (l *Loop) fetchMore(ctx context.Context, deadline time.Time) (kafka.Message, error) {
	if f := l.flight; f != nil && f.busy.Err() == nil {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		free := context.AfterFunc(f.busy, cancel)
		m, err := l.p.Fetcher.FetchMessage(wctx)
		free()
		cancel()
		if err == nil || f.busy.Err() == nil {
			return m, err // a message, or the window or ctx ended
		}
	}
	if q := time.Now().Add(quietGap); q.Before(deadline) {
		deadline = q
	}
	qctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return l.p.Fetcher.FetchMessage(qctx)
}

func valueBytes(msgs []kafka.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Value)
	}
	return n
}

// process turns msgs into a batch: items to write and dead letters. An item keeps its lineage
// but not its decoded plan (withoutPlan), which is about as large again as the message's value;
// the value itself is kept for a dead letter found at write time.
//
// A batch holds at most BatchMaxEdges of lineage (plan.Lineage.Size), or one item if that item
// alone is larger: process stops before the item that would take the batch past it and leaves
// that message and the ones after it, unprocessed but for that item (kept in l.restItem), to
// the next collect. Lineage can be far larger than the message it came from, so without this a
// batch of small messages could hold many budgets' worth of lineage.
func (l *Loop) process(msgs []kafka.Message) *batch {
	b := &batch{}
	edges := 0
	for i, m := range msgs {
		bytes := len(m.Value)
		var it record.Item
		var err error
		if i == 0 && l.restItem != nil {
			it, l.restItem = *l.restItem, nil
		} else {
			it, err = l.p.Processor.Process(m)
		}
		if err != nil {
			b.dead = append(b.dead, deadLetter{msg: m, reason: process.Reason(err), err: err})
			b.bytes += bytes
			continue
		}
		it = withoutPlan(it)
		size := it.Lineage.Size()
		if len(b.items) > 0 && edges+size > l.p.BatchMaxEdges {
			l.rest, l.restItem = msgs[i:], &it
			b.msgs = msgs[:i]
			return b
		}
		b.bytes += bytes
		edges += size
		b.items = append(b.items, pending{msg: m, item: it})
	}
	b.msgs = msgs
	return b
}

// PreparedWriter is a Writer that writes batches prepared ahead (graph.Writer): the loop prepares
// batch n+1 (graph.Prepare: its rows checked, merged and sorted) while batch n is being written.
type PreparedWriter interface {
	WritePrepared(ctx context.Context, p *graph.Prepared) error
}

// prepare prepares b's write when the writer takes prepared batches. A batch that cannot be
// prepared is left to Write, which fails the same way and takes the rejected path (deliver).
func (l *Loop) prepare(b *batch) {
	if _, ok := l.p.Writer.(PreparedWriter); !ok || len(b.items) == 0 {
		return
	}
	start := time.Now()
	p, err := graph.Prepare(itemsOf(b.items))
	if err != nil {
		return
	}
	b.prepared = p
	l.m.stage.WithLabelValues(stagePrepare).Observe(time.Since(start).Seconds())
}

// itemsOf returns the items of ps.
func itemsOf(ps []pending) []record.Item {
	out := make([]record.Item, len(ps))
	for i, p := range ps {
		out[i] = p.item
	}
	return out
}

// withoutPlan is it without the decoded plan: a listener event keeps its identity, application,
// query, producer and markers, and drops its nodes and Hive body, which only extraction reads.
// What the graph writer, the emitter and the logs read of an item is left.
func withoutPlan(it record.Item) record.Item {
	if it.Event == nil || (it.Event.Nodes == nil && it.Event.Hive == nil) {
		return it
	}
	env := *it.Event
	env.Nodes, env.Hive = nil, nil
	it.Event = &env
	return it
}

package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// deliver writes, emits, dead-letters and commits one processed batch, in this order, each step
// retried until it succeeds. It returns an error only when ctx ended before the batch was committed.
func (l *Loop) deliver(ctx context.Context, b *batch) error {
	msgs, items, dead := b.msgs, b.items, b.dead
	l.m.batch.Observe(float64(len(msgs)))

	start := time.Now()
	l.log.Debug("writing batch", "messages", len(msgs), "items", len(items))
	written, rejected, err := l.write(ctx, items, b.prepared)
	if len(items) > 0 {
		l.m.stage.WithLabelValues(stageWrite).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return fmt.Errorf("batch of %d messages not written, not committed: %w", len(msgs), err)
	}
	l.log.Debug("batch written", "messages", len(msgs), "written", len(written), "rejected", len(rejected),
		"seconds", time.Since(start).Seconds())
	if l.p.Emitter != nil && len(written) > 0 {
		out := make([]record.Item, len(written))
		for i, p := range written {
			out[i] = p.item
		}
		start = time.Now()
		err = l.retry(ctx, opEmit, func(ctx context.Context) error { return l.p.Emitter.Emit(ctx, out) }, nil)
		l.m.stage.WithLabelValues(stageEmit).Observe(time.Since(start).Seconds())
		if err != nil {
			return fmt.Errorf("batch of %d messages written, not emitted, not committed: %w", len(msgs), err)
		}
	}
	dead = append(dead, rejected...)
	slices.SortFunc(dead, func(a, b deadLetter) int {
		return cmp.Or(cmp.Compare(a.msg.Partition, b.msg.Partition), cmp.Compare(a.msg.Offset, b.msg.Offset))
	})

	if len(dead) > 0 {
		start = time.Now()
		err = l.publish(ctx, dead)
		l.m.stage.WithLabelValues(stageDeadLetter).Observe(time.Since(start).Seconds())
		if err != nil {
			return fmt.Errorf("batch of %d messages not committed: %w", len(msgs), err)
		}
	}

	start = time.Now()
	committed, err := l.commit(ctx, msgs)
	l.m.stage.WithLabelValues(stageCommit).Observe(time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("batch of %d messages written, not committed: %w", len(msgs), err)
	}

	now := time.Now()
	var newest time.Time
	for _, p := range written {
		l.m.messages.WithLabelValues(resultOK).Inc()
		l.m.edges.Add(float64(len(p.item.Lineage.Edges) + len(p.item.Lineage.RowDeps)))
		l.m.countNodes(p.item)
		if t, err := p.item.Time(); err == nil {
			l.m.eventAge.Observe(max(now.Sub(t).Seconds(), 0))
			if t.After(newest) {
				newest = t
			}
		}
		l.log.Debug("event written", msgAttrs(p.msg, p.item, "edges", len(p.item.Lineage.Edges), "rowDeps", len(p.item.Lineage.RowDeps))...)
	}
	if !newest.IsZero() {
		l.m.lastEvent.Set(float64(newest.UnixNano()) / 1e9)
	}
	for _, d := range dead {
		l.m.messages.WithLabelValues(resultDeadLetter).Inc()
		l.m.deadLetters.WithLabelValues(d.reason).Inc()
	}
	if committed {
		oldest := now
		for _, m := range msgs {
			if !m.Time.IsZero() && m.Time.Before(oldest) {
				oldest = m.Time
			}
		}
		l.m.lagSeconds.Set(now.Sub(oldest).Seconds())
	}
	l.log.Debug("batch committed", "messages", len(msgs), "written", len(written), "dead_letters", len(dead))
	return nil
}

// write writes items (prepared: their write prepared ahead, or nil), retrying transient failures
// in place. When the graph rejects the batch for its data, it writes the items one by one and
// returns those rejected alone as dead letters.
func (l *Loop) write(ctx context.Context, items []pending, prepared *graph.Prepared) (written []pending, rejected []deadLetter, err error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	err = l.retry(ctx, opWrite, func(ctx context.Context) error {
		defer l.writing(len(items))()
		if prepared != nil {
			return l.p.Writer.(PreparedWriter).WritePrepared(ctx, prepared)
		}
		return l.p.Writer.Write(ctx, itemsOf(items))
	}, graph.IsRejected)
	switch {
	case err == nil:
		return items, nil, nil
	case !graph.IsRejected(err):
		return nil, nil, err
	case len(items) == 1:
		r := process.ReasonWriteRejected
		if errors.Is(err, record.ErrInvalidItem) {
			r = process.ReasonInvalidLineage
		}
		return nil, []deadLetter{{msg: items[0].msg, reason: r, err: err}}, nil
	}
	l.log.Warn("graph rejected a batch; writing its messages one by one", "messages", len(items), "err", err)
	for _, p := range items {
		w, r, err := l.write(ctx, []pending{p}, nil)
		if err != nil {
			return nil, nil, err
		}
		written, rejected = append(written, w...), append(rejected, r...)
	}
	return written, rejected, nil
}

// publish sends dead letters, retrying until each is accepted. A message the topic refuses as too
// large is sent again without its value.
func (l *Loop) publish(ctx context.Context, dead []deadLetter) error {
	for _, d := range dead {
		msg := d.message(l.p.Version)
		err := l.retry(ctx, opDeadLetter, func(ctx context.Context) error {
			err := l.p.DeadLetters.WriteMessages(ctx, msg)
			if err != nil && tooLarge(err) && msg.Value != nil {
				l.log.Warn("dead letter too large; sending it without its value", msgAttrs(d.msg, record.Item{}, "bytes", len(msg.Value), "err", err)...)
				msg = withoutValue(msg)
				err = l.p.DeadLetters.WriteMessages(ctx, msg)
			}
			return err
		}, nil)
		if err != nil {
			return fmt.Errorf("dead letter for %s/%d@%d: %w", d.msg.Topic, d.msg.Partition, d.msg.Offset, err)
		}
		l.log.Warn("message sent to the dead-letter topic", msgAttrs(d.msg, record.Item{}, "reason", d.reason, "err", d.err)...)
	}
	return nil
}

// commit commits msgs, retrying transient failures. After a rebalance the commit is refused; the
// partition's new owner redelivers the messages, which is harmless, so that is not an error, but
// committed is false.
func (l *Loop) commit(ctx context.Context, msgs []kafka.Message) (committed bool, err error) {
	err = l.retry(ctx, opCommit, func(ctx context.Context) error { return l.p.Committer.CommitMessages(ctx, msgs...) }, permanentCommit)
	if err != nil && rebalanced(err) {
		l.log.Warn("commit refused after a rebalance; the messages will be redelivered", "messages", len(msgs), "err", err)
		return false, nil
	}
	return err == nil, err
}

func rebalanced(err error) bool {
	return errors.Is(err, kafka.RebalanceInProgress) || errors.Is(err, kafka.IllegalGeneration) || errors.Is(err, kafka.UnknownMemberId)
}

func permanentCommit(err error) bool {
	return rebalanced(err) || errors.Is(err, io.ErrClosedPipe)
}

// msgAttrs returns the stable log keys of a message, plus extra.
func msgAttrs(m kafka.Message, it record.Item, extra ...any) []any {
	a := []any{"topic", m.Topic, "partition", m.Partition, "offset", m.Offset}
	switch {
	case it.Event != nil:
		a = append(a, "app", it.Event.App.ID, "query", it.Event.Query.ExecutionID)
	case it.OpenLineage != nil:
		a = append(a, "event", it.ID())
	}
	return append(a, extra...)
}

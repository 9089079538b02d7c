package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
)

// The seams of the loop, each satisfied by the real thing and by test fakes.
type (
	// fetcher is satisfied by *kafka.Reader in a consumer group. FetchMessage must not lose a
	// message when its context ends.
	fetcher interface {
		FetchMessage(ctx context.Context) (kafka.Message, error)
	}
	// committer is satisfied by *kafka.Reader; committing a message commits every earlier
	// message of its partition.
	committer interface {
		CommitMessages(ctx context.Context, msgs ...kafka.Message) error
	}
	// writer is satisfied by *graph.Writer: all items or none, idempotent, retryable.
	writer interface {
		Write(ctx context.Context, items []graph.Item) error
	}
	// producer is satisfied by *kafka.Writer with its Topic set to the dead-letter topic.
	producer interface {
		WriteMessages(ctx context.Context, msgs ...kafka.Message) error
	}
	// backlog tells, per partition, the offset the loop must have committed to have consumed
	// what the topic held at start (partitions with nothing to consume are left out).
	backlog interface {
		Targets(ctx context.Context) (map[int]int64, error)
	}
)

// Params configure a Loop.
type Params struct {
	Fetcher     fetcher   // Required: the *kafka.Reader.
	Committer   committer // Required: the same *kafka.Reader.
	Writer      writer    // Required: the *graph.Writer.
	DeadLetters producer  // Required: a *kafka.Writer on the dead-letter topic.

	Processor Processor    // Default: Extractor{Metrics: Metrics, MaxBytes: MaxEventBytes, Budget: Budget}.
	Metrics   *Metrics     // Default: NewMetrics(nil), not registered.
	Logger    *slog.Logger // Default: discard.
	Version   string       // Consumer version, sent in the colline.consumer.version header.

	MaxEventBytes int         // Largest message decoded by the default Processor. Default: DefaultMaxEventBytes.
	Budget        plan.Budget // Extraction budget of the default Processor. Default: plan.DefaultBudget.
	BatchSize     int         // Maximum messages per batch. Default: 100.
	// BatchMaxBytes closes a batch once the values of its messages add up to this many bytes, so a
	// batch holds at most BatchMaxBytes plus one message. It bounds the memory of large plans,
	// which decode to about twice their size. Default: DefaultBatchMaxBytes.
	BatchMaxBytes   int
	BatchWait       time.Duration // How long a batch waits for more messages after its first. Default: 200ms.
	ShutdownTimeout time.Duration // Time to finish the batch in hand once Run's context ends. Default: 30s.
	Backoff         Backoff       // Retry policy of transient failures. Default: DefaultBackoff.

	// Setup, when set, runs once before the first fetch (the graph schema bootstrap), retried
	// like any transient failure until it succeeds or the context ends, except a graph of
	// another model (graph.ErrModelVersion): Run returns that error, which names the way out.
	Setup func(ctx context.Context) error

	// ExitWhenIdle, when positive, makes Run return nil once the backlog the topic held at start
	// is committed and no message arrived for this long. It needs Backlog, and assumes this
	// consumer owns every partition of the topic. Default: 0, run until the context ends.
	ExitWhenIdle time.Duration
	Backlog      backlog
}

// Loop is the consumer loop. Create it with New and start it with Run.
type Loop struct {
	p   Params
	log *slog.Logger
	m   *Metrics

	running  atomic.Bool
	started  atomic.Bool             // Setup done
	retrying atomic.Pointer[failure] // the operation being retried, nil when none
	done     map[int]int64           // per partition, the offset committed by this loop; only read once flight is awaited

	// flight is the batch being written, dead-lettered and committed while the next one is
	// fetched and decoded; nil when none. Only the Run goroutine touches it.
	flight *flight
}

// DefaultBatchMaxBytes is the default of Params.BatchMaxBytes.
const DefaultBatchMaxBytes = 16 << 20

// flight is a batch handled in the background; done receives handle's result.
type flight struct {
	bytes int
	done  chan error
}

type failure struct {
	op  string
	err error
}

// pending is a message that became an item to write. Its value is dropped once decoded: the
// commit needs only the topic, partition and offset.
type pending struct {
	msg  kafka.Message
	item graph.Item
}

// batch is a fetched batch once processed: msgs (values dropped, except those of dead letters)
// to commit, items to write, dead letters to publish.
type batch struct {
	msgs  []kafka.Message
	items []pending
	dead  []deadLetter
	bytes int // the values' total size before they were dropped
}

// New checks p, fills in defaults and returns a Loop.
func New(p Params) (*Loop, error) {
	var missing []string
	if p.Fetcher == nil {
		missing = append(missing, "Fetcher")
	}
	if p.Committer == nil {
		missing = append(missing, "Committer")
	}
	if p.Writer == nil {
		missing = append(missing, "Writer")
	}
	if p.DeadLetters == nil {
		missing = append(missing, "DeadLetters")
	}
	if p.ExitWhenIdle > 0 && p.Backlog == nil {
		missing = append(missing, "Backlog (needed by ExitWhenIdle)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ingest: missing %v", missing)
	}
	if p.Metrics == nil {
		p.Metrics = NewMetrics(nil)
	}
	if p.Processor == nil {
		p.Processor = Extractor{Metrics: p.Metrics, MaxBytes: p.MaxEventBytes, Budget: p.Budget}
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.BatchSize <= 0 {
		p.BatchSize = 100
	}
	if p.BatchMaxBytes <= 0 {
		p.BatchMaxBytes = DefaultBatchMaxBytes
	}
	if p.BatchWait <= 0 {
		p.BatchWait = 200 * time.Millisecond
	}
	if p.ShutdownTimeout <= 0 {
		p.ShutdownTimeout = 30 * time.Second
	}
	if p.Backoff == (Backoff{}) {
		p.Backoff = DefaultBackoff
	}
	return &Loop{p: p, log: p.Logger, m: p.Metrics, done: map[int]int64{}}, nil
}

// Ready returns nil while Run is running, Setup is done and no operation is being retried.
func (l *Loop) Ready() error {
	if !l.running.Load() {
		return errors.New("consumer loop is not running")
	}
	if f := l.retrying.Load(); f != nil {
		return fmt.Errorf("retrying %s: %w", f.op, f.err)
	}
	if !l.started.Load() {
		return errors.New("starting")
	}
	return nil
}

func (l *Loop) updateReady() {
	v := 0.0
	if l.Ready() == nil {
		v = 1
	}
	l.m.ready.Set(v)
}

// Run consumes until ctx ends (then it finishes the batch in hand, see the package comment) or,
// with ExitWhenIdle, until the backlog is consumed and the topic is idle. It returns nil when every
// fetched message was committed, and an error when it had to stop with a batch uncommitted (the
// shutdown timeout expired during a retry) or the reader failed for good.
func (l *Loop) Run(ctx context.Context) error {
	l.running.Store(true)
	l.updateReady()
	defer func() {
		l.running.Store(false)
		l.started.Store(false)
		l.updateReady()
	}()

	// drain outlives ctx by at most ShutdownTimeout: the batch in hand is finished under it.
	drain, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-drain.Done():
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(l.p.ShutdownTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-drain.Done():
		}
	}()

	if l.p.Setup != nil {
		if err := l.retry(ctx, opSetup, l.p.Setup, permanentSetup); err != nil {
			if ctx.Err() != nil {
				return nil // ctx ended before anything was fetched
			}
			return fmt.Errorf("setup: %w", err)
		}
	}
	l.started.Store(true)
	l.updateReady()
	var targets map[int]int64
	if l.p.ExitWhenIdle > 0 {
		err := l.retry(ctx, opBacklog, func(ctx context.Context) error {
			var err error
			targets, err = l.p.Backlog.Targets(ctx)
			return err
		}, nil)
		if err != nil {
			return nil // ctx ended before anything was fetched
		}
		l.log.Info("exit when idle: consuming the backlog", "partitions", len(targets), "idle", l.p.ExitWhenIdle)
	}

	// Batch n is written, dead-lettered and committed in the background while batch n+1 is
	// fetched and decoded (when their values together stay within 2*BatchMaxBytes). Batch n+1 is
	// written only once batch n is committed, so writes and commits keep the fetch order.
	defer l.await() // on every return, nothing is left running
	for {
		msgs, stop, err := l.collect(ctx, targets)
		if len(msgs) > 0 {
			if l.flight != nil && l.flight.bytes+valueBytes(msgs) > 2*l.p.BatchMaxBytes {
				if herr := l.await(); herr != nil {
					return herr
				}
			}
			b := l.process(msgs)
			if herr := l.await(); herr != nil {
				return herr
			}
			f := &flight{bytes: b.bytes, done: make(chan error, 1)}
			l.flight = f
			go func() { f.done <- l.handle(drain, b) }()
		}
		if err != nil || stop {
			if herr := l.await(); herr != nil {
				return herr
			}
			return err
		}
	}
}

// await waits for the batch in flight, if any, and returns its error.
func (l *Loop) await() error {
	if l.flight == nil {
		return nil
	}
	err := <-l.flight.done
	l.flight = nil
	return err
}

func valueBytes(msgs []kafka.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Value)
	}
	return n
}

// collect fetches one batch: it waits for a first message, then takes more for up to BatchWait
// or BatchSize messages. stop is true when the loop should end after this batch.
func (l *Loop) collect(ctx context.Context, targets map[int]int64) (msgs []kafka.Message, stop bool, err error) {
	for attempt := 0; ; {
		if ctx.Err() != nil { // FetchMessage may still return a buffered message after ctx ended
			return nil, true, nil
		}
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if l.p.ExitWhenIdle > 0 {
			fctx, cancel = context.WithTimeout(ctx, l.p.ExitWhenIdle)
		}
		m, err := l.p.Fetcher.FetchMessage(fctx)
		cancel()
		switch {
		case err == nil:
			l.recovered(opFetch)
			msgs = append(msgs, m)
		case ctx.Err() != nil:
			return nil, true, nil
		case fctx.Err() != nil: // idle for ExitWhenIdle
			if err := l.await(); err != nil {
				return nil, true, err
			}
			if l.drained(targets) {
				l.log.Info("backlog consumed and topic idle: stopping", "idle", l.p.ExitWhenIdle)
				return nil, true, nil
			}
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe):
			return nil, true, fmt.Errorf("kafka reader closed: %w", err)
		default:
			l.failing(opFetch, err, attempt)
			if !sleep(ctx, l.p.Backoff.Delay(attempt)) {
				return nil, true, nil
			}
			attempt++
			continue
		}
		break
	}
	deadline := time.Now().Add(l.p.BatchWait)
	bytes := len(msgs[0].Value)
	for len(msgs) < l.p.BatchSize && bytes < l.p.BatchMaxBytes && ctx.Err() == nil {
		fctx, cancel := context.WithDeadline(ctx, deadline)
		m, err := l.p.Fetcher.FetchMessage(fctx)
		cancel()
		if err != nil {
			break // window over, shutdown, or an error the next collect deals with
		}
		msgs = append(msgs, m)
		bytes += len(m.Value)
	}
	return msgs, false, nil
}

// drained reports whether every partition reached its target offset.
func (l *Loop) drained(targets map[int]int64) bool {
	for p, end := range targets {
		if l.done[p] < end {
			return false
		}
	}
	return true
}

// process turns msgs into a batch: items to write and dead letters. It drops the value of every
// message that became an item, in msgs too, so that only the decoded items stay in memory; a
// dead letter keeps its value, to be republished.
func (l *Loop) process(msgs []kafka.Message) *batch {
	b := &batch{msgs: msgs, bytes: valueBytes(msgs)}
	for i, m := range msgs {
		it, err := l.p.Processor.Process(m)
		if err != nil {
			b.dead = append(b.dead, deadLetter{msg: m, reason: reason(err), err: err})
			continue
		}
		msgs[i].Value = nil
		m.Value = nil
		b.items = append(b.items, pending{msg: m, item: it})
	}
	return b
}

// handle writes, dead-letters and commits one processed batch. It returns an error only when ctx
// ended before the batch was committed.
func (l *Loop) handle(ctx context.Context, b *batch) error {
	msgs, items, dead := b.msgs, b.items, b.dead
	l.m.batch.Observe(float64(len(msgs)))

	start := time.Now()
	written, rejected, err := l.write(ctx, items)
	if len(items) > 0 {
		l.m.stage.WithLabelValues(stageWrite).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		return fmt.Errorf("batch of %d messages not written, not committed: %w", len(msgs), err)
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
		if t, err := graph.EventTime(p.item.Event); err == nil {
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
			l.done[m.Partition] = max(l.done[m.Partition], m.Offset+1)
			if !m.Time.IsZero() && m.Time.Before(oldest) {
				oldest = m.Time
			}
		}
		l.m.lagSeconds.Set(now.Sub(oldest).Seconds())
	}
	l.log.Debug("batch committed", "messages", len(msgs), "written", len(written), "dead_letters", len(dead))
	return nil
}

// write writes items, retrying transient failures in place. When the graph rejects the batch for
// its data, it writes the items one by one and returns those rejected alone as dead letters.
func (l *Loop) write(ctx context.Context, items []pending) (written []pending, rejected []deadLetter, err error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	batch := make([]graph.Item, len(items))
	for i, p := range items {
		batch[i] = p.item
	}
	err = l.retry(ctx, opWrite, func(ctx context.Context) error { return l.p.Writer.Write(ctx, batch) }, graph.IsRejected)
	switch {
	case err == nil:
		return items, nil, nil
	case !graph.IsRejected(err):
		return nil, nil, err
	case len(items) == 1:
		r := ReasonWriteRejected
		if errors.Is(err, graph.ErrInvalidItem) {
			r = ReasonInvalidLineage
		}
		return nil, []deadLetter{{msg: items[0].msg, event: items[0].item.Event, reason: r, err: err}}, nil
	}
	l.log.Warn("graph rejected a batch; writing its messages one by one", "messages", len(items), "err", err)
	for _, p := range items {
		w, r, err := l.write(ctx, []pending{p})
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
				l.log.Warn("dead letter too large; sending it without its value", msgAttrs(d.msg, graph.Item{}, "bytes", len(msg.Value), "err", err)...)
				msg = withoutValue(msg)
				err = l.p.DeadLetters.WriteMessages(ctx, msg)
			}
			return err
		}, nil)
		if err != nil {
			return fmt.Errorf("dead letter for %s/%d@%d: %w", d.msg.Topic, d.msg.Partition, d.msg.Offset, err)
		}
		l.log.Warn("message sent to the dead-letter topic", msgAttrs(d.msg, graph.Item{}, "reason", d.reason, "err", d.err)...)
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

// permanentSetup: waiting does not change the model of a graph; an operator must upgrade it.
func permanentSetup(err error) bool { return errors.Is(err, graph.ErrModelVersion) }

func permanentCommit(err error) bool {
	return rebalanced(err) || errors.Is(err, io.ErrClosedPipe)
}

// retry runs f until it succeeds, fails permanently (permanent may be nil: nothing is), or ctx
// ends. While it retries, the loop is not ready.
func (l *Loop) retry(ctx context.Context, op string, f func(context.Context) error, permanent func(error) bool) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		if err == nil {
			l.recovered(op)
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		if permanent != nil && permanent(err) {
			l.settled(op) // the caller handles it; this operation is no longer being retried
			return err
		}
		l.failing(op, err, attempt)
		if !sleep(ctx, l.p.Backoff.Delay(attempt)) {
			return err
		}
	}
}

func (l *Loop) failing(op string, err error, attempt int) {
	l.m.retries.WithLabelValues(op).Inc()
	l.retrying.Store(&failure{op: op, err: err})
	l.updateReady()
	level := slog.LevelWarn
	if op == opWrite && !graph.IsTransient(err) {
		level = slog.LevelError // neither transient nor the data's fault: an operator must act
	}
	l.log.Log(context.Background(), level, "retrying", "operation", op, "attempt", attempt+1, "err", err)
}

func (l *Loop) recovered(op string) {
	if l.settled(op) {
		l.log.Info("recovered", "operation", op)
	}
}

// settled clears the retry state of op, and reports whether there was one.
func (l *Loop) settled(op string) bool {
	if f := l.retrying.Load(); f != nil && f.op == op && l.retrying.CompareAndSwap(f, nil) {
		l.updateReady()
		return true
	}
	return false
}

// msgAttrs returns the stable log keys of a message, plus extra.
func msgAttrs(m kafka.Message, it graph.Item, extra ...any) []any {
	a := []any{"topic", m.Topic, "partition", m.Partition, "offset", m.Offset}
	if it.Event != nil {
		a = append(a, "app", it.Event.App.ID, "query", it.Event.Query.ExecutionID)
	}
	return append(a, extra...)
}

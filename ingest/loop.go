package ingest

// How the loop keeps order and delivers at least once; every other file of the package relies on
// this, and nothing else in the package has to be read to trust it.
//
//   - One goroutine (Run) fetches messages of all its partitions in fetch order and cuts them into
//     batches (fetch.go). A Processor turns each message into an item or a dead letter, with no I/O.
//     A batch whose lineage would grow past BatchMaxEdges ends early; the messages it leaves start
//     the next batch, before anything fetched later.
//   - A batch is delivered (deliver.go) in one step: write its items to the graph, then emit their
//     OpenLineage events (when an Emitter is set), then publish its dead letters, then commit its
//     offsets. Each step is retried in place until it succeeds
//     (retry.go); nothing moves past a step that has not succeeded, and kafka-go never redelivers a
//     message the loop has moved past, so no message is skipped.
//   - A batch takes more messages for up to BatchWait after its first while the batch before it is
//     being delivered, and goes as soon as no message is ready once the writer is free (fetch.go):
//     batches grow with the write time, and a message that finds the writer idle does not wait.
//   - At most one batch is being delivered (in flight) while the next is fetched and processed.
//     Batch n+1 is delivered only after batch n is committed, so writes and commits keep the fetch
//     order, and therefore the order within a partition (the events of one Spark application).
//   - An offset is committed only after its batch is written or dead-lettered. A crash or a
//     rebalance before the commit redelivers the batch; graph writes are idempotent, so a
//     redelivery changes nothing. Hence at least once, never at most once.
//   - When Run's context ends, the loop stops fetching and delivers the batches in hand (at most
//     two) within ShutdownTimeout; what is not committed then is redelivered to the next consumer.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
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
		Write(ctx context.Context, items []record.Item) error
	}
	// emitter is satisfied by *emit.Emitter: it publishes the OpenLineage events of written items,
	// and returns an error only for what a later attempt may fix (it drops what its sink refuses).
	emitter interface {
		Emit(ctx context.Context, items []record.Item) error
	}
	// producer is satisfied by *kafka.Writer with its Topic set to the dead-letter topic.
	producer interface {
		WriteMessages(ctx context.Context, msgs ...kafka.Message) error
	}
	// backlog tells, per partition, the offset the loop must have committed to have consumed
	// what the topic held at start (partitions with nothing to consume are left out).
	backlog interface {
		Targets(ctx context.Context) (map[Partition]int64, error)
	}
)

// Defaults of Params.
const (
	DefaultBatchSize       = 100
	DefaultBatchMaxBytes   = 16 << 20
	DefaultBatchWait       = 200 * time.Millisecond
	DefaultShutdownTimeout = 30 * time.Second
	DefaultSlowWrite       = 30 * time.Second
)

// Params configure a Loop.
type Params struct {
	Fetcher     fetcher   // Required: the *kafka.Reader.
	Committer   committer // Required: the same *kafka.Reader.
	Writer      writer    // Required: the *graph.Writer.
	DeadLetters producer  // Required: a *kafka.Writer on the dead-letter topic.

	// Emitter, when set, publishes the OpenLineage events of each batch's written items after the
	// write and before the commit, retried like the write: an event is emitted at least once.
	Emitter emitter

	Processor Processor    // Default: Extractor{Metrics: Metrics, MaxBytes: MaxEventBytes, Budget: Budget}.
	Metrics   *Metrics     // Default: NewMetrics(nil), not registered.
	Logger    *slog.Logger // Default: discard.
	Version   string       // Consumer version, sent in the colline.consumer.version header.

	MaxEventBytes int         // Largest message decoded by the default Processor. Default: process.DefaultMaxBytes.
	Budget        plan.Budget // Extraction budget of the default Processor. Default: plan.DefaultBudget.
	// ReuseMB bounds the default Processor's process.Reuse, in MiB: 0, process.DefaultReuseMB;
	// below 0, no Reuse.
	ReuseMB   int
	BatchSize int // Maximum messages per batch. Default: DefaultBatchSize.
	// BatchMaxBytes closes a batch once the values of its messages add up to this many bytes, so a
	// batch holds at most BatchMaxBytes plus one message. It bounds the memory of large plans,
	// which decode to about twice their size. Default: DefaultBatchMaxBytes.
	BatchMaxBytes int
	// BatchMaxEdges closes a batch before the item whose lineage would take the batch's lineage
	// (plan.Lineage.Size: edges, row-level dependencies and their roles) past this figure; an item
	// larger than it is a batch of its own. Lineage can be far larger than its message, so this is
	// what bounds the memory and the write time of a batch of small messages with large lineage.
	// Default: Budget's edges budget (plan.DefaultBudget.Edges when zero), the largest lineage
	// one event may have.
	BatchMaxEdges   int
	BatchWait       time.Duration // How long a batch may wait for more messages after its first while the batch before it is delivered (collect). Default: DefaultBatchWait.
	ShutdownTimeout time.Duration // Time to finish the batches in hand once Run's context ends. Default: DefaultShutdownTimeout.
	Backoff         Backoff       // Retry policy of transient failures. Default: DefaultBackoff.
	// SlowWrite: a graph write running longer than this makes Ready report it (a held lock, a long
	// transaction or an overloaded Neo4j) until it ends. Default: DefaultSlowWrite.
	SlowWrite time.Duration

	// NoPacing turns off the lower soft memory limit the loop sets while it holds a message of
	// BatchMaxBytes or more (memory.go). Default: on.
	NoPacing bool

	// Setup, when set, runs once before the first fetch (the graph schema bootstrap), retried
	// like any transient failure until it succeeds or the context ends, except a graph of
	// another model (graph.ErrModelVersion): Run returns that error, which names the way out.
	Setup func(ctx context.Context) error

	// ExitWhenIdle, when positive, makes Run return nil once the backlog the topic held at start
	// is committed and no message arrived for this long (idle.go). It needs Backlog, and assumes
	// this consumer owns every partition of the topic. Default: 0, run until the context ends.
	ExitWhenIdle time.Duration
	Backlog      backlog
}

// Loop is the consumer loop. Create it with New and start it with Run.
type Loop struct {
	p    Params
	log  *slog.Logger
	m    *Metrics
	idle *idleWatch // nil unless ExitWhenIdle

	running  atomic.Bool
	started  atomic.Bool             // Setup done
	retrying atomic.Pointer[failure] // the operation being retried, nil when none

	// flight is the batch being delivered while the next one is fetched and processed; nil when
	// none. Only the Run goroutine touches it.
	flight *flight
	// rest are fetched messages the last batch left over (over BatchMaxEdges), in fetch order;
	// restItem is the item of rest[0], already made. collect returns rest before fetching more.
	// Only the Run goroutine touches them.
	rest     []kafka.Message
	restItem *record.Item
	// pace tightens the garbage collector while a large message is in hand (memory.go). Only the
	// Run goroutine touches it.
	pace *pacer
}

// flight is a batch delivered in the background; done receives deliver's result, and busy ends
// once it has (collect stops waiting for more messages then: the writer is free).
type flight struct {
	bytes   int
	largest int // the largest value in the batch
	done    chan error
	busy    context.Context
}

// New checks p, fills in defaults and returns a Loop.
func New(p Params) (*Loop, error) {
	var missing []string
	for _, s := range []struct {
		name string
		nil  bool
	}{
		{"Fetcher", p.Fetcher == nil}, {"Committer", p.Committer == nil}, {"Writer", p.Writer == nil},
		{"DeadLetters", p.DeadLetters == nil}, {"Backlog (needed by ExitWhenIdle)", p.ExitWhenIdle > 0 && p.Backlog == nil},
	} {
		if s.nil {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ingest: missing %v", missing)
	}
	if p.Metrics == nil {
		p.Metrics = NewMetrics(nil)
	}
	if p.Processor == nil {
		p.Processor = Extractor{Metrics: p.Metrics, MaxBytes: p.MaxEventBytes, Budget: p.Budget, Reuse: NewReuse(cmp.Or(p.ReuseMB, process.DefaultReuseMB))}
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	p.BatchSize = orDefault(p.BatchSize, DefaultBatchSize)
	p.BatchMaxBytes = orDefault(p.BatchMaxBytes, DefaultBatchMaxBytes)
	p.BatchMaxEdges = orDefault(p.BatchMaxEdges, p.Budget.WithDefaults().Edges)
	p.BatchWait = orDefault(p.BatchWait, DefaultBatchWait)
	p.ShutdownTimeout = orDefault(p.ShutdownTimeout, DefaultShutdownTimeout)
	p.SlowWrite = orDefault(p.SlowWrite, DefaultSlowWrite)
	if p.Backoff == (Backoff{}) {
		p.Backoff = DefaultBackoff
	}
	l := &Loop{p: p, log: p.Logger, m: p.Metrics}
	if p.ExitWhenIdle > 0 {
		l.idle = watchIdle(l, p.ExitWhenIdle, p.Backlog)
	}
	return l, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Run consumes until ctx ends (then it finishes the batches in hand, see the top of this file)
// or, with ExitWhenIdle, until the backlog is consumed and the topic is idle. It returns nil when
// every fetched message was committed, and an error when it had to stop with a batch uncommitted
// (the shutdown timeout expired during a retry) or the reader failed for good.
func (l *Loop) Run(ctx context.Context) error {
	if l.idle != nil {
		return l.idle.run(ctx, l.run)
	}
	return l.run(ctx)
}

// run is the core loop.
func (l *Loop) run(ctx context.Context) error {
	l.running.Store(true)
	l.updateReady()
	defer func() {
		l.running.Store(false)
		l.started.Store(false)
		l.updateReady()
	}()

	// drain outlives ctx by at most ShutdownTimeout: the batches in hand are finished under it.
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

	l.pace = newPacer(l.p.BatchMaxBytes, !l.p.NoPacing)
	l.pace.held = heldBytes(l.p.Processor)
	defer l.pace.stop()
	defer l.await() // on every return, nothing is left running
	for {
		msgs, stop, err := l.collect(ctx)
		if len(msgs) > 0 {
			big := largest(msgs)
			if l.flight != nil {
				l.pace.hold(max(big, l.flight.largest))
			} else {
				l.pace.hold(big)
			}
			// Two batches in memory at most, and together within 2*BatchMaxBytes.
			if l.flight != nil && l.flight.bytes+valueBytes(msgs) > 2*l.p.BatchMaxBytes {
				if herr := l.await(); herr != nil {
					return herr
				}
			}
			b := l.process(msgs)
			l.prepare(b)
			if herr := l.await(); herr != nil { // batch n is committed before batch n+1 is written
				return herr
			}
			busy, free := context.WithCancel(context.Background())
			f := &flight{bytes: b.bytes, largest: big, done: make(chan error, 1), busy: busy}
			l.flight = f
			go func() {
				f.done <- l.deliver(drain, b)
				free()
			}()
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

// permanentSetup: waiting does not change the model of a graph; an operator must upgrade it.
func permanentSetup(err error) bool { return errors.Is(err, graph.ErrModelVersion) }

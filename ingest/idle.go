package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// idleWatch is Params.ExitWhenIdle, kept outside the core loop: it runs the core under a context
// of its own and ends it once the backlog the topic held at start is committed, every fetched
// message is committed, and no message was fetched for idle. It sees fetches and commits by
// wrapping the loop's fetcher and committer; ending the context is the core's ordinary shutdown,
// which delivers nothing new since everything fetched is committed.
type idleWatch struct {
	l       *Loop
	idle    time.Duration
	backlog backlog
	fetcher
	committer

	mu        sync.Mutex
	last      time.Time           // when a message was last fetched, or the backlog read
	fetched   map[Partition]int64 // per partition, the offset after the last message fetched
	committed map[Partition]int64 // per partition, the offset after the last message committed
}

func watchIdle(l *Loop, idle time.Duration, b backlog) *idleWatch {
	w := &idleWatch{l: l, idle: idle, backlog: b, fetcher: l.p.Fetcher, committer: l.p.Committer,
		last: time.Now(), fetched: map[Partition]int64{}, committed: map[Partition]int64{}}
	l.p.Fetcher, l.p.Committer = w, w
	return w
}

// FetchMessage implements fetcher.
func (w *idleWatch) FetchMessage(ctx context.Context) (kafka.Message, error) {
	m, err := w.fetcher.FetchMessage(ctx)
	if err == nil {
		w.mu.Lock()
		w.last = time.Now()
		p := Partition{Topic: m.Topic, ID: m.Partition}
		w.fetched[p] = max(w.fetched[p], m.Offset+1)
		w.mu.Unlock()
	}
	return m, err
}

// CommitMessages implements committer.
func (w *idleWatch) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	err := w.committer.CommitMessages(ctx, msgs...)
	if err == nil {
		w.mu.Lock()
		for _, m := range msgs {
			p := Partition{Topic: m.Topic, ID: m.Partition}
			w.committed[p] = max(w.committed[p], m.Offset+1)
		}
		w.mu.Unlock()
	}
	return err
}

// run runs core until ctx ends, core fails, or the topic is drained and idle.
func (w *idleWatch) run(ctx context.Context, core func(context.Context) error) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- core(ctx) }()

	var targets map[Partition]int64
	err := w.l.retry(ctx, opBacklog, func(ctx context.Context) (err error) {
		targets, err = w.backlog.Targets(ctx)
		return err
	}, nil)
	if err != nil { // ctx ended
		return <-done
	}
	w.touch()
	w.l.log.Info("exit when idle: consuming the backlog", "partitions", len(targets), "idle", w.idle)

	tick := time.NewTicker(min(w.idle/4, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if w.drained(targets) {
				w.l.log.Info("backlog consumed and topic idle: stopping", "idle", w.idle)
				stop()
				return <-done
			}
		}
	}
}

// drained reports whether the core has started (Setup is done), every target and every fetched
// message is committed, and nothing was fetched for idle.
func (w *idleWatch) drained(targets map[Partition]int64) bool {
	if !w.l.started.Load() {
		w.touch() // the idle time counts from the start
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.last) < w.idle {
		return false
	}
	for _, want := range []map[Partition]int64{targets, w.fetched} {
		for p, end := range want {
			if w.committed[p] < end {
				return false
			}
		}
	}
	return true
}

func (w *idleWatch) touch() {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

package ingest

// Retries and readiness: a transient failure is retried in place with Backoff, and while any
// operation is being retried, or a graph write has run longer than SlowWrite, the loop is not
// ready.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/colline/colline/graph"
)

// Backoff is a capped exponential backoff with jitter: attempt n waits a random duration between
// half and all of min(Min * 2^n, Max).
type Backoff struct {
	Min time.Duration // Default: 200ms.
	Max time.Duration // Default: 30s.
}

// DefaultBackoff is the backoff of transient failures.
var DefaultBackoff = Backoff{Min: 200 * time.Millisecond, Max: 30 * time.Second}

// Delay returns the wait before retry number attempt (0 for the first retry).
func (b Backoff) Delay(attempt int) time.Duration {
	if b.Max <= 0 {
		return 0
	}
	d := b.Max
	if attempt < 32 && b.Min > 0 && b.Min<<attempt < b.Max && b.Min<<attempt > 0 {
		d = b.Min << attempt
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits for d or until ctx ends, and reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

type failure struct {
	op  string
	err error
}

// Ready returns nil while Run is running, Setup is done and no operation is being retried.
func (l *Loop) Ready() error {
	if !l.running.Load() {
		return notReady{"not running", errors.New("consumer loop is not running")}
	}
	if f := l.retrying.Load(); f != nil {
		return notReady{"retrying " + f.op, fmt.Errorf("retrying %s: %w", f.op, f.err)}
	}
	if !l.started.Load() {
		return notReady{"starting", errors.New("starting")}
	}
	if d, n := l.m.writeRunning(); d > l.p.SlowWrite {
		return notReady{"slow write", fmt.Errorf("slow write: a batch of %d events has been writing to Neo4j for %s (a held lock, a long transaction or an overloaded server?); it is retried after COLLINE_NEO4J_WRITE_TIMEOUT", n, d.Round(time.Second))}
	}
	return nil
}

// notReady is an error of Ready with a Status safe to show to anyone (admin's /readyz shows it;
// the error, which may name internal addresses, goes to the log).
type notReady struct {
	status string
	err    error
}

func (e notReady) Error() string  { return e.err.Error() }
func (e notReady) Unwrap() error  { return e.err }
func (e notReady) Status() string { return e.status }

func (l *Loop) updateReady() {
	v := 0.0
	if l.Ready() == nil {
		v = 1
	}
	l.m.ready.Set(v)
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

// writing records that a graph write of events starts, for Ready and the
// write_in_progress_seconds metric; call the function it returns when the write ends. The ready
// gauge turns 0 once the write has run for SlowWrite.
func (l *Loop) writing(events int) (done func()) {
	l.m.writeEvents.Store(int64(events))
	l.m.writeStart.Store(time.Now().UnixNano())
	slow := time.AfterFunc(l.p.SlowWrite+time.Millisecond, l.updateReady)
	return func() {
		slow.Stop()
		l.m.writeStart.Store(0)
		l.updateReady()
	}
}

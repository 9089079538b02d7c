package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/record"
)

// fakeBacklog is the backlog of the fake reader's topic, by partition.
type fakeBacklog map[int]int64

func (b fakeBacklog) Targets(context.Context) (map[Partition]int64, error) {
	out := map[Partition]int64{}
	for p, n := range b {
		out[Partition{Topic: "colline.plans", ID: p}] = n
	}
	return out, nil
}

func TestExitWhenIdle(t *testing.T) {
	idle := func(b fakeBacklog) func(*Params) {
		return func(p *Params) { p.ExitWhenIdle = 50 * time.Millisecond; p.Backlog = b }
	}
	t.Run("exits once the backlog is committed", func(t *testing.T) {
		h := newHarness(t, idle(fakeBacklog{0: 2, 1: 1}))
		h.reader.send(0, "ok", "json")
		h.reader.send(1, "ok")
		if err := h.loop.Run(context.Background()); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := len(h.reader.committed()); got != 3 {
			t.Errorf("committed %d messages, want 3", got)
		}
	})
	t.Run("waits for the backlog", func(t *testing.T) {
		h := newHarness(t, idle(fakeBacklog{0: 3}))
		h.reader.send(0, "ok", "ok")
		done := make(chan error, 1)
		go func() { done <- h.loop.Run(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("Run returned %v before the backlog was consumed", err)
		case <-time.After(200 * time.Millisecond):
		}
		h.reader.send(0, "ok")
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not exit once the backlog was consumed")
		}
	})
	t.Run("waits for a batch delivered for longer than the idle time", func(t *testing.T) {
		// The message came after the backlog was read; its write outlasts the idle time and the
		// shutdown timeout, so only waiting for it (not shutting down) commits it.
		h := newHarness(t, func(p *Params) {
			idle(fakeBacklog{})(p)
			p.ShutdownTimeout = 100 * time.Millisecond
			p.Writer = writerFunc(func(ctx context.Context, _ []record.Item) error {
				select {
				case <-time.After(400 * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		})
		h.reader.send(0, "ok")
		if err := h.loop.Run(context.Background()); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := len(h.reader.committed()); got != 1 {
			t.Errorf("committed %d messages, want 1: Run returned before the slow batch was committed", got)
		}
	})
	t.Run("a commit refused after a rebalance is not progress", func(t *testing.T) {
		h := newHarness(t, idle(fakeBacklog{0: 1}))
		h.reader.commitErrs = []error{kafka.RebalanceInProgress}
		h.reader.send(0, "ok")
		done := make(chan error, 1)
		go func() { done <- h.loop.Run(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("Run returned %v though nothing was committed", err)
		case <-time.After(300 * time.Millisecond):
		}
		h.reader.send(0, "ok") // redelivery stands in: the next commit covers offset 0
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not exit once the backlog was committed")
		}
	})
	t.Run("an empty topic waits for the setup", func(t *testing.T) {
		setup := make(chan struct{})
		h := newHarness(t, func(p *Params) {
			idle(fakeBacklog{})(p)
			p.Setup = func(ctx context.Context) error {
				select {
				case <-setup:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		})
		done := make(chan error, 1)
		go func() { done <- h.loop.Run(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("Run returned %v before its setup was done", err)
		case <-time.After(300 * time.Millisecond):
		}
		close(setup)
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
	t.Run("empty topic", func(t *testing.T) {
		h := newHarness(t, idle(fakeBacklog{}))
		if err := h.loop.Run(context.Background()); err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

type writerFunc func(ctx context.Context, items []record.Item) error

func (f writerFunc) Write(ctx context.Context, items []record.Item) error { return f(ctx, items) }

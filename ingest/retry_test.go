package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/record"
)

func TestTransientWriteErrorIsRetriedInPlace(t *testing.T) {
	var readyDuringRetry error
	h := newHarness(t, nil)
	h.writer.fail = func(call int, _ []record.Item) error {
		switch call {
		case 1, 2:
			return &neo4j.ConnectivityError{Inner: io.EOF}
		case 3:
			readyDuringRetry = h.loop.Ready()
		}
		return nil
	}
	h.reader.send(0, "ok", "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 2 })
	if err := h.loop.Ready(); err != nil {
		t.Errorf("Ready after recovery = %v", err)
	}
	stop()
	if readyDuringRetry == nil || !strings.Contains(readyDuringRetry.Error(), "retrying write") {
		t.Errorf("Ready during the retries = %v, want not ready", readyDuringRetry)
	}
	got := h.j.get()
	if len(got) != 4 || !strings.HasPrefix(got[0], "write failed") || !strings.HasPrefix(got[1], "write failed") ||
		got[2] != "write 0@0,0@1" || got[3] != "commit 0@0,0@1" {
		t.Errorf("journal = %q, want two failed writes, the write, then the commit", got)
	}
	if n := testutil.ToFloat64(h.metrics.retries.WithLabelValues(opWrite)); n != 2 {
		t.Errorf("write retries = %v, want 2", n)
	}
	if len(h.dlq.messages()) != 0 {
		t.Error("a transient error sent messages to the dead-letter topic")
	}
}

func TestUnclassifiedWriteErrorIsNeverSkipped(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.ShutdownTimeout = 10 * time.Millisecond })
	h.writer.fail = func(call int, _ []record.Item) error {
		return &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized", Msg: "bad credentials"}
	}
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "retries", func() bool { return testutil.ToFloat64(h.metrics.retries.WithLabelValues(opWrite)) >= 5 })
	if h.loop.Ready() == nil {
		t.Error("Ready while the write keeps failing = nil")
	}
	if err := stop(); err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Errorf("Run = %v, want the batch reported uncommitted", err)
	}
	if len(h.reader.committed()) != 0 || len(h.dlq.messages()) != 0 {
		t.Error("a failing write was committed or dead-lettered")
	}
}

func TestTransientFetchErrorIsRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.fetchErrs = []error{kafka.NotCoordinatorForGroup, errors.New("dial tcp: connection refused")}
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	stop()
	if n := testutil.ToFloat64(h.metrics.retries.WithLabelValues(opFetch)); n != 2 {
		t.Errorf("fetch retries = %v, want 2", n)
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for attempt, max := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		max *= time.Millisecond
		if attempt == 5 {
			attempt = 80 // no overflow
		}
		for range 50 {
			if d := b.Delay(attempt); d < max/2 || d > max {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", attempt, d, max/2, max)
			}
		}
	}
}

// A graph of another model does not change by waiting: Run stops with the error, which names
// colline upgrade, and fetches nothing.
func TestSetupStopsOnAnotherGraphModel(t *testing.T) {
	h := newHarness(t, func(p *Params) {
		p.Setup = func(context.Context) error {
			return fmt.Errorf("%w: the graph holds lineage model 1: run `colline upgrade`", graph.ErrModelVersion)
		}
	})
	h.reader.send(0, "ok")
	done := make(chan error, 1)
	go func() { done <- h.loop.Run(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, graph.ErrModelVersion) || !strings.Contains(err.Error(), "colline upgrade") {
			t.Errorf("Run = %v, want graph.ErrModelVersion naming colline upgrade", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept retrying a graph of another model")
	}
	if len(h.j.get()) > 0 {
		t.Error("fetched although setup failed")
	}
}

func TestSetupIsRetriedBeforeFetching(t *testing.T) {
	calls := 0
	var h *harness
	h = newHarness(t, func(p *Params) {
		p.Setup = func(context.Context) error {
			calls++
			if err := h.loop.Ready(); err == nil {
				t.Error("ready during setup")
			}
			if calls < 3 {
				if len(h.j.get()) > 0 {
					t.Error("fetched before setup succeeded")
				}
				return &neo4j.ConnectivityError{Inner: io.EOF}
			}
			return nil
		}
	})
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	stop()
	if calls != 3 || testutil.ToFloat64(h.metrics.retries.WithLabelValues(opSetup)) != 2 {
		t.Errorf("setup calls = %d, retries = %v; want 3 and 2", calls, testutil.ToFloat64(h.metrics.retries.WithLabelValues(opSetup)))
	}
}

// A write that does not fail but takes longer than SlowWrite (a held lock in Neo4j) makes the
// loop not ready, saying why, and the ready gauge and write_in_progress_seconds show it; once
// the write returns, the loop is ready again.
func TestSlowWriteIsNotReady(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, func(p *Params) { p.SlowWrite = 100 * time.Millisecond })
	h.writer.fail = func(call int, _ []record.Item) error {
		if call == 1 {
			<-release
		}
		return nil
	}
	h.reader.send(0, "ok")
	stop := h.start(t)
	// before the loop runs, Ready says so; wait for the slow write's reason
	eventually(t, "not ready: slow write", func() bool {
		err := h.loop.Ready()
		return err != nil && strings.Contains(err.Error(), "slow write: a batch of 1 events has been writing to Neo4j for")
	})
	eventually(t, "the ready gauge at 0", func() bool { return testutil.ToFloat64(h.metrics.ready) == 0 })
	if d, n := h.metrics.writeRunning(); d < 100*time.Millisecond || n != 1 {
		t.Errorf("write in progress = %v, %d events; want at least 100ms, 1", d, n)
	}
	close(release)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	eventually(t, "ready again", func() bool { return h.loop.Ready() == nil && testutil.ToFloat64(h.metrics.ready) == 1 })
	if d, _ := h.metrics.writeRunning(); d != 0 {
		t.Errorf("write in progress after the write = %v, want 0", d)
	}
	stop()
}

package ingest

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
)

func TestCommitAfterWrite(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.send(0, "ok", "ok", "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 3 })
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := []string{"write 0@0,0@1,0@2", "commit 0@0,0@1,0@2"}
	if got := h.j.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("journal = %q, want %q", got, want)
	}
	if got := testutil.ToFloat64(h.metrics.messages.WithLabelValues(resultOK)); got != 3 {
		t.Errorf("ok messages = %v, want 3", got)
	}
	if got := testutil.ToFloat64(h.metrics.edges); got != 6 {
		t.Errorf("edges = %v, want 6", got)
	}
	if got := testutil.ToFloat64(h.metrics.lastEvent); got != float64(time.Date(2026, 11, 30, 10, 15, 2, 0, time.UTC).Unix()) {
		t.Errorf("last event timestamp = %v", got)
	}
}

func TestPermanentErrorsGoToDeadLetterTopic(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.send(0, "json", "ok", "version", "event", "plan")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 5 })
	stop()

	want := []string{
		"write 0@1",
		"dead letter 0@0", "dead letter 0@2", "dead letter 0@3", "dead letter 0@4",
		"commit 0@0,0@1,0@2,0@3,0@4",
	}
	if got := h.j.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("journal = %q, want %q", got, want)
	}
	sent := h.dlq.messages()
	for i, reason := range []string{process.ReasonInvalidJSON, process.ReasonUnsupportedVersion, process.ReasonInvalidEvent, process.ReasonUnsupportedPlan} {
		m := sent[i]
		if got := header(m, HeaderReason); got != reason {
			t.Errorf("dead letter %d: reason %q, want %q", i, got, reason)
		}
		if got := testutil.ToFloat64(h.metrics.deadLetters.WithLabelValues(reason)); got != 1 {
			t.Errorf("dead letters %s = %v, want 1", reason, got)
		}
	}
	m := sent[1]
	for k, v := range map[string]string{
		"orig": "h", HeaderSourceTopic: "colline.plans", HeaderSourcePartition: "0", HeaderSourceOffset: "2",
		HeaderConsumerVersion: "test-1", HeaderError: "unsupported schema version: 2.0",
	} {
		if got := header(m, k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if string(m.Key) != "app-1" || string(m.Value) != "version" || m.Topic != "" {
		t.Errorf("dead letter = key %q value %q topic %q, want the original key and value and no topic", m.Key, m.Value, m.Topic)
	}
	if got := testutil.ToFloat64(h.metrics.messages.WithLabelValues(resultDeadLetter)); got != 4 {
		t.Errorf("dead_letter messages = %v, want 4", got)
	}
}

func TestTransientWriteErrorIsRetriedInPlace(t *testing.T) {
	var readyDuringRetry error
	h := newHarness(t, nil)
	h.writer.fail = func(call int, _ []graph.Item) error {
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
	h.writer.fail = func(call int, _ []graph.Item) error {
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

func TestRejectedBatchIsSplit(t *testing.T) {
	h := newHarness(t, nil)
	h.writer.fail = rejectPoison
	h.reader.send(0, "ok", "poison", "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 3 })
	stop()
	if got, want := h.writer.written(), []string{"0@0", "0@2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("written = %v, want %v", got, want)
	}
	sent := h.dlq.messages()
	if len(sent) != 1 || header(sent[0], HeaderReason) != process.ReasonWriteRejected || header(sent[0], HeaderSourceOffset) != "1" {
		t.Errorf("dead letters = %v, want the poison message with reason %s", sent, process.ReasonWriteRejected)
	}
	if n := testutil.ToFloat64(h.metrics.retries.WithLabelValues(opWrite)); n != 0 {
		t.Errorf("write retries = %v, want 0: a rejection is not retried", n)
	}
}

func TestInvalidItemFromWriterIsDeadLettered(t *testing.T) {
	h := newHarness(t, nil)
	h.writer.fail = func(_ int, items []graph.Item) error {
		return errors.Join(errors.New("item 0"), graph.ErrInvalidItem)
	}
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	stop()
	if sent := h.dlq.messages(); len(sent) != 1 || header(sent[0], HeaderReason) != process.ReasonInvalidLineage {
		t.Errorf("dead letters = %v, want one with reason %s", sent, process.ReasonInvalidLineage)
	}
}

func TestOrderIsKeptAcrossBatchesAndPartitions(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.BatchSize = 3 })
	var want []string
	for i := range 4 {
		h.reader.send(0, "ok")
		h.reader.send(1, "ok", "ok")
		want = append(want, "0@"+strconv.Itoa(i), "1@"+strconv.Itoa(2*i), "1@"+strconv.Itoa(2*i+1))
	}
	stop := h.start(t)
	eventually(t, "all commits", func() bool { return len(h.reader.committed()) == 12 })
	stop()
	if got := h.writer.written(); !reflect.DeepEqual(got, want) {
		t.Errorf("written = %v, want fetch order %v", got, want)
	}
	var commits []string
	for _, l := range h.j.get() {
		if strings.HasPrefix(l, "commit") {
			commits = append(commits, l)
		}
	}
	if len(commits) != 4 {
		t.Errorf("commits = %q, want 4 batches of 3", commits)
	}
	for _, part := range []int{0, 1} {
		var offs []int64
		for _, m := range h.reader.committed() {
			if m.Partition == part {
				offs = append(offs, m.Offset)
			}
		}
		if !slices.IsSorted(offs) {
			t.Errorf("partition %d committed out of order: %v", part, offs)
		}
	}
}

func TestBatchWaitBoundsLatency(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.BatchSize = 1000; p.BatchWait = 30 * time.Millisecond })
	h.reader.send(0, "ok")
	stop := h.start(t)
	start := time.Now()
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	if d := time.Since(start); d > time.Second {
		t.Errorf("a lone message waited %v for its batch", d)
	}
	stop()
}

func TestShutdownFinishesTheBatchInHand(t *testing.T) {
	release := make(chan struct{})
	writing := make(chan struct{})
	h := newHarness(t, nil)
	h.writer.fail = func(call int, _ []graph.Item) error {
		close(writing)
		<-release
		return nil
	}
	h.reader.send(0, "ok", "ok")
	stop := h.start(t)
	<-writing
	errc := make(chan error, 1)
	go func() { errc <- stop() }()
	time.Sleep(20 * time.Millisecond) // SIGTERM arrives while the batch is being written
	h.reader.send(0, "ok")            // and is not fetched any more
	close(release)
	if err := <-errc; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := ids(h.reader.committed()); got != "0@0,0@1" {
		t.Errorf("committed %s, want the batch in hand 0@0,0@1", got)
	}
}

func TestShutdownTimeoutLeavesTheBatchUncommitted(t *testing.T) {
	h := newHarness(t, func(p *Params) { p.ShutdownTimeout = 30 * time.Millisecond })
	h.writer.fail = func(int, []graph.Item) error { return &neo4j.ConnectivityError{Inner: io.EOF} }
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a retry", func() bool { return testutil.ToFloat64(h.metrics.retries.WithLabelValues(opWrite)) > 0 })
	start := time.Now()
	err := stop()
	if err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Errorf("Run = %v, want an error saying the batch is not committed", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v with a 30ms timeout", d)
	}
	if len(h.reader.committed()) != 0 {
		t.Error("committed an unwritten batch")
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

func TestReaderClosedStopsTheLoop(t *testing.T) {
	h := newHarness(t, nil)
	h.reader.fetchErrs = []error{io.EOF}
	if err := h.loop.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "reader closed") {
		t.Errorf("Run = %v, want reader closed", err)
	}
}

func TestCommitErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		errs        []error
		wantRetries float64
		wantCommits int
	}{
		{"transient", []error{kafka.RequestTimedOut}, 1, 1},
		{"rebalance", []error{kafka.RebalanceInProgress}, 0, 0},
		{"generation", []error{kafka.IllegalGeneration}, 0, 0},
		{"transient then rebalance", []error{kafka.RequestTimedOut, kafka.UnknownMemberId}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.reader.commitErrs = tc.errs
			h.reader.send(0, "ok")
			stop := h.start(t)
			eventually(t, "the write", func() bool { return len(h.writer.written()) == 1 })
			eventually(t, "the commit attempts", func() bool { return len(h.j.get()) >= 1+len(tc.errs) })
			if tc.wantCommits > 0 {
				eventually(t, "a commit", func() bool { return len(h.reader.committed()) == tc.wantCommits })
			}
			eventually(t, "readiness", func() bool { return h.loop.Ready() == nil })
			if err := stop(); err != nil {
				t.Errorf("Run = %v", err)
			}
			if n := testutil.ToFloat64(h.metrics.retries.WithLabelValues(opCommit)); n != tc.wantRetries {
				t.Errorf("commit retries = %v, want %v", n, tc.wantRetries)
			}
		})
	}
}

func TestDeadLetterTooLargeIsSentWithoutValue(t *testing.T) {
	h := newHarness(t, nil)
	h.dlq.errs = []error{kafka.MessageTooLargeError{}, kafka.LeaderNotAvailable}
	h.reader.send(0, "json")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	stop()
	sent := h.dlq.messages()
	if len(sent) != 1 || sent[0].Value != nil || header(sent[0], HeaderValueOmitted) != "too_large" || header(sent[0], HeaderReason) != process.ReasonInvalidJSON {
		t.Errorf("dead letters = %+v, want one without value, marked too_large", sent)
	}
	if n := testutil.ToFloat64(h.metrics.retries.WithLabelValues(opDeadLetter)); n != 1 {
		t.Errorf("dead-letter retries = %v, want 1", n)
	}
}

type fakeBacklog map[int]int64

func (b fakeBacklog) Targets(context.Context) (map[int]int64, error) { return b, nil }

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
	t.Run("empty topic", func(t *testing.T) {
		h := newHarness(t, idle(fakeBacklog{}))
		if err := h.loop.Run(context.Background()); err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

func TestNewRequiresTheSeams(t *testing.T) {
	_, err := New(Params{ExitWhenIdle: time.Second})
	if err == nil || !strings.Contains(err.Error(), "Fetcher Committer Writer DeadLetters Backlog") {
		t.Errorf("New = %v", err)
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

package ingest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

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
	h.writer.fail = func(_ int, items []record.Item) error {
		return errors.Join(errors.New("item 0"), record.ErrInvalidItem)
	}
	h.reader.send(0, "ok")
	stop := h.start(t)
	eventually(t, "a commit", func() bool { return len(h.reader.committed()) == 1 })
	stop()
	if sent := h.dlq.messages(); len(sent) != 1 || header(sent[0], HeaderReason) != process.ReasonInvalidLineage {
		t.Errorf("dead letters = %v, want one with reason %s", sent, process.ReasonInvalidLineage)
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

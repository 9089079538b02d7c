package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
)

// TestBacklogAfterTheLogStartMoved runs on real Kafka: messages are deleted from the head of a
// partition (DeleteRecords, as retention does on a long-used topic), and a new group must then
// count its backlog from the new log start, and ExitWhenIdle must exit after consuming it.
func TestBacklogAfterTheLogStartMoved(t *testing.T) {
	k := stack.TestKafka(t)
	addrs := k.Brokers
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, tc := range []struct {
		name           string
		sent, deleted  int64
		wantTarget     bool
		wantLag, wrote int64
	}{
		{name: "all deleted", sent: 4, deleted: 4, wantLag: 0},
		{name: "head deleted", sent: 5, deleted: 3, wantTarget: true, wantLag: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic, dlq, group := k.TestTopics(t, "backlog", 1, 0)
			w := NewProducer(addrs, topic, 0, nil) // any synchronous producer will do
			msgs := make([]kafka.Message, tc.sent)
			for i := range msgs {
				msgs[i] = kafka.Message{Value: []byte("ok")}
			}
			err := w.WriteMessages(ctx, msgs...)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := k.DeleteRecords(ctx, topic, 0, tc.deleted); err != nil {
				t.Fatal(err)
			}
			first, end, err := k.Offsets(ctx, topic)
			if err != nil || first[0] != tc.deleted || end[0] != tc.sent {
				t.Fatalf("offsets after DeleteRecords: first %v end %v (%v); want %d and %d", first, end, err, tc.deleted, tc.sent)
			}

			b := Backlog{Brokers: addrs, Topics: []string{topic}, Group: group}
			targets, err := b.Targets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := targets[Partition{topic, 0}]; ok != tc.wantTarget || (ok && targets[Partition{topic, 0}] != tc.sent) {
				t.Errorf("targets = %v, want partition 0 at %d: %v", targets, tc.sent, tc.wantTarget)
			}
			if lag, err := b.Lag(ctx); err != nil || lag[Partition{topic, 0}] != tc.wantLag {
				t.Errorf("lag = %v (%v), want %d", lag, err, tc.wantLag)
			}

			reader := NewReader(ReaderOptions{Brokers: addrs, Topics: []string{topic}, Group: group, MaxWait: time.Second}, nil)
			dlw := NewProducer(addrs, dlq, 0, nil)
			writer := &fakeWriter{j: &journal{}}
			loop, err := New(Params{Fetcher: reader, Committer: reader, Writer: writer, DeadLetters: dlw,
				Processor: fakeProcessor, ExitWhenIdle: time.Second, Backlog: b})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			runErr := loop.Run(ctx)
			reader.Close()
			dlw.Close()
			if runErr != nil {
				t.Fatalf("Run = %v after %v", runErr, time.Since(start))
			}
			if got := int64(len(writer.written())); got != tc.wantLag {
				t.Errorf("wrote %d events, want the %d left after the deletion", got, tc.wantLag)
			}
		})
	}
}

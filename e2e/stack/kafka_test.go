package stack

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestKafkaAdmin runs on real Kafka: topics, offsets and DeleteRecords, with no connection left open.
func TestKafkaAdmin(t *testing.T) {
	k := TestKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic, _, _ := k.TestTopics(t, "stack", 2, 0)
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(k.Brokers...), Topic: topic, Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll, Transport: tr}
	err := w.WriteMessages(ctx, kafka.Message{Value: []byte("a")}, kafka.Message{Value: []byte("b")}, kafka.Message{Value: []byte("c")}, kafka.Message{Value: []byte("d")})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := k.Messages(ctx, topic); err != nil || n != 4 {
		t.Fatalf("Messages = %d, %v; want 4", n, err)
	}
	_, end, err := k.Offsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.DeleteRecords(ctx, topic, 0, end[0]); err != nil {
		t.Fatal(err)
	}
	first, _, err := k.Offsets(ctx, topic)
	if err != nil || first[0] != end[0] || first[1] != 0 {
		t.Errorf("first offsets after deleting partition 0 up to %d: %v (%v)", end[0], first, err)
	}
	if n, err := k.Messages(ctx, topic); err != nil || n != 4-end[0] {
		t.Errorf("Messages = %d, %v; want %d", n, err, 4-end[0])
	}
	if err := k.DeleteRecords(ctx, topic, 0, end[0]+1); err == nil {
		t.Error("DeleteRecords beyond the end offset: no error")
	}
}

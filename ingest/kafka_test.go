package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
)

// TestLoopAgainstRealKafkaAndNeo4j runs the loop against the services of dev/services: a fresh
// topic pair, two events and one broken message, consumed with ExitWhenIdle.
func TestLoopAgainstRealKafkaAndNeo4j(t *testing.T) {
	brokers, uri := os.Getenv("COLLINE_TEST_KAFKA_BROKERS"), os.Getenv("COLLINE_TEST_NEO4J_URI")
	if brokers == "" || uri == "" {
		t.Skip("COLLINE_TEST_KAFKA_BROKERS and COLLINE_TEST_NEO4J_URI are not both set; run `dev/services start` and set them to 127.0.0.1:19092 and bolt://127.0.0.1:17687")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := make([]byte, 4)
	rand.Read(b)
	suffix := hex.EncodeToString(b)
	topic, dlqTopic, group := "colline.test."+suffix, "colline.test."+suffix+".dlq", "colline-test-"+suffix
	addrs := strings.Split(brokers, ",")

	c, done := client(addrs, 30*time.Second)
	res, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: topic, NumPartitions: 2, ReplicationFactor: 1},
		{Topic: dlqTopic, NumPartitions: 1, ReplicationFactor: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range res.Errors {
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		c.DeleteTopics(context.Background(), &kafka.DeleteTopicsRequest{Topics: []string{topic, dlqTopic}})
		done()
	})

	src, mid, out := "src_"+suffix, "mid_"+suffix, "out_"+suffix
	w := NewDeadLetterWriter(addrs, topic, 0, nil) // any synchronous producer will do
	err = w.WriteMessages(ctx,
		kafka.Message{Key: []byte("app-a"), Value: eventFor(t, "ev-1-"+suffix, src, mid)},
		kafka.Message{Key: []byte("app-b"), Value: eventFor(t, "ev-2-"+suffix, mid, out)},
		kafka.Message{Key: []byte("app-a"), Value: []byte("{not json")},
	)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	driver, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	store := graph.NewWriter(driver, "")

	consume := func() {
		t.Helper()
		reader := NewReader(ReaderOptions{Brokers: addrs, Topic: topic, Group: group}, nil)
		dlq := NewDeadLetterWriter(addrs, dlqTopic, 0, nil)
		loop, err := New(Params{
			Fetcher: reader, Committer: reader, Writer: store, DeadLetters: dlq, Version: "it",
			Setup: store.Bootstrap, ExitWhenIdle: 2 * time.Second,
			Backlog: Backlog{Brokers: addrs, Topic: topic, Group: group},
		})
		if err != nil {
			t.Fatal(err)
		}
		runErr := loop.Run(ctx)
		if err := reader.Close(); err != nil {
			t.Errorf("close reader: %v", err)
		}
		dlq.Close()
		if runErr != nil {
			t.Fatalf("Run = %v", runErr)
		}
	}
	consume()

	down, err := graph.NewReader(driver, "").Downstream(ctx, "spark_catalog/db."+src+"#name", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"spark_catalog/db." + mid + "#name", "spark_catalog/db." + out + "#name"}; strings.Join(down, " ") != strings.Join(want, " ") {
		t.Errorf("downstream of src.name = %v, want %v (across the two events)", down, want)
	}

	dr := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: dlqTopic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer dr.Close()
	m, err := dr.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if header(m, HeaderReason) != ReasonInvalidJSON || string(m.Value) != "{not json" || header(m, HeaderSourceTopic) != topic {
		t.Errorf("dead letter: value %q headers %v", m.Value, m.Headers)
	}

	targets, err := Backlog{Brokers: addrs, Topic: topic, Group: group}.Targets(ctx)
	if err != nil || len(targets) != 0 {
		t.Errorf("backlog after consuming = %v, %v; want nothing left", targets, err)
	}
	start := time.Now()
	consume() // nothing left: exits after the idle time
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a second run over a consumed topic took %v", d)
	}
}

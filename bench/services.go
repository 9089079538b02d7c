package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/ingest"
)

func countFeeds(ctx context.Context, d neo4j.DriverWithContext) (int64, error) {
	return countRel(ctx, d, "FEEDS")
}

// countRel counts the relationships of one type.
func countRel(ctx context.Context, d neo4j.DriverWithContext, typ string) (int64, error) {
	res, err := neo4j.ExecuteQuery(ctx, d, `MATCH ()-[f:`+typ+`]->() RETURN count(f) AS n`, nil, neo4j.EagerResultTransformer)
	if err != nil {
		return 0, err
	}
	n, _ := res.Records[0].Get("n")
	return n.(int64), nil
}

// topics creates the topic of a phase (3 partitions, as the listener's) and its dead-letter topic,
// both taking messages as large as the consumer fetches by default (compressed batches).
func (env *benchEnv) topics(ctx context.Context, topic, dlq string) error {
	return env.kafka.CreateTopics(ctx, stack.Topic{Name: topic, Partitions: 3, MaxMessageBytes: ingest.DefaultKafkaMaxBytes},
		stack.Topic{Name: dlq, Partitions: 1, MaxMessageBytes: ingest.DefaultKafkaMaxBytes})
}

// newProducer returns a producer like the listener's: zstd, a short linger, acks from all.
func newProducer(brokers []string, topic string, linger time.Duration) *kafka.Writer {
	return &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: linger,
		BatchBytes:   48 << 20,
		BatchSize:    1000,
		Compression:  compress.Zstd,
		Transport:    &kafka.Transport{},
	}
}

// topicName returns a fresh topic name for one phase of this run.
func topicName(phase string) string {
	return fmt.Sprintf("colline.bench.%s.%d", strings.ReplaceAll(phase, " ", "-"), time.Now().UnixNano())
}

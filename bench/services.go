package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// wipe deletes every node and relationship of the graph in batches of batch nodes, each its own
// transaction (one big DETACH DELETE of a million-edge graph would need the whole graph in the
// transaction state). Constraints and indexes stay.
func wipe(ctx context.Context, d neo4j.DriverWithContext, batch int) (int64, error) {
	var total int64
	for {
		res, err := neo4j.ExecuteQuery(ctx, d,
			`MATCH (n) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
			map[string]any{"batch": batch}, neo4j.EagerResultTransformer)
		if err != nil {
			return total, fmt.Errorf("wipe: %w", err)
		}
		n, _ := res.Records[0].Get("n")
		total += n.(int64)
		if n.(int64) == 0 {
			return total, nil
		}
	}
}

// wipeAll deletes relationships in batches before nodes: a node with thousands of FEEDS
// would otherwise make one DETACH DELETE batch huge.
func wipeAll(ctx context.Context, d neo4j.DriverWithContext) (time.Duration, error) {
	start := time.Now()
	for {
		res, err := neo4j.ExecuteQuery(ctx, d,
			`MATCH ()-[r]->() WITH r LIMIT 50000 DELETE r RETURN count(*) AS n`, nil, neo4j.EagerResultTransformer)
		if err != nil {
			return 0, fmt.Errorf("wipe: %w", err)
		}
		if n, _ := res.Records[0].Get("n"); n.(int64) == 0 {
			break
		}
	}
	_, err := wipe(ctx, d, 20000)
	return time.Since(start), err
}

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

// kafkaAdmin creates and deletes the bench's topics.
type kafkaAdmin struct {
	brokers []string
	client  *kafka.Client
	tr      *kafka.Transport
}

func newKafkaAdmin(brokers []string) *kafkaAdmin {
	tr := &kafka.Transport{}
	return &kafkaAdmin{brokers: brokers, tr: tr, client: &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second, Transport: tr}}
}

// createTopic creates a topic whose messages may be up to maxBytes (compressed batches).
func (a *kafkaAdmin) createTopic(ctx context.Context, name string, partitions int, maxBytes int) error {
	res, err := a.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: name, NumPartitions: partitions, ReplicationFactor: 1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: fmt.Sprint(maxBytes)}},
	}}})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if err := res.Errors[name]; err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	// Wait until the topic has a leader for every partition.
	for deadline := time.Now().Add(30 * time.Second); ; {
		meta, err := a.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{name}})
		if err == nil && len(meta.Topics) == 1 && meta.Topics[0].Error == nil && len(meta.Topics[0].Partitions) == partitions {
			ok := true
			for _, p := range meta.Topics[0].Partitions {
				ok = ok && p.Leader.Host != "" && p.Error == nil
			}
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: no leader after 30s (%v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (a *kafkaAdmin) deleteTopics(ctx context.Context, names ...string) error {
	_, err := a.client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: names})
	return err
}

func (a *kafkaAdmin) close() { a.tr.CloseIdleConnections() }

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

package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/kafkaconn"
)

// DefaultKafkaMaxBytes is the default largest fetch of the reader and largest message of the
// dead-letter writer: 32 MiB, room for the largest message of a topic with max.message.bytes of
// 16 MiB (dev/services, the Helm chart) and for an event of process.DefaultMaxBytes.
const DefaultKafkaMaxBytes = 32 << 20

// ReaderOptions configure the Kafka consumer-group reader.
type ReaderOptions struct {
	Brokers []string
	Topics  []string // read in one group: the plan topic, and the OpenLineage topic when enabled
	Group   string
	// MaxBytes is the largest fetch response; it must hold the largest message (the topic's
	// max.message.bytes). Default: DefaultKafkaMaxBytes.
	MaxBytes int
	// QueueCapacity is the number of messages buffered ahead of the loop (kafka-go holds one more
	// per assigned partition, waiting to be queued: the slow_neo4j fault test measured 2 batches +
	// 1 + 3 on 3 partitions). Plans can be tens of MB each, and this buffer is not bounded by
	// bytes, so keep it small: with 8, five 20 MB plans were all held at once. The loop fetches
	// the next batch while it writes one, so a short queue does not slow it. Default: 1.
	QueueCapacity int
	// MaxWait bounds how long a fetch waits for data on an idle partition. The broker answers as
	// soon as one message is there, so it does not delay fresh events; but kafka-go also uses it as
	// the fetch's read deadline, and with 500ms a loaded broker (load average 36 here) never answered
	// in time and the reader looped on "i/o timeout". Default: 5s.
	MaxWait time.Duration
	// Security of the connections. Default: PLAINTEXT.
	Security kafkaconn.Security
	// SessionTimeout is how long the group coordinator waits for a heartbeat of this consumer
	// before it takes its partitions away: after a kill -9 or a lost pod, those partitions stall
	// this long. The broker bounds it (group.min/max.session.timeout.ms: 6s to 30m by default).
	// Default: DefaultSessionTimeout.
	SessionTimeout time.Duration
}

// DefaultSessionTimeout is the default of ReaderOptions.SessionTimeout (kafka-go's and the Java
// client's default too).
const DefaultSessionTimeout = 30 * time.Second

// NewReader returns a consumer-group reader for the loop: explicit synchronous commits
// (CommitInterval 0), a new group starting at the first offset, and kafka-go logs sent to logger
// (errors at Warn, the rest at Debug).
func NewReader(o ReaderOptions, logger *slog.Logger) *kafka.Reader {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultKafkaMaxBytes
	}
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = 1
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 5 * time.Second
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:               o.Brokers,
		GroupID:               o.Group,
		GroupTopics:           o.Topics,
		MinBytes:              1,
		MaxBytes:              o.MaxBytes,
		QueueCapacity:         o.QueueCapacity,
		MaxWait:               o.MaxWait,
		CommitInterval:        0, // synchronous: CommitMessages returns once the broker has the offsets
		StartOffset:           kafka.FirstOffset,
		WatchPartitionChanges: true,
		SessionTimeout:        o.SessionTimeout,
		// a heartbeat every tenth of the session: a third (Kafka's advice) risks an eviction when
		// one heartbeat is late on a loaded machine
		HeartbeatInterval: max(o.SessionTimeout/10, 500*time.Millisecond),
		Dialer:            o.Security.Dialer(),
		Logger:            kafkaLogger(logger, slog.LevelDebug),
		ErrorLogger:       kafkaLogger(logger, slog.LevelWarn),
	})
}

// Producer is a synchronous producer on one topic: the dead-letter topic, or the OpenLineage
// topic the HTTP endpoint publishes to. Close it to release its connections.
type Producer struct {
	*kafka.Writer
	transport *kafka.Transport
}

// Close flushes and closes the writer and its connections.
func (w *Producer) Close() error {
	err := w.Writer.Close()
	w.transport.CloseIdleConnections()
	return err
}

// NewProducer returns a synchronous producer on topic: every write waits for all in-sync
// replicas, and messages are spread by key. maxBytes is the largest message it sends (Default: DefaultKafkaMaxBytes); the topic's
// max.message.bytes should match the source topic's, or large dead letters lose their value.
// sec, at most one, secures its connections (Default: PLAINTEXT).
func NewProducer(brokers []string, topic string, maxBytes int, logger *slog.Logger, sec ...kafkaconn.Security) *Producer {
	if maxBytes <= 0 {
		maxBytes = DefaultKafkaMaxBytes
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var security kafkaconn.Security
	if len(sec) > 0 {
		security = sec[0]
	}
	t := security.Transport()
	return &Producer{transport: t, Writer: &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		Balancer:     &kafka.Hash{}, // by key (the app id), like the source topic
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond, // dead letters are rare: send at once
		BatchBytes:   int64(maxBytes),
		Compression:  kafka.Zstd,
		Transport:    t,
		Logger:       kafkaLogger(logger, slog.LevelDebug),
		ErrorLogger:  kafkaLogger(logger, slog.LevelWarn),
	}}
}

func kafkaLogger(l *slog.Logger, level slog.Level) kafka.Logger {
	return kafka.LoggerFunc(func(format string, args ...any) {
		if l.Enabled(context.Background(), level) {
			l.Log(context.Background(), level, fmt.Sprintf(format, args...), "component", "kafka-go")
		}
	})
}

func topicError(meta *kafka.MetadataResponse) error {
	if len(meta.Topics) == 0 {
		return fmt.Errorf("no such topic")
	}
	err := meta.Topics[0].Error
	if errors.Is(err, kafka.UnknownTopicOrPartition) {
		// A broker with ACLs answers so for a topic the principal may not Describe, too.
		return fmt.Errorf("%w (or this user may not Describe it: check the topic name and the ACLs)", err)
	}
	return err
}

// Ping checks that a Kafka broker answers a metadata request for topic. sec, at most one, secures
// the connection (Default: PLAINTEXT).
func Ping(ctx context.Context, brokers []string, topic string, sec ...kafkaconn.Security) error {
	var security kafkaconn.Security
	if len(sec) > 0 {
		security = sec[0]
	}
	c, done := security.Client(brokers, 5*time.Second)
	defer done()
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return fmt.Errorf("topic %s: %v", topic, topicError(meta))
	}
	return nil
}

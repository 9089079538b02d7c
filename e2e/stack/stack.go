// Package stack drives the real pipeline for the end-to-end tests and the demo: it runs SQL files
// in local Spark with the listener (dev/spark-sql), creates Kafka topics, builds and runs the
// consumer binary, and reads what reached Neo4j. The services themselves are started by
// dev/services.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// Stack is where the services listen and where the repository is.
type Stack struct {
	Root     string // repository root
	Brokers  string // Kafka bootstrap, host:port
	Neo4jURI string
	Log      io.Writer // where child processes' output goes
}

// FromEnv locates the repository and reads COLLINE_TEST_KAFKA_BROKERS and COLLINE_TEST_NEO4J_URI
// (defaults: the ports dev/services uses).
func FromEnv() (*Stack, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return &Stack{
		Root:     root,
		Brokers:  getenv("COLLINE_TEST_KAFKA_BROKERS", "127.0.0.1:19092"),
		Neo4jURI: getenv("COLLINE_TEST_NEO4J_URI", "bolt://127.0.0.1:17687"),
		Log:      os.Stderr,
	}, nil
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// RepoRoot is the nearest directory above the working directory that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("stack: no go.mod above the working directory")
		}
		dir = parent
	}
}

// CreateTopics creates topics with the given partition count, if they do not exist.
func (s *Stack) CreateTopics(ctx context.Context, partitions int, topics ...string) error {
	c := &kafka.Client{Addr: kafka.TCP(s.Brokers), Timeout: 15 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{
			Topic: t, NumPartitions: partitions, ReplicationFactor: 1,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: "16777216"}},
		})
	}
	resp, err := c.CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("create topics %v on %s: %w", topics, s.Brokers, err)
	}
	for t, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	return nil
}

// Messages returns the number of messages in a topic (sum of end offsets minus start offsets).
func (s *Stack) Messages(ctx context.Context, topic string) (int64, error) {
	c := &kafka.Client{Addr: kafka.TCP(s.Brokers), Timeout: 15 * time.Second}
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return 0, fmt.Errorf("topic %s: %v", topic, meta.Topics)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range meta.Topics[0].Partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p.ID), kafka.LastOffsetOf(p.ID))
	}
	res, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return 0, p.Error
		}
		n += p.LastOffset - p.FirstOffset
	}
	return n, nil
}

// Spark runs dev/spark-sql in a local Spark with the listener publishing to topic. args are SQL
// files (relative to the repository root) and -Dkey=value settings; extra are more environment
// variables (COLLINE_CAPTURE_DIR, SPARK_LINE, ...).
func (s *Stack) Spark(ctx context.Context, work, topic string, extra []string, args ...string) error {
	sqlFiles := args
	args = []string{"--work", work}
	for _, f := range sqlFiles {
		if !strings.HasPrefix(f, "-") && !filepath.IsAbs(f) {
			f = filepath.Join(s.Root, f)
		}
		args = append(args, f)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "spark-sql"), args...)
	cmd.Env = append(os.Environ(), "COLLINE_KAFKA_BOOTSTRAP="+s.Brokers, "COLLINE_KAFKA_TOPIC="+topic)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dev/spark-sql %s: %w", strings.Join(sqlFiles, " "), err)
	}
	return nil
}

// BuildConsumer builds the consumer binary into dir with the flags the Dockerfile uses.
func (s *Stack) BuildConsumer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "colline-consumer")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/consumer")
	cmd.Dir = s.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build consumer: %w", err)
	}
	return bin, nil
}

// Consume runs the consumer binary on topic with group until it has consumed the backlog and
// been idle for a few seconds, and returns its exit error.
func (s *Stack) Consume(ctx context.Context, bin, topic, group string, extra ...string) error {
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(),
		"COLLINE_KAFKA_BROKERS="+s.Brokers,
		"COLLINE_KAFKA_TOPIC="+topic,
		"COLLINE_KAFKA_DLQ_TOPIC="+topic+".dlq",
		"COLLINE_KAFKA_GROUP="+group,
		"COLLINE_NEO4J_URI="+s.Neo4jURI,
		"COLLINE_HTTP_ADDR=127.0.0.1:0",
		"COLLINE_EXIT_WHEN_IDLE=3s",
		"COLLINE_LOG_FORMAT=text",
	)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("consumer on %s (group %s): %w", topic, group, err)
	}
	return nil
}

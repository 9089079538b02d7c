// Package stack is the one test harness of the real pipeline, used by the end-to-end and fault
// tests, the package integration tests, the benchmarks and the demo: Kafka topics and offsets
// (an admin client that releases its connections), the consumer binary (built, and run and
// watched: Consumer), the CLI binary (built), a real memory cgroup to run the consumer in
// (MemoryCgroup), graph wipes and snapshots, and local Spark with the listener (dev/spark-sql).
// The services themselves are started by dev/services (Services runs it for a private stack).
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
	"testing"
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
		Brokers:  Getenv("COLLINE_TEST_KAFKA_BROKERS", "127.0.0.1:19092"),
		Neo4jURI: Getenv("COLLINE_TEST_NEO4J_URI", "bolt://127.0.0.1:17687"),
		Log:      os.Stderr,
	}, nil
}

// Getenv is the variable k, or def when it is empty.
func Getenv(k, def string) string {
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

// Kafka returns an admin client of the stack's brokers; Close it.
func (s *Stack) Kafka() *Kafka { return NewKafka(strings.Split(s.Brokers, ",")...) }

// CreateTopics creates topics with the given partition count, if they do not exist.
func (s *Stack) CreateTopics(ctx context.Context, partitions int, topics ...string) error {
	k := s.Kafka()
	defer k.Close()
	ts := make([]Topic, len(topics))
	for i, t := range topics {
		ts[i] = Topic{Name: t, Partitions: partitions}
	}
	return k.CreateTopics(ctx, ts...)
}

// Messages returns the number of messages in a topic (sum of end offsets minus start offsets).
func (s *Stack) Messages(ctx context.Context, topic string) (int64, error) {
	k := s.Kafka()
	defer k.Close()
	return k.Messages(ctx, topic)
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
	return BuildConsumer(ctx, s.Root, dir, "")
}

// BuildConsumer builds ./cmd/consumer of the repository at root into dir as the Dockerfile does
// (static, -trimpath), with main.version set to version when it is not empty, and returns the
// binary's path. Its output goes to the returned error.
func BuildConsumer(ctx context.Context, root, dir, version string) (string, error) {
	return build(ctx, root, filepath.Join(dir, "colline-consumer"), "./cmd/consumer", version)
}

// BuildColline builds the CLI, ./cmd/colline of the repository at root, into dir as BuildConsumer
// builds the consumer, and returns the binary's path.
func BuildColline(ctx context.Context, root, dir string) (string, error) {
	return build(ctx, root, filepath.Join(dir, "colline"), "./cmd/colline", "")
}

// TestColline builds the CLI of the repository at root (BuildColline) into a temporary directory
// of t, or fails t.
func TestColline(ctx context.Context, t testing.TB, root string) string {
	t.Helper()
	bin, err := BuildColline(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// build builds the package pkg of the repository at root into the file bin (static, -trimpath,
// main.version set to version when it is not empty).
func build(ctx context.Context, root, bin, pkg, version string) (string, error) {
	args := []string{"build", "-trimpath", "-o", bin}
	if version != "" {
		args = append(args, "-ldflags", "-X main.version="+version)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
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

// Main is the body of a harness's TestMain: it exits with the code of setup (which runs m), or
// with 1 after printing setup's error prefixed with name.
func Main(m *testing.M, name string, setup func(*testing.M) (int, error)) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// Services runs the script dev/<script> of root (services, secure-services) with args, env added
// to this process's environment, and appends a "$ dev/<script> args" line and its output to logFile.
func Services(root, script, logFile string, env []string, args ...string) error {
	cmd := exec.Command(filepath.Join(root, "dev", script), args...)
	cmd.Env = append(os.Environ(), env...)
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "\n$ dev/%s %s\n", script, strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = f, f
	return cmd.Run()
}

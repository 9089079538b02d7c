package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Prefix is the prefix of every variable.
const Prefix = "COLLINE"

// Config is the consumer configuration. Field names map to variables with split_words
// (Neo4jURI: COLLINE_NEO4J_URI). The envconfig tag is deliberately not used: with it, envconfig
// also reads the bare name (NEO4J_URI) when the prefixed one is absent.
type Config struct {
	KafkaBrokers  []string `split_words:"true" default:"127.0.0.1:19092" desc:"Kafka bootstrap brokers, comma-separated host:port"`
	KafkaTopic    string   `split_words:"true" default:"colline.plans" desc:"topic the listener publishes plan events to"`
	KafkaGroup    string   `split_words:"true" default:"colline" desc:"consumer group id; consumers in one group share the partitions"`
	KafkaDLQTopic string   `split_words:"true" default:"colline.plans.dlq" desc:"dead-letter topic for messages that can never be written"`
	KafkaMaxBytes int      `split_words:"true" default:"33554432" desc:"largest fetch, in bytes; at least the topic's max.message.bytes"`

	Neo4jURI      string `split_words:"true" default:"bolt://127.0.0.1:17687" desc:"Neo4j URI: bolt://, neo4j:// (routing), with +s or +ssc for TLS"`
	Neo4jUser     string `split_words:"true" desc:"Neo4j user; empty: no authentication"`
	Neo4jPassword string `split_words:"true" desc:"Neo4j password (never logged)"`
	Neo4jDatabase string `split_words:"true" default:"neo4j" desc:"Neo4j database"`

	HTTPAddr        string        `split_words:"true" default:":9090" desc:"listen address of /metrics, /healthz and /readyz"`
	BatchSize       int           `split_words:"true" default:"100" desc:"most messages written in one Neo4j transaction"`
	BatchWait       time.Duration `split_words:"true" default:"200ms" desc:"how long a batch waits for more messages after its first"`
	ShutdownTimeout time.Duration `split_words:"true" default:"30s" desc:"on SIGTERM, time to finish writing and committing the batch in hand"`
	ExitWhenIdle    time.Duration `split_words:"true" default:"0s" desc:"if > 0, exit 0 once the backlog present at start is committed and no message came for this long (tests, demos, one-shot replays); needs a single consumer in the group"`

	LogLevel  slog.Level `split_words:"true" default:"info" desc:"debug, info, warn or error"`
	LogFormat string     `split_words:"true" default:"json" desc:"json or text"`
}

// Load reads the configuration from the environment and validates it.
func Load() (Config, error) {
	var c Config
	if err := envconfig.Process(Prefix, &c); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	return c, c.Validate()
}

// Usage writes the table of variables with their defaults and descriptions.
func Usage(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 1, 0, 4, ' ', 0)
	if err := envconfig.Usagef(Prefix, &Config{}, tw, envconfig.DefaultTableFormat); err != nil {
		return err
	}
	return tw.Flush()
}

var topicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// Validate checks every field and returns all problems, each naming its variable.
func (c Config) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s_%s: %s", Prefix, name, fmt.Sprintf(format, args...)))
	}

	if len(c.KafkaBrokers) == 0 {
		bad("KAFKA_BROKERS", "at least one broker is required")
	}
	for _, b := range c.KafkaBrokers {
		if err := hostPort(b, true); err != nil {
			bad("KAFKA_BROKERS", "%q: %v", b, err)
		}
	}
	for name, t := range map[string]string{"KAFKA_TOPIC": c.KafkaTopic, "KAFKA_DLQ_TOPIC": c.KafkaDLQTopic} {
		if !topicName.MatchString(t) || t == "." || t == ".." {
			bad(name, "%q is not a valid topic name (1 to 249 of a-z A-Z 0-9 . _ -)", t)
		}
	}
	if c.KafkaDLQTopic == c.KafkaTopic && c.KafkaTopic != "" {
		bad("KAFKA_DLQ_TOPIC", "must differ from COLLINE_KAFKA_TOPIC (%q)", c.KafkaTopic)
	}
	if strings.TrimSpace(c.KafkaGroup) == "" {
		bad("KAFKA_GROUP", "is required")
	}
	if c.KafkaMaxBytes < 1<<20 {
		bad("KAFKA_MAX_BYTES", "%d is below 1 MiB; plans are large, use at least the topic's max.message.bytes", c.KafkaMaxBytes)
	}

	if u, err := url.Parse(c.Neo4jURI); err != nil {
		bad("NEO4J_URI", "not a URI")
	} else {
		switch u.Scheme {
		case "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc":
		default:
			bad("NEO4J_URI", "scheme %q is not one of bolt, bolt+s, bolt+ssc, neo4j, neo4j+s, neo4j+ssc", u.Scheme)
		}
		if u.Host == "" {
			bad("NEO4J_URI", "no host in %q", u.Redacted())
		}
		if u.User != nil {
			bad("NEO4J_URI", "credentials in the URI; use COLLINE_NEO4J_USER and COLLINE_NEO4J_PASSWORD")
		}
	}
	if c.Neo4jPassword != "" && c.Neo4jUser == "" {
		bad("NEO4J_USER", "is empty but COLLINE_NEO4J_PASSWORD is set")
	}

	if err := hostPort(c.HTTPAddr, false); err != nil {
		bad("HTTP_ADDR", "%q: %v", c.HTTPAddr, err)
	}
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		bad("BATCH_SIZE", "%d is outside 1..10000", c.BatchSize)
	}
	if c.BatchWait <= 0 || c.BatchWait > time.Minute {
		bad("BATCH_WAIT", "%v is outside (0, 1m]", c.BatchWait)
	}
	if c.ShutdownTimeout <= 0 {
		bad("SHUTDOWN_TIMEOUT", "%v must be positive", c.ShutdownTimeout)
	}
	if c.ExitWhenIdle < 0 {
		bad("EXIT_WHEN_IDLE", "%v must not be negative", c.ExitWhenIdle)
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		bad("LOG_FORMAT", "%q is neither json nor text", c.LogFormat)
	}
	return errors.Join(errs...)
}

// hostPort checks a host:port address. A broker (needHost) needs a host and a port; a listen
// address may have an empty host (all interfaces) and port 0 (any free port).
func hostPort(addr string, needHost bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if needHost && host == "" {
		return errors.New("no host")
	}
	low := 0
	if needHost {
		low = 1
	}
	if n, err := strconv.Atoi(port); err != nil || n < low || n > 65535 {
		return fmt.Errorf("port %q is not %d..65535", port, low)
	}
	return nil
}

// NewLogger returns the slog logger the configuration asks for, writing to w.
func (c Config) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// LogValue logs the configuration without secrets.
func (c Config) LogValue() slog.Value {
	pw := ""
	if c.Neo4jPassword != "" {
		pw = "(set)"
	}
	return slog.GroupValue(
		slog.Any("kafka_brokers", c.KafkaBrokers),
		slog.String("kafka_topic", c.KafkaTopic),
		slog.String("kafka_group", c.KafkaGroup),
		slog.String("kafka_dlq_topic", c.KafkaDLQTopic),
		slog.Int("kafka_max_bytes", c.KafkaMaxBytes),
		slog.String("neo4j_uri", c.Neo4jURI),
		slog.String("neo4j_user", c.Neo4jUser),
		slog.String("neo4j_password", pw),
		slog.String("neo4j_database", c.Neo4jDatabase),
		slog.String("http_addr", c.HTTPAddr),
		slog.Int("batch_size", c.BatchSize),
		slog.Duration("batch_wait", c.BatchWait),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Duration("exit_when_idle", c.ExitWhenIdle),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("log_format", c.LogFormat),
	)
}

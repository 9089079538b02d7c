package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
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

	KafkaTLS                   bool   `split_words:"true" default:"false" desc:"connect to Kafka with TLS (SSL or SASL_SSL); implied by any other COLLINE_KAFKA_TLS_* variable"`
	KafkaTLSCaFile             string `split_words:"true" desc:"PEM file of the CAs that sign the brokers' certificates; empty: the system roots"`
	KafkaTLSCertFile           string `split_words:"true" desc:"PEM client certificate for mutual TLS, with COLLINE_KAFKA_TLS_KEY_FILE"`
	KafkaTLSKeyFile            string `split_words:"true" desc:"PEM private key of COLLINE_KAFKA_TLS_CERT_FILE"`
	KafkaTLSServerName         string `split_words:"true" desc:"name to verify in the brokers' certificates; empty: the broker host"`
	KafkaTLSInsecureSkipVerify bool   `split_words:"true" default:"false" desc:"do not verify the brokers' certificates (tests only)"`
	KafkaSASLMechanism         string `split_words:"true" desc:"empty (no SASL), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"`
	KafkaSASLUsername          string `split_words:"true" desc:"SASL user name"`
	KafkaSASLPassword          Secret `split_words:"true" desc:"SASL password (never logged)"`
	KafkaSASLPasswordFile      string `split_words:"true" desc:"file holding the SASL password (a mounted secret), instead of COLLINE_KAFKA_SASL_PASSWORD; one trailing newline is ignored"`
	MaxEventBytes              int    `split_words:"true" default:"33554432" desc:"largest message value decoded (uncompressed); larger ones go to the dead-letter topic (reason too_large); unset, at most COLLINE_KAFKA_MAX_BYTES"`

	MaxPlanDepth int `split_words:"true" default:"5000" desc:"longest chain of plan nodes extracted; deeper plans go to the dead-letter topic (reason too_complex)"`
	MaxPlanNodes int `split_words:"true" default:"100000" desc:"most plan nodes in one event; more: dead letter, reason too_complex"`
	MaxPlanEdges int `split_words:"true" default:"100000" desc:"most lineage edges plus their transformations one event yields (also the most a batch holds); more: dead letter, reason too_complex"`
	MaxPlanWork  int `split_words:"true" default:"1000000" desc:"most source-column entries resolved for one event (bounds time and memory); more: dead letter, reason too_complex"`

	Neo4jURI          string `split_words:"true" default:"bolt://127.0.0.1:17687" desc:"Neo4j URI: bolt://, neo4j:// (routing), with +s or +ssc for TLS"`
	Neo4jUser         string `split_words:"true" desc:"Neo4j user; empty: no authentication"`
	Neo4jPassword     Secret `split_words:"true" desc:"Neo4j password (never logged)"`
	Neo4jPasswordFile string `split_words:"true" desc:"file holding the Neo4j password (a mounted secret), instead of COLLINE_NEO4J_PASSWORD; one trailing newline is ignored"`
	Neo4jDatabase     string `split_words:"true" default:"neo4j" desc:"Neo4j database"`
	Neo4jTLSCaFile    string `split_words:"true" desc:"PEM file of the CAs that sign Neo4j's certificate, for bolt+s:// and neo4j+s://; empty: the system roots"`

	MetricsInterval time.Duration `split_words:"true" default:"15s" desc:"how often the Kafka reader statistics and the group's lag are polled into the metrics"`
	HTTPAddr        string        `split_words:"true" default:":9090" desc:"listen address of /metrics, /healthz and /readyz"`
	BatchSize       int           `split_words:"true" default:"100" desc:"most messages written in one Neo4j transaction"`
	BatchWait       time.Duration `split_words:"true" default:"200ms" desc:"how long a batch waits for more messages after its first"`
	BatchMaxBytes   int           `split_words:"true" default:"16777216" desc:"a batch closes once its messages' values add up to this many bytes (bounds memory with large plans)"`
	ShutdownTimeout time.Duration `split_words:"true" default:"30s" desc:"on SIGTERM, time to finish writing and committing the batch in hand"`
	ExitWhenIdle    time.Duration `split_words:"true" default:"0s" desc:"if > 0, exit 0 once the backlog present at start is committed and no message came for this long (tests, demos, one-shot replays); needs a single consumer in the group"`

	MemoryLimitRatio float64 `split_words:"true" default:"0.9" desc:"share of the container's memory limit (cgroup, e.g. Kubernetes resources.limits.memory) given to the Go runtime as its soft limit; GOMEMLIMIT, if set, wins; 0 turns it off; no effect without a cgroup limit"`

	LogLevel  slog.Level `split_words:"true" default:"info" desc:"debug, info, warn or error"`
	LogFormat string     `split_words:"true" default:"json" desc:"json or text"`
}

// Load reads the configuration from the environment and validates it.
func Load() (Config, error) {
	var c Config
	if err := envconfig.Process(Prefix, &c); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	// The default largest event follows a smaller fetch size, so that setting
	// COLLINE_KAFKA_MAX_BYTES alone (as before the default rose to 32 MiB) stays valid.
	if _, set := os.LookupEnv(Prefix + "_MAX_EVENT_BYTES"); !set && c.KafkaMaxBytes >= 1<<20 {
		c.MaxEventBytes = min(c.MaxEventBytes, c.KafkaMaxBytes)
	}
	if err := errors.Join(
		readSecret(&c.KafkaSASLPassword, "KAFKA_SASL_PASSWORD", c.KafkaSASLPasswordFile),
		readSecret(&c.Neo4jPassword, "NEO4J_PASSWORD", c.Neo4jPasswordFile),
	); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// readSecret sets *s from file when file is not empty; name is the variable without prefix.
// Setting both the variable and its _FILE form is an error: which one wins would be a guess.
func readSecret(s *Secret, name, file string) error {
	if file == "" {
		return nil
	}
	if *s != "" {
		return fmt.Errorf("%s_%s and %s_%s_FILE are both set; keep one", Prefix, name, Prefix, name)
	}
	v, err := ReadSecretFile(file)
	if err != nil {
		return fmt.Errorf("%s_%s_FILE: %w", Prefix, name, err)
	}
	*s = v
	return nil
}

// ReadSecretFile reads a secret from a file (a Kubernetes secret volume, a Docker secret): the
// whole file without one trailing newline. An empty file is an error. Errors name the file, never
// its content.
func ReadSecretFile(file string) (Secret, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("%s is empty", file)
	}
	return Secret(v), nil
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

	errs = append(errs, validateNeo4j(c.Neo4jURI, c.Neo4jUser, c.Neo4jPassword, c.Neo4jTLSCaFile)...)
	errs = append(errs, c.validateKafkaSecurity()...)
	if c.MaxEventBytes < 1<<20 {
		bad("MAX_EVENT_BYTES", "%d is below 1 MiB", c.MaxEventBytes)
	} else if c.MaxEventBytes > c.KafkaMaxBytes && c.KafkaMaxBytes >= 1<<20 {
		bad("MAX_EVENT_BYTES", "%d is above COLLINE_KAFKA_MAX_BYTES (%d): such messages could not be fetched", c.MaxEventBytes, c.KafkaMaxBytes)
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
	for name, v := range map[string]int{"MAX_PLAN_DEPTH": c.MaxPlanDepth, "MAX_PLAN_NODES": c.MaxPlanNodes, "MAX_PLAN_EDGES": c.MaxPlanEdges, "MAX_PLAN_WORK": c.MaxPlanWork} {
		if v < 1 {
			bad(name, "%d is below 1", v)
		}
	}
	if c.MaxPlanDepth > 20000 {
		bad("MAX_PLAN_DEPTH", "%d is above 20000: resolution recurses once per level, and deeper stacks risk the process", c.MaxPlanDepth)
	}
	if c.BatchMaxBytes < 1<<20 {
		bad("BATCH_MAX_BYTES", "%d is below 1 MiB", c.BatchMaxBytes)
	}
	if c.MetricsInterval < time.Second {
		bad("METRICS_INTERVAL", "%v is below 1s", c.MetricsInterval)
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
	if err := validateMemoryLimitRatio(c.MemoryLimitRatio); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateNeo4j checks the COLLINE_NEO4J_* variables the consumer and the explorer share.
func validateNeo4j(uri, user string, password Secret, caFile string) []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s_%s: %s", Prefix, name, fmt.Sprintf(format, args...)))
	}
	if u, err := url.Parse(uri); err != nil {
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
	if password != "" && user == "" {
		bad("NEO4J_USER", "is empty but COLLINE_NEO4J_PASSWORD is set")
	}
	if caFile != "" {
		if _, err := certPool(caFile); err != nil {
			bad("NEO4J_TLS_CA_FILE", "%v", err)
		} else if u, err := url.Parse(uri); err == nil && !strings.HasSuffix(u.Scheme, "+s") {
			bad("NEO4J_TLS_CA_FILE", "is set but COLLINE_NEO4J_URI does not use TLS with verification (bolt+s:// or neo4j+s://)")
		}
	}

	return errs
}

// validateKafkaSecurity checks the TLS and SASL variables.
func (c Config) validateKafkaSecurity() []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s_%s: %s", Prefix, name, fmt.Sprintf(format, args...)))
	}
	if c.KafkaTLSCaFile != "" {
		if _, err := certPool(c.KafkaTLSCaFile); err != nil {
			bad("KAFKA_TLS_CA_FILE", "%v", err)
		}
	}
	switch {
	case (c.KafkaTLSCertFile == "") != (c.KafkaTLSKeyFile == ""):
		bad("KAFKA_TLS_CERT_FILE", "COLLINE_KAFKA_TLS_CERT_FILE and COLLINE_KAFKA_TLS_KEY_FILE go together")
	case c.KafkaTLSCertFile != "":
		if _, err := tls.LoadX509KeyPair(c.KafkaTLSCertFile, c.KafkaTLSKeyFile); err != nil {
			bad("KAFKA_TLS_CERT_FILE", "with COLLINE_KAFKA_TLS_KEY_FILE: %v", err)
		}
	}
	switch c.KafkaSASLMechanism {
	case "":
		if c.KafkaSASLUsername != "" || c.KafkaSASLPassword != "" {
			bad("KAFKA_SASL_MECHANISM", "is empty but COLLINE_KAFKA_SASL_USERNAME or COLLINE_KAFKA_SASL_PASSWORD is set")
		}
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if c.KafkaSASLUsername == "" {
			bad("KAFKA_SASL_USERNAME", "is required with COLLINE_KAFKA_SASL_MECHANISM=%s", c.KafkaSASLMechanism)
		}
		if c.KafkaSASLPassword == "" {
			bad("KAFKA_SASL_PASSWORD", "is required with COLLINE_KAFKA_SASL_MECHANISM=%s", c.KafkaSASLMechanism)
		}
	default:
		bad("KAFKA_SASL_MECHANISM", "%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", c.KafkaSASLMechanism)
	}
	return errs
}

// KafkaTLSConfig returns the TLS configuration of the Kafka connections, or nil for none.
func (c Config) KafkaTLSConfig() (*tls.Config, error) {
	if !c.KafkaTLS && c.KafkaTLSCaFile == "" && c.KafkaTLSCertFile == "" && c.KafkaTLSServerName == "" && !c.KafkaTLSInsecureSkipVerify {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.KafkaTLSServerName, InsecureSkipVerify: c.KafkaTLSInsecureSkipVerify}
	if c.KafkaTLSCaFile != "" {
		pool, err := certPool(c.KafkaTLSCaFile)
		if err != nil {
			return nil, fmt.Errorf("%s_KAFKA_TLS_CA_FILE: %w", Prefix, err)
		}
		t.RootCAs = pool
	}
	if c.KafkaTLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.KafkaTLSCertFile, c.KafkaTLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s_KAFKA_TLS_CERT_FILE: %w", Prefix, err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// KafkaSASL returns the SASL mechanism of the Kafka connections, or nil for none.
func (c Config) KafkaSASL() (sasl.Mechanism, error) {
	switch c.KafkaSASLMechanism {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Mechanism{Username: c.KafkaSASLUsername, Password: c.KafkaSASLPassword.Reveal()}, nil
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		algo := scram.SHA256
		if c.KafkaSASLMechanism == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, c.KafkaSASLUsername, c.KafkaSASLPassword.Reveal())
		if err != nil {
			return nil, fmt.Errorf("%s_KAFKA_SASL_USERNAME: %w", Prefix, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s_KAFKA_SASL_MECHANISM: %q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", Prefix, c.KafkaSASLMechanism)
}

// Neo4jTLSConfig returns the TLS configuration for a +s Neo4j URI with a private CA, or nil to use
// the system roots (the driver derives TLS itself from the URI scheme).
func (c Config) Neo4jTLSConfig() (*tls.Config, error) {
	if c.Neo4jTLSCaFile == "" {
		return nil, nil
	}
	t, err := CAConfig(c.Neo4jTLSCaFile)
	if err != nil {
		return nil, fmt.Errorf("%s_NEO4J_TLS_CA_FILE: %w", Prefix, err)
	}
	return t, nil
}

// CAConfig returns a TLS configuration (TLS 1.2 or later) that trusts the CAs of a PEM file only.
func CAConfig(file string) (*tls.Config, error) {
	pool, err := certPool(file)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// certPool reads a PEM file of CA certificates.
func certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
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
	return slog.GroupValue(
		slog.Any("kafka_brokers", c.KafkaBrokers),
		slog.String("kafka_topic", c.KafkaTopic),
		slog.String("kafka_group", c.KafkaGroup),
		slog.String("kafka_dlq_topic", c.KafkaDLQTopic),
		slog.Int("kafka_max_bytes", c.KafkaMaxBytes),
		slog.Bool("kafka_tls", c.KafkaTLS),
		slog.String("kafka_tls_ca_file", c.KafkaTLSCaFile),
		slog.String("kafka_tls_cert_file", c.KafkaTLSCertFile),
		slog.String("kafka_tls_key_file", c.KafkaTLSKeyFile),
		slog.String("kafka_tls_server_name", c.KafkaTLSServerName),
		slog.Bool("kafka_tls_insecure_skip_verify", c.KafkaTLSInsecureSkipVerify),
		slog.String("kafka_sasl_mechanism", c.KafkaSASLMechanism),
		slog.String("kafka_sasl_username", c.KafkaSASLUsername),
		slog.String("kafka_sasl_password", c.KafkaSASLPassword.String()),
		slog.String("kafka_sasl_password_file", c.KafkaSASLPasswordFile),
		slog.Int("max_event_bytes", c.MaxEventBytes),
		slog.Int("max_plan_depth", c.MaxPlanDepth),
		slog.Int("max_plan_nodes", c.MaxPlanNodes),
		slog.Int("max_plan_edges", c.MaxPlanEdges),
		slog.Int("max_plan_work", c.MaxPlanWork),
		slog.String("neo4j_uri", c.Neo4jURI),
		slog.String("neo4j_user", c.Neo4jUser),
		slog.String("neo4j_password", c.Neo4jPassword.String()),
		slog.String("neo4j_password_file", c.Neo4jPasswordFile),
		slog.String("neo4j_database", c.Neo4jDatabase),
		slog.String("neo4j_tls_ca_file", c.Neo4jTLSCaFile),
		slog.String("http_addr", c.HTTPAddr),
		slog.Duration("metrics_interval", c.MetricsInterval),
		slog.Int("batch_size", c.BatchSize),
		slog.Duration("batch_wait", c.BatchWait),
		slog.Int("batch_max_bytes", c.BatchMaxBytes),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Duration("exit_when_idle", c.ExitWhenIdle),
		slog.Float64("memory_limit_ratio", c.MemoryLimitRatio),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("log_format", c.LogFormat),
	)
}

// Secret is a string that never prints: fmt, slog and envconfig's usage show "(set)" or "" in its
// place. Reveal returns the value.
type Secret string

// Reveal returns the secret value, for the client that needs it.
func (s Secret) Reveal() string { return string(s) }

// String returns "(set)" when the secret is not empty, else "".
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "(set)"
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue is String, for slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText is String, for encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// markdownFormat renders envconfig's usage as a Markdown table (docs/operations.md).
const markdownFormat = `| variable | type | default | description |
|---|---|---|---|
{{range .}}| ` + "`{{usage_key .}}`" + ` | {{usage_type .}} | {{with usage_default .}}` + "`{{.}}`" + `{{end}} | {{usage_description .}}{{if usage_required .}} (required){{end}} |
{{end}}`

// Markdown writes the table of variables as Markdown, from envconfig's usage output.
func Markdown(w io.Writer) error {
	return envconfig.Usagef(Prefix, &Config{}, w, markdownFormat)
}

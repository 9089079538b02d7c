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

	"github.com/colline/colline/kafkaconn"
	"github.com/colline/colline/openlineage/alias"
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
	KafkaBrokers        []string      `split_words:"true" default:"127.0.0.1:19092" desc:"Kafka bootstrap brokers, comma-separated host:port"`
	KafkaTopic          string        `split_words:"true" default:"colline.plans" desc:"topic the listener publishes plan events to"`
	KafkaGroup          string        `split_words:"true" default:"colline" desc:"consumer group id; consumers in one group share the partitions"`
	KafkaDLQTopic       string        `split_words:"true" default:"colline.plans.dlq" desc:"dead-letter topic for messages that can never be written"`
	KafkaMaxBytes       int           `split_words:"true" default:"33554432" desc:"largest fetch, in bytes; at least the topic's max.message.bytes"`
	KafkaSessionTimeout time.Duration `split_words:"true" default:"30s" desc:"how long the group waits for a consumer that stopped heartbeating (killed, cut off) before its partitions go to the others; the broker allows group.min.session.timeout.ms (6s) to group.max.session.timeout.ms (30m)"`

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

	MaxPlanDepth int `split_words:"true" default:"5000" desc:"longest chain of plan nodes whose column lineage is extracted; a deeper plan keeps its table-level lineage only (its run marked overBudget: depth)"`
	MaxPlanNodes int `split_words:"true" default:"100000" desc:"most plan nodes in one event; more: table-level lineage only, marked"`
	MaxPlanEdges int `split_words:"true" default:"10000" desc:"most lineage edges plus their transformations one event yields (also the most a batch holds); more: table-level lineage only, marked"`
	MaxPlanWork  int `split_words:"true" default:"1000000" desc:"most source-column entries resolved for one event (bounds time and memory); more: table-level lineage only, marked"`
	PlanReuseMB  int `split_words:"true" default:"64" desc:"MiB of lineage kept for the plans seen last: a re-run that sends one of them again, byte for byte, is neither decoded nor extracted (docs/operations.md, Re-runs); 0: off"`

	OpenlineageTopic             string        `split_words:"true" desc:"also read OpenLineage events (openlineage's Kafka transport) from this topic, in the same group; empty: off"`
	OpenlineageHTTPAddr          string        `split_words:"true" desc:"listen address of POST /api/v1/lineage for OpenLineage's HTTP transport (publishes to COLLINE_OPENLINEAGE_TOPIC); empty: off"`
	OpenlineageHTTPApiKey        Secret        `split_words:"true" desc:"API key the HTTP transport must send (Authorization: Bearer), allowed to write anything (one key per producer, bound to what it may write: COLLINE_OPENLINEAGE_HTTP_KEYS_FILE); never logged"`
	OpenlineageHTTPApiKeyFile    string        `split_words:"true" desc:"file holding the API key (a mounted secret), instead of COLLINE_OPENLINEAGE_HTTP_API_KEY"`
	OpenlineageHTTPKeysFile      string        `split_words:"true" desc:"file of API keys, one producer a line, each bound to the jobs and datasets it may write (job=, dataset= patterns; docs/security.md); a key may not write other teams' lineage (403). With neither this nor COLLINE_OPENLINEAGE_HTTP_API_KEY anyone may post anything: the consumer warns at start"`
	OpenlineageHTTPMaxBytes      int           `split_words:"true" default:"4194304" desc:"largest event POSTed, in bytes after gzip decoding; larger: 413"`
	OpenlineageHTTPMaxConcurrent int           `split_words:"true" default:"16" desc:"requests to the endpoint handled at once; more wait up to 2s, then get 503 with Retry-After"`
	OpenlineageHTTPTlsCertFile   string        `split_words:"true" desc:"PEM certificate (chain) to serve the endpoint over HTTPS with, with COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE; empty: plain HTTP"`
	OpenlineageHTTPTlsKeyFile    string        `split_words:"true" desc:"PEM private key of COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE"`
	OpenlineageEmitURL           string        `split_words:"true" desc:"POST an OpenLineage RunEvent for every Spark event written to this endpoint (http(s)://marquez:5000/api/v1/lineage); empty: off"`
	OpenlineageEmitTopic         string        `split_words:"true" desc:"or write those events to this Kafka topic (same brokers and security as COLLINE_KAFKA_*); empty: off"`
	OpenlineageEmitApiKey        Secret        `split_words:"true" desc:"API key sent to COLLINE_OPENLINEAGE_EMIT_URL (Authorization: Bearer; never logged)"`
	OpenlineageEmitApiKeyFile    string        `split_words:"true" desc:"file holding that API key (a mounted secret), instead of COLLINE_OPENLINEAGE_EMIT_API_KEY"`
	OpenlineageEmitTimeout       time.Duration `split_words:"true" default:"10s" desc:"timeout of one POST to COLLINE_OPENLINEAGE_EMIT_URL (a failed POST is retried with backoff)"`
	OpenlineageAliases           string        `split_words:"true" desc:"dataset key prefixes to rewrite, from=to, comma-separated (duckdb:///data/shop.duckdb/shop.lake.=spark_catalog/lake.): how a tool naming a table its own way joins it (docs/openlineage.md)"`

	KafkaClusters string `split_words:"true" desc:"the Kafka clusters that jobs read and write (not the consumer's own), <cluster>=<host:port>[,<host:port>…] separated by spaces or semicolons (prod=k1:9092,k2:9092): a topic named through any of a cluster's servers is one dataset, kafka://<cluster>/<topic>; best named by its cluster id (docs/lineage-semantics.md)"`

	Neo4jURI          string        `split_words:"true" default:"bolt://127.0.0.1:17687" desc:"Neo4j URI: bolt://, neo4j:// (routing), with +s or +ssc for TLS"`
	Neo4jUser         string        `split_words:"true" desc:"Neo4j user; empty: no authentication"`
	Neo4jPassword     Secret        `split_words:"true" desc:"Neo4j password (never logged)"`
	Neo4jPasswordFile string        `split_words:"true" desc:"file holding the Neo4j password (a mounted secret), instead of COLLINE_NEO4J_PASSWORD; one trailing newline is ignored"`
	Neo4jDatabase     string        `split_words:"true" default:"neo4j" desc:"Neo4j database"`
	Neo4jTLSCaFile    string        `split_words:"true" desc:"PEM file of the CAs that sign Neo4j's certificate, for bolt+s:// and neo4j+s://; empty: the system roots"`
	Neo4jWriteTimeout time.Duration `split_words:"true" default:"2m" desc:"longest Neo4j write transaction (server-side timeout and client deadline); a write blocked longer (a held lock, a long transaction) is ended and retried with backoff"`
	Neo4jSlowWrite    time.Duration `split_words:"true" default:"30s" desc:"a Neo4j write running longer than this makes /readyz answer 503 (slow write) until it ends"`

	RetentionRunDays    int           `split_words:"true" default:"0" desc:"delete runs (Run nodes with their READ, WROTE, CHANGED and HAS_RUN relationships) whose query ended more than this many days ago; 0: keep them"`
	RetentionEdgeDays   int           `split_words:"true" default:"0" desc:"FEEDS and DECIDES_ROWS that no event confirmed for this many days are marked stale or deleted (COLLINE_RETENTION_EDGE_ACTION); 0: keep them"`
	RetentionEdgeAction string        `split_words:"true" default:"stale" desc:"stale (set stale: true; cleared when an event confirms the edge again) or delete"`
	RetentionInterval   time.Duration `split_words:"true" default:"1h" desc:"time between retention passes (the first runs at start)"`
	RetentionBatchSize  int           `split_words:"true" default:"1000" desc:"most runs or relationships one retention transaction touches (bounds its locks next to the consumer's writes)"`

	MetricsInterval time.Duration `split_words:"true" default:"15s" desc:"how often the Kafka reader statistics and the group's lag are polled into the metrics"`
	HTTPAddr        string        `split_words:"true" default:":9090" desc:"listen address of /metrics, /healthz and /readyz"`
	BatchSize       int           `split_words:"true" default:"100" desc:"most messages written in one Neo4j transaction"`
	BatchWait       time.Duration `split_words:"true" default:"200ms" desc:"how long a batch may wait for more messages after its first while the batch before it is written (a batch goes at once when the writer is free and no message is waiting)"`
	BatchMaxBytes   int           `split_words:"true" default:"16777216" desc:"a batch closes once its messages' values add up to this many bytes (bounds memory with large plans)"`
	ShutdownTimeout time.Duration `split_words:"true" default:"30s" desc:"on SIGTERM, time to finish writing and committing the batch in hand"`
	ExitWhenIdle    time.Duration `split_words:"true" default:"0s" desc:"if > 0, exit 0 once the backlog present at start is committed and no message came for this long (tests, demos, one-shot replays); needs a single consumer in the group"`

	MemoryLimitRatio float64 `split_words:"true" default:"0.9" desc:"share of the container's memory limit (cgroup, e.g. Kubernetes resources.limits.memory) given to the Go runtime as its soft limit; GOMEMLIMIT, if set, wins; 0 turns it off (in the consumer, also the tighter limit while a message of COLLINE_BATCH_MAX_BYTES or more is in hand: docs/operations.md, Memory)"`

	LogLevel  slog.Level `split_words:"true" default:"info" desc:"debug, info, warn or error"`
	LogFormat string     `split_words:"true" default:"json" desc:"json or text"`
}

// Load reads a configuration from the environment and validates it: Load[Config] the consumer's,
// Load[UI] the explorer's. Secrets named by a _FILE variable are read from their files; every
// error names its variable.
func Load[T any, P interface {
	*T
	complete() error
	Validate() error
}]() (T, error) {
	var c T
	if err := envconfig.Process(Prefix, P(&c)); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	if err := P(&c).complete(); err != nil {
		return c, err
	}
	return c, P(&c).Validate()
}

// complete sets what follows from other variables and reads the secrets of _FILE variables.
func (c *Config) complete() error {
	// The default largest event follows a smaller fetch size, so that setting
	// COLLINE_KAFKA_MAX_BYTES alone (as before the default rose to 32 MiB) stays valid.
	if _, set := os.LookupEnv(Prefix + "_MAX_EVENT_BYTES"); !set && c.KafkaMaxBytes >= 1<<20 {
		c.MaxEventBytes = min(c.MaxEventBytes, c.KafkaMaxBytes)
	}
	return errors.Join(
		readSecret(&c.KafkaSASLPassword, "KAFKA_SASL_PASSWORD", c.KafkaSASLPasswordFile),
		readSecret(&c.Neo4jPassword, "NEO4J_PASSWORD", c.Neo4jPasswordFile),
		readSecret(&c.OpenlineageHTTPApiKey, "OPENLINEAGE_HTTP_API_KEY", c.OpenlineageHTTPApiKeyFile),
		readSecret(&c.OpenlineageEmitApiKey, "OPENLINEAGE_EMIT_API_KEY", c.OpenlineageEmitApiKeyFile),
	)
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
	errs = append(errs, c.validateOpenLineage()...)
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
	if c.PlanReuseMB < 0 || c.PlanReuseMB > 1<<16 {
		bad("PLAN_REUSE_MB", "%d is outside 0..65536", c.PlanReuseMB)
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
	if c.KafkaSessionTimeout < time.Second || c.KafkaSessionTimeout > 30*time.Minute {
		bad("KAFKA_SESSION_TIMEOUT", "%v is outside [1s, 30m]", c.KafkaSessionTimeout)
	}
	if c.Neo4jWriteTimeout < time.Second || c.Neo4jWriteTimeout > time.Hour {
		bad("NEO4J_WRITE_TIMEOUT", "%v is outside [1s, 1h]", c.Neo4jWriteTimeout)
	}
	if c.Neo4jSlowWrite <= 0 {
		bad("NEO4J_SLOW_WRITE", "%v must be positive", c.Neo4jSlowWrite)
	}
	for name, v := range map[string]int{"RETENTION_RUN_DAYS": c.RetentionRunDays, "RETENTION_EDGE_DAYS": c.RetentionEdgeDays} {
		if v < 0 || v > 36500 {
			bad(name, "%d is outside 0..36500 (0 keeps everything)", v)
		}
	}
	if c.RetentionEdgeAction != "stale" && c.RetentionEdgeAction != "delete" {
		bad("RETENTION_EDGE_ACTION", "%q is neither stale nor delete", c.RetentionEdgeAction)
	}
	if c.RetentionInterval < time.Second {
		bad("RETENTION_INTERVAL", "%v is below 1s", c.RetentionInterval)
	}
	if c.RetentionBatchSize < 1 || c.RetentionBatchSize > 100000 {
		bad("RETENTION_BATCH_SIZE", "%d is outside 1..100000", c.RetentionBatchSize)
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

// validateOpenLineage checks the COLLINE_OPENLINEAGE_* variables.
func (c Config) validateOpenLineage() []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s_%s: %s", Prefix, name, fmt.Sprintf(format, args...)))
	}
	if t := c.OpenlineageTopic; t != "" {
		if !topicName.MatchString(t) || t == "." || t == ".." {
			bad("OPENLINEAGE_TOPIC", "%q is not a valid topic name (1 to 249 of a-z A-Z 0-9 . _ -)", t)
		}
		if t == c.KafkaTopic || t == c.KafkaDLQTopic {
			bad("OPENLINEAGE_TOPIC", "must differ from COLLINE_KAFKA_TOPIC and COLLINE_KAFKA_DLQ_TOPIC (%q)", t)
		}
	}
	if c.OpenlineageHTTPAddr != "" {
		if err := hostPort(c.OpenlineageHTTPAddr, false); err != nil {
			bad("OPENLINEAGE_HTTP_ADDR", "%q: %v", c.OpenlineageHTTPAddr, err)
		} else if _, port, _ := net.SplitHostPort(c.OpenlineageHTTPAddr); c.OpenlineageHTTPAddr == c.HTTPAddr && port != "0" {
			bad("OPENLINEAGE_HTTP_ADDR", "must differ from COLLINE_HTTP_ADDR (%q)", c.HTTPAddr)
		}
		if c.OpenlineageTopic == "" {
			bad("OPENLINEAGE_HTTP_ADDR", "is set but COLLINE_OPENLINEAGE_TOPIC is empty: the endpoint publishes the events it takes to that topic")
		}
	} else {
		for _, v := range [][2]string{{"OPENLINEAGE_HTTP_API_KEY", c.OpenlineageHTTPApiKey.Reveal()}, {"OPENLINEAGE_HTTP_KEYS_FILE", c.OpenlineageHTTPKeysFile},
			{"OPENLINEAGE_HTTP_TLS_CERT_FILE", c.OpenlineageHTTPTlsCertFile}} {
			if v[1] != "" {
				bad(v[0], "is set but COLLINE_OPENLINEAGE_HTTP_ADDR is empty")
			}
		}
	}
	switch {
	case (c.OpenlineageHTTPTlsCertFile == "") != (c.OpenlineageHTTPTlsKeyFile == ""):
		bad("OPENLINEAGE_HTTP_TLS_CERT_FILE", "COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE and COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE go together")
	case c.OpenlineageHTTPTlsCertFile != "":
		if _, err := tls.LoadX509KeyPair(c.OpenlineageHTTPTlsCertFile, c.OpenlineageHTTPTlsKeyFile); err != nil {
			bad("OPENLINEAGE_HTTP_TLS_CERT_FILE", "with COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE: %v", err)
		}
	}
	if c.OpenlineageHTTPKeysFile != "" {
		if _, err := os.Stat(c.OpenlineageHTTPKeysFile); err != nil {
			bad("OPENLINEAGE_HTTP_KEYS_FILE", "%v", err)
		}
	}
	if c.OpenlineageHTTPMaxConcurrent < 1 {
		bad("OPENLINEAGE_HTTP_MAX_CONCURRENT", "%d is below 1", c.OpenlineageHTTPMaxConcurrent)
	}
	if c.OpenlineageHTTPMaxBytes < 1<<10 {
		bad("OPENLINEAGE_HTTP_MAX_BYTES", "%d is below 1 KiB", c.OpenlineageHTTPMaxBytes)
	} else if c.OpenlineageHTTPMaxBytes > c.MaxEventBytes {
		bad("OPENLINEAGE_HTTP_MAX_BYTES", "%d is above COLLINE_MAX_EVENT_BYTES (%d): the consumer would dead-letter such events", c.OpenlineageHTTPMaxBytes, c.MaxEventBytes)
	}
	if _, err := c.Aliases(); err != nil {
		bad("OPENLINEAGE_ALIASES", "%v", err)
	}
	if _, err := c.Clusters(); err != nil {
		bad("KAFKA_CLUSTERS", "%v", err)
	}
	if raw := c.OpenlineageEmitURL; raw != "" {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad("OPENLINEAGE_EMIT_URL", "not a URL")
		case u.Scheme != "http" && u.Scheme != "https":
			bad("OPENLINEAGE_EMIT_URL", "scheme %q is neither http nor https", u.Scheme)
		case u.Host == "":
			bad("OPENLINEAGE_EMIT_URL", "no host in %q", u.Redacted())
		case u.User != nil:
			bad("OPENLINEAGE_EMIT_URL", "credentials in the URL; use COLLINE_OPENLINEAGE_EMIT_API_KEY")
		}
		if c.OpenlineageEmitTopic != "" {
			bad("OPENLINEAGE_EMIT_TOPIC", "and COLLINE_OPENLINEAGE_EMIT_URL are both set; emit to one of them")
		}
	} else if c.OpenlineageEmitApiKey != "" {
		bad("OPENLINEAGE_EMIT_API_KEY", "is set but COLLINE_OPENLINEAGE_EMIT_URL is empty")
	}
	if t := c.OpenlineageEmitTopic; t != "" {
		if !topicName.MatchString(t) || t == "." || t == ".." {
			bad("OPENLINEAGE_EMIT_TOPIC", "%q is not a valid topic name (1 to 249 of a-z A-Z 0-9 . _ -)", t)
		}
		if t == c.KafkaTopic || t == c.KafkaDLQTopic || t == c.OpenlineageTopic {
			bad("OPENLINEAGE_EMIT_TOPIC", "must differ from the topics the consumer reads and dead-letters to (%q): it would read its own events", t)
		}
	}
	if c.OpenlineageEmitTimeout <= 0 {
		bad("OPENLINEAGE_EMIT_TIMEOUT", "%v must be positive", c.OpenlineageEmitTimeout)
	}
	return errs
}

// Aliases returns the dataset key aliases of COLLINE_OPENLINEAGE_ALIASES.
func (c Config) Aliases() ([]alias.Rule, error) {
	return alias.Parse(c.OpenlineageAliases)
}

// Clusters returns the Kafka clusters of COLLINE_KAFKA_CLUSTERS.
func (c Config) Clusters() (alias.Clusters, error) {
	return alias.ParseClusters(c.KafkaClusters)
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

// KafkaSecurity returns the security of the Kafka connections: KafkaTLSConfig and KafkaSASL.
func (c Config) KafkaSecurity() (kafkaconn.Security, error) {
	var s kafkaconn.Security
	var err error
	if s.TLS, err = c.KafkaTLSConfig(); err != nil {
		return s, err
	}
	s.SASL, err = c.KafkaSASL()
	return s, err
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
// neo4jLog is the COLLINE_NEO4J_* part of a LogValue, the password redacted (the consumer and the
// explorer share these variables); a group without a key, which handlers inline.
func neo4jLog(uri, user string, password Secret, passwordFile, database, caFile string) slog.Attr {
	return slog.Group("",
		slog.String("neo4j_uri", uri), slog.String("neo4j_user", user), slog.String("neo4j_password", password.String()),
		slog.String("neo4j_password_file", passwordFile), slog.String("neo4j_database", database), slog.String("neo4j_tls_ca_file", caFile))
}

func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Any("kafka_brokers", c.KafkaBrokers),
		slog.String("kafka_topic", c.KafkaTopic),
		slog.String("kafka_group", c.KafkaGroup),
		slog.String("kafka_dlq_topic", c.KafkaDLQTopic),
		slog.Int("kafka_max_bytes", c.KafkaMaxBytes),
		slog.Duration("kafka_session_timeout", c.KafkaSessionTimeout),
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
		slog.String("openlineage_topic", c.OpenlineageTopic),
		slog.String("openlineage_http_addr", c.OpenlineageHTTPAddr),
		slog.String("openlineage_http_api_key", c.OpenlineageHTTPApiKey.String()),
		slog.String("openlineage_http_api_key_file", c.OpenlineageHTTPApiKeyFile),
		slog.String("openlineage_http_keys_file", c.OpenlineageHTTPKeysFile),
		slog.Int("openlineage_http_max_bytes", c.OpenlineageHTTPMaxBytes),
		slog.Int("openlineage_http_max_concurrent", c.OpenlineageHTTPMaxConcurrent),
		slog.String("openlineage_http_tls_cert_file", c.OpenlineageHTTPTlsCertFile),
		slog.String("openlineage_emit_url", redactURL(c.OpenlineageEmitURL)),
		slog.String("openlineage_emit_topic", c.OpenlineageEmitTopic),
		slog.String("openlineage_emit_api_key", c.OpenlineageEmitApiKey.String()),
		slog.String("openlineage_emit_api_key_file", c.OpenlineageEmitApiKeyFile),
		slog.Duration("openlineage_emit_timeout", c.OpenlineageEmitTimeout),
		slog.String("openlineage_aliases", c.OpenlineageAliases),
		slog.String("kafka_clusters", c.KafkaClusters),
		slog.Int("max_event_bytes", c.MaxEventBytes),
		slog.Int("max_plan_depth", c.MaxPlanDepth),
		slog.Int("max_plan_nodes", c.MaxPlanNodes),
		slog.Int("max_plan_edges", c.MaxPlanEdges),
		slog.Int("max_plan_work", c.MaxPlanWork),
		slog.Int("plan_reuse_mb", c.PlanReuseMB),
		neo4jLog(c.Neo4jURI, c.Neo4jUser, c.Neo4jPassword, c.Neo4jPasswordFile, c.Neo4jDatabase, c.Neo4jTLSCaFile),
		slog.Duration("neo4j_write_timeout", c.Neo4jWriteTimeout),
		slog.Duration("neo4j_slow_write", c.Neo4jSlowWrite),
		slog.Int("retention_run_days", c.RetentionRunDays),
		slog.Int("retention_edge_days", c.RetentionEdgeDays),
		slog.String("retention_edge_action", c.RetentionEdgeAction),
		slog.Duration("retention_interval", c.RetentionInterval),
		slog.Int("retention_batch_size", c.RetentionBatchSize),
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

// redactURL is a URL without the password of its user info and with its query's values
// replaced (a token may travel there), for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
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

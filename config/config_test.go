package config

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan"
)

// clearEnv unsets every COLLINE_ variable for the test.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, Prefix+"_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func TestDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load[Config]()
	if err != nil {
		t.Fatalf("Load with no variables = %v", err)
	}
	want := Config{
		KafkaBrokers: []string{"127.0.0.1:19092"}, KafkaTopic: "colline.plans", KafkaGroup: "colline",
		KafkaDLQTopic: "colline.plans.dlq", KafkaMaxBytes: 32 << 20,
		Neo4jURI: "bolt://127.0.0.1:17687", Neo4jDatabase: "neo4j",
		HTTPAddr: ":9090", BatchSize: 100, BatchWait: 200 * time.Millisecond, BatchMaxBytes: 16 << 20, ShutdownTimeout: 30 * time.Second,
		LogLevel: slog.LevelInfo, LogFormat: "json", MemoryLimitRatio: DefaultMemoryLimitRatio, MaxEventBytes: 32 << 20, MetricsInterval: 15 * time.Second,
		MaxPlanDepth: 5000, MaxPlanNodes: 100000, MaxPlanEdges: 10000, MaxPlanWork: 1000000, PlanReuseMB: 64,
		KafkaSessionTimeout: 30 * time.Second, Neo4jWriteTimeout: 2 * time.Minute, Neo4jSlowWrite: 30 * time.Second,
		RetentionEdgeAction: "stale", RetentionInterval: time.Hour, RetentionBatchSize: 1000,
		OpenlineageHTTPMaxBytes: 4 << 20, OpenlineageHTTPMaxConcurrent: 16, OpenlineageEmitTimeout: 10 * time.Second,
	}
	d := plan.DefaultBudget
	if (plan.Budget{Depth: c.MaxPlanDepth, Nodes: c.MaxPlanNodes, Edges: c.MaxPlanEdges, Work: c.MaxPlanWork}) != d {
		t.Errorf("the COLLINE_MAX_PLAN_* defaults differ from plan.DefaultBudget %+v", d)
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

func TestVariables(t *testing.T) {
	clearEnv(t)
	for k, v := range map[string]string{
		"COLLINE_KAFKA_BROKERS": "a:1,b:2", "COLLINE_KAFKA_TOPIC": "t", "COLLINE_KAFKA_GROUP": "g",
		"COLLINE_KAFKA_DLQ_TOPIC": "d", "COLLINE_KAFKA_MAX_BYTES": "16777216",
		"COLLINE_NEO4J_URI": "neo4j+s://db.example:7687", "COLLINE_NEO4J_USER": "u", "COLLINE_NEO4J_PASSWORD": "p",
		"COLLINE_NEO4J_DATABASE": "lineage", "COLLINE_HTTP_ADDR": "127.0.0.1:9191", "COLLINE_BATCH_SIZE": "7",
		"COLLINE_BATCH_WAIT": "1s", "COLLINE_BATCH_MAX_BYTES": "2097152", "COLLINE_SHUTDOWN_TIMEOUT": "5s", "COLLINE_EXIT_WHEN_IDLE": "3s",
		"COLLINE_LOG_LEVEL": "debug", "COLLINE_LOG_FORMAT": "text", "COLLINE_MEMORY_LIMIT_RATIO": "0.75",
		"COLLINE_MAX_PLAN_DEPTH": "100", "COLLINE_MAX_PLAN_NODES": "200", "COLLINE_MAX_PLAN_EDGES": "300", "COLLINE_MAX_PLAN_WORK": "400", "COLLINE_PLAN_REUSE_MB": "8",
		"COLLINE_KAFKA_SESSION_TIMEOUT": "10s", "COLLINE_NEO4J_WRITE_TIMEOUT": "45s", "COLLINE_NEO4J_SLOW_WRITE": "5s",
		"COLLINE_RETENTION_RUN_DAYS": "90", "COLLINE_RETENTION_EDGE_DAYS": "30", "COLLINE_RETENTION_EDGE_ACTION": "delete",
		"COLLINE_RETENTION_INTERVAL": "10m", "COLLINE_RETENTION_BATCH_SIZE": "500",
		"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": ":5000", "COLLINE_OPENLINEAGE_HTTP_API_KEY": "k",
		"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES": "2048", "COLLINE_OPENLINEAGE_ALIASES": "duckdb:///x.duckdb/x.lake.=spark_catalog/lake.",
		"COLLINE_OPENLINEAGE_EMIT_URL": "https://marquez:5000/api/v1/lineage", "COLLINE_OPENLINEAGE_EMIT_API_KEY": "e",
		"COLLINE_OPENLINEAGE_EMIT_TIMEOUT": "3s", "COLLINE_KAFKA_CLUSTERS": "prod=k1:9092,k2:9092",
		"NEO4J_DATABASE": "bare names are not read",
	} {
		t.Setenv(k, v)
	}
	c, err := Load[Config]()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		KafkaBrokers: []string{"a:1", "b:2"}, KafkaTopic: "t", KafkaGroup: "g", KafkaDLQTopic: "d", KafkaMaxBytes: 16 << 20,
		Neo4jURI: "neo4j+s://db.example:7687", Neo4jUser: "u", Neo4jPassword: "p", Neo4jDatabase: "lineage",
		HTTPAddr: "127.0.0.1:9191", BatchSize: 7, BatchWait: time.Second, BatchMaxBytes: 2 << 20, ShutdownTimeout: 5 * time.Second,
		ExitWhenIdle: 3 * time.Second, LogLevel: slog.LevelDebug, LogFormat: "text", MemoryLimitRatio: 0.75,
		MaxEventBytes: 16 << 20, MetricsInterval: 15 * time.Second,
		MaxPlanDepth: 100, MaxPlanNodes: 200, MaxPlanEdges: 300, MaxPlanWork: 400, PlanReuseMB: 8,
		KafkaSessionTimeout: 10 * time.Second, Neo4jWriteTimeout: 45 * time.Second, Neo4jSlowWrite: 5 * time.Second,
		RetentionRunDays: 90, RetentionEdgeDays: 30, RetentionEdgeAction: "delete", RetentionInterval: 10 * time.Minute, RetentionBatchSize: 500,
		OpenlineageTopic: "ol", OpenlineageHTTPAddr: ":5000", OpenlineageHTTPApiKey: "k", OpenlineageHTTPMaxBytes: 2048, OpenlineageHTTPMaxConcurrent: 16,
		OpenlineageAliases: "duckdb:///x.duckdb/x.lake.=spark_catalog/lake.", OpenlineageEmitURL: "https://marquez:5000/api/v1/lineage",
		OpenlineageEmitApiKey: "e", OpenlineageEmitTimeout: 3 * time.Second, KafkaClusters: "prod=k1:9092,k2:9092",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("\n got %+v\nwant %+v", c, want)
	}
}

func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unparseable int", map[string]string{"COLLINE_BATCH_SIZE": "many"}, []string{"COLLINE_BATCH_SIZE"}},
		{"unparseable duration", map[string]string{"COLLINE_BATCH_WAIT": "soon"}, []string{"COLLINE_BATCH_WAIT"}},
		{"unparseable level", map[string]string{"COLLINE_LOG_LEVEL": "loud"}, []string{"COLLINE_LOG_LEVEL"}},
		{"broker without port", map[string]string{"COLLINE_KAFKA_BROKERS": "localhost"}, []string{`COLLINE_KAFKA_BROKERS: "localhost": address localhost: missing port`}},
		{"broker without host", map[string]string{"COLLINE_KAFKA_BROKERS": ":9092"}, []string{`COLLINE_KAFKA_BROKERS: ":9092": no host`}},
		{"bad topic", map[string]string{"COLLINE_KAFKA_TOPIC": "plans/v1"}, []string{`COLLINE_KAFKA_TOPIC: "plans/v1" is not a valid topic name`}},
		{"dlq is the topic", map[string]string{"COLLINE_KAFKA_DLQ_TOPIC": "colline.plans"}, []string{"COLLINE_KAFKA_DLQ_TOPIC: must differ from COLLINE_KAFKA_TOPIC"}},
		{"empty group", map[string]string{"COLLINE_KAFKA_GROUP": " "}, []string{"COLLINE_KAFKA_GROUP: is required"}},
		{"small fetch", map[string]string{"COLLINE_KAFKA_MAX_BYTES": "1000"}, []string{"COLLINE_KAFKA_MAX_BYTES: 1000 is below 1 MiB"}},
		{"http scheme", map[string]string{"COLLINE_NEO4J_URI": "http://localhost:7474"}, []string{`COLLINE_NEO4J_URI: scheme "http" is not one of`}},
		{"no host", map[string]string{"COLLINE_NEO4J_URI": "bolt://"}, []string{"COLLINE_NEO4J_URI: no host"}},
		{"credentials in uri", map[string]string{"COLLINE_NEO4J_URI": "bolt://neo4j:secret@db:7687"}, []string{"COLLINE_NEO4J_URI: credentials in the URI"}},
		{"password without user", map[string]string{"COLLINE_NEO4J_PASSWORD": "secret"}, []string{"COLLINE_NEO4J_USER: is empty but COLLINE_NEO4J_PASSWORD is set"}},
		{"http addr", map[string]string{"COLLINE_HTTP_ADDR": "9090"}, []string{`COLLINE_HTTP_ADDR: "9090"`}},
		{"http port", map[string]string{"COLLINE_HTTP_ADDR": ":http"}, []string{`COLLINE_HTTP_ADDR: ":http": port "http" is not 0..65535`}},
		{"broker port", map[string]string{"COLLINE_KAFKA_BROKERS": "k:0"}, []string{`COLLINE_KAFKA_BROKERS: "k:0": port "0" is not 1..65535`}},
		{"batch size", map[string]string{"COLLINE_BATCH_SIZE": "0"}, []string{"COLLINE_BATCH_SIZE: 0 is outside 1..10000"}},
		{"batch wait", map[string]string{"COLLINE_BATCH_WAIT": "0s"}, []string{"COLLINE_BATCH_WAIT: 0s is outside (0, 1m]"}},
		{"batch bytes", map[string]string{"COLLINE_BATCH_MAX_BYTES": "1000"}, []string{"COLLINE_BATCH_MAX_BYTES: 1000 is below 1 MiB"}},
		{"plan budgets", map[string]string{"COLLINE_MAX_PLAN_NODES": "0", "COLLINE_MAX_PLAN_DEPTH": "100000"}, []string{"COLLINE_MAX_PLAN_NODES: 0 is below 1", "COLLINE_MAX_PLAN_DEPTH: 100000 is above 20000"}},
		{"shutdown timeout", map[string]string{"COLLINE_SHUTDOWN_TIMEOUT": "-1s"}, []string{"COLLINE_SHUTDOWN_TIMEOUT: -1s must be positive"}},
		{"exit when idle", map[string]string{"COLLINE_EXIT_WHEN_IDLE": "-1s"}, []string{"COLLINE_EXIT_WHEN_IDLE: -1s must not be negative"}},
		{"log format", map[string]string{"COLLINE_LOG_FORMAT": "xml"}, []string{`COLLINE_LOG_FORMAT: "xml" is neither json nor text`}},
		{"sasl mechanism", map[string]string{"COLLINE_KAFKA_SASL_MECHANISM": "GSSAPI"}, []string{`COLLINE_KAFKA_SASL_MECHANISM: "GSSAPI" is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`}},
		{"sasl without user", map[string]string{"COLLINE_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "COLLINE_KAFKA_SASL_PASSWORD": "secret"}, []string{"COLLINE_KAFKA_SASL_USERNAME: is required with COLLINE_KAFKA_SASL_MECHANISM=SCRAM-SHA-512"}},
		{"sasl without password", map[string]string{"COLLINE_KAFKA_SASL_MECHANISM": "PLAIN", "COLLINE_KAFKA_SASL_USERNAME": "u"}, []string{"COLLINE_KAFKA_SASL_PASSWORD: is required with COLLINE_KAFKA_SASL_MECHANISM=PLAIN"}},
		{"sasl credentials without mechanism", map[string]string{"COLLINE_KAFKA_SASL_PASSWORD": "secret"}, []string{"COLLINE_KAFKA_SASL_MECHANISM: is empty but"}},
		{"missing ca file", map[string]string{"COLLINE_KAFKA_TLS_CA_FILE": "/nonexistent/ca.pem"}, []string{"COLLINE_KAFKA_TLS_CA_FILE: open /nonexistent/ca.pem"}},
		{"ca file without pem", map[string]string{"COLLINE_KAFKA_TLS_CA_FILE": "config_test.go"}, []string{"COLLINE_KAFKA_TLS_CA_FILE: config_test.go holds no PEM certificate"}},
		{"cert without key", map[string]string{"COLLINE_KAFKA_TLS_CERT_FILE": "cert.pem"}, []string{"COLLINE_KAFKA_TLS_CERT_FILE: COLLINE_KAFKA_TLS_CERT_FILE and COLLINE_KAFKA_TLS_KEY_FILE go together"}},
		{"bad key pair", map[string]string{"COLLINE_KAFKA_TLS_CERT_FILE": "config_test.go", "COLLINE_KAFKA_TLS_KEY_FILE": "config.go"}, []string{"COLLINE_KAFKA_TLS_CERT_FILE: with COLLINE_KAFKA_TLS_KEY_FILE:"}},
		{"neo4j ca without tls", map[string]string{"COLLINE_NEO4J_TLS_CA_FILE": "/nonexistent/ca.pem"}, []string{"COLLINE_NEO4J_TLS_CA_FILE: open /nonexistent/ca.pem"}},
		{"max event bytes", map[string]string{"COLLINE_MAX_EVENT_BYTES": "100"}, []string{"COLLINE_MAX_EVENT_BYTES: 100 is below 1 MiB"}},
		{"max event above fetch", map[string]string{"COLLINE_MAX_EVENT_BYTES": "40000000"}, []string{"COLLINE_MAX_EVENT_BYTES: 40000000 is above COLLINE_KAFKA_MAX_BYTES"}},
		{"metrics interval", map[string]string{"COLLINE_METRICS_INTERVAL": "10ms"}, []string{"COLLINE_METRICS_INTERVAL: 10ms is below 1s"}},
		{"session timeout", map[string]string{"COLLINE_KAFKA_SESSION_TIMEOUT": "500ms"}, []string{"COLLINE_KAFKA_SESSION_TIMEOUT: 500ms is outside [1s, 30m]"}},
		{"write timeout", map[string]string{"COLLINE_NEO4J_WRITE_TIMEOUT": "2h"}, []string{"COLLINE_NEO4J_WRITE_TIMEOUT: 2h0m0s is outside [1s, 1h]"}},
		{"slow write", map[string]string{"COLLINE_NEO4J_SLOW_WRITE": "0s"}, []string{"COLLINE_NEO4J_SLOW_WRITE: 0s must be positive"}},
		{"retention days", map[string]string{"COLLINE_RETENTION_RUN_DAYS": "-1", "COLLINE_RETENTION_EDGE_DAYS": "40000"}, []string{"COLLINE_RETENTION_RUN_DAYS: -1 is outside 0..36500", "COLLINE_RETENTION_EDGE_DAYS: 40000 is outside 0..36500"}},
		{"retention action", map[string]string{"COLLINE_RETENTION_EDGE_ACTION": "archive"}, []string{`COLLINE_RETENTION_EDGE_ACTION: "archive" is neither stale nor delete`}},
		{"retention interval", map[string]string{"COLLINE_RETENTION_INTERVAL": "100ms"}, []string{"COLLINE_RETENTION_INTERVAL: 100ms is below 1s"}},
		{"retention batch", map[string]string{"COLLINE_RETENTION_BATCH_SIZE": "0"}, []string{"COLLINE_RETENTION_BATCH_SIZE: 0 is outside 1..100000"}},
		{"openlineage topic name", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "a b"}, []string{`COLLINE_OPENLINEAGE_TOPIC: "a b" is not a valid topic name`}},
		{"openlineage topic is the plan topic", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "colline.plans"}, []string{`COLLINE_OPENLINEAGE_TOPIC: must differ from COLLINE_KAFKA_TOPIC and COLLINE_KAFKA_DLQ_TOPIC ("colline.plans")`}},
		{"openlineage http without topic", map[string]string{"COLLINE_OPENLINEAGE_HTTP_ADDR": ":5000"}, []string{"COLLINE_OPENLINEAGE_HTTP_ADDR: is set but COLLINE_OPENLINEAGE_TOPIC is empty"}},
		{"openlineage http addr", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": "5000"}, []string{`COLLINE_OPENLINEAGE_HTTP_ADDR: "5000"`}},
		{"openlineage http on the admin port", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": ":9090"}, []string{`COLLINE_OPENLINEAGE_HTTP_ADDR: must differ from COLLINE_HTTP_ADDR (":9090")`}},
		{"openlineage api key without endpoint", map[string]string{"COLLINE_OPENLINEAGE_HTTP_API_KEY": "secret"}, []string{"COLLINE_OPENLINEAGE_HTTP_API_KEY: is set but COLLINE_OPENLINEAGE_HTTP_ADDR is empty"}},
		{"openlineage api key twice", map[string]string{"COLLINE_OPENLINEAGE_HTTP_API_KEY": "secret", "COLLINE_OPENLINEAGE_HTTP_API_KEY_FILE": "config.go"}, []string{"COLLINE_OPENLINEAGE_HTTP_API_KEY and COLLINE_OPENLINEAGE_HTTP_API_KEY_FILE are both set"}},
		{"openlineage keys file without endpoint", map[string]string{"COLLINE_OPENLINEAGE_HTTP_KEYS_FILE": "config.go"}, []string{"COLLINE_OPENLINEAGE_HTTP_KEYS_FILE: is set but COLLINE_OPENLINEAGE_HTTP_ADDR is empty"}},
		{"openlineage keys file missing", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": ":5000", "COLLINE_OPENLINEAGE_HTTP_KEYS_FILE": "nope.keys"}, []string{"COLLINE_OPENLINEAGE_HTTP_KEYS_FILE: stat nope.keys: no such file or directory"}},
		{"openlineage tls half", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": ":5000", "COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE": "k.pem"}, []string{"COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE: COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE and COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE go together"}},
		{"openlineage tls files", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_HTTP_ADDR": ":5000", "COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE": "config.go", "COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE": "config.go"}, []string{"COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE: with COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE: tls: failed to find any PEM data"}},
		{"openlineage max concurrent", map[string]string{"COLLINE_OPENLINEAGE_HTTP_MAX_CONCURRENT": "0"}, []string{"COLLINE_OPENLINEAGE_HTTP_MAX_CONCURRENT: 0 is below 1"}},
		{"openlineage max bytes", map[string]string{"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES": "10"}, []string{"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES: 10 is below 1 KiB"}},
		{"openlineage max bytes above events", map[string]string{"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES": "40000000"}, []string{"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES: 40000000 is above COLLINE_MAX_EVENT_BYTES"}},
		{"openlineage alias", map[string]string{"COLLINE_OPENLINEAGE_ALIASES": "a=b"}, []string{`COLLINE_OPENLINEAGE_ALIASES: alias "a=b": "b" has no namespace`}},
		{"kafka cluster without servers", map[string]string{"COLLINE_KAFKA_CLUSTERS": "prod"}, []string{`COLLINE_KAFKA_CLUSTERS: cluster "prod": want <cluster>=<host:port>[,<host:port>…]`}},
		{"kafka cluster server without port", map[string]string{"COLLINE_KAFKA_CLUSTERS": "prod=k1"}, []string{`COLLINE_KAFKA_CLUSTERS: cluster "prod=k1": "k1" is not host:port`}},
		{"kafka server in two clusters", map[string]string{"COLLINE_KAFKA_CLUSTERS": "a=k1:9092 b=k1:9092"}, []string{`COLLINE_KAFKA_CLUSTERS: cluster "b=k1:9092": k1:9092 is already a server of cluster "a"`}},
		{"emit url scheme", map[string]string{"COLLINE_OPENLINEAGE_EMIT_URL": "ftp://m/api"}, []string{`COLLINE_OPENLINEAGE_EMIT_URL: scheme "ftp" is neither http nor https`}},
		{"emit url host", map[string]string{"COLLINE_OPENLINEAGE_EMIT_URL": "http:///api"}, []string{"COLLINE_OPENLINEAGE_EMIT_URL: no host"}},
		{"emit url credentials", map[string]string{"COLLINE_OPENLINEAGE_EMIT_URL": "http://u:secret@m/api"}, []string{"COLLINE_OPENLINEAGE_EMIT_URL: credentials in the URL"}},
		{"emit to both", map[string]string{"COLLINE_OPENLINEAGE_EMIT_URL": "http://m/api", "COLLINE_OPENLINEAGE_EMIT_TOPIC": "out"}, []string{"COLLINE_OPENLINEAGE_EMIT_TOPIC: and COLLINE_OPENLINEAGE_EMIT_URL are both set"}},
		{"emit api key without url", map[string]string{"COLLINE_OPENLINEAGE_EMIT_API_KEY": "secret"}, []string{"COLLINE_OPENLINEAGE_EMIT_API_KEY: is set but COLLINE_OPENLINEAGE_EMIT_URL is empty"}},
		{"emit to a topic read", map[string]string{"COLLINE_OPENLINEAGE_TOPIC": "ol", "COLLINE_OPENLINEAGE_EMIT_TOPIC": "ol"}, []string{`COLLINE_OPENLINEAGE_EMIT_TOPIC: must differ from the topics the consumer reads and dead-letters to ("ol")`}},
		{"emit timeout", map[string]string{"COLLINE_OPENLINEAGE_EMIT_TIMEOUT": "0s"}, []string{"COLLINE_OPENLINEAGE_EMIT_TIMEOUT: 0s must be positive"}},
		{"several at once", map[string]string{"COLLINE_BATCH_SIZE": "0", "COLLINE_LOG_FORMAT": "xml"}, []string{"COLLINE_BATCH_SIZE", "COLLINE_LOG_FORMAT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failsWith(t, func() error { _, err := Load[Config](); return err }, tc.env, tc.want)
		})
	}
}

// failsWith sets only the variables env, loads, and checks that the error holds every want and no
// secret (the test values of passwords are "secret").
func failsWith(t *testing.T, load func() error, env map[string]string, want []string) {
	t.Helper()
	clearEnv(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	err := load()
	if err == nil {
		t.Fatal("load = nil error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("load = %q, want it to contain %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows a secret: %q", err)
	}
}

func TestLogValueHidesThePassword(t *testing.T) {
	var buf bytes.Buffer
	c := Config{Neo4jUser: "neo4j", Neo4jPassword: "s3cr3t", LogFormat: "json"}
	c.NewLogger(&buf).Info("starting", "config", c)
	if strings.Contains(buf.String(), "s3cr3t") || !strings.Contains(buf.String(), `"neo4j_password":"(set)"`) {
		t.Errorf("log line = %s", buf.String())
	}
}

func TestUsageListsEveryVariable(t *testing.T) {
	var buf bytes.Buffer
	if err := Usage(&buf); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"COLLINE_KAFKA_BROKERS", "COLLINE_KAFKA_TOPIC", "COLLINE_KAFKA_GROUP", "COLLINE_KAFKA_DLQ_TOPIC",
		"COLLINE_KAFKA_MAX_BYTES", "COLLINE_NEO4J_URI", "COLLINE_NEO4J_USER", "COLLINE_NEO4J_PASSWORD", "COLLINE_NEO4J_DATABASE",
		"COLLINE_HTTP_ADDR", "COLLINE_BATCH_SIZE", "COLLINE_BATCH_WAIT", "COLLINE_SHUTDOWN_TIMEOUT", "COLLINE_EXIT_WHEN_IDLE",
		"COLLINE_LOG_LEVEL", "COLLINE_LOG_FORMAT"} {
		if !strings.Contains(buf.String(), v+" ") {
			t.Errorf("usage lacks %s:\n%s", v, buf.String())
		}
	}
}

// TestSecretsNeverShow loads a configuration with both passwords and prints it every way the
// consumer might: slog (JSON and text), fmt verbs, the usage table and the Markdown table.
func TestSecretsNeverShow(t *testing.T) {
	clearEnv(t)
	const neo4jPw, kafkaPw, olKey, emitKey = "n3o-s3cr3t", "k4fka-s3cr3t", "0l-k3y-s3cr3t", "3m1t-k3y-s3cr3t"
	t.Setenv("COLLINE_OPENLINEAGE_TOPIC", "ol")
	t.Setenv("COLLINE_OPENLINEAGE_HTTP_ADDR", ":5000")
	t.Setenv("COLLINE_OPENLINEAGE_HTTP_API_KEY", olKey)
	t.Setenv("COLLINE_OPENLINEAGE_EMIT_URL", "https://m/api/v1/lineage")
	t.Setenv("COLLINE_OPENLINEAGE_EMIT_API_KEY", emitKey)
	t.Setenv("COLLINE_NEO4J_USER", "neo4j")
	t.Setenv("COLLINE_NEO4J_PASSWORD", neo4jPw)
	t.Setenv("COLLINE_KAFKA_SASL_MECHANISM", "SCRAM-SHA-256")
	t.Setenv("COLLINE_KAFKA_SASL_USERNAME", "colline")
	t.Setenv("COLLINE_KAFKA_SASL_PASSWORD", kafkaPw)
	c, err := Load[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if c.Neo4jPassword.Reveal() != neo4jPw || c.KafkaSASLPassword.Reveal() != kafkaPw || c.OpenlineageHTTPApiKey.Reveal() != olKey || c.OpenlineageEmitApiKey.Reveal() != emitKey {
		t.Fatal("the passwords were not read")
	}
	var out bytes.Buffer
	c.NewLogger(&out).Info("starting", "config", c)
	c.LogFormat = "text"
	c.NewLogger(&out).Info("starting", "config", c, "password", c.Neo4jPassword)
	fmt.Fprintf(&out, "%v %+v %#v %s %q\n", c, c, c, c.KafkaSASLPassword, c.Neo4jPassword)
	b, _ := json.Marshal(c)
	out.Write(b)
	if err := Usage(&out); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&out); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{neo4jPw, kafkaPw, olKey, emitKey} {
		if strings.Contains(out.String(), pw) {
			t.Errorf("a password shows in:\n%s", out.String())
		}
	}
	if !strings.Contains(out.String(), `"kafka_sasl_password":"(set)"`) {
		t.Errorf("the log does not say the password is set:\n%s", out.String())
	}
}

func TestKafkaSecurity(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}

	clearEnv(t)
	c, err := Load[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if tc, err := c.KafkaTLSConfig(); tc != nil || err != nil {
		t.Errorf("default TLS = %v, %v; want none", tc, err)
	}
	if m, err := c.KafkaSASL(); m != nil || err != nil {
		t.Errorf("default SASL = %v, %v; want none", m, err)
	}
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("COLLINE_KAFKA_TLS_CA_FILE", caFile)
			t.Setenv("COLLINE_KAFKA_SASL_MECHANISM", mech)
			t.Setenv("COLLINE_KAFKA_SASL_USERNAME", "u")
			t.Setenv("COLLINE_KAFKA_SASL_PASSWORD", "p")
			c, err := Load[Config]()
			if err != nil {
				t.Fatal(err)
			}
			tc, err := c.KafkaTLSConfig()
			if err != nil || tc == nil || tc.RootCAs == nil || tc.MinVersion != tls.VersionTLS12 {
				t.Errorf("TLS = %+v, %v; want TLS 1.2+ with the CA", tc, err)
			}
			m, err := c.KafkaSASL()
			if err != nil || m == nil || m.Name() != mech {
				t.Errorf("SASL = %v, %v; want %s", m, err, mech)
			}
		})
	}

	clearEnv(t)
	t.Setenv("COLLINE_NEO4J_URI", "neo4j+s://db.example:7687")
	t.Setenv("COLLINE_NEO4J_TLS_CA_FILE", caFile)
	c, err = Load[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if tc, err := c.Neo4jTLSConfig(); err != nil || tc == nil || tc.RootCAs == nil {
		t.Errorf("Neo4j TLS = %v, %v", tc, err)
	}
	t.Setenv("COLLINE_NEO4J_URI", "bolt://db.example:7687")
	if _, err := Load[Config](); err == nil || !strings.Contains(err.Error(), "COLLINE_NEO4J_TLS_CA_FILE: is set but COLLINE_NEO4J_URI does not use TLS") {
		t.Errorf("Load with a CA and bolt:// = %v", err)
	}
}

// TestPasswordFiles reads both passwords from files (one trailing newline dropped), and rejects
// a variable set both ways, a missing file and an empty one without showing any content.
func TestPasswordFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	kafkaFile, neo4jFile := write("kafka", "k4fka pw\n"), write("neo4j", "n3o\r\n")
	base := func() {
		clearEnv(t)
		t.Setenv("COLLINE_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
		t.Setenv("COLLINE_KAFKA_SASL_USERNAME", "colline")
		t.Setenv("COLLINE_NEO4J_USER", "neo4j")
	}
	base()
	t.Setenv("COLLINE_KAFKA_SASL_PASSWORD_FILE", kafkaFile)
	t.Setenv("COLLINE_NEO4J_PASSWORD_FILE", neo4jFile)
	c, err := Load[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if c.KafkaSASLPassword.Reveal() != "k4fka pw" || c.Neo4jPassword.Reveal() != "n3o" {
		t.Errorf("passwords = %q, %q", c.KafkaSASLPassword.Reveal(), c.Neo4jPassword.Reveal())
	}

	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"both": {map[string]string{"COLLINE_KAFKA_SASL_PASSWORD_FILE": kafkaFile, "COLLINE_KAFKA_SASL_PASSWORD": "inline-pw"},
			"COLLINE_KAFKA_SASL_PASSWORD and COLLINE_KAFKA_SASL_PASSWORD_FILE are both set"},
		"missing": {map[string]string{"COLLINE_KAFKA_SASL_PASSWORD_FILE": filepath.Join(dir, "nope")},
			"COLLINE_KAFKA_SASL_PASSWORD_FILE: open " + filepath.Join(dir, "nope")},
		"empty": {map[string]string{"COLLINE_KAFKA_SASL_PASSWORD": "x", "COLLINE_NEO4J_PASSWORD_FILE": write("empty", "\n")},
			"COLLINE_NEO4J_PASSWORD_FILE: " + filepath.Join(dir, "empty") + " is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			base()
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := Load[Config]()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "inline-pw") || strings.Contains(err.Error(), "k4fka") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
}

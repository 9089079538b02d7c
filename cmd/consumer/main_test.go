package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
	"go.uber.org/goleak"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/ingest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// build compiles the consumer once, with a stamped version.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "colline-consumer-test")
		if err != nil {
			buildErr = err
			return
		}
		root, err := stack.RepoRoot()
		if err == nil {
			binPath, err = stack.BuildConsumer(context.Background(), root, dir, "test-1.2.3")
		}
		buildErr = err
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

// command returns the consumer with no COLLINE_ variables but the given ones.
func command(t *testing.T, env ...string) *exec.Cmd {
	cmd := exec.Command(build(t))
	cmd.Env = append(stack.Environ(), env...)
	return cmd
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestBadConfigurationExitsNamingTheVariable(t *testing.T) {
	var stderr bytes.Buffer
	cmd := command(t, "COLLINE_BATCH_SIZE=0", "COLLINE_NEO4J_PASSWORD=s3cr3t")
	cmd.Stderr = &stderr
	if code := exitCode(cmd.Run()); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	for _, want := range []string{"COLLINE_BATCH_SIZE: 0 is outside 1..10000", "COLLINE_NEO4J_USER: is empty"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if strings.Contains(stderr.String(), "s3cr3t") {
		t.Error("stderr shows the password")
	}
}

func TestHelpListsVariables(t *testing.T) {
	cmd := command(t)
	cmd.Args = append(cmd.Args, "-h")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if code := exitCode(cmd.Run()); code != 2 || !strings.Contains(stderr.String(), "COLLINE_EXIT_WHEN_IDLE") {
		t.Errorf("-h: exit code %d, stderr:\n%s", code, stderr.String())
	}
}

// start runs the consumer with no COLLINE_ variables but env, its log in a temporary file, and
// waits until it serves HTTP. The log is shown when t fails.
func start(t *testing.T, env ...string) *stack.Consumer {
	t.Helper()
	p := stack.StartConsumer(t, build(t), filepath.Join(t.TempDir(), "consumer.log"), env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("consumer log:\n%s", p.Logs())
		}
	})
	return p
}

func get(t *testing.T, p *stack.Consumer, path string) (int, string) {
	t.Helper()
	code, body, err := p.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// TestNotReadyWhileServicesAreDown needs no services: with nothing listening, the consumer is
// alive, not ready, says which dependency fails (and why in its log only: the errors name internal
// addresses), and still stops cleanly on SIGTERM. Its OpenLineage endpoint, on without a key,
// makes it warn at start.
func TestNotReadyWhileServicesAreDown(t *testing.T) {
	const neo4jPw, kafkaPw = "n3o-s3cr3t", "k4fka-s3cr3t"
	p := start(t, "COLLINE_NEO4J_URI=bolt://127.0.0.1:1", "COLLINE_KAFKA_BROKERS=127.0.0.1:1",
		"COLLINE_NEO4J_USER=neo4j", "COLLINE_NEO4J_PASSWORD="+neo4jPw, "COLLINE_LOG_LEVEL=debug",
		"COLLINE_KAFKA_SASL_MECHANISM=SCRAM-SHA-512", "COLLINE_KAFKA_SASL_USERNAME=colline", "COLLINE_KAFKA_SASL_PASSWORD="+kafkaPw,
		"COLLINE_OPENLINEAGE_TOPIC=ol", "COLLINE_OPENLINEAGE_HTTP_ADDR=127.0.0.1:0")
	if code, _ := get(t, p, "/healthz"); code != 200 {
		t.Errorf("/healthz = %d, want 200", code)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := get(t, p, "/readyz")
		if code == 503 && (strings.Contains(body, "consumer: starting") || strings.Contains(body, "consumer: retrying setup")) && strings.Contains(body, "neo4j: not ready") && strings.Contains(body, "kafka: not ready") {
			if strings.Contains(body, "127.0.0.1") {
				t.Errorf("/readyz shows an address: %q", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q, want 503 naming the consumer, neo4j and kafka", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, body := get(t, p, "/metrics")
	for _, want := range []string{`colline_build_info{goversion="go`, `version="test-1.2.3"} 1`, `colline_ingest_retries_total{operation="setup"}`, "go_goroutines"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.Logs())
	}
	logs := p.Logs()
	for _, pw := range []string{neo4jPw, kafkaPw} {
		if strings.Contains(logs, pw) || strings.Contains(body, pw) {
			t.Errorf("a password shows in the debug log or /metrics:\n%s", logs)
		}
	}
	if !strings.Contains(logs, `"neo4j_password":"(set)"`) || !strings.Contains(logs, `"kafka_sasl_password":"(set)"`) {
		t.Errorf("the start-up log does not show the configuration without its secrets:\n%s", logs)
	}
	for _, want := range []string{`"msg":"not ready","check":"neo4j","err":`, `"the OpenLineage endpoint takes events from anyone`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
}

// event is a hand-built event (a unit-test input, not what Spark emits): INSERT INTO db.OUT SELECT
// upper(name) FROM db.SRC.
const event = `{"schemaVersion":"1.0","eventId":"EVENT_ID","emittedAt":"2026-11-30T10:15:02.123Z",
"app":{"id":"local-1","name":"nightly","namespace":"spark_catalog"},
"query":{"executionId":3,"funcName":"command","status":"success","endedAt":"2026-11-30T10:15:02.100Z"},
"root":0,"nodes":[
{"id":0,"class":"org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand","children":[1],
 "write":{"dataset":{"kind":"table","catalog":"spark_catalog","namespace":["db"],"name":"OUT"},"mode":"append","columns":["name"],"query":1}},
{"id":1,"class":"org.apache.spark.sql.catalyst.plans.logical.Project","children":[2],
 "output":[{"exprId":10,"name":"name","type":"string"}],
 "exprs":{"projectList":[{"class":"Alias","exprId":10,"name":"name","sql":"upper(name) AS name",
   "children":[{"class":"Upper","children":[{"class":"AttributeReference","exprId":1,"name":"name"}]}]}]}},
{"id":2,"class":"org.apache.spark.sql.execution.datasources.LogicalRelation",
 "output":[{"exprId":1,"name":"name","type":"string"}],
 "dataset":{"kind":"table","catalog":"spark_catalog","namespace":["db"],"name":"SRC"}}]}`

// TestConsumeAndExitWhenIdle runs the binary against dev/services: it consumes a fresh topic, sends
// the broken message to the dead-letter topic, and exits 0 once idle.
func TestConsumeAndExitWhenIdle(t *testing.T) {
	k, uri := stack.TestKafka(t), stack.TestNeo4jURI(t)
	addrs, brokers := k.Brokers, strings.Join(k.Brokers, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, _, group := k.TestTopics(t, "consumer", 1, 0)
	suffix := stack.NewID()
	value := strings.NewReplacer("EVENT_ID", "ev-"+suffix, "SRC", "src_"+suffix, "OUT", "out_"+suffix).Replace(event)
	w := ingest.NewProducer(addrs, topic, 0, nil) // a synchronous producer that retries until the new topic has a leader
	err := w.WriteMessages(ctx, kafka.Message{Value: []byte(value)}, kafka.Message{Value: []byte("{oops")})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	p := start(t, "COLLINE_KAFKA_BROKERS="+brokers, "COLLINE_NEO4J_URI="+uri,
		"COLLINE_KAFKA_TOPIC="+topic, "COLLINE_KAFKA_DLQ_TOPIC="+topic+".dlq", "COLLINE_KAFKA_GROUP="+group,
		"COLLINE_EXIT_WHEN_IDLE=2s", "COLLINE_LOG_LEVEL=debug")
	if code := p.Wait(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d, want 0\n%s", code, p.Logs())
	}
	logs := p.Logs()
	for _, want := range []string{`"msg":"message sent to the dead-letter topic"`, `"reason":"invalid_json"`, `"msg":"event written"`, `"app":"local-1"`, `"query":3`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}

	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (:Column {key: $s})-[f:FEEDS]->(:Column {key: $t}) RETURN f.job AS job`,
		map[string]any{"s": "spark_catalog/db.src_" + suffix + "#name", "t": "spark_catalog/db.out_" + suffix + "#name"}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("FEEDS edges src.name -> out.name: %d, want 1", len(res.Records))
	}
	if job, _ := res.Records[0].Get("job"); job != "spark_catalog/nightly" {
		t.Errorf("job = %v, want spark_catalog/nightly", job)
	}
}

// TestMemoryLimitFromTheCgroup runs the binary in a real memory cgroup of 256 MiB (what a
// container's resources.limits.memory creates; skipped where this process may not create one):
// the consumer sets the Go runtime's soft limit to COLLINE_MEMORY_LIMIT_RATIO of it, logs it and
// exports it; GOMEMLIMIT wins over it, and ratio 0 turns it off. No services are needed.
func TestMemoryLimitFromTheCgroup(t *testing.T) {
	const limit = 256 << 20
	g, err := stack.NewMemoryCgroup(limit)
	if err != nil {
		t.Skipf("no memory cgroup for the test: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("removing %s: %v", g.Dir, err)
		}
	})
	bin, err := g.Wrap(t.TempDir(), build(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		env    []string
		log    string
		metric string // go_gc_gomemlimit_bytes
	}{
		{"default ratio: 0.9", nil, `"memory_limit":{"source":"cgroup","bytes":241591910}`, "go_gc_gomemlimit_bytes 2.4159191e+08"},
		{"ratio 0.75", []string{"COLLINE_MEMORY_LIMIT_RATIO=0.75"}, `"memory_limit":{"source":"cgroup","bytes":201326592}`, "go_gc_gomemlimit_bytes 2.01326592e+08"},
		{"GOMEMLIMIT wins", []string{"GOMEMLIMIT=100MiB"}, `"memory_limit":{"source":"GOMEMLIMIT","bytes":104857600}`, "go_gc_gomemlimit_bytes 1.048576e+08"},
		{"off", []string{"COLLINE_MEMORY_LIMIT_RATIO=0"}, `"memory_limit":{"source":"off","bytes":0}`, "go_gc_gomemlimit_bytes 9.223372036854776e+18"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := stack.StartConsumer(t, bin, filepath.Join(t.TempDir(), "consumer.log"),
				append([]string{"COLLINE_NEO4J_URI=bolt://127.0.0.1:1", "COLLINE_KAFKA_BROKERS=127.0.0.1:1"}, c.env...)...)
			_, metrics := get(t, p, "/metrics")
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := p.Wait(t, 10*time.Second); code != 0 {
				t.Errorf("exit code after SIGTERM = %d, want 0", code)
			}
			if logs := p.Logs(); !strings.Contains(logs, c.log) {
				t.Errorf("the start-up log lacks %s:\n%s", c.log, logs)
			}
			if !strings.Contains(metrics, c.metric) {
				t.Errorf("/metrics lacks %q", c.metric)
			}
		})
	}
}

// TestOpenLineageOverTLS: with COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE and _KEY_FILE the endpoint
// serves HTTPS only (TLS 1.2 at least): an event posted over TLS is judged (an invalid one: 400
// with its reason, no Kafka needed), plain HTTP is refused, and so is TLS 1.1.
func TestOpenLineageOverTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	p := start(t, "COLLINE_NEO4J_URI=bolt://127.0.0.1:1", "COLLINE_KAFKA_BROKERS=127.0.0.1:1",
		"COLLINE_OPENLINEAGE_TOPIC=ol", "COLLINE_OPENLINEAGE_HTTP_ADDR=127.0.0.1:0",
		"COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE="+certFile, "COLLINE_OPENLINEAGE_HTTP_TLS_KEY_FILE="+keyFile)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, l := range strings.Split(p.Logs(), "\n") {
			var line struct{ Msg, Addr string }
			if json.Unmarshal([]byte(l), &line) == nil && line.Msg == "serving OpenLineage" {
				addr = line.Addr
			}
		}
	}
	if addr == "" {
		t.Fatalf("no \"serving OpenLineage\" line:\n%s", p.Logs())
	}
	post := func(c *http.Client, scheme string) (*http.Response, error) {
		return c.Post(scheme+"://"+addr+"/api/v1/lineage", "application/json", strings.NewReader(`{"eventTime":`))
	}
	tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	resp, err := post(tlsClient, "https")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"reason":"invalid_json"`) {
		t.Errorf("over TLS: %d %s, want 400 invalid_json", resp.StatusCode, body)
	}
	if resp, err := post(&http.Client{Timeout: 10 * time.Second}, "http"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "HTTPS") {
			t.Errorf("plain HTTP: %d %s, want Go's 400 naming HTTPS", resp.StatusCode, b)
		}
	}
	old := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS11}}}
	if resp, err := post(old, "https"); err == nil {
		resp.Body.Close()
		t.Error("TLS 1.1 was accepted")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

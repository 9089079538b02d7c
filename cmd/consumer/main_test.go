package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
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
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLLINE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
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

// process is a running consumer.
type process struct {
	cmd  *exec.Cmd
	addr string // HTTP address, from the "serving" log line
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{} // closed when the process has exited
	err  error         // its Wait error, set before done is closed
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// start runs cmd and waits until it serves HTTP.
func start(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.Write(append(sc.Bytes(), '\n'))
			p.mu.Unlock()
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addrc <- line.Addr
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.addr = <-addrc:
	case <-p.done:
		t.Fatalf("consumer exited (%v) before serving:\n%s", p.err, p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("no serving line in the log:\n%s", p.log())
	}
	return p
}

// exit waits for the process to end and returns its exit code.
func (p *process) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return exitCode(p.err)
	case <-time.After(within):
		t.Fatalf("consumer still running after %v:\n%s", within, p.log())
		return -1
	}
}

func (p *process) get(t *testing.T, path string) (int, string) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: tr}).Get("http://" + p.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestNotReadyWhileServicesAreDown needs no services: with nothing listening, the consumer is
// alive, not ready, says why, and still stops cleanly on SIGTERM.
func TestNotReadyWhileServicesAreDown(t *testing.T) {
	const neo4jPw, kafkaPw = "n3o-s3cr3t", "k4fka-s3cr3t"
	p := start(t, command(t, "COLLINE_HTTP_ADDR=127.0.0.1:0", "COLLINE_NEO4J_URI=bolt://127.0.0.1:1", "COLLINE_KAFKA_BROKERS=127.0.0.1:1",
		"COLLINE_NEO4J_USER=neo4j", "COLLINE_NEO4J_PASSWORD="+neo4jPw, "COLLINE_LOG_LEVEL=debug",
		"COLLINE_KAFKA_SASL_MECHANISM=SCRAM-SHA-512", "COLLINE_KAFKA_SASL_USERNAME=colline", "COLLINE_KAFKA_SASL_PASSWORD="+kafkaPw))
	if code, _ := p.get(t, "/healthz"); code != 200 {
		t.Errorf("/healthz = %d, want 200", code)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := p.get(t, "/readyz")
		if code == 503 && (strings.Contains(body, "consumer: starting") || strings.Contains(body, "consumer: retrying setup")) && strings.Contains(body, "neo4j:") && strings.Contains(body, "kafka:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q, want 503 naming the consumer, neo4j and kafka", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, body := p.get(t, "/metrics")
	for _, want := range []string{`colline_build_info{goversion="go`, `version="test-1.2.3"} 1`, `colline_ingest_retries_total{operation="setup"}`, "go_goroutines"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t, 10*time.Second); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
	logs := p.log()
	for _, pw := range []string{neo4jPw, kafkaPw} {
		if strings.Contains(logs, pw) || strings.Contains(body, pw) {
			t.Errorf("a password shows in the debug log or /metrics:\n%s", logs)
		}
	}
	if !strings.Contains(logs, `"neo4j_password":"(set)"`) || !strings.Contains(logs, `"kafka_sasl_password":"(set)"`) {
		t.Errorf("the start-up log does not show the configuration without its secrets:\n%s", logs)
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
	w := ingest.NewDeadLetterWriter(addrs, topic, 0, nil) // a synchronous producer that retries until the new topic has a leader
	err := w.WriteMessages(ctx, kafka.Message{Value: []byte(value)}, kafka.Message{Value: []byte("{oops")})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	p := start(t, command(t, "COLLINE_HTTP_ADDR=127.0.0.1:0", "COLLINE_KAFKA_BROKERS="+brokers, "COLLINE_NEO4J_URI="+uri,
		"COLLINE_KAFKA_TOPIC="+topic, "COLLINE_KAFKA_DLQ_TOPIC="+topic+".dlq", "COLLINE_KAFKA_GROUP="+group,
		"COLLINE_EXIT_WHEN_IDLE=2s", "COLLINE_LOG_LEVEL=debug"))
	if code := p.exit(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d, want 0\n%s", code, p.log())
	}
	logs := p.log()
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

//go:build e2e

// Package faults proves, against real Kafka and Neo4j, that the consumer loses no lineage and
// doubles none when it is killed, when Neo4j or the broker goes away, when poison messages or
// hostile plans arrive and when a consumer group rebalances. See docs/operations.md ("Fault tests").
//
// The tests never touch the shared services of dev/services: TestMain starts a private Kafka and
// Neo4j with dev/services on other ports and another state directory (COLLINE_FAULTS_DEV_DIR,
// default /tmp/colline-faults) and stops them at the end, because the tests stop, restart and wipe
// them. The stream is made of the events the real listener captured (plan/testdata/spark-3.5),
// re-keyed per copy; the expected graph is computed from exactly the bytes sent (process.Step,
// graph.Preview) and compared with what graph.Reader finds.
//
//	make faults                                   # all scenarios, 5,000 events in the kill -9 stream
//	COLLINE_FAULTS_EVENTS=1000 make faults        # smaller: every scenario scales with it
//	go test -tags e2e -v -run 'TestFaults/poison' ./e2e/faults/
package faults

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// env is the private stack every scenario uses.
var env struct {
	root      string // repository root
	devDir    string
	kafkaPort int
	boltPort  int
	brokers   string
	neo4jURI  string
	bin       string // the consumer binary
	kafka     *stack.Kafka
	events    int // events of the kill -9 stream; other scenarios scale with it
	seed      uint64
	rand      *mrand.Rand
	work      string // scratch directory: consumer logs, service logs
	corpus    []fixture
	summary   []string
	mu        sync.Mutex
}

func TestMain(m *testing.M) { stack.Main(m, "faults", setup) }

func setup(m *testing.M) (int, error) {
	var err error
	if env.root, err = stack.RepoRoot(); err != nil {
		return 1, err
	}
	env.devDir = stack.Getenv("COLLINE_FAULTS_DEV_DIR", "/tmp/colline-faults")
	env.kafkaPort = getenvInt("COLLINE_FAULTS_KAFKA_PORT", 29092)
	env.boltPort = getenvInt("COLLINE_FAULTS_NEO4J_BOLT_PORT", 27687)
	env.brokers = fmt.Sprintf("127.0.0.1:%d", env.kafkaPort)
	env.neo4jURI = fmt.Sprintf("bolt://127.0.0.1:%d", env.boltPort)
	env.events = getenvInt("COLLINE_FAULTS_EVENTS", 5000)
	env.seed = uint64(getenvInt("COLLINE_FAULTS_SEED", int(time.Now().UnixNano()%1e9)))
	env.rand = mrand.New(mrand.NewPCG(env.seed, 42))
	if env.work, err = os.MkdirTemp("", "colline-faults-"); err != nil {
		return 1, err
	}
	fmt.Printf("faults: private Kafka %s and Neo4j %s (state %s), %d events, seed %d (COLLINE_FAULTS_SEED), logs in %s\n",
		env.brokers, env.neo4jURI, env.devDir, env.events, env.seed, env.work)

	// Reuse the jars of the main dev directory instead of fetching them again.
	if err := os.MkdirAll(env.devDir, 0o755); err != nil {
		return 1, err
	}
	mainJars := filepath.Join(env.root, ".cache", "jars")
	if _, err := os.Lstat(filepath.Join(env.devDir, "jars")); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(mainJars); err == nil {
			if err := os.Symlink(mainJars, filepath.Join(env.devDir, "jars")); err != nil {
				return 1, err
			}
		}
	}
	running := services("status") == nil
	start := time.Now()
	if err := services("start"); err != nil {
		return 1, fmt.Errorf("starting the private services: %w (see %s)", err, filepath.Join(env.work, "services.log"))
	}
	fmt.Printf("faults: private services up in %.1fs\n", time.Since(start).Seconds())
	if !running && os.Getenv("COLLINE_FAULTS_KEEP_SERVICES") == "" {
		defer func() {
			if err := services("stop"); err != nil {
				fmt.Fprintln(os.Stderr, "faults: stopping the private services:", err)
			}
		}()
	}

	if env.bin, err = stack.BuildConsumer(context.Background(), env.root, env.work, "faults"); err != nil {
		return 1, err
	}
	env.kafka = stack.NewKafka(env.brokers)
	defer env.kafka.Close()
	if env.corpus, err = loadCorpus(filepath.Join(env.root, "plan", "testdata", "spark-3.5")); err != nil {
		return 1, err
	}

	code := m.Run()
	fmt.Println("\n=== fault test summary ===")
	for _, s := range env.summary {
		fmt.Println(s)
	}
	return code, nil
}

// services runs dev/services against the private stack.
func services(args ...string) error {
	return stack.Services(env.root, "services", filepath.Join(env.work, "services.log"), []string{
		"COLLINE_DEV_DIR=" + env.devDir,
		"COLLINE_KAFKA_PORT=" + strconv.Itoa(env.kafkaPort),
		"COLLINE_KAFKA_CONTROLLER_PORT=" + strconv.Itoa(getenvInt("COLLINE_FAULTS_KAFKA_CONTROLLER_PORT", env.kafkaPort+1)),
		"COLLINE_NEO4J_BOLT_PORT=" + strconv.Itoa(env.boltPort),
		"COLLINE_NEO4J_HTTP_PORT=" + strconv.Itoa(getenvInt("COLLINE_FAULTS_NEO4J_HTTP_PORT", 27474)),
	}, args...)
}

// summarize logs a result line and keeps it for the summary printed at the end.
func summarize(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("%s: %s", t.Name(), fmt.Sprintf(format, args...))
	t.Log(line)
	env.mu.Lock()
	env.summary = append(env.summary, line)
	env.mu.Unlock()
}

// --- the stream ---------------------------------------------------------------------------

// fixture is one captured scenario: the events of one Spark application, in capture order.
type fixture struct {
	name   string
	events [][]byte
}

// loadCorpus reads every captured event whose lineage the consumer writes (some fixtures are
// DDL-only or read-only and have nothing to write; they still count as valid events).
func loadCorpus(dir string) ([]fixture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	byDir := map[string]*fixture{}
	var out []*fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if _, err := (process.Step{}).Item(b); err != nil {
			continue // a fixture the consumer dead-letters is not part of the valid stream
		}
		name := filepath.Base(filepath.Dir(f))
		fx := byDir[name]
		if fx == nil {
			fx = &fixture{name: name}
			byDir[name] = fx
			out = append(out, fx)
		}
		fx.events = append(fx.events, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no usable captured events under %s", dir)
	}
	res := make([]fixture, len(out))
	for i, f := range out {
		res[i] = *f
	}
	return res, nil
}

// message is one message to send, with the item the consumer should make of it (nil for poison).
type message struct {
	key, value []byte
	item       *record.Item
	reason     string // the expected dead-letter reason of a poison message
}

// stream returns n valid events: copies of the captured fixtures, round robin, each copy with
// its own app (id, name: so its own job), its own dataset names and fresh event ids.
func stream(t *testing.T, tag string, n int) ([]message, int) {
	t.Helper()
	var out []message
	copies := 0
	for k := 0; len(out) < n; k++ {
		fx := env.corpus[k%len(env.corpus)]
		copies++
		prefix := fmt.Sprintf("%s%05d_", tag, k)
		appID := fmt.Sprintf("app-%s-%05d", tag, k)
		appName := fmt.Sprintf("faults-%s-%05d-%s", tag, k, fx.name)
		for _, raw := range fx.events {
			if len(out) == n {
				break
			}
			b, err := rekey(raw, prefix, appID, appName, newID())
			if err != nil {
				t.Fatalf("re-keying %s: %v", fx.name, err)
			}
			it, err := process.Step{}.Item(b)
			if err != nil {
				t.Fatalf("re-keyed event of %s no longer valid: %v", fx.name, err)
			}
			out = append(out, message{key: []byte(appID), value: b, item: &it})
		}
	}
	return out, copies
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// rekey rewrites one captured event: a new event id, app id and app name, and every dataset
// identity prefixed, so that each copy adds its own datasets, columns, job and runs to the graph.
func rekey(raw []byte, prefix, appID, appName, eventID string) ([]byte, error) {
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return nil, err
	}
	ev["eventId"] = eventID
	if app, ok := ev["app"].(map[string]any); ok {
		app["id"], app["name"] = appID, appName
	}
	// A streaming query's run is the copy's own: its id and run id are derived from the app id,
	// so that the stream's event (whose event id is its run id) and its micro-batches' writes
	// (which name the run as their parent) agree within a copy and differ between copies.
	if q, ok := ev["query"].(map[string]any); ok {
		if st, ok := q["stream"].(map[string]any); ok {
			for _, k := range []string{"id", "runId"} {
				if s, ok := st[k].(string); ok && s != "" {
					st[k] = derivedID(appID, s)
				}
			}
			if q["funcName"] == "stream" && st["runId"] != nil {
				ev["eventId"] = st["runId"]
			}
		}
	}
	nodes, _ := ev["nodes"].([]any)
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		renameDataset(node["dataset"], prefix)
		if w, ok := node["write"].(map[string]any); ok {
			renameDataset(w["dataset"], prefix)
		}
		if d, ok := node["ddl"].(map[string]any); ok {
			for _, k := range []string{"dataset", "to", "source"} {
				renameDataset(d[k], prefix)
			}
		}
	}
	return json.Marshal(ev)
}

// derivedID is a UUID-shaped id that is the same for the same app id and id.
func derivedID(appID, id string) string {
	sum := sha256.Sum256([]byte(appID + "\x00" + id))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func renameDataset(v any, prefix string) {
	d, ok := v.(map[string]any)
	if !ok {
		return
	}
	str := func(k string) string { s, _ := d[k].(string); return s }
	switch str("kind") {
	case "table", "view":
		if ns, ok := d["namespace"].([]any); ok && len(ns) > 0 {
			s, _ := ns[0].(string)
			ns[0] = prefix + s
		} else {
			d["name"] = prefix + str("name")
		}
	case "path":
		paths, _ := d["paths"].([]any)
		for i, p := range paths {
			s, _ := p.(string)
			dir, base := s[:strings.LastIndex(s, "/")+1], s[strings.LastIndex(s, "/")+1:]
			paths[i] = dir + prefix + base
		}
	case "jdbc":
		if s := str("table"); s != "" {
			d["table"] = prefix + s
		}
		if s := str("query"); s != "" {
			d["query"] = "/* " + prefix + " */ " + s
		}
	case "kafka":
		topics, _ := d["topics"].([]any)
		for i, p := range topics {
			s, _ := p.(string)
			topics[i] = prefix + s
		}
		if s := str("pattern"); s != "" {
			d["pattern"] = prefix + s
		}
	case "other":
		if s := str("description"); s != "" {
			d["description"] = prefix + s
		}
	}
}

// expected is the graph the valid messages must leave in an empty Neo4j.
func expected(t *testing.T, msgs []message) (graph.Counts, []graph.EdgeRow) {
	t.Helper()
	var items []record.Item
	for _, m := range msgs {
		if m.item != nil {
			items = append(items, *m.item)
		}
	}
	c, e, err := graph.Preview(items)
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

// --- Kafka ------------------------------------------------------------------------------------

// topics creates a fresh topic with partitions and its dead-letter topic, and returns their names
// and a fresh group name.
func topics(t *testing.T, name string, partitions int, maxMessageBytes int) (string, string, string) {
	t.Helper()
	return env.kafka.TestTopics(t, "faults-"+name, partitions, maxMessageBytes)
}

// produce sends msgs in order, retrying each chunk until the broker takes it. Messages of one key
// land in one partition, in order.
func produce(ctx context.Context, topic string, msgs []message, compression compress.Compression) error {
	w := &kafka.Writer{
		Addr: kafka.TCP(env.brokers), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchSize: 100, BatchBytes: 48 << 20, BatchTimeout: 10 * time.Millisecond, Compression: compression,
		Transport: &kafka.Transport{},
	}
	defer w.Close()
	for chunk := range slices.Chunk(msgs, 200) {
		km := make([]kafka.Message, len(chunk))
		for i, m := range chunk {
			km[i] = kafka.Message{Key: m.key, Value: m.value}
		}
		for attempt := 0; ; attempt++ {
			err := w.WriteMessages(ctx, km...)
			if err == nil {
				break
			}
			if ctx.Err() != nil || attempt == 60 {
				return fmt.Errorf("produce to %s: %w", topic, err)
			}
			time.Sleep(time.Second)
		}
	}
	return nil
}

// lag returns the records of topic that group has not committed, in total.
func lag(ctx context.Context, topic, group string) (int64, error) {
	l, err := ingest.Backlog{Brokers: []string{env.brokers}, Topics: []string{topic}, Group: group}.Lag(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, v := range l {
		n += v
	}
	return n, nil
}

// committed returns how many records of topic group has committed: the sum of its committed
// offsets (topics here are never truncated, so offsets count records). -1 when unknown.
func committed(ctx context.Context, topic, group string) int64 {
	c := env.kafka.Client
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(meta.Topics) != 1 {
		return -1
	}
	var parts []int
	for _, p := range meta.Topics[0].Partitions {
		parts = append(parts, p.ID)
	}
	res, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err != nil || res.Error != nil {
		return -1
	}
	var n int64
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return -1
		}
		n += max(p.CommittedOffset, 0)
	}
	return n
}

// waitCommitted waits until group has committed at least want records of topic.
func waitCommitted(t *testing.T, topic, group string, want int64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		n := committed(ctx, topic, group)
		cancel()
		if n >= want {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("after %v the group %s committed %d records of %s, want %d", within, group, n, topic, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// deadLetters reads the whole dead-letter topic and counts messages by colline.reason; it also
// returns the messages.
func deadLetters(t *testing.T, dlq string) (map[string]int, []kafka.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, ends, err := env.kafka.Offsets(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	end := ends[0]
	counts := map[string]int{}
	var msgs []kafka.Message
	if end <= 0 {
		return counts, nil
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{env.brokers}, Topic: dlq, Partition: 0, MaxBytes: 64 << 20, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	for int64(len(msgs)) < end {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read dead letters (%d of %d): %v", len(msgs), end, err)
		}
		counts[header(m, ingest.HeaderReason)]++
		msgs = append(msgs, m)
	}
	return counts, msgs
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// --- the consumer process ---------------------------------------------------------------------

// consumer is a consumer process of a scenario, with its peak memory.
type consumer struct {
	*stack.Consumer
	name string
	peak int64 // VmHWM in KiB, read just before the process is stopped or killed
}

// start runs the consumer binary with the private stack and extra variables, and waits for its
// HTTP server.
func start(t *testing.T, name, topic, dlq, group string, extra ...string) *consumer {
	t.Helper()
	logf := filepath.Join(env.work, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name+".log")
	vars := append([]string{
		"COLLINE_KAFKA_BROKERS=" + env.brokers, "COLLINE_NEO4J_URI=" + env.neo4jURI,
		"COLLINE_KAFKA_TOPIC=" + topic, "COLLINE_KAFKA_DLQ_TOPIC=" + dlq, "COLLINE_KAFKA_GROUP=" + group,
		"COLLINE_METRICS_INTERVAL=2s", "COLLINE_SHUTDOWN_TIMEOUT=20s",
		// a killed consumer's partitions stall this long before the group moves on (default 30s)
		"COLLINE_KAFKA_SESSION_TIMEOUT=10s"}, extra...)
	return &consumer{Consumer: stack.StartConsumer(t, env.bin, logf, vars...), name: name}
}

// memory reads the peak resident set size (VmHWM) of the process.
func (c *consumer) memory() {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Pid()))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			c.peak = max(c.peak, kb)
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *consumer) kill() {
	c.memory()
	c.Kill()
}

// stop sends SIGTERM and returns the exit code.
func (c *consumer) stop(t *testing.T, within time.Duration) int {
	t.Helper()
	c.memory()
	c.Signal(syscall.SIGTERM)
	return c.Wait(t, within)
}

// metric returns the sum of the samples of a metric whose line starts with prefix.
func (c *consumer) metric(t *testing.T, prefix string) float64 {
	t.Helper()
	_, body, err := c.Get("/metrics")
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	var sum float64
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// --- Neo4j ----------------------------------------------------------------------------------

func driver(t *testing.T) neo4j.DriverWithContext {
	t.Helper()
	d, err := graph.NewDriver(env.neo4jURI, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// wipe empties the private Neo4j (never the shared one: the URI is the private stack's).
func wipe(t *testing.T, d neo4j.DriverWithContext) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := stack.WipeGraph(ctx, d); err != nil {
		t.Fatalf("wipe the private Neo4j: %v", err)
	}
}

// noDeadLettersAndCompare checks that a clean scenario dead-lettered nothing and that the graph
// equals the expected one; it returns the dead-letter count and compare's account.
func noDeadLettersAndCompare(t *testing.T, dlq string, d neo4j.DriverWithContext, want graph.Counts, wantEdges []graph.EdgeRow) (int, string) {
	t.Helper()
	reasons, _ := deadLetters(t, dlq)
	if len(reasons) != 0 {
		t.Errorf("dead letters %v, want none", reasons)
	}
	return sum(reasons), compare(t, d, want, wantEdges)
}

// compare checks the graph against the expected counts and edges and returns a one-line account.
func compare(t *testing.T, d neo4j.DriverWithContext, want graph.Counts, wantEdges []graph.EdgeRow) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	diff, err := graph.NewReader(d, "").Diff(ctx, want, wantEdges)
	if err != nil {
		t.Fatal(err)
	}
	if !diff.Equal() {
		t.Errorf("the graph differs from the events sent: %s", diff)
	}
	return diff.String()
}

// --- helpers ----------------------------------------------------------------------------------

func getenvInt(k string, def int) int {
	if v := os.Getenv(k); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			return n
		}
		fmt.Fprintf(os.Stderr, "faults: %s=%q is not a number; using %d\n", k, v, def)
	}
	return def
}

// scaled is n scaled from the default 5,000-event stream to env.events, at least lo.
func scaled(n, lo int) int {
	return max(lo, int(math.Round(float64(n)*float64(env.events)/5000)))
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

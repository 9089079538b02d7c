package emit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/openlineage/intake"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// noGraph stands for Neo4j: this test is about what happens after the write.
type noGraph struct{ n atomic.Int64 }

func (g *noGraph) Write(_ context.Context, items []record.Item) error {
	g.n.Add(int64(len(items)))
	return nil
}

// received is what the endpoint took, by run id.
type received struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *received) WriteMessages(_ context.Context, msgs ...kafka.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		e, err := openlineage.Decode(m.Value)
		if err != nil {
			return err
		}
		r.runs[e.Run.RunID]++
	}
	return nil
}

// capturedEvents returns listener events the golden scenarios captured (Spark 3.5), the run id
// colline emits for each with lineage.
func capturedEvents(t *testing.T) (values [][]byte, runIDs []string) {
	t.Helper()
	files, _ := filepath.Glob("../../plan/testdata/spark-3.5/*/*.json")
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			continue
		}
		if _, err := plan.Extract(env); err != nil {
			continue
		}
		values = append(values, data)
		runIDs = append(runIDs, openlineage.RunID(env.EventID))
		if len(values) == 40 {
			break
		}
	}
	return values, runIDs
}

// TestHTTPSinkSurvivesAnOutage runs the real consumer loop on a real topic of 40 captured
// listener events, emitting to an HTTP endpoint (colline's own intake Handler, which validates
// each event against the spec as a Marquez-compatible receiver) that is down for a while: first
// it drops connections, then it answers 503. The loop retries the emit in place, commits nothing
// meanwhile, and once the endpoint is back every event arrives: none lost, every one valid.
func TestHTTPSinkSurvivesAnOutage(t *testing.T) {
	k := stack.TestKafka(t)
	topic, dlq, group := k.TestTopics(t, "emit", 2, 0)
	values, runIDs := capturedEvents(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := ingest.NewProducer(k.Brokers, topic, 0, nil)
	for i, v := range values {
		if err := w.WriteMessages(ctx, kafka.Message{Key: []byte{byte(i % 3)}, Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	got := &received{runs: map[string]int{}}
	endpoint := &intake.Handler{Step: intake.Step{Validator: v}, Publisher: got}
	var down atomic.Int32 // 2: drop connections, 1: 503, 0: up
	down.Store(2)
	var refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch down.Load() {
		case 2:
			refused.Add(1)
			conn, _, _ := rw.(http.Hijacker).Hijack()
			conn.Close()
		case 1:
			refused.Add(1)
			rw.WriteHeader(http.StatusServiceUnavailable)
		default:
			endpoint.ServeHTTP(rw, r)
		}
	}))
	defer srv.Close()
	go func() {
		time.Sleep(2 * time.Second)
		down.Store(1)
		time.Sleep(2 * time.Second)
		down.Store(0)
	}()

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	em := NewMetrics(reg)
	reader := ingest.NewReader(ingest.ReaderOptions{Brokers: k.Brokers, Topics: []string{topic}, Group: group}, nil)
	defer reader.Close()
	dl := ingest.NewProducer(k.Brokers, dlq, 0, nil)
	defer dl.Close()
	g := &noGraph{}
	loop, err := ingest.New(ingest.Params{
		Fetcher: reader, Committer: reader, Writer: g, DeadLetters: dl, Metrics: m,
		Emitter:      &Emitter{Sink: &HTTP{URL: srv.URL + intake.Path, Timeout: 2 * time.Second}, Metrics: em},
		Backoff:      ingest.Backoff{Min: 100 * time.Millisecond, Max: time.Second},
		ExitWhenIdle: 2 * time.Second, Backlog: ingest.Backlog{Brokers: k.Brokers, Topics: []string{topic}, Group: group},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := loop.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var lost []string
	dup := 0
	for _, id := range runIDs {
		switch n := got.runs[id]; {
		case n == 0:
			lost = append(lost, id)
		case n > 1:
			dup += n - 1
		}
	}
	retries := testutil.ToFloat64(mustCounter(t, reg, "colline_ingest_retries_total", "operation", "emit"))
	ok := testutil.ToFloat64(em.emitted.WithLabelValues(ResultOK))
	t.Logf("%d events, endpoint refused %d requests while down; %d emit retries; %d received (%d again after a retry), %d lost, in %v",
		len(runIDs), refused.Load(), int(retries), len(got.runs), dup, len(lost), time.Since(start).Round(time.Millisecond))
	if len(lost) > 0 || len(got.runs) != len(runIDs) {
		t.Errorf("lost %d events: %v", len(lost), lost)
	}
	if retries == 0 || refused.Load() == 0 {
		t.Errorf("no retries (%v) or no refused request (%d): the outage was not seen", retries, refused.Load())
	}
	if int(ok) != len(runIDs) || g.n.Load() < int64(len(runIDs)) {
		t.Errorf("emitted ok %v, written %d, want %d", ok, g.n.Load(), len(runIDs))
	}
	if targets, err := (ingest.Backlog{Brokers: k.Brokers, Topics: []string{topic}, Group: group}).Targets(ctx); err != nil || len(targets) != 0 {
		t.Errorf("not all committed: %v %v", targets, err)
	}
}

func mustCounter(t *testing.T, reg *prometheus.Registry, name, label, value string) prometheus.Collector {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"}, func() float64 { return m.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return nil
}

// What the HTTP sink does with each answer: 2xx sent, 4xx refused for good (not retried), 408,
// 429 and 5xx an error to retry; the API key goes as a bearer token.
func TestHTTPAnswers(t *testing.T) {
	for _, tc := range []struct {
		code     int
		rejected bool
		retry    bool
	}{{201, false, false}, {200, false, false}, {400, true, false}, {401, true, false}, {413, true, false}, {408, false, true}, {429, false, true}, {500, false, true}, {503, false, true}} {
		var auth string
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			auth = r.Header.Get("Authorization")
			rw.WriteHeader(tc.code)
		}))
		rej, err := (&HTTP{URL: srv.URL, APIKey: "s3cret"}).Send(context.Background(), []Event{{Value: []byte(`{}`)}})
		srv.Close()
		if (err != nil) != tc.retry || (!tc.retry && (rej[0] != nil) != tc.rejected) || auth != "Bearer s3cret" {
			t.Errorf("%d: rejected %v, err %v, auth %q; want rejected %v, retry %v", tc.code, rej, err, auth, tc.rejected, tc.retry)
		}
	}
}

// The Kafka sink writes each event to the topic, keyed by its job, where a consumer reads valid
// OpenLineage events.
func TestKafkaSink(t *testing.T) {
	k := stack.TestKafka(t)
	topic, _, _ := k.TestTopics(t, "emit-kafka", 1, 0)
	values, runIDs := capturedEvents(t)
	var items []record.Item
	for _, v := range values[:5] {
		it, err := process.Step{}.Item(v)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	p := ingest.NewProducer(k.Brokers, topic, 0, nil)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := (&Emitter{Sink: &Kafka{Publisher: p}}).Emit(ctx, items); err != nil {
		t.Fatal(err)
	}
	v, _ := openlineage.NewValidator()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: k.Brokers, Topic: topic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	for i := range 5 {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := v.Decode(m.Value)
		if err != nil || e.Run.RunID != runIDs[i] || string(m.Key) != openlineage.MessageKey(e) {
			t.Errorf("message %d: %v, run %v, key %q", i, err, e, m.Key)
		}
	}
}

package retention

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake records the calls and answers from a budget of elements per kind. Each LINEAGE holds two
// current FEEDS and one DECIDES_ROWS.
type fake struct {
	mu    sync.Mutex
	left  map[string]int64 // elements older than any cut-off, per kind
	calls []string
	fail  int // fail this many calls first
}

func (f *fake) PruneLineages(_ context.Context, before time.Time, limit int, del bool) (int64, int64, int64, error) {
	n, err := f.take("LINEAGE", before, limit, del)
	return n, 2 * n, n, err
}

func (f *fake) take(kind string, before time.Time, limit int, del bool) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %d %v", kind, before.Format("2006-01-02"), limit, del))
	if f.fail > 0 {
		f.fail--
		return 0, errors.New("Neo.TransientError.Transaction.DeadlockDetected")
	}
	n := min(f.left[kind], int64(limit))
	f.left[kind] -= n
	return n, nil
}

func (f *fake) PruneRuns(_ context.Context, before time.Time, limit int) (int64, error) {
	return f.take("Run", before, limit, true)
}

func (f *fake) PruneEdges(_ context.Context, relType string, before time.Time, limit int, del bool) (int64, error) {
	return f.take(relType, before, limit, del)
}

var now = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func TestOnceBatches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy Policy
		left   map[string]int64
		want   Result
		calls  []string
		pruned map[string]float64
	}{
		{"off", Policy{}, map[string]int64{"Run": 5}, Result{}, nil, nil},
		{"runs only, in batches", Policy{RunDays: 30, BatchSize: 2}, map[string]int64{"Run": 5, "FEEDS": 9},
			Result{Runs: 5, Batches: 3, Largest: 2},
			[]string{"Run 2026-11-02 2 true", "Run 2026-11-02 2 true", "Run 2026-11-02 2 true"},
			map[string]float64{"Run/deleted": 5}},
		{"exactly a batch needs one more call", Policy{RunDays: 1, BatchSize: 2}, map[string]int64{"Run": 2},
			Result{Runs: 2, Batches: 2, Largest: 2},
			[]string{"Run 2026-12-01 2 true", "Run 2026-12-01 2 true"}, map[string]float64{"Run/deleted": 2}},
		{"edges marked stale", Policy{EdgeDays: 7, BatchSize: 10}, map[string]int64{"Run": 5, "FEEDS": 12, "DECIDES_ROWS": 3},
			Result{Feeds: 12, DecidesRows: 3, Batches: 4, Largest: 10},
			[]string{"LINEAGE 2026-11-25 10 false", "FEEDS 2026-11-25 10 false", "FEEDS 2026-11-25 10 false", "DECIDES_ROWS 2026-11-25 10 false"},
			map[string]float64{"FEEDS/marked_stale": 12, "DECIDES_ROWS/marked_stale": 3}},
		{"current edges marked stale by their LINEAGE, superseded ones by their own lastSeen", Policy{EdgeDays: 7, BatchSize: 2},
			map[string]int64{"LINEAGE": 3, "FEEDS": 1},
			Result{Feeds: 2*3 + 1, DecidesRows: 3, Batches: 4, Largest: 2},
			[]string{"LINEAGE 2026-11-25 2 false", "LINEAGE 2026-11-25 2 false", "FEEDS 2026-11-25 2 false", "DECIDES_ROWS 2026-11-25 2 false"},
			map[string]float64{"FEEDS/marked_stale": 7, "DECIDES_ROWS/marked_stale": 3}},
		{"edges deleted", Policy{RunDays: 90, EdgeDays: 30, EdgeAction: ActionDelete, BatchSize: 1000}, map[string]int64{"Run": 1, "FEEDS": 1, "LINEAGE": 1},
			Result{Runs: 1, Feeds: 1, Batches: 4, Largest: 1},
			[]string{"Run 2026-09-03 1000 true", "LINEAGE 2026-11-02 1000 true", "FEEDS 2026-11-02 1000 true", "DECIDES_ROWS 2026-11-02 1000 true"},
			map[string]float64{"Run/deleted": 1, "FEEDS/deleted": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{left: tc.left}
			m := NewMetrics(nil)
			p := &Pruner{Graph: f, Policy: tc.policy, Metrics: m, Now: func() time.Time { return now }}
			got, err := p.Once(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("result %+v, want %+v", got, tc.want)
			}
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("calls:\n got %q\nwant %q", f.calls, tc.calls)
			}
			for k, want := range tc.pruned {
				el, action, _ := strings.Cut(k, "/")
				if got := testutil.ToFloat64(m.pruned.WithLabelValues(el, action)); got != want {
					t.Errorf("pruned_total{%s} = %v, want %v", k, got, want)
				}
			}
			if got := testutil.ToFloat64(m.passes.WithLabelValues("ok")); got != 1 {
				t.Errorf("passes_total{ok} = %v, want 1", got)
			}
		})
	}
}

func TestOnceRetriesThenGivesUp(t *testing.T) {
	f := &fake{left: map[string]int64{"Run": 3}, fail: 2}
	m := NewMetrics(nil)
	p := &Pruner{Graph: f, Policy: Policy{RunDays: 1, BatchSize: 10}, Metrics: m, Now: func() time.Time { return now }}
	got, err := p.Once(context.Background())
	if err != nil || got.Runs != 3 {
		t.Fatalf("Once after 2 failures = %+v, %v; want 3 runs, nil", got, err)
	}
	if r := testutil.ToFloat64(m.retries); r != 2 {
		t.Errorf("retries_total = %v, want 2", r)
	}
	f = &fake{left: map[string]int64{"Run": 3}, fail: attempts}
	p = &Pruner{Graph: f, Policy: Policy{RunDays: 1, BatchSize: 10}, Metrics: m, Now: func() time.Time { return now }}
	if _, err := p.Once(context.Background()); err == nil || !strings.Contains(err.Error(), "retention of Run after 5 attempts") {
		t.Errorf("Once with every attempt failing = %v, want the attempts named", err)
	}
	if e := testutil.ToFloat64(m.passes.WithLabelValues("error")); e != 1 {
		t.Errorf("passes_total{error} = %v, want 1", e)
	}
}

func TestRunWaitsUntilReady(t *testing.T) {
	f := &fake{left: map[string]int64{"Run": 1}}
	var ready sync.Mutex
	notReady := errors.New("starting")
	state := notReady
	p := &Pruner{Graph: f, Policy: Policy{RunDays: 1, Interval: time.Hour}, Now: func() time.Time { return now },
		Ready: func() error { ready.Lock(); defer ready.Unlock(); return state }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	time.Sleep(1500 * time.Millisecond)
	f.mu.Lock()
	before := len(f.calls)
	f.mu.Unlock()
	ready.Lock()
	state = nil
	ready.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		n := len(f.calls)
		f.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if before != 0 {
		t.Errorf("%d prune calls while not ready", before)
	}
	if len(f.calls) == 0 {
		t.Error("no prune once ready")
	}
}

func TestMetricsAreLinted(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	NewMetrics(reg)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// --- against a real Neo4j -------------------------------------------------------------------------

// The prune acts on the whole graph, which other tests share: this test's events are dated 1971,
// its clock is set in 1971, and it first checks that nothing else in the database is that old.

func testDriver(t *testing.T) neo4j.DriverWithContext {
	t.Helper()
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if uri == "" {
		t.Skip("COLLINE_TEST_NEO4J_URI is not set; run `dev/services start neo4j` and set it to bolt://127.0.0.1:17687")
	}
	d, err := graph.NewDriver(uri, os.Getenv("COLLINE_TEST_NEO4J_USER"), os.Getenv("COLLINE_TEST_NEO4J_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := graph.NewWriter(d, "").Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// item is a hand-built event (a unit-test input): job <prefix>ns/<job> reads src and writes dst,
// column to column, with a row-level filter; run id is its event id.
func item(prefix, job, id string, src, dst string, at time.Time) record.Item {
	ds := func(name string) plan.Dataset {
		d := plan.Dataset{Key: prefix + name, Namespace: prefix + "ns", Name: name, Kind: "table"}
		for _, c := range []string{"id", "amount"} {
			d.Columns = append(d.Columns, plan.Column{Key: d.Key + "#" + c, Name: c, Type: "string"})
		}
		return d
	}
	a, b := ds(src), ds(dst)
	tf := func(typ, sub string) []plan.Transformation { return []plan.Transformation{{Type: typ, Subtype: sub}} }
	return record.Item{
		Event: &events.Envelope{SchemaVersion: "1.0", EventID: prefix + id, EmittedAt: at.Add(time.Second).Format(time.RFC3339Nano),
			Producer: events.Producer{Spark: "3.5.9"}, App: events.App{ID: "local-1", Name: job, Namespace: prefix + "ns"},
			Query: events.Query{ExecutionID: 1, FuncName: "command", Status: "success", EndedAt: at.Format(time.RFC3339Nano)}},
		Lineage: &plan.Lineage{
			Reads: []plan.Dataset{a}, Writes: []plan.Write{{Dataset: b, Mode: "append"}},
			Edges: []plan.Edge{
				{Source: a.Columns[0].Key, Target: b.Columns[0].Key, Transformations: tf(plan.Direct, plan.Identity)},
				{Source: a.Columns[1].Key, Target: b.Columns[1].Key, Transformations: tf(plan.Direct, plan.TransformationSub)},
			},
			RowDeps: []plan.Edge{{Source: a.Columns[1].Key, Target: b.Key, Transformations: tf(plan.Indirect, plan.FilterSub)}},
		},
	}
}

func count(t *testing.T, d neo4j.DriverWithContext, q string, params map[string]any) int64 {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), d, q, params, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.Records[0].Get("n")
	return n.(int64)
}

// recorder wraps the real writer and notes when each prune transaction ended and its size.
type recorder struct {
	*graph.Writer
	mu      sync.Mutex
	batches []time.Time
	largest int64
	after   func() // called after each prune transaction, if set
}

func (r *recorder) note(n int64, err error) (int64, error) {
	r.mu.Lock()
	if err == nil {
		r.batches = append(r.batches, time.Now())
		r.largest = max(r.largest, n)
	}
	r.mu.Unlock()
	if r.after != nil {
		r.after()
	}
	return n, err
}

func (r *recorder) PruneRuns(ctx context.Context, before time.Time, limit int) (int64, error) {
	return r.note(r.Writer.PruneRuns(ctx, before, limit))
}

func (r *recorder) PruneEdges(ctx context.Context, relType string, before time.Time, limit int, del bool) (int64, error) {
	return r.note(r.Writer.PruneEdges(ctx, relType, before, limit, del))
}

func (r *recorder) PruneLineages(ctx context.Context, before time.Time, limit int, del bool) (int64, int64, int64, error) {
	n, feeds, decides, err := r.Writer.PruneLineages(ctx, before, limit, del)
	r.note(n, err)
	return n, feeds, decides, err
}

// TestPruneWhileIngesting: 600 old runs of 30 jobs and their edges are pruned in batches of 25
// while a writer keeps writing new runs of the same jobs (the same datasets and columns, so the
// two contend for the same nodes); every write succeeds, writes complete between prune batches,
// exactly the old runs go, and the edges the new runs confirm are not marked.
func TestPruneWhileIngesting(t *testing.T) {
	d := testDriver(t)
	p := "test-" + stack.NewID() + "/"
	t.Cleanup(func() {
		if err := stack.WipeKeys(context.Background(), d, p); err != nil {
			t.Error(err)
		}
	})
	old := time.Date(1971, 1, 10, 0, 0, 0, 0, time.UTC)
	clock := time.Date(1971, 3, 1, 0, 0, 0, 0, time.UTC) // RunDays and EdgeDays 30: cut-off 1971-01-30
	fresh := time.Date(1971, 2, 20, 0, 0, 0, 0, time.UTC)
	if n := count(t, d, `CALL () {
  MATCH (r:Run) WHERE coalesce(r.endedAt, r.emittedAt) < $c AND NOT r.key STARTS WITH $p RETURN count(*) AS n
  UNION ALL
  MATCH (s)-[f:FEEDS|DECIDES_ROWS]->() WHERE f.lastSeen < $c AND NOT s.key STARTS WITH $p RETURN count(*) AS n
  UNION ALL
  MATCH (j:Job)-[l:LINEAGE]->() WHERE l.lastSeen < $c AND NOT j.key STARTS WITH $p RETURN count(*) AS n
} RETURN sum(n) AS n`, map[string]any{"c": clock, "p": p}); n > 0 {
		t.Skipf("the database holds %d runs or edges of other tests dated before %s; the prune would delete them", n, clock)
	}

	w := graph.NewWriter(d, "")
	ctx := context.Background()
	const jobs, oldRuns = 30, 600
	job := func(i int) string { return fmt.Sprintf("job%02d", i%jobs) }
	var batch []record.Item
	for i := range oldRuns {
		batch = append(batch, item(p, job(i), fmt.Sprintf("old-%04d", i), "src"+job(i), "dst"+job(i), old.Add(time.Duration(i)*time.Second)))
		if len(batch) == 100 {
			if err := w.Write(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}

	// The even jobs run again before the pass: their edges are confirmed, the odd jobs' are not.
	var confirm []record.Item
	for j := 0; j < jobs; j += 2 {
		confirm = append(confirm, item(p, job(j), fmt.Sprintf("pre-%02d", j), "src"+job(j), "dst"+job(j), fresh))
	}
	if err := w.Write(ctx, confirm); err != nil {
		t.Fatal(err)
	}

	// After each prune transaction the pass waits (up to 20 s, once) for a write to complete: a
	// write blocked by locks the pass still holds fails the test, however slow the machine.
	var writes atomic.Int64
	blocked := false
	rec := &recorder{Writer: w, after: func() {
		n, deadline := writes.Load(), time.Now().Add(20*time.Second)
		for !blocked && writes.Load() == n {
			if time.Now().After(deadline) {
				blocked = true
			}
			time.Sleep(5 * time.Millisecond)
		}
	}}
	m := NewMetrics(nil)
	pr := &Pruner{Graph: rec, Metrics: m, Now: func() time.Time { return clock },
		Policy: Policy{RunDays: 30, EdgeDays: 30, BatchSize: 25}}

	// The writer: new runs of the even jobs, one event per transaction, until the pass ends.
	stop := make(chan struct{})
	var written []time.Time
	var writeErrs []error
	var slowest time.Duration
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			j := 2 * (i % (jobs / 2))
			start := time.Now()
			err := w.Write(ctx, []record.Item{item(p, job(j), fmt.Sprintf("new-%04d", i), "src"+job(j), "dst"+job(j), fresh.Add(time.Duration(i)*time.Second))})
			slowest = max(slowest, time.Since(start))
			if err != nil {
				writeErrs = append(writeErrs, err)
			} else {
				written = append(written, time.Now())
				writes.Add(1)
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the writer is under way
	res, err := pr.Once(ctx)
	close(stop)
	<-wrote
	if err != nil {
		t.Fatal(err)
	}
	if len(writeErrs) > 0 {
		t.Errorf("%d writes failed during the prune: %v", len(writeErrs), writeErrs[0])
	}
	first, last := rec.batches[0], rec.batches[len(rec.batches)-1]
	between := 0
	for _, at := range written {
		if at.After(first) && at.Before(last) {
			between++
		}
	}
	if blocked || between == 0 {
		t.Errorf("no write completed (for 20 s after one of them, or at all) between the first and the last of %d prune transactions (%d writes in all): the prune blocked ingestion", len(rec.batches), len(written))
	}
	if rec.largest > 25 {
		t.Errorf("a prune transaction touched %d elements, above the batch size 25", rec.largest)
	}
	// The odd jobs' two FEEDS and one DECIDES_ROWS each go stale.
	if res.Runs != oldRuns || res.Feeds != 2*jobs/2 || res.DecidesRows != jobs/2 {
		t.Errorf("pruned %+v, want %d runs, %d FEEDS and %d DECIDES_ROWS marked", res, oldRuns, jobs, jobs/2)
	}
	left := count(t, d, `MATCH (r:Run) WHERE r.key STARTS WITH $p RETURN count(*) AS n`, map[string]any{"p": p})
	if left != int64(len(written)+len(confirm)) {
		t.Errorf("runs left %d, want the %d new ones", left, len(written)+len(confirm))
	}
	// stale as docs/graph-model.md reads it: a current edge's is its LINEAGE's
	stale := count(t, d, `MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS]->(t) WHERE s.key STARTS WITH $p
OPTIONAL MATCH (j:Job {key: f.job})-[l:LINEAGE]->(ds:Dataset) WHERE ds.key = CASE WHEN t:Dataset THEN t.key ELSE t.datasetKey END
WITH f, l WHERE f.stale OR (f.lastSeen IS NULL AND l.stale)
RETURN count(*) AS n`, map[string]any{"p": p})
	if stale != int64(jobs/2*3) {
		t.Errorf("stale edges %d, want %d (the odd jobs' FEEDS and DECIDES_ROWS)", stale, jobs/2*3)
	}
	if got := testutil.ToFloat64(m.pruned.WithLabelValues("Run", "deleted")); got != oldRuns {
		t.Errorf("colline_retention_pruned_total{Run,deleted} = %v, want %d", got, oldRuns)
	}
	t.Logf("pruned %d runs, marked %d FEEDS and %d DECIDES_ROWS stale in %d transactions of at most %d; meanwhile %d writes, %d of them between the first and last prune transaction, slowest %v",
		res.Runs, res.Feeds, res.DecidesRows, res.Batches, rec.largest, len(written), between, slowest.Round(time.Millisecond))
}

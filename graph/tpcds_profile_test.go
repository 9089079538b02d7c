package graph_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// tpcdsRaw returns the events of the TPC-DS corpus, in name order.
func tpcdsRaw(t *testing.T) [][]byte {
	t.Helper()
	var files []string
	for _, pat := range []string{"spark-*/q*.json", "spark-*/q*.json.gz"} {
		m, _ := filepath.Glob(filepath.Join("../plan/testdata/tpcds", pat))
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Skip("no TPC-DS corpus")
	}
	var raws [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			z, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(z); err != nil {
				t.Fatal(err)
			}
		}
		raws = append(raws, b)
	}
	return raws
}

// tpcdsItems returns the items of the TPC-DS corpus, in name order.
func tpcdsItems(t *testing.T) []record.Item { return tpcdsCopy(t, tpcdsRaw(t), 0) }

// tpcdsCopy returns the items of raw with every tpcds_out renamed tpcds_out_<c> and the event
// ids made unique, as the bench's copies (c 0: as they are).
func tpcdsCopy(t *testing.T, raws [][]byte, c int) []record.Item {
	t.Helper()
	var items []record.Item
	for _, b := range raws {
		if c > 0 {
			b = bytes.ReplaceAll(b, []byte("tpcds_out"), []byte(fmt.Sprintf("tpcds_out_%d", c)))
			b = bytes.Replace(b, []byte(`"eventId":"`), []byte(fmt.Sprintf(`"eventId":"c%d-`, c)), 1)
		}
		it, err := process.Step{}.Item(b)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	return items
}

// TestProfileTPCDS (COLLINE_PROFILE=comma-separated batch indexes; -1: none) wipes the graph,
// writes the TPC-DS corpus (and COLLINE_PROFILE_COPIES copies with their own targets, and with
// COLLINE_PROFILE_RERUNS that many re-runs of the corpus: the same lineage, new runs an hour
// apart, as production is) in batches of 100 (COLLINE_PROFILE_BATCH) with Write, except the listed batches: those run
// statement by statement with PROFILE (plain with COLLINE_PROFILE_PLAIN), as Write runs them,
// printing each plan's db hits and times. With COLLINE_PROFILE_JOBS every event is a job of its
// own (its app name is its query's and Spark line's), as the production-like bench corpus has
// it. It logs the total time of the Write calls. A measuring aid, not a check.
func TestProfileTPCDS(t *testing.T) {
	which := map[int]bool{}
	for _, f := range strings.Split(os.Getenv("COLLINE_PROFILE"), ",") {
		n, _ := strconv.Atoi(f)
		which[n] = true
	}
	prefix := "PROFILE "
	if os.Getenv("COLLINE_PROFILE_PLAIN") != "" {
		prefix = ""
	}
	copies, _ := strconv.Atoi(os.Getenv("COLLINE_PROFILE_COPIES"))
	reruns, _ := strconv.Atoi(os.Getenv("COLLINE_PROFILE_RERUNS"))
	size := 100
	if n, _ := strconv.Atoi(os.Getenv("COLLINE_PROFILE_BATCH")); n > 0 {
		size = n
	}
	ctx := context.Background()
	d := aidDriver(ctx, t, "COLLINE_PROFILE")
	w := graph.NewWriter(d, "")
	raws := tpcdsRaw(t)
	var all [][]record.Item // the corpus, then copies with their own targets (as bench -e2e-copies), then re-runs
	jobs := os.Getenv("COLLINE_PROFILE_JOBS") != ""
	tpcdsCopy := func(t *testing.T, raws [][]byte, c int) []record.Item {
		items := tpcdsCopy(t, raws, c)
		if jobs {
			for i, it := range items {
				env := *it.Event
				env.App.Name = fmt.Sprintf("job-%d-%d", c, i/2) // a CTAS and its nested insert: one job
				items[i].Event = &env
			}
		}
		return items
	}
	for c := 0; c <= copies; c++ {
		items := tpcdsCopy(t, raws, c)
		for b := 0; b*size < len(items); b++ {
			all = append(all, items[b*size:min((b+1)*size, len(items))])
		}
	}
	for k := 1; k <= reruns; k++ {
		items := rerunOf(tpcdsCopy(t, raws, 0), k)
		for b := 0; b*size < len(items); b++ {
			all = append(all, items[b*size:min((b+1)*size, len(items))])
		}
	}
	var writes time.Duration
	n := 0
	defer func() { t.Logf("%d batches written with Write in %v", n, writes) }()
	for b, batch := range all {
		if !which[b] {
			start := time.Now()
			if err := w.Write(ctx, batch); err != nil {
				t.Fatal(err)
			}
			writes += time.Since(start)
			n++
			t.Logf("batch %d: %d items written in %v", b, len(batch), time.Since(start))
			continue
		}
		s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total := time.Now()
		last := total
		var sumHits int64
		err = graph.WriteIn(ctx, tx, batch, prefix, func(name string, rows int, sum neo4j.ResultSummary) {
			el := time.Since(last)
			last = time.Now()
			var lines []string
			var hits int64
			if prefix != "" {
				eachOperator(sum.Profile(), 1, func(op string, p neo4j.ProfiledPlan, depth int) {
					hits += p.DbHits()
					det, _ := p.Arguments()["Details"].(string)
					if len(det) > 70 {
						det = det[:70]
					}
					lines = append(lines, fmt.Sprintf("%s%s rows=%d hits=%d %s", strings.Repeat("  ", depth), op, p.Records(), p.DbHits(), det))
				})
			}
			sumHits += hits
			t.Logf("PROFILE %s: %d rows, %d db hits, %v (server: available after %v, consumed after %v)\n%s", name, rows, hits, el,
				sum.ResultAvailableAfter(), sum.ResultConsumedAfter(), strings.Join(lines, "\n"))
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("batch %d profiled: %d db hits; statements %v, commit %v", b, sumHits, time.Since(total)-time.Since(start), time.Since(start))
		s.Close(ctx)
	}
}

// rerunOf returns items run again, k hours later: new event and app ids, the same lineage.
func rerunOf(items []record.Item, k int) []record.Item {
	out := make([]record.Item, len(items))
	for i, it := range items {
		env := *it.Event
		env.EventID = fmt.Sprintf("rerun-%d-%s", k, env.EventID)
		env.App.ID = fmt.Sprintf("rerun-%d-%s", k, env.App.ID)
		ended, _ := record.EventTime(it.Event)
		env.Query.EndedAt = ended.Add(time.Duration(k) * time.Hour).Format(time.RFC3339Nano)
		env.EmittedAt = ended.Add(time.Duration(k)*time.Hour + time.Second).Format(time.RFC3339Nano)
		out[i] = record.Item{Event: &env, Lineage: it.Lineage}
	}
	return out
}

// runIn runs q in tx, its text after prefix ("PROFILE " or ""), and returns its summary, or fails t.
func runIn(ctx context.Context, t *testing.T, tx neo4j.ExplicitTransaction, prefix string, q query) neo4j.ResultSummary {
	t.Helper()
	res, err := tx.Run(ctx, prefix+q.Query(), q.Params())
	if err == nil {
		var sum neo4j.ResultSummary
		if sum, err = res.Consume(ctx); err == nil {
			return sum
		}
	}
	t.Fatalf("%s: %v", q.Name(), err)
	return nil
}

// eachOperator calls f for every operator of the profiled plan p, depth first from depth, with its
// name (without the "@database" suffix).
func eachOperator(p neo4j.ProfiledPlan, depth int, f func(op string, p neo4j.ProfiledPlan, depth int)) {
	op, _, _ := strings.Cut(p.Operator(), "@")
	f(op, p, depth)
	for _, c := range p.Children() {
		eachOperator(c, depth+1, f)
	}
}

// aidDriver opens the Neo4j of COLLINE_TEST_NEO4J_URI for a measuring aid that the variable gate
// turns on (it skips t unless both are set), wipes the whole graph and bootstraps it.
func aidDriver(ctx context.Context, t *testing.T, gate string) neo4j.DriverWithContext {
	t.Helper()
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if os.Getenv(gate) == "" || uri == "" {
		t.Skip(gate + " and COLLINE_TEST_NEO4J_URI not set")
	}
	d, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(ctx) })
	if _, err := stack.WipeGraph(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := graph.NewWriter(d, "").Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// query is a statement as Write sends it.
type query struct {
	name, text string
	params     map[string]any
	rows       int
}

func (q query) Name() string           { return q.name }
func (q query) Query() string          { return q.text }
func (q query) Params() map[string]any { return q.params }

// queries returns the statements of batch.
func queries(batch []record.Item) ([]query, error) {
	sts, err := graph.Statements(batch)
	if err != nil {
		return nil, err
	}
	var out []query
	for _, st := range sts {
		out = append(out, query{name: st.Name(), text: st.Query(), params: st.Params(), rows: len(st.Rows())})
	}
	return out, nil
}

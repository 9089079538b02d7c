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

	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
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
func tpcdsItems(t *testing.T) []graph.Item { return tpcdsCopy(t, tpcdsRaw(t), 0) }

// tpcdsCopy returns the items of raw with every tpcds_out renamed tpcds_out_<c> and the event
// ids made unique, as the bench's copies (c 0: as they are).
func tpcdsCopy(t *testing.T, raws [][]byte, c int) []graph.Item {
	t.Helper()
	var items []graph.Item
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
// writes the TPC-DS corpus (and COLLINE_PROFILE_COPIES copies with their own targets) in batches
// of 100 with Write, except the listed batches: those run statement by statement with PROFILE
// (plain with COLLINE_PROFILE_PLAIN), printing each plan's db hits and times. It logs the total
// time of the Write calls. A measuring aid, not a check.
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
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if os.Getenv("COLLINE_PROFILE") == "" || uri == "" {
		t.Skip("COLLINE_PROFILE and COLLINE_TEST_NEO4J_URI not set")
	}
	ctx := context.Background()
	d, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	wipe(t, d)
	w := graph.NewWriter(d, "")
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	raws := tpcdsRaw(t)
	var all [][]graph.Item // the corpus, then copies with their own targets (as bench -e2e-copies)
	for c := 0; c <= copies; c++ {
		items := tpcdsCopy(t, raws, c)
		for b := 0; b*100 < len(items); b++ {
			all = append(all, items[b*100:min((b+1)*100, len(items))])
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
		sts, err := queries(batch)
		if err != nil {
			t.Fatal(err)
		}
		s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total := time.Now()
		for _, st := range sts {
			start := time.Now()
			res, err := tx.Run(ctx, prefix+st.Query(), st.Params())
			if err != nil {
				t.Fatalf("%s: %v", st.Name(), err)
			}
			sum, err := res.Consume(ctx)
			if err != nil {
				t.Fatalf("%s: %v", st.Name(), err)
			}
			el := time.Since(start)
			var lines []string
			var hits int64
			var walk func(p neo4j.ProfiledPlan, depth int)
			walk = func(p neo4j.ProfiledPlan, depth int) {
				op, _, _ := strings.Cut(p.Operator(), "@")
				hits += p.DbHits()
				det, _ := p.Arguments()["Details"].(string)
				if len(det) > 70 {
					det = det[:70]
				}
				lines = append(lines, fmt.Sprintf("%s%s rows=%d hits=%d %s", strings.Repeat("  ", depth), op, p.Records(), p.DbHits(), det))
				for _, c := range p.Children() {
					walk(c, depth+1)
				}
			}
			if prefix != "" {
				walk(sum.Profile(), 1)
			}
			t.Logf("PROFILE %s: %d rows, %d db hits, %v (server: available after %v, consumed after %v)\n%s", st.Name(), st.rows, hits, el,
				sum.ResultAvailableAfter(), sum.ResultConsumedAfter(), strings.Join(lines, "\n"))
		}
		start := time.Now()
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("batch %d profiled: statements %v, commit %v", b, time.Since(total)-time.Since(start), time.Since(start))
		s.Close(ctx)
	}
}

func wipe(t *testing.T, d neo4j.DriverWithContext) {
	ctx := context.Background()
	s := d.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	res, err := s.Run(ctx, `MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS`, nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.NewWriter(d, "").Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
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
func queries(batch []graph.Item) ([]query, error) {
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

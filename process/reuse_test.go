package process

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

// capturedEvents returns every captured listener event of plan/testdata (the scenarios of each Spark
// line and the TPC-DS corpus) whose plan extracts, by file name.
func capturedEvents(t *testing.T) map[string][]byte {
	t.Helper()
	var files []string
	for _, pat := range []string{"spark-*/*/*.json", "tpcds/spark-*/*.json.gz", "connect/*/*/*.json"} {
		m, err := filepath.Glob(filepath.Join("..", "plan", "testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			z, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(z); err != nil {
				t.Fatal(err)
			}
		}
		if events.IsLineageLog(data) {
			continue
		}
		if _, err := (Step{}).Item(data); err != nil {
			continue // the refusals have tests of their own
		}
		out[f] = data
	}
	if len(out) < 500 {
		t.Fatalf("%d captured events extract, expected more than 500", len(out))
	}
	return out
}

// rerun returns data as another run of the same code: a new event id, application id, execution
// id, times, JVM and duration, the rest byte for byte.
func rerun(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	env, _, ok := events.DecodeHead(data)
	if !ok {
		t.Fatal("no head")
	}
	out := data
	for _, s := range []string{env.EventID, env.App.ID, env.JVMID} {
		if s != "" {
			out = bytes.Replace(out, []byte(`"`+s+`"`), []byte(fmt.Sprintf(`"%s-rerun-%d"`, s, n)), 1)
		}
	}
	at := fmt.Sprintf(`"2027-01-01T%02d:%02d:00.000Z"`, n/60%24, n%60)
	for _, s := range []string{env.EmittedAt, env.Query.EndedAt} {
		if s != "" {
			out = bytes.Replace(out, []byte(`"`+s+`"`), []byte(at), 1)
		}
	}
	out = bytes.Replace(out, []byte(fmt.Sprintf(`"executionId":%d,`, env.Query.ExecutionID)), []byte(fmt.Sprintf(`"executionId":%d,`, 1000+n)), 1)
	return out
}

// The lineage of a plan depends on the plan and on the head fields Reuse keys it by, nothing
// else: extraction of every captured event gives the same lineage with every other head field
// changed. A rule that starts reading another field fails here, and that field joins the key.
func TestReuseKeyCoversExtraction(t *testing.T) {
	for f, data := range capturedEvents(t) {
		env, err := events.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plan.ExtractWithin(env, plan.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		other := *env
		other.SchemaVersion = "1.99"
		other.EventID, other.EmittedAt, other.JVMID = "other-event", "2030-01-01T00:00:00.000Z", "other-jvm"
		other.Producer = events.Producer{Name: "other", Version: "9", Spark: "9.9.9", Scala: "3", Hive: "9"}
		other.App.ID, other.App.User = "other-app", "other-user"
		other.Query.ExecutionID, other.Query.Status, other.Query.Error = 99, "failed", "boom"
		other.Query.DurationMs, other.Query.EndedAt = 12345, "2030-01-01T00:00:00.000Z"
		other.Query.Stream = &events.Stream{ID: "s", RunID: "r", Name: "n"}
		other.Query.Connect = &events.Connect{UserID: "u", SessionID: "s", OperationID: "o"}
		other.Parent = &events.Parent{Namespace: "airflow", Name: "dag.task", RunID: "r"}
		got, err := plan.ExtractWithin(&other, plan.Budget{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the lineage changed with head fields outside Reuse's key", f)
		}
	}
}

// A re-run with the same plan gets the same item from Reuse as a Step without it, with no plan
// decoded; a plan or a keyed head field that differs is extracted again.
func TestReuseHits(t *testing.T) {
	all := capturedEvents(t)
	r := NewReuse(0)
	s := Step{Reuse: r}
	for f, data := range all {
		if _, err := s.Item(data); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for n := range 2 {
			v := rerun(t, data, n)
			before, _ := r.Counts()
			got, err := s.Item(v)
			if after, _ := r.Counts(); after != before+1 {
				t.Errorf("%s: re-run %d was not a hit", f, n)
			}
			if err != nil {
				t.Fatalf("%s, re-run %d: %v", f, n, err)
			}
			plain, err := Step{}.Item(v)
			if err != nil {
				t.Fatal(err)
			}
			if got.Event.Nodes != nil {
				t.Fatalf("%s: re-run %d was decoded in full", f, n)
			}
			e := *plain.Event
			e.Nodes = nil
			if !reflect.DeepEqual(*got.Event, e) {
				t.Errorf("%s: re-run %d: envelope\n%+v\nwant\n%+v", f, n, *got.Event, e)
			}
			if !reflect.DeepEqual(got.Lineage, plain.Lineage) {
				t.Errorf("%s: re-run %d: the lineage differs from a full extraction", f, n)
			}
		}
	}

	// What changes the lineage is a miss.
	var data []byte
	for f, d := range all {
		if strings.Contains(f, "tpcds") && !strings.Contains(f, "nested") {
			data = d
			break
		}
	}
	env, _, _ := events.DecodeHead(data)
	for what, v := range map[string][]byte{
		"app name": bytes.Replace(rerun(t, data, 7), []byte(`"name":"`+env.App.Name+`"`), []byte(`"name":"another-job"`), 1),
		"plan":     bytes.Replace(rerun(t, data, 8), []byte(`"nullable":true`), []byte(`"nullable":false`), 1),
	} {
		hits, _ := r.Counts()
		if _, err := s.Item(v); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if h, _ := r.Counts(); h != hits {
			t.Errorf("another %s was a hit", what)
		}
	}
}

// Reuse refuses what a Step without it refuses, with the same error: a head that is invalid in
// front of a plan it knows.
func TestReuseRefusesLikeStep(t *testing.T) {
	var data []byte
	for f, d := range capturedEvents(t) {
		if strings.HasSuffix(f, "q1.json.gz") {
			data = d
			break
		}
	}
	s := Step{Reuse: NewReuse(0)}
	if _, err := s.Item(data); err != nil {
		t.Fatal(err)
	}
	env, _, _ := events.DecodeHead(data)
	id := []byte(`"eventId":"` + env.EventID + `"`)
	for what, v := range map[string][]byte{
		"no event id":       bytes.Replace(data, id, []byte(`"eventId":""`), 1),
		"a repeated key":    bytes.Replace(data, id, append(append([]byte{}, id...), []byte(`,"eventId":"x"`)...), 1),
		"a future version":  bytes.Replace(data, []byte(`"schemaVersion":"1.1"`), []byte(`"schemaVersion":"2.0"`), 1),
		"a broken head":     bytes.Replace(data, id, []byte(`"eventId":"x",,`), 1),
		"a key after nodes": append(bytes.TrimRight(data, "}\n "), []byte(`,"root":0}`)...),
		"invalid UTF-8":     bytes.Replace(data, id, []byte("\"eventId\":\"\xff\""), 1),
		"trailing bytes":    append(bytes.Clone(data), []byte(`{}`)...),
	} {
		_, want := Step{}.Item(v)
		_, got := s.Item(v)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: Reuse says %v, a Step without it %v", what, got, want)
		}
	}
}

// Items that share a remembered lineage are read by the writer while the next are made: no
// race (go test -race), and the bound holds.
func TestReuseConcurrentAndBounded(t *testing.T) {
	all := capturedEvents(t)
	r := NewReuse(2 << 20)
	s := Step{Reuse: r}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for _, data := range all {
				n++
				it, err := s.Item(rerun(t, data, g*10000+n))
				if err != nil {
					t.Error(err)
					return
				}
				_ = it.Lineage.Size()
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bytes > 2<<20 || r.bytes <= 0 || len(r.entries) != r.order.Len() {
		t.Errorf("%d bytes in %d entries (%d in order), bound %d", r.bytes, len(r.entries), r.order.Len(), 2<<20)
	}
}

// BenchmarkReuse: the TPC-DS events of Spark 3.5 as re-runs, with and without Reuse.
func BenchmarkReuse(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "tpcds", "spark-3.5", "q*.json.gz"))
	var values [][]byte
	var size int64
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		z, _ := gzip.NewReader(bytes.NewReader(raw))
		v, _ := io.ReadAll(z)
		values, size = append(values, v), size+int64(len(v))
	}
	for _, c := range []struct {
		name string
		step Step
	}{{"full", Step{}}, {"reuse", Step{Reuse: NewReuse(0)}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, v := range values {
					if _, err := c.step.Item(v); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(values)), "µs/event")
		})
	}
}

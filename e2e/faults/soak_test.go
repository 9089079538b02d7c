//go:build e2e

package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// TestSoak is the long run: one consumer, events at a steady rate (COLLINE_SOAK_RATE, 50/s) of
// mixed sizes (the captured Spark 3.5 events, 1-77 kB, with every 25th a TPC-DS CTAS event,
// 33-940 kB; COLLINE_SOAK_LARGE_EVERY), for COLLINE_SOAK_DURATION (60s by default, the variant `make faults` runs;
// `make soak` runs 30m), with a Neo4j restart at a third and a broker restart at two thirds of
// it. Every report interval (a minute, or a ninth of a short run) it records the consumer's RSS,
// Go heap, goroutines, open TCP connections and file descriptors and the group's lag, and prints
// the table; at the end they must be flat (no growth past the warm-up beyond small bounds), the
// lag must drain to zero, and the graph must equal what the events make: nothing lost,
// unexpected or doubled.
//
// The events cycle through a fixed list of templates (copies of the fixtures with their own
// datasets and job, every TPC-DS query once), each sent with a fresh event id and the current
// time, as a deployment sees the same jobs run again and again: the graph grows by runs, and the
// lineage of each template is written once and then confirmed.
func TestSoak(t *testing.T) {
	d := driver(t)
	wipe(t, d)
	duration, err := time.ParseDuration(stack.Getenv("COLLINE_SOAK_DURATION", "60s"))
	if err != nil {
		t.Fatalf("COLLINE_SOAK_DURATION: %v", err)
	}
	rate := getenvInt("COLLINE_SOAK_RATE", 50)
	largeEvery := getenvInt("COLLINE_SOAK_LARGE_EVERY", 25)
	every := min(time.Minute, duration/9)
	templates := soakTemplates(t, largeEvery)
	topic, dlq, group := topics(t, "soak", 3, topicMax)
	ctx, cancel := context.WithTimeout(context.Background(), duration+30*time.Minute)
	defer cancel()

	c := start(t, "consumer", topic, dlq, group)
	waitReady(t, c, true, 5*time.Minute)

	// The producer keeps the total at rate x elapsed, catching up after a broker restart.
	var sent atomic.Int64
	sentOf := make([]int64, len(templates)) // instances sent of each template
	var usedMu sync.Mutex
	stopProducing := make(chan struct{})
	produced := make(chan error, 1)
	begin := time.Now()
	go func() {
		w := &kafka.Writer{Addr: kafka.TCP(env.brokers), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
			BatchSize: 100, BatchBytes: 48 << 20, BatchTimeout: 5 * time.Millisecond, Compression: kafka.Zstd, Transport: &kafka.Transport{}}
		defer w.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopProducing:
				produced <- nil
				return
			case <-tick.C:
			}
			due := int64(time.Since(begin).Seconds()*float64(rate)) - sent.Load()
			var batch []kafka.Message
			now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
			for i := range due {
				k := int(sent.Load()+i) % len(templates)
				tp := &templates[k]
				batch = append(batch, kafka.Message{Key: tp.key, Value: tp.instance(newID(), now)})
				usedMu.Lock()
				sentOf[k]++
				usedMu.Unlock()
			}
			if len(batch) == 0 {
				continue
			}
			for attempt := 0; ; attempt++ {
				err := w.WriteMessages(ctx, batch...)
				if err == nil {
					break
				}
				if ctx.Err() != nil || attempt == 300 {
					produced <- fmt.Errorf("produce to %s: %w", topic, err)
					return
				}
				time.Sleep(time.Second)
			}
			sent.Add(int64(len(batch)))
		}
	}()

	// Restarts at a third (Neo4j) and two thirds (the broker) of the run.
	var notes sync.Map // report index -> what happened during it
	note := func(s string) {
		i := int(time.Since(begin) / every)
		v, _ := notes.LoadOrStore(i, new(string))
		*v.(*string) = strings.TrimPrefix(*v.(*string)+", "+s, ", ")
	}
	restarted := make(chan error, 1)
	go func() {
		for _, r := range []struct {
			at  time.Duration
			svc string
		}{{duration / 3, "neo4j"}, {2 * duration / 3, "kafka"}} {
			time.Sleep(time.Until(begin.Add(r.at)))
			s := time.Now()
			name := map[string]string{"neo4j": "Neo4j", "kafka": "broker"}[r.svc]
			note(name + " restart")
			if err := services("restart", r.svc); err != nil {
				restarted <- fmt.Errorf("restart %s: %w", r.svc, err)
				return
			}
			note(fmt.Sprintf("%s up after %.0fs", name, time.Since(s).Seconds()))
		}
		restarted <- nil
	}()

	var rows []soakRow
	sample := func(i int) soakRow {
		r := soakRow{at: time.Since(begin), sent: sent.Load(), committed: committed(ctx, topic, group)}
		lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
		r.lag, _ = lag(lctx, topic, group)
		lcancel()
		r.rssKiB = rss(c.Pid())
		_, body, err := c.Get("/metrics")
		if err == nil {
			r.goroutines = metricValue(body, "go_goroutines")
			r.heapMiB = metricValue(body, "go_memstats_heap_inuse_bytes") / (1 << 20)
			r.fds = metricValue(body, "process_open_fds")
		}
		r.conns = established(c.Pid())
		if v, ok := notes.Load(i - 1); ok {
			r.note = *v.(*string)
		}
		return r
	}
	for i := 1; time.Since(begin) < duration; i++ {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * every)))
		rows = append(rows, sample(i))
		t.Logf("soak %s", rows[len(rows)-1].line())
		if !c.Running() {
			t.Fatalf("the consumer exited; log %s", c.LogFile)
		}
	}
	close(stopProducing)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	n := sent.Load()
	drained := waitCommitted(t, topic, group, n, 20*time.Minute)
	last := sample(len(rows) + 1)
	var late []string // what happened after the last report
	notes.Range(func(k, v any) bool {
		if k.(int) >= len(rows) {
			late = append(late, *v.(*string))
		}
		return true
	})
	last.note = strings.Join(append(late, "drained"), ", ")
	rows = append(rows, last)
	retries := c.metric(t, `colline_ingest_retries_total`)
	if code := c.stop(t, time.Minute); code != 0 {
		t.Errorf("exit code after SIGTERM %d, want 0", code)
	}

	// Flat: the end against the first sample after the warm-up (the second), before any restart.
	ref, end := rows[min(1, len(rows)-1)], rows[len(rows)-1]
	var flat []string
	check := func(what string, ref, end, slack float64) {
		flat = append(flat, fmt.Sprintf("%s %.0f -> %.0f", what, ref, end))
		if end > ref+slack {
			t.Errorf("%s grew from %.0f after the warm-up to %.0f at the end (allowed %.0f more)", what, ref, end, slack)
		}
	}
	check("goroutines", ref.goroutines, end.goroutines, 15)
	check("TCP connections", float64(ref.conns), float64(end.conns), 4)
	check("file descriptors", ref.fds, end.fds, 8)
	check("RSS MiB", float64(ref.rssKiB)/1024, float64(end.rssKiB)/1024, max(96, float64(ref.rssKiB)/1024))
	// the trend after the warm-up, per hour, of the samples taken while producing
	if steady := rows[min(1, len(rows)-1) : len(rows)-1]; len(steady) >= 3 {
		flat = append(flat, fmt.Sprintf("RSS trend %+.1f MiB/h, goroutines trend %+.1f/h",
			slope(steady, func(r soakRow) float64 { return float64(r.rssKiB) / 1024 }),
			slope(steady, func(r soakRow) float64 { return r.goroutines })))
	}
	if end.lag != 0 {
		t.Errorf("lag after the drain = %d, want 0", end.lag)
	}

	// Expected: the graph of one instance of every template sent, plus what each further instance
	// adds (its own run and that run's relationships; what instances share, such as a scheduler's
	// parent and root runs, once).
	// (An instance's event id is new, as every sent one's is: a stream's event, whose template
	// id is its run id, then has its own run beside the one its micro-batches name as parent.)
	var items []record.Item
	for k, m := range sentOf {
		if m > 0 {
			it, err := process.Step{}.Item(templates[k].instance(newID(), time.Now().UTC().Format("2006-01-02T15:04:05.000Z")))
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, it)
		}
	}
	wantCounts, wantEdges := expected(t, asMessages(items))
	for k, m := range sentOf {
		if m > 1 {
			addCounts(wantCounts.Nodes, templates[k].extra.Nodes, m-1)
			addCounts(wantCounts.Relationships, templates[k].extra.Relationships, m-1)
		}
	}
	dead, account := noDeadLettersAndCompare(t, dlq, d, wantCounts, wantEdges)

	table := soakTable(rows)
	if f := os.Getenv("COLLINE_SOAK_TABLE"); f != "" {
		if err := os.WriteFile(f, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	fmt.Println(table)
	summarize(t, "%v at %d events/s (%d events, %d templates: %d captured Spark 3.5 events and TPC-DS events every %dth, 1 kB-940 kB), Neo4j restarted at %v, the broker at %v; drained %.1fs after the last event; %v retries in all; from the warm-up to the end: %s; lag 0; SIGTERM exit 0; dead letters %d; %s",
		duration, rate, n, len(templates), countSpark(templates), largeEvery, (duration / 3).Round(time.Second), (2 * duration / 3).Round(time.Second),
		drained.Seconds(), retries, strings.Join(flat, ", "), dead, account)
}

// template is one event to send again and again: its bytes with a placeholder id and times.
type template struct {
	key, raw        []byte
	id, at, endedAt []byte       // the template's own "eventId", "emittedAt" and "endedAt" fields, replaced
	extra           graph.Counts // what one more instance adds to the graph: its run and the run's relationships
	tpcds           bool
}

// instance is the template with a new event id, emitted and ended now.
func (tp *template) instance(id, now string) []byte {
	b := bytes.Replace(tp.raw, tp.id, []byte(`"eventId":"`+id+`"`), 1)
	b = bytes.Replace(b, tp.at, []byte(`"emittedAt":"`+now+`"`), 1)
	if tp.endedAt != nil {
		b = bytes.Replace(b, tp.endedAt, []byte(`"endedAt":"`+now+`"`), 1)
	}
	return b
}

// soakTemplates: four copies of the captured Spark 3.5 events (each copy its own app, job and
// datasets), with the TPC-DS events of Spark 3.5 taking every largeEvery-th place.
func soakTemplates(t *testing.T, largeEvery int) []template {
	t.Helper()
	var small, large [][]byte
	var keys []string
	for k := 0; k < 4; k++ {
		for _, fx := range env.corpus {
			prefix := fmt.Sprintf("soak%d_", k)
			appID := fmt.Sprintf("app-soak-%d-%s", k, fx.name)
			for _, raw := range fx.events {
				b, err := rekey(raw, prefix, appID, "soak-"+strconv.Itoa(k)+"-"+fx.name, newID())
				if err != nil {
					t.Fatal(err)
				}
				small = append(small, b)
				keys = append(keys, appID)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(env.root, "plan", "testdata", "tpcds", "spark-3.5", "*.json.gz"))
	sort.Strings(files)
	for _, f := range files {
		raw := gunzip(t, f)
		b, err := rekey(raw, "soaktpcds_", "app-soak-tpcds", "soak-tpcds", newID())
		if err != nil {
			t.Fatal(err)
		}
		large = append(large, b)
	}
	if len(large) == 0 {
		t.Fatal("no TPC-DS events under plan/testdata/tpcds/spark-3.5")
	}
	var out []template
	add := func(b []byte, key string, tpcds bool) {
		it, err := process.Step{}.Item(b)
		if err != nil {
			t.Fatalf("soak template no longer valid: %v", err)
		}
		var head struct {
			EventID   string `json:"eventId"`
			EmittedAt string `json:"emittedAt"`
			Query     struct {
				EndedAt string `json:"endedAt"`
			} `json:"query"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatal(err)
		}
		tp := template{key: []byte(key), raw: b, tpcds: tpcds}
		tp.id = []byte(`"eventId":"` + head.EventID + `"`)
		tp.at = []byte(`"emittedAt":"` + head.EmittedAt + `"`)
		if head.Query.EndedAt != "" {
			tp.endedAt = []byte(`"endedAt":"` + head.Query.EndedAt + `"`)
		}
		for _, p := range [][]byte{tp.id, tp.at} {
			if bytes.Count(b, p) != 1 {
				t.Fatalf("template field %s found %d times", p, bytes.Count(b, p))
			}
		}
		// a second instance (another event id, so another run) shows what each further one adds
		again, err := process.Step{}.Item(tp.instance(newID(), head.EmittedAt))
		if err != nil {
			t.Fatal(err)
		}
		one, _, err := graph.Preview([]record.Item{it})
		if err != nil {
			t.Fatal(err)
		}
		two, _, err := graph.Preview([]record.Item{it, again})
		if err != nil {
			t.Fatal(err)
		}
		tp.extra = graph.Counts{Nodes: map[string]int64{}, Relationships: map[string]int64{}}
		addCounts(tp.extra.Nodes, two.Nodes, 1)
		addCounts(tp.extra.Nodes, one.Nodes, -1)
		addCounts(tp.extra.Relationships, two.Relationships, 1)
		addCounts(tp.extra.Relationships, one.Relationships, -1)
		out = append(out, tp)
	}
	// spread over the cycle: a TPC-DS event every largeEvery-th place, as many as fit among the
	// small ones (all 206 when largeEvery is 5 or less)
	si, li := 0, 0
	for si < len(small) {
		if len(out)%largeEvery == largeEvery-1 && li < len(large) {
			add(large[(li*len(large)/max(1, len(small)/(largeEvery-1)))%len(large)], "app-soak-tpcds", true)
			li++
		} else {
			add(small[si], keys[si], false)
			si++
		}
	}
	return out
}

// addCounts adds times × each count of from to into, dropping counts that become 0.
func addCounts(into, from map[string]int64, times int64) {
	for k, v := range from {
		if into[k] += v * times; into[k] == 0 {
			delete(into, k)
		}
	}
}

func countSpark(ts []template) int {
	n := 0
	for _, tp := range ts {
		if !tp.tpcds {
			n++
		}
	}
	return n
}

func asMessages(items []record.Item) []message {
	out := make([]message, len(items))
	for i := range items {
		out[i] = message{item: &items[i]}
	}
	return out
}

func gunzip(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// soakRow is one report of the soak.
type soakRow struct {
	at                       time.Duration
	sent, committed, lag     int64
	rssKiB                   int64
	heapMiB, goroutines, fds float64
	conns                    int
	note                     string
}

func (r soakRow) line() string {
	return fmt.Sprintf("| %s | %d | %d | %d | %.0f | %.0f | %.0f | %d | %.0f | %s |", r.at.Round(time.Second), r.sent, r.committed, r.lag,
		float64(r.rssKiB)/1024, r.heapMiB, r.goroutines, r.conns, r.fds, r.note)
}

func soakTable(rows []soakRow) string {
	var b strings.Builder
	b.WriteString("| time | events sent | committed | lag (records) | RSS MiB | Go heap MiB | goroutines | TCP connections | open fds | during the interval |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r.line() + "\n")
	}
	return b.String()
}

// metricValue is the value of an unlabelled metric in a /metrics body (0 when absent).
func metricValue(body, name string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// established counts the TCP connections of pid in state ESTABLISHED: its socket descriptors
// matched against /proc/net/tcp{,6}.
func established(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) > 9 && fs[3] == "01" && inodes[fs[9]] {
				n++
			}
		}
	}
	return n
}

// slope is the least-squares slope of v over the rows' times, per hour.
func slope(rows []soakRow, v func(soakRow) float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, r := range rows {
		x, y := r.at.Hours(), v(r)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if d := n*sxx - sx*sx; d != 0 {
		return (n*sxy - sx*sy) / d
	}
	return 0
}

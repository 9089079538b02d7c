//go:build e2e

package e2e

// The listener under load (issue 18, item 7): a real Spark 3.5 driver issues many small write
// queries (e2e/testdata/load/LoadJob.java), in rounds of the same work without and with the
// listener. The driver's live heap stays flat, every query is published or counted, and the job's
// time with the listener is reported against the same run's time without it. A second run points
// the listener at a broker that accepts connections and never answers (a hung Kafka): the queue
// fills, the drops are counted, and the report at application end says so.

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
)

// loadPhase is one LOAD line of LoadJob.
type loadPhase struct {
	name   string
	round  int
	n      int
	ms     float64
	heap   []float64 // live heap after a full GC, MiB
	gcMs   float64
	stats  map[string]int64
	report string
}

var loadLine = regexp.MustCompile(`(?m)^LOAD phase=(\w+) round=(\d+) queries=(\d+) ms=(\d+) gcMs=(\d+) heapMiB=([\d,]*) stats=\{([^}]*)\}`)

func loadPhases(t *testing.T, out string) []loadPhase {
	t.Helper()
	var ps []loadPhase
	for _, m := range loadLine.FindAllStringSubmatch(out, -1) {
		p := loadPhase{name: m[1], stats: map[string]int64{}}
		p.round, _ = strconv.Atoi(m[2])
		p.n, _ = strconv.Atoi(m[3])
		p.ms, _ = strconv.ParseFloat(m[4], 64)
		p.gcMs, _ = strconv.ParseFloat(m[5], 64)
		for _, h := range strings.Split(m[6], ",") {
			if v, err := strconv.ParseFloat(h, 64); err == nil {
				p.heap = append(p.heap, v)
			}
		}
		for _, kv := range strings.Split(m[7], ", ") {
			k, v, _ := strings.Cut(kv, "=")
			p.stats[k], _ = strconv.ParseInt(v, 10, 64)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Fatal("no LOAD lines in the job's output")
	}
	return ps
}

func TestListenerUnderLoad(t *testing.T) {
	queries := getenvInt("COLLINE_LOAD_QUERIES", 200)
	rounds := getenvInt("COLLINE_LOAD_ROUNDS", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("colline.e2e.load-%d", time.Now().UnixNano())
	if err := s.CreateTopics(ctx, 1, topic); err != nil {
		t.Fatalf("Kafka is not usable at %s (start it with dev/services start): %v", s.Brokers, err)
	}
	out, wall, err := runSparkSQL(ctx, s, []string{"COLLINE_KAFKA_BOOTSTRAP=" + s.Brokers, "COLLINE_KAFKA_TOPIC=" + topic},
		"--work", t.TempDir(), "-Drunner.hive=false",
		fmt.Sprintf("-Dload.queries=%d", queries), fmt.Sprintf("-Dload.rounds=%d", rounds),
		s.Root+"/e2e/testdata/load/LoadJob.java")
	if err != nil {
		t.Fatalf("the Spark job failed: %v", err)
	}
	phases := loadPhases(t, out)
	final := listenerStats(t, out)

	var noneMs, collineMs, noneHeap, collineHeap float64
	var collineQueries int
	var heaps []string
	for _, p := range phases {
		work := p.ms - p.gcMs // the checkpoints' full GCs are not the job's time
		maxHeap := 0.0
		for _, h := range p.heap {
			maxHeap = max(maxHeap, h)
		}
		heaps = append(heaps, fmt.Sprintf("%s#%d %v", p.name, p.round, p.heap))
		switch p.name {
		case "none":
			noneMs += work
			noneHeap = max(noneHeap, maxHeap)
			if p.stats["seen"] != 0 {
				t.Errorf("round %d without the listener: it saw %d executions", p.round, p.stats["seen"])
			}
		case "colline":
			collineMs += work
			collineQueries += p.n
			collineHeap = max(collineHeap, maxHeap)
			if p.stats["seen"] != int64(p.n) {
				t.Errorf("round %d with the listener: seen %d, want %d (one per query)", p.round, p.stats["seen"], p.n)
			}
			// flat: the last checkpoint of a phase is not above its first by more than 32 MiB
			if len(p.heap) > 1 && p.heap[len(p.heap)-1] > p.heap[0]+32 {
				t.Errorf("round %d with the listener: live heap grew from %.0f to %.0f MiB over %d queries", p.round, p.heap[0], p.heap[len(p.heap)-1], p.n)
			}
		}
	}
	// bounded: what the listener keeps (at most queue.capacity plans, the event being built, the
	// producer's buffer) is far below the driver's heap; here, small plans, a generous bound
	if collineHeap > noneHeap+64 {
		t.Errorf("live heap with the listener %.0f MiB, without %.0f MiB: more than 64 MiB apart", collineHeap, noneHeap)
	}
	lost := final["droppedQueueFull"] + final["droppedKafkaDown"] + final["droppedOversize"] + final["sendErrors"]
	msgs, err := s.Messages(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if lost != 0 || msgs != final["published"] || final["published"] < int64(collineQueries) {
		t.Errorf("published %d (topic holds %d), lost %d; want every one of the %d queries with the listener published, none lost", final["published"], msgs, lost, collineQueries)
	}
	perQuery := func(ms float64, n int) float64 { return ms / float64(n) }
	noneQueries := rounds * queries
	t.Logf("load: %d rounds of %d queries, %.0f queries/min without the listener, %.0f with; %.2f ms per query without, %.2f with (%+.2f ms, x%.3f); live heap MiB %s; final listener stats %v; Spark job %.0fs",
		rounds, queries, float64(noneQueries)/noneMs*60000, float64(collineQueries)/collineMs*60000,
		perQuery(noneMs, noneQueries), perQuery(collineMs, collineQueries),
		perQuery(collineMs, collineQueries)-perQuery(noneMs, noneQueries), collineMs/noneMs, strings.Join(heaps, "; "), final, wall.Seconds())

}

// TestListenerHungKafka: the broker accepts TCP connections and never answers. The publisher thread
// waits for the topic's metadata with the job's first event (2 x max.block.ms: a minute; it must
// outlast the job's start, so that the queries run while it waits: at 10 s, under CI's load, none
// did), the small queue (5) fills meanwhile and drops (droppedQueueFull), then Kafka counts as down and
// events are dropped at once (droppedKafkaDown); Spark's queries never wait. The report at
// application end counts every drop.
func TestListenerHungKafka(t *testing.T) {
	queries := getenvInt("COLLINE_LOAD_QUERIES", 200)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	const capacity = 5
	var log strings.Builder
	hs := *s
	hs.Log = &log
	out, wall, err := runSparkSQL(ctx, &hs, []string{"COLLINE_KAFKA_BOOTSTRAP=" + ln.Addr().String(), "COLLINE_KAFKA_TOPIC=colline.hung"},
		"--work", t.TempDir(), "-Drunner.hive=false",
		fmt.Sprintf("-Dspark.colline.queue.capacity=%d", capacity),
		"-Dspark.colline.kafka.max.block.ms=30000", "-Dspark.colline.kafka.retryMs=600000",
		"-Dspark.colline.shutdown.timeoutMs=5000",
		fmt.Sprintf("-Dload.queries=%d", queries), "-Dload.rounds=1",
		s.Root+"/e2e/testdata/load/LoadJob.java")
	if err != nil {
		t.Fatalf("the Spark job failed (a hung broker must not fail it): %v", err)
	}
	phases := loadPhases(t, out)
	st := listenerStats(t, out)
	all := log.String()
	m := regexp.MustCompile(`colline: at application end: (\d+) query executions seen, (\d+) events published .*?, (\d+) lost \(queue full (\d+), Kafka down (\d+), too large (\d+), send errors (\d+)\)`).FindStringSubmatch(all)
	if m == nil {
		t.Fatalf("no application-end report in the Spark log:\n%s", tail(all, 4000))
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
	lost := st["droppedQueueFull"] + st["droppedKafkaDown"] + st["droppedOversize"] + st["sendErrors"]
	if n(3) != lost || n(4) != st["droppedQueueFull"] || n(5) != st["droppedKafkaDown"] || n(2) != st["published"] || n(1) != st["seen"] {
		t.Errorf("report %q does not match the counters %v", m[0], st)
	}
	if st["droppedQueueFull"] == 0 || st["droppedKafkaDown"] == 0 || st["published"] != 0 {
		t.Errorf("counters %v: want drops with the queue full (while the publisher waited for the hung broker) and with Kafka down, nothing published", st)
	}
	if !regexp.MustCompile(`WARN .*colline: at application end: `).MatchString(all) {
		t.Errorf("the report with drops is not at WARN")
	}
	// every execution is accounted for: enqueued or dropped at the queue, then built (or without
	// lineage) and, built, lost to the broker
	if st["seen"] != st["enqueued"]+st["droppedQueueFull"]+st["droppedCommandResult"]+st["droppedNotCommand"] {
		t.Errorf("seen %d != enqueued + dropped at the queue + not published by design: %v", st["seen"], st)
	}
	heap := phases[len(phases)-1].heap
	t.Logf("hung Kafka: %s; queries %.0f/min; live heap MiB %v; Spark job %.0fs", m[0], float64(phases[0].n)/(phases[0].ms-phases[0].gcMs)*60000, heap, wall.Seconds())
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func getenvInt(k string, def int) int {
	if v, err := strconv.Atoi(stack.Getenv(k, "")); err == nil {
		return v
	}
	return def
}

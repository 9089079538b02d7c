package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// The production-like corpus (issue 33): the same jobs run again and again, and their lineage
// rarely changes. Each of prodJobs jobs is a CTAS of the captured TPC-DS corpus (a real plan)
// run as application prod-job-NNNN, writing a table of its own (prod.jNNNN); each run is a new
// application run (app id, event id) an hour after the job's run before. A run changes its job's
// lineage with probability prodChange: from then on the job runs another TPC-DS query into the
// same table (its code changed), so that run writes a new version and the next runs confirm it.
type prodCorpus struct {
	ctas   map[string][]event // by query name: its CTAS per Spark line
	names  []string           // the query names, sorted
	query  []string           // each job's current query
	line   []int              // each job's Spark line
	rng    *rand.Rand
	start  time.Time
	change float64
	// tmpl holds each job's current event with its name and table set (rerun's costly part):
	// a run then only sets its ids and times.
	tmpl map[int][]byte
	// changes counts the runs generated so far that changed their job's lineage.
	changes int
}

// newProdCorpus picks each job's first query at random (seeded: every run of the bench has the
// same corpus).
func newProdCorpus(evs []event, jobs int, change float64) (*prodCorpus, error) {
	c := &prodCorpus{ctas: map[string][]event{}, rng: rand.New(rand.NewPCG(33, 1)), change: change, tmpl: map[int][]byte{},
		start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	for _, e := range evs {
		if e.nested {
			continue
		}
		name := e.name[strings.IndexByte(e.name, '/')+1:]
		c.ctas[name] = append(c.ctas[name], e)
	}
	for n := range c.ctas {
		c.names = append(c.names, n)
	}
	sort.Strings(c.names)
	if len(c.names) < 2 {
		return nil, fmt.Errorf("prod: the corpus has %d CTAS queries, need 2 or more", len(c.names))
	}
	for range jobs {
		q := c.names[c.rng.IntN(len(c.names))]
		c.query = append(c.query, q)
		c.line = append(c.line, c.rng.IntN(len(c.ctas[q])))
	}
	return c, nil
}

// run returns run r of job j (r 0: its first), changing the job's query first with probability
// change when r > 0. Runs must be asked for in order of r for a job.
func (c *prodCorpus) run(j, r int) message {
	if r > 0 && c.rng.Float64() < c.change {
		q := c.query[j]
		for q == c.query[j] {
			q = c.names[c.rng.IntN(len(c.names))]
		}
		c.query[j], c.line[j] = q, c.rng.IntN(len(c.ctas[q]))
		c.changes++
		delete(c.tmpl, j)
	}
	t, ok := c.tmpl[j]
	if !ok {
		evs := c.ctas[c.query[j]]
		t = jobEvent(evs[c.line[j]%len(evs)].data, j)
		c.tmpl[j] = t
	}
	at := c.start.Add(time.Duration(r)*time.Hour + time.Duration(j)*time.Hour/time.Duration(len(c.query)))
	v, id := rerun(t, j, r, at)
	return message{key: []byte(fmt.Sprintf("prod-%04d-%d", j, r)), value: v, id: id}
}

var (
	prodTarget   = regexp.MustCompile(`"namespace":\["tpcds_out"\],"name":"[^"]*"`)
	prodLocation = regexp.MustCompile(`tpcds_out\.db/[^"]*`)
)

// jobEvent rewrites a captured CTAS event as job j's: the job's application name and its own
// target table.
func jobEvent(data []byte, j int) []byte {
	out := bytes.Clone(data)
	if i := bytes.Index(out, []byte(`"app":{`)); i >= 0 {
		if k := bytes.Index(out[i:], []byte(`"name":"`)); k >= 0 {
			out = append(out[:i+k], setString(out[i+k:], `"name":"`, fmt.Sprintf("prod-job-%04d", j))...)
		}
	}
	out = prodTarget.ReplaceAll(out, []byte(fmt.Sprintf(`"namespace":["prod"],"name":"j%04d"`, j)))
	return prodLocation.ReplaceAll(out, []byte(fmt.Sprintf("prod.db/j%04d", j)))
}

// rerun makes run r of job j ending at at from the job's event (jobEvent): a new event id, app
// id and times.
func rerun(job []byte, j, r int, at time.Time) ([]byte, string) {
	id := newID()
	out := setString(job, `"eventId":"`, id)
	out = setString(out, `"emittedAt":"`, at.Add(time.Second).Format("2006-01-02T15:04:05.000Z"))
	out = setString(out, `"endedAt":"`, at.Format("2006-01-02T15:04:05.000Z"))
	out = setString(out, `"app":{"id":"`, fmt.Sprintf("prod-%04d-%04d", j, r))
	return out, id
}

// setString replaces the JSON string value that follows the first key (which ends with its
// opening quote) in b.
func setString(b []byte, key, value string) []byte {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return b
	}
	start := i + len(key)
	end := bytes.IndexByte(b[start:], '"')
	if end < 0 {
		return b
	}
	return append(append(append([]byte{}, b[:start]...), value...), b[start+end:]...)
}

// produceGen produces n messages made by gen to topic, in chunks, without holding them all.
func produceGen(ctx context.Context, env *benchEnv, topic string, n int, gen func(i int) message) (bytes int64, err error) {
	w := newProducer(env.brokers, topic, 20*time.Millisecond)
	defer w.Close()
	const chunk = 50
	for i := 0; i < n; i += chunk {
		var batch []kafka.Message
		for k := i; k < min(i+chunk, n); k++ {
			m := gen(k)
			bytes += int64(len(m.value))
			batch = append(batch, kafka.Message{Key: m.key, Value: m.value})
		}
		if err := w.WriteMessages(ctx, batch...); err != nil {
			return bytes, fmt.Errorf("produce to %s: %w", topic, err)
		}
	}
	return bytes, nil
}

// fetchAll fetches n messages of topic with the consumer's reader (its defaults) in a group of
// its own and returns the seconds it took from the first fetch.
func fetchAll(ctx context.Context, env *benchEnv, topic string, n int) (float64, error) {
	rd := ingest.NewReader(ingest.ReaderOptions{Brokers: env.brokers, Topics: []string{topic}, Group: topic + ".fetch"}, nil)
	defer rd.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var start time.Time
	for i := range n {
		if _, err := rd.FetchMessage(ctx); err != nil {
			return 0, fmt.Errorf("fetch alone: message %d of %d: %w", i, n, err)
		}
		if i == 0 {
			start = time.Now()
		}
	}
	return time.Since(start).Seconds(), nil
}

// consumeTopic consumes topic with the real loop and writer until its backlog is done; reuse as
// newConsumer's.
func consumeTopic(ctx context.Context, env *benchEnv, topic, dlqTopic string, reuse *process.Reuse) (*tap, *consumer, error) {
	c, err := newConsumer(env, topic, dlqTopic, env.writer, 2*time.Second, reuse)
	if err != nil {
		return nil, nil, err
	}
	if err := c.loop.Run(ctx); err != nil {
		c.close()
		return nil, nil, fmt.Errorf("consumer loop: %w", err)
	}
	return c.tap, c, nil
}

// benchProd measures the production-like corpus: jobs first runs (new lineage, untimed but
// reported), then runs more runs of every job end to end (the timed figure); then, on the same
// graph, the same kind of re-runs decoded beforehand and written by the writer alone, and
// decoded alone on one goroutine: the two halves of the end-to-end time, as its baselines.
func benchProd(ctx context.Context, r *report, env *benchEnv, evs []event, jobs, runs int, change float64) error {
	c, err := newProdCorpus(evs, jobs, change)
	if err != nil {
		return err
	}
	d, err := stack.WipeGraph(ctx, env.driver)
	if err != nil {
		return err
	}
	if err := env.writer.Bootstrap(ctx); err != nil {
		return err
	}
	r.notef("prod: graph wiped in %.1fs; %d jobs over %d TPC-DS queries, %d runs each, %.0f%% of runs change their job's lineage",
		d.Seconds(), jobs, len(c.names), runs, change*100)
	// One consumer takes the first runs and then the re-runs, as a consumer that keeps running
	// does: the plans it kept (process.Reuse) are those of the runs before.
	reuse := process.NewReuse(0)
	cpu := newCPUMeter([2]string{"Neo4j", env.neo4jURI}, [2]string{"Kafka", env.brokers[0]})

	phase := func(name string, n int, gen func(i int) message) (*tap, error) {
		topic, dlqTopic := topicName("prod-"+name), topicName("prod-"+name+".dlq")
		if err := env.topics(ctx, topic, dlqTopic); err != nil {
			return nil, err
		}
		defer env.kafka.DeleteTopics(context.WithoutCancel(ctx), topic, dlqTopic)
		changes := c.changes
		hits0, misses0 := reuse.Counts()
		bytes, err := produceGen(ctx, env, topic, n, gen)
		if err != nil {
			return nil, err
		}
		// The consumer's reader alone, in a group of its own: what fetching and decompressing
		// these messages costs, the ceiling of the end-to-end rate.
		fsecs, err := fetchAll(ctx, env, topic, n)
		if err != nil {
			return nil, err
		}
		r.notef("prod %s: the reader alone fetched the %d events in %.2fs (%.0f events/s, %.0f MB/s)", name, n, fsecs, float64(n)/fsecs, float64(bytes)/1e6/fsecs)
		c0 := cpu.sample()
		t, con, err := consumeTopic(ctx, env, topic, dlqTopic, reuse)
		if err != nil {
			return nil, err
		}
		defer con.close()
		r.notef("prod %s, end to end: %s", name, cpu.per(c0, cpu.sample(), float64(t.events), "event"))
		secs := t.seconds()
		hits, misses := reuse.Counts()
		r.notef("prod %s: %d events (%.1f MB; %d of them changed their job's lineage; plans reused %d, decoded %d), %d edges in %.2fs (%d transactions, %.0f dead letters): %.1f events/s; stages: %s",
			name, t.events, float64(bytes)/1e6, c.changes-changes, hits-hits0, misses-misses0, t.edges, secs, t.writes, con.deadLetters(), float64(t.events)/secs, con.stages())
		if t.events != n || con.deadLetters() > 0 {
			return nil, fmt.Errorf("prod %s: %d of %d events written, %.0f dead letters", name, t.events, n, con.deadLetters())
		}
		return t, nil
	}
	first, err := phase("first-runs", jobs, func(i int) message { return c.run(i, 0) })
	if err != nil {
		return err
	}
	rerunsN := jobs * (runs - 1)
	rer, err := phase("re-runs", rerunsN, func(i int) message { return c.run(i%jobs, 1+i/jobs) })
	if err != nil {
		return err
	}
	lineages, _ := countRel(ctx, env.driver, "LINEAGE")
	feeds, _ := countFeeds(ctx, env.driver)
	decides, _ := countRel(ctx, env.driver, "DECIDES_ROWS")
	r.notef("prod: the graph holds %d LINEAGE, %d FEEDS, %d DECIDES_ROWS", lineages, feeds, decides)

	// The halves: one more round of re-runs, decoded beforehand, written by the writer alone in
	// the loop's batches (-e2e-batch, else its default); and the decode alone, on one goroutine.
	round := func(r int) (items []record.Item, values [][]byte, err error) {
		for j := range jobs {
			m := c.run(j, r)
			it, err := process.Step{}.Item(m.value)
			if err != nil {
				return nil, nil, fmt.Errorf("prod: %w", err)
			}
			env := *it.Event
			env.Nodes = nil // as the loop keeps it (ingest's withoutPlan)
			it.Event = &env
			items = append(items, it)
			values = append(values, m.value)
		}
		return items, values, nil
	}
	items, values, err := round(runs)
	if err != nil {
		return err
	}
	size := cmp.Or(e2eBatchSize, ingest.DefaultBatchSize)
	wsecs, c0, c1, err := writeAlone(ctx, env.writer, cpu, items, size, 1)
	if err != nil {
		return fmt.Errorf("prod: writer alone: %w", err)
	}
	r.notef("prod: writer alone: %s", cpu.per(c0, c1, float64(len(items)), "event"))
	alone := float64(len(items)) / wsecs // events/s
	// Parallel transactions on disjoint jobs: one more run of each job, two writers at once on
	// alternate batches (each batch holds jobs of its own; the datasets they read are shared).
	items2, _, err := round(runs + 1)
	if err != nil {
		return err
	}
	retries := env.writer.Retries()
	w2secs, c0, c1, err := writeAlone(ctx, env.writer, cpu, items2, size, 2)
	if err != nil {
		return fmt.Errorf("prod: two writers: %w", err)
	}
	r.notef("prod: two writers at once on alternate batches of %d: %d events in %.2fs (%.0f events/s, %.2f× one writer; transactions run again after a deadlock or another transient error: %d); %s",
		size, len(items2), w2secs, float64(len(items2))/w2secs, wsecs/w2secs, env.writer.Retries()-retries, cpu.per(c0, c1, float64(len(items2)), "event"))
	// Neo4j's own rate for what a re-run records, in the writer's batches of 100 and in one of
	// 1,000, against the writer alone above.
	var bare [2]float64
	var bareN int
	for k, size := range []int{100, 1000} {
		n, secs, used, err := bareRuns(ctx, env.driver, cpu, c.start.Add(time.Duration(runs+2+k)*time.Hour), size)
		if err != nil {
			return fmt.Errorf("prod: bare runs: %w", err)
		}
		r.notef("prod: bare write, one statement per %d runs: %s", size, used)
		bareN, bare[k] = n, float64(n)/secs
		r.notef("prod: Neo4j's bare write of what a re-run records (a Run with HAS_RUN, READ, WROTE; LINEAGE.lastSeen set), one statement per %d runs: %d runs in %.2fs (%.0f runs/s); the writer alone: %.2f of it",
			size, n, secs, bare[k], alone/bare[k])
	}
	start := time.Now()
	var inBytes int64
	for _, v := range values {
		inBytes += int64(len(v))
		if _, err := (process.Step{}).Item(v); err != nil {
			return err
		}
	}
	dsecs := time.Since(start).Seconds()
	// The same values through the consumer's Reuse, which kept the plans of the runs before (the
	// values of jobs that changed their lineage in this round are extracted in full).
	hits0, _ := reuse.Counts()
	start = time.Now()
	for _, v := range values {
		if _, err := (process.Step{Reuse: reuse}).Item(v); err != nil {
			return err
		}
	}
	rsecs := time.Since(start).Seconds()
	hits, _ := reuse.Counts()
	r.notef("prod: one more run of each job: writer alone (batches of %d) %d events in %.2fs (%.0f events/s); decode+extract alone, one goroutine, %.1f MB in %.2fs (%.0f events/s, %.0f MB/s); with the plans kept (%d of %d reused): %.3fs (%.0f events/s)",
		size, len(items), wsecs, alone, float64(inBytes)/1e6, dsecs, float64(len(values))/dsecs, float64(inBytes)/1e6/dsecs,
		hits-hits0, len(values), rsecs, float64(len(values))/rsecs)

	rate := float64(rer.events) / rer.seconds()
	r.add(row{part: "p", metric: fmt.Sprintf("production-like corpus: re-runs end to end (%d jobs × %d runs, %.0f%% changing lineage)", jobs, runs-1, change*100),
		value:    fmt.Sprintf("%.1f events/s", rate),
		baseline: fmt.Sprintf("first runs (new lineage) %.1f events/s; writer alone %.0f events/s; decode+extract alone %.0f events/s, with the plans kept %.0f events/s", float64(first.events)/first.seconds(), alone, float64(len(values))/dsecs, float64(len(values))/rsecs),
		target:   "≥ 5,000 events/s (issue 33)", result: fmt.Sprintf("%.2f× first runs", rate/(float64(first.events)/first.seconds())), met: rate >= 5000})
	r.add(row{part: "p", metric: "production-like corpus: re-runs by the writer alone / Neo4j's bare write of what a re-run records", value: fmt.Sprintf("%.0f events/s", alone),
		baseline: fmt.Sprintf("bare (a Run, HAS_RUN, READ, WROTE, LINEAGE.lastSeen; %d runs): %.0f runs/s in batches of 100, %.0f in one of 1,000", bareN, bare[0], bare[1]),
		target:   "-", result: fmt.Sprintf("%.2f of bare at 100", alone/bare[0])})
	return nil
}

// bareRuns is Neo4j's own rate for what a re-run must record: for each job, a new Run with its
// HAS_RUN, a READ per dataset and a WROTE per dataset its last run read and wrote, and the
// LINEAGE's lastSeen; nodes found by element id, one UNWIND statement and transaction per size
// runs. The runs (at at) are deleted afterwards. It returns the runs written and the seconds the
// writes took, and where their CPU went (cpu's line).
func bareRuns(ctx context.Context, d neo4j.DriverWithContext, cpu *cpuMeter, at time.Time, size int) (int, float64, string, error) {
	res, err := neo4j.ExecuteQuery(ctx, d, `MATCH (j:Job)-[:HAS_RUN]->(r:Run)
WITH j, r ORDER BY r.endedAt DESC
WITH j, head(collect(r)) AS r
RETURN elementId(j) AS job, [(r)-[:READ]->(x) | elementId(x)] AS reads, [(r)-[:WROTE]->(x) | elementId(x)] AS wrote
ORDER BY job`, nil, neo4j.EagerResultTransformer)
	if err != nil {
		return 0, 0, "", err
	}
	rows := make([]any, 0, len(res.Records))
	for i, rec := range res.Records {
		m := rec.AsMap()
		m["key"] = fmt.Sprintf("bench-bare-%d", i)
		m["at"] = at
		rows = append(rows, m)
	}
	c0 := cpu.sample()
	start := time.Now()
	for b := range slices.Chunk(rows, size) {
		if _, err := neo4j.ExecuteQuery(ctx, d, `UNWIND $rows AS row
MATCH (j) WHERE elementId(j) = row.job
CREATE (j)-[:HAS_RUN]->(r:Run {key: row.key, appId: row.key, endedAt: row.at, emittedAt: row.at})
WITH row, j, r
CALL (row, r) { UNWIND row.reads AS x MATCH (s) WHERE elementId(s) = x CREATE (r)-[:READ]->(s) }
CALL (row, r) { UNWIND row.wrote AS x MATCH (t) WHERE elementId(t) = x CREATE (r)-[:WROTE]->(t) }
CALL (row, j) { MATCH (j)-[l:LINEAGE]->() SET l.lastSeen = row.at }
RETURN count(*) AS n`, map[string]any{"rows": b}, neo4j.EagerResultTransformer); err != nil {
			return 0, 0, "", err
		}
	}
	secs := time.Since(start).Seconds()
	used := cpu.per(c0, cpu.sample(), float64(len(rows)), "run")
	if _, err := neo4j.ExecuteQuery(ctx, d, `MATCH (r:Run) WHERE r.key STARTS WITH 'bench-bare-' DETACH DELETE r`, nil, neo4j.EagerResultTransformer); err != nil {
		return 0, 0, "", err
	}
	return len(rows), secs, used, nil
}

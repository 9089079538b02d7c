//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
)

// TestForeachBatchKafkaToDelta runs a streaming query over a Kafka topic whose foreachBatch
// upserts every micro-batch into a Delta table (MERGE) and appends its big orders, joined with a
// Delta table, to another (plan/testdata/scenarios/stream_foreach_batch.java: two micro-batches),
// through the listener, Kafka, the consumer and Neo4j, on Spark 3.5 with Delta Lake and Spark's
// Kafka connector. It checks that the Delta tables' columns come from the topic's (the
// micro-batch stands for the stream's source), that each write's Run is CHILD_OF the stream's Run,
// that every micro-batch gives each table the same lineage, and that the stream's Run is CHILD_OF
// the scheduler's run the application was given (so the writes are under it, through the stream).
func TestForeachBatchKafkaToDelta(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	began := time.Now()
	s, driver, app, topic := jobStack(t, ctx, "colline-e2e-fb", "spark_catalog/stream_foreach_batch.", 1)
	job := "default/" + app
	source := "colline.e2e.fb-source-" + app[len("colline-e2e-fb-"):]
	schedRun := "sched-run-" + app[len("colline-e2e-fb-"):]
	if err := s.CreateTopics(ctx, 1, source); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := s.Spark(ctx, t.TempDir(), topic, []string{"COLLINE_SCENARIO_KAFKA=" + s.Brokers},
		// the in-memory catalog: Delta needs no metastore, and a Derby one costs a start
		"--connectors=kafka,delta", "-Drunner.hive=false", "-Dspark.app.name="+app, "-Dstream.topic="+source, "-Dstream.dir="+t.TempDir(),
		// the documented registration: the streaming listener sees every run from its start
		"-Dspark.sql.streaming.streamingQueryListeners=io.colline.listener.CollineStreamingListener",
		// a scheduler's run above the application (docs/listener.md, "The scheduler's run")
		"-Dspark.colline.parent.namespace=sched", "-Dspark.colline.parent.job=nightly.upsert", "-Dspark.colline.parent.runId="+schedRun,
		"plan/testdata/scenarios/stream_foreach_batch.java"); err != nil {
		t.Fatal(err)
	}
	sparkTime := time.Since(started)
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, bin, topic, topic+".g"); err != nil {
		t.Fatal(err)
	}
	topicKey := "kafka://" + s.Brokers + "/" + source
	const orders, bigOrders = "spark_catalog/stream_foreach_batch.orders", "spark_catalog/stream_foreach_batch.big_orders"

	// 1. the stream's run read the topic; each write of a micro-batch is a run CHILD_OF it
	res, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH (:Job {key: $job})-[:HAS_RUN]->(s:Run {funcName: 'stream'})-[:READ]->(:Dataset {key: $topic})
OPTIONAL MATCH (w:Run)-[:CHILD_OF]->(s)
OPTIONAL MATCH (w)-[:WROTE]->(d:Dataset)
RETURN s.key AS stream, d.key AS dataset, count(DISTINCT w) AS runs ORDER BY dataset`,
		map[string]any{"job": job, "topic": topicKey}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	children := map[string]int64{}
	for _, r := range res.Records {
		m := r.AsMap()
		if d, ok := m["dataset"].(string); ok {
			children[d] = m["runs"].(int64)
		}
	}
	if len(res.Records) == 0 || children[orders] != 2 || children[bigOrders] != 2 {
		t.Fatalf("runs CHILD_OF the stream run of %s that read %s, by dataset written: %v; want 2 MERGEs into %s and 2 appends to %s",
			job, topicKey, children, orders, bigOrders)
	}

	// the scheduler's run: the stream's run is CHILD_OF it, the writes CHILD_OF the stream's run,
	// so the scheduler's run reaches every write of every micro-batch (colline lineage --parent)
	res, err = neo4j.ExecuteQuery(ctx, driver, `
MATCH (p:Run {key: $parent})<-[:HAS_RUN]-(:Job {key: 'sched/nightly.upsert'})
OPTIONAL MATCH (s:Run {funcName: 'stream'})-[:CHILD_OF]->(p)
OPTIONAL MATCH (w:Run)-[:CHILD_OF]->(s) WHERE (w)-[:WROTE]->(:Dataset)
RETURN count(DISTINCT s) AS streams, count(DISTINCT w) AS writes`,
		map[string]any{"parent": schedRun}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("no scheduler run %s in job sched/nightly.upsert", schedRun)
	}
	if m := res.Records[0].AsMap(); m["streams"] != int64(1) || m["writes"] != int64(4) {
		t.Fatalf("under the scheduler's run %s: %v; want 1 stream run CHILD_OF it and the 4 writing runs CHILD_OF that", schedRun, m)
	}

	// 2. the tables' lineage: from the topic's fields, through the micro-batch
	tk := topicKey
	want := []string{
		tk + "#timestamp -> stream_foreach_batch.orders#seen_at DIRECT/IDENTITY",
		tk + "#value.amount -> stream_foreach_batch.big_orders#amount DIRECT/TRANSFORMATION",
		tk + "#value.amount -> stream_foreach_batch.orders#amount DIRECT/TRANSFORMATION",
		tk + "#value.amount => stream_foreach_batch.big_orders INDIRECT/FILTER",
		tk + "#value.customer -> stream_foreach_batch.orders#customer DIRECT/TRANSFORMATION",
		tk + "#value.customer => stream_foreach_batch.big_orders INDIRECT/JOIN",
		tk + "#value.id -> stream_foreach_batch.big_orders#id DIRECT/TRANSFORMATION",
		tk + "#value.id -> stream_foreach_batch.orders#id DIRECT/TRANSFORMATION",
		tk + "#value.id => stream_foreach_batch.orders INDIRECT/JOIN",
		tk + "#value.status -> stream_foreach_batch.orders#status DIRECT/TRANSFORMATION",
		tk + "#value.status => stream_foreach_batch.big_orders INDIRECT/FILTER",
		tk + "#value.status => stream_foreach_batch.orders INDIRECT/FILTER",
		"stream_foreach_batch.customers#id => stream_foreach_batch.big_orders INDIRECT/JOIN",
		"stream_foreach_batch.customers#name -> stream_foreach_batch.big_orders#customer_name DIRECT/IDENTITY",
		"stream_foreach_batch.orders#amount -> stream_foreach_batch.orders#amount DIRECT/IDENTITY",
		"stream_foreach_batch.orders#customer -> stream_foreach_batch.orders#customer DIRECT/IDENTITY",
		"stream_foreach_batch.orders#id -> stream_foreach_batch.orders#id DIRECT/IDENTITY",
		"stream_foreach_batch.orders#id => stream_foreach_batch.orders INDIRECT/JOIN",
		"stream_foreach_batch.orders#seen_at -> stream_foreach_batch.orders#seen_at DIRECT/IDENTITY",
		"stream_foreach_batch.orders#status -> stream_foreach_batch.orders#status DIRECT/IDENTITY",
	}
	sort.Strings(want)
	got := edgeLines(t, ctx, graph.NewReader(driver, ""), job)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lineage of the foreachBatch job in Neo4j:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// 3. every micro-batch gives each written table the same lineage (so the second is a re-run
	// with the stored fingerprint: docs/graph-model.md), and says which run and batch it belongs to
	perTarget := map[string][]*plan.Lineage{}
	batches := map[int64]bool{}
	for _, m := range readTopic(ctx, t, s.Brokers, topic) {
		it, err := process.Step{}.Item(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		st := it.Event.Query.Stream
		if st == nil || it.Event.Query.FuncName == "stream" || len(it.Lineage.Writes) == 0 {
			continue
		}
		if st.BatchID == nil || it.Parent() == nil {
			t.Errorf("event %s: query.stream %+v, parent %v: want the batch and the stream's run", it.Event.EventID, *st, it.Parent())
			continue
		}
		batches[*st.BatchID] = true
		for _, w := range it.Lineage.Writes {
			perTarget[w.Key] = append(perTarget[w.Key], it.Lineage)
		}
	}
	if len(batches) != 2 || len(perTarget[orders]) != 2 || len(perTarget[bigOrders]) != 2 {
		t.Fatalf("micro-batches %v; writes of %s: %d, of %s: %d; want 2 of each", batches, orders, len(perTarget[orders]), bigOrders, len(perTarget[bigOrders]))
	}
	for target, lins := range perTarget {
		if !reflect.DeepEqual(lins[0], lins[1]) {
			t.Errorf("%s: the two micro-batches give different lineage:\n%+v\n%+v", target, *lins[0], *lins[1])
		}
	}
	// 4. so the micro-batches are one lineage version per table (docs/graph-model.md, model 3):
	// one LINEAGE of the job into each table, confirmed by the newest micro-batch that wrote it,
	// and the table's edges of the job current (no lastSeen of their own: the LINEAGE's)
	res, err = neo4j.ExecuteQuery(ctx, driver, `
UNWIND $tables AS key
MATCH (d:Dataset {key: key})
OPTIONAL MATCH (:Job {key: $job})-[l:LINEAGE]->(d)
WITH d, collect(l) AS ls
CALL (d) {
  MATCH (w:Run)-[:WROTE]->(d) WHERE (w)-[:CHILD_OF]->(:Run {funcName: 'stream'})
  RETURN w.key AS newest ORDER BY w.endedAt DESC LIMIT 1
}
CALL (d) {
  OPTIONAL MATCH (d)-[:HAS_COLUMN]->(:Column)<-[f:FEEDS {job: $job}]-(:Column)
  OPTIONAL MATCH (d)<-[x:DECIDES_ROWS {job: $job}]-(:Column)
  RETURN count(DISTINCT f) + count(DISTINCT x) AS edges,
         count(DISTINCT CASE WHEN f.lastSeen IS NOT NULL THEN f END) + count(DISTINCT CASE WHEN x.lastSeen IS NOT NULL THEN x END) AS own
}
RETURN d.key AS table, size(ls) AS lineages, [l IN ls | l.lastRun] AS lastRuns, newest, edges, own ORDER BY table`,
		map[string]any{"tables": []string{orders, bigOrders}, "job": job}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 2 {
		t.Fatalf("LINEAGE of %s into %s and %s: %d rows, want 2", job, orders, bigOrders, len(res.Records))
	}
	for _, r := range res.Records {
		m := r.AsMap()
		runs, _ := m["lastRuns"].([]any)
		if m["lineages"] != int64(1) || len(runs) != 1 || runs[0] != m["newest"] || m["edges"] == int64(0) || m["own"] != int64(0) {
			t.Errorf("%v: %d LINEAGE (lastRun %v), newest micro-batch write %v, %v edges of which %v with their own lastSeen; want 1 LINEAGE confirmed by the newest write, every edge current",
				m["table"], m["lineages"], runs, m["newest"], m["edges"], m["own"])
		}
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Fatalf("dead letters: %d (%v), want 0", dead, err)
	}
	t.Logf("foreachBatch Kafka -> Delta: spark job %.1fs, whole test %.1fs; %d edges as expected, 2 micro-batches with the same lineage, %s",
		sparkTime.Seconds(), time.Since(began).Seconds(), len(want), fmt.Sprint(children))
}

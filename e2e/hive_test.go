//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
)

// The HiveQL of plan/testdata/hive-scenarios that this test runs, in order, in one Hive JVM: with
// COLLINE_E2E_HIVE=full (make hive-test) the list (INSERT OVERWRITE with a join and
// aggregates, LATERAL VIEW explode, a multi-insert, CTAS, static and dynamic partitions, a view);
// in make test the setup and the join (a Hive start and three MapReduce jobs fit CI's budget).
// Then, after Spark, the DDL: ALTER, TRUNCATE, RENAME, DROP.
func hiveFiles() []string {
	if os.Getenv("COLLINE_E2E_HIVE") == "full" {
		return []string{"00_setup", "01_join_aggregate", "02_lateral_view", "03_multi_insert", "04_ctas", "05_partitions", "07_view"}
	}
	return []string{"00_setup", "01_join_aggregate"}
}

// hiveJob is the Hive job of each scenario file (its first written table).
var hiveJob = map[string]string{
	"01_join_aggregate": "hive.hshop.country_revenue", "02_lateral_view": "hive.hshop.order_tags",
	"03_multi_insert": "hive.hshop.paid_orders", "04_ctas": "hive.hshop.order_summary",
	"05_partitions": "hive.hshop.orders_by_day hive.hshop.orders_by_status", "07_view": "hive.hshop.paid_view hive.hshop.paid_copy",
}

// hiveEdges is the lineage of those files, per Hive job (named after the first written table),
// read from the HiveQL (docs/hive.md): Hive's PROJECTION edges are DIRECT, its PREDICATE edges
// row-level (JOIN across two tables, else FILTER). Hive's lineage has no GROUP BY edges, and Hive
// adds `x is not null` predicates for inner-join keys (FILTER).
var hiveEdges = map[string][]string{
	// INSERT OVERWRITE TABLE country_revenue SELECT c.country, sum(o.amount * 1.2), count(o.order_id)
	// FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.status = 'paid' GROUP BY c.country
	"hive.hshop.country_revenue": {
		"hshop.customers#country -> hshop.country_revenue#country DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.country_revenue#revenue DIRECT/AGGREGATION",
		"hshop.orders#order_id -> hshop.country_revenue#orders DIRECT/AGGREGATION masked",
		"hshop.customers#customer_id => hshop.country_revenue INDIRECT/FILTER, INDIRECT/JOIN",
		"hshop.orders#customer_id => hshop.country_revenue INDIRECT/FILTER, INDIRECT/JOIN",
		"hshop.orders#status => hshop.country_revenue INDIRECT/FILTER",
	},
	// SELECT o.order_id, t.tag FROM orders o LATERAL VIEW explode(o.tags) t AS tag
	"hive.hshop.order_tags": {
		"hshop.orders#order_id -> hshop.order_tags#order_id DIRECT/IDENTITY",
		"hshop.orders#tags -> hshop.order_tags#tag DIRECT/IDENTITY", // Hive gives the exploded column no expression
	},
	// FROM orders o INSERT OVERWRITE paid_orders SELECT order_id, amount WHERE status = 'paid'
	//               INSERT OVERWRITE big_orders SELECT order_id, upper(status) WHERE amount > 6
	"hive.hshop.paid_orders": {
		"hshop.orders#amount -> hshop.paid_orders#amount DIRECT/IDENTITY",
		"hshop.orders#order_id -> hshop.paid_orders#order_id DIRECT/IDENTITY",
		"hshop.orders#order_id -> hshop.big_orders#order_id DIRECT/IDENTITY",
		"hshop.orders#status -> hshop.big_orders#status DIRECT/TRANSFORMATION",
		"hshop.orders#status => hshop.paid_orders INDIRECT/FILTER",
		"hshop.orders#amount => hshop.big_orders INDIRECT/FILTER",
	},
	// CREATE TABLE order_summary AS SELECT o.customer_id, CASE WHEN o.amount > 6 THEN 'big' ELSE 'small' END,
	// md5(c.email), CAST(o.amount AS DECIMAL(10,2)) FROM orders o LEFT OUTER JOIN customers c ON ...
	"hive.hshop.order_summary": {
		"hshop.orders#customer_id -> hshop.order_summary#customer_id DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.order_summary#size INDIRECT/CONDITIONAL",
		"hshop.customers#email -> hshop.order_summary#email_hash DIRECT/TRANSFORMATION masked",
		"hshop.orders#amount -> hshop.order_summary#amount DIRECT/IDENTITY",
		"hshop.orders#customer_id => hshop.order_summary INDIRECT/JOIN",
		"hshop.customers#customer_id => hshop.order_summary INDIRECT/FILTER, INDIRECT/JOIN",
	},
	// INSERT OVERWRITE orders_by_day PARTITION (day = '2026-01-01') SELECT order_id, amount FROM orders
	"hive.hshop.orders_by_day": {
		"hshop.orders#order_id -> hshop.orders_by_day#order_id DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.orders_by_day#amount DIRECT/IDENTITY",
	},
	// INSERT OVERWRITE orders_by_status PARTITION (status) SELECT order_id, amount, status FROM orders
	"hive.hshop.orders_by_status": {
		"hshop.orders#order_id -> hshop.orders_by_status#order_id DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.orders_by_status#amount DIRECT/IDENTITY",
		"hshop.orders#status -> hshop.orders_by_status#status DIRECT/IDENTITY",
	},
	// CREATE VIEW paid_view AS SELECT order_id, amount FROM orders WHERE status = 'paid' (Hive
	// computes a view's lineage only with LineageLogger among the post hooks: dev/hive-sql sets
	// it next to colline's hook, as docs/hive.md tells deployments to)
	"hive.hshop.paid_view": {
		"hshop.orders#order_id -> hshop.paid_view#order_id DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.paid_view#amount DIRECT/IDENTITY",
		"hshop.orders#status => hshop.paid_view INDIRECT/FILTER",
	},
	// CREATE TABLE paid_copy AS SELECT order_id, amount * 2 AS doubled FROM paid_view (Hive's
	// lineage goes through the view to its table)
	"hive.hshop.paid_copy": {
		"hshop.orders#order_id -> hshop.paid_copy#order_id DIRECT/IDENTITY",
		"hshop.orders#amount -> hshop.paid_copy#doubled DIRECT/TRANSFORMATION",
		"hshop.orders#status => hshop.paid_copy INDIRECT/FILTER",
	},
}

// sparkMixedEdges is the lineage of e2e/testdata/hive_mixed.sql, the Spark job over Hive's table.
var sparkMixedEdges = []string{
	"hshop.country_revenue#country -> hshop.country_report#country DIRECT/TRANSFORMATION",
	"hshop.country_revenue#revenue -> hshop.country_report#revenue DIRECT/IDENTITY",
	"hshop.country_revenue#orders => hshop.country_report INDIRECT/FILTER",
}

var counter = regexp.MustCompile(`(\w+)=(\d+)`)

// counters parses colline's counters as dev/hive-sql prints them: {seen=3, published=2, ...}.
func counters(s string) map[string]int {
	out := map[string]int{}
	for _, m := range counter.FindAllStringSubmatch(s, -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

// TestHiveEndToEnd: HiveQL in a real Hive 4.0.1 (in-process, JDK 17, Thrift metastore on Derby)
// with colline's hook and metastore listener → Kafka → the consumer → Neo4j; then Spark 4.1 reads
// a table Hive wrote from the same metastore and writes another, and the column path crosses both
// engines on one Dataset node; a broken Kafka and a throwing hook fail no query; the DDL of the
// metastore listener marks the graph. One Hive JVM runs all of it.
func TestHiveEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver := s.Neo4j(ctx, t)
	// the hshop datasets and the Hive jobs are this test's own
	for _, p := range []string{"spark_catalog/hshop.", "default/hive"} {
		if err := stack.WipeKeys(ctx, driver, p); err != nil {
			t.Fatal(err)
		}
	}
	nano := time.Now().UnixNano()
	topic := fmt.Sprintf("colline.e2e.hive-%d", nano)
	if err := s.CreateTopics(ctx, 3, topic, topic+".dlq"); err != nil {
		t.Fatalf("Kafka is not usable at %s (start it with dev/services start): %v", s.Brokers, err)
	}
	work := t.TempDir()

	// 1. Hive runs the scenarios with the hook and the listener publishing to Kafka.
	start := time.Now()
	var files, jobs []string
	for _, f := range hiveFiles() {
		files = append(files, filepath.Join("plan", "testdata", "hive-scenarios", f+".hql"))
		jobs = append(jobs, strings.Fields(hiveJob[f])...)
	}
	h, err := s.StartHive(ctx, filepath.Join(work, "hive"), topic, files...)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	t.Logf("hive: %d files in %.1fs (metastore %s)", len(files), time.Since(start).Seconds(), h.Metastore)

	// 2. Spark 4.1 (Hive 4 metastore client: the jars Hive runs on) reads hshop.country_revenue,
	// which Hive wrote, and writes hshop.country_report.
	app := fmt.Sprintf("colline-e2e-hive-mixed-%d", nano)
	start = time.Now()
	if err := s.Spark(ctx, filepath.Join(work, "spark"), topic, []string{"SPARK_LINE=4.1_2.13"},
		"-Dspark.app.name="+app,
		"-Dspark.hadoop.hive.metastore.uris="+h.Metastore,
		"-Dspark.sql.hive.metastore.version=4.0.1",
		"-Dspark.sql.hive.metastore.jars=path",
		"-Dspark.sql.hive.metastore.jars.path=file://"+h.Jars+"/*.jar",
		"e2e/testdata/hive_mixed.sql"); err != nil {
		t.Fatal(err)
	}
	t.Logf("spark 4.1 on Hive's metastore: %.1fs", time.Since(start).Seconds())

	// 3. A broken Kafka and a throwing hook: the queries succeed, the losses are counted.
	// (the counters are summed over the JVM's publishers, one per distinct colline.* settings)
	noop := writeHQL(t, work, "noop.hql", "SET colline.namespace=default;")
	st, err := h.Run(ctx, s.Root, noop)
	if err != nil {
		t.Fatal(err)
	}
	before := counters(st)
	kafkaDown := writeHQL(t, work, "kafka_down.hql", "SET colline.kafka.bootstrapServers=127.0.0.1:9;",
		"INSERT OVERWRITE TABLE hshop.paid_orders SELECT order_id, amount FROM hshop.orders WHERE status = 'open';")
	if st, err = h.Run(ctx, s.Root, kafkaDown); err != nil {
		t.Fatalf("a query with Kafka down: %v", err)
	}
	if c := counters(st); c["droppedKafkaDown"]-before["droppedKafkaDown"] < 1 {
		t.Fatalf("Kafka down: counters %s (before: %v), want droppedKafkaDown to grow", st, before)
	}
	t.Logf("Kafka down: the query succeeded; %s", st)
	before = counters(st)
	throwing := writeHQL(t, work, "hook_throws.hql", "SET colline.kafka.bootstrapServers=127.0.0.1:9;",
		"SET colline.test.throwIn=hook;",
		"INSERT OVERWRITE TABLE hshop.paid_orders SELECT order_id, amount FROM hshop.orders WHERE status = 'paid';")
	st, err = h.Run(ctx, s.Root, throwing)
	if err != nil {
		t.Fatalf("a query with a throwing hook: %v", err)
	}
	if c := counters(st); c["internalErrors"]-before["internalErrors"] < 1 {
		t.Fatalf("throwing hook: counters %s (before: %v), want internalErrors to grow", st, before)
	}
	t.Logf("hook throwing StackOverflowError: the query succeeded; %s", st)

	// 4. DDL through the metastore listener, after Spark read: ALTER (add, replace columns),
	// TRUNCATE, RENAME, DROP. The session's Kafka settings are the test's again.
	restore := writeHQL(t, work, "restore.hql", "SET colline.kafka.bootstrapServers="+s.Brokers+";", "SET colline.test.throwIn=;")
	if _, err := h.Run(ctx, s.Root, restore); err != nil {
		t.Fatal(err)
	}
	if st, err = h.Run(ctx, s.Root, "plan/testdata/hive-scenarios/09_ddl.hql"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("hive: %v", err)
	}
	sent, err := s.Messages(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("events in Kafka: %d (hive %s)", sent, st)

	// 5. The consumer reads them into Neo4j.
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, bin, topic, topic+".first"); err != nil {
		t.Fatal(err)
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Fatalf("dead letters: %d (%v), want 0", dead, err)
	}
	reader := graph.NewReader(driver, "")
	total := 0
	for _, job := range jobs {
		want := hiveEdges[job]
		got := edgeLines(t, ctx, reader, "default/"+job)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("job %s: lineage in Neo4j:\n%s\n\nwant:\n%s", job, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		total += len(got)
	}
	sort.Strings(sparkMixedEdges)
	if got := edgeLines(t, ctx, reader, "default/"+app); strings.Join(got, "\n") != strings.Join(sparkMixedEdges, "\n") {
		t.Errorf("Spark job over Hive's table: lineage in Neo4j:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(sparkMixedEdges, "\n"))
	}
	t.Logf("edges: %d Hive jobs, %d relationships, and the Spark job's %d, all as expected", len(jobs), total, len(sparkMixedEdges))

	// 6. The column path crosses the engines: Hive fed country_revenue.revenue from orders.amount,
	// Spark fed country_report.revenue from it; one Dataset node for the table both used.
	res, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH p = (:Column {key: $src})-[a:FEEDS]->(mid:Column)-[b:FEEDS]->(:Column {key: $dst})
RETURN mid.key AS mid, a.job AS first, b.job AS second`, map[string]any{
		"src": "spark_catalog/hshop.orders#amount", "dst": "spark_catalog/hshop.country_report#revenue"},
		neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("want one path orders.amount → country_revenue.revenue → country_report.revenue, got %d", len(res.Records))
	}
	r := res.Records[0]
	if mid, _ := r.Get("mid"); mid != "spark_catalog/hshop.country_revenue#revenue" {
		t.Fatalf("the path goes through %v", mid)
	}
	first, _ := r.Get("first")
	second, _ := r.Get("second")
	if first != "default/hive.hshop.country_revenue" || second != "default/"+app {
		t.Fatalf("the path's jobs are %v then %v, want the Hive job then the Spark job", first, second)
	}
	t.Logf("cross-engine path: hshop.orders.amount -[%v]-> hshop.country_revenue.revenue -[%v]-> hshop.country_report.revenue", first, second)

	// 7. The metastore listener's DDL: columns replaced, truncated, renamed, dropped.
	for _, q := range []struct{ what, cypher string }{
		{"note dropped by REPLACE COLUMNS", `MATCH (c:Column {key: 'spark_catalog/hshop.scratch#note'}) WHERE c.droppedAt IS NOT NULL RETURN count(c) AS n`},
		{"extra added by ADD COLUMNS", `MATCH (:Dataset {key: 'spark_catalog/hshop.scratch'})-[:HAS_COLUMN]->(c:Column {key: 'spark_catalog/hshop.scratch#extra'}) WHERE c.droppedAt IS NULL RETURN count(c) AS n`},
		{"scratch truncated", `MATCH (d:Dataset {key: 'spark_catalog/hshop.scratch'}) WHERE d.truncatedAt IS NOT NULL RETURN count(d) AS n`},
		{"scratch renamed", `MATCH (:Dataset {key: 'spark_catalog/hshop.scratch'})-[:RENAMED_TO]->(:Dataset {key: 'spark_catalog/hshop.scratch_renamed'}) RETURN count(*) AS n`},
		{"scratch_renamed dropped", `MATCH (d:Dataset {key: 'spark_catalog/hshop.scratch_renamed'}) WHERE d.droppedAt IS NOT NULL RETURN count(d) AS n`},
		{"the changes are runs of the metastore job", `MATCH (:Job {key: 'default/hive-metastore'})-[:HAS_RUN]->(r:Run)-[c:CHANGED]->(:Dataset) RETURN count(c) AS n`},
	} {
		checkCount(t, ctx, driver, q.what, q.cypher)
	}
	if os.Getenv("COLLINE_E2E_HIVE") == "full" {
		checkCount(t, ctx, driver, "paid_view dropped, its lineage kept",
			`MATCH (d:Dataset {key: 'spark_catalog/hshop.paid_view', kind: 'view'}) WHERE d.droppedAt IS NOT NULL AND EXISTS { (:Column)-[:FEEDS]->(:Column)<-[:HAS_COLUMN]-(d) } RETURN count(d) AS n`)
	}

	// 8. Replaying the topic changes nothing.
	graphBefore := stack.Snapshot(ctx, t, driver, hshop, nil)
	if err := s.Consume(ctx, bin, topic, topic+".replay"); err != nil {
		t.Fatal(err)
	}
	if after := stack.Snapshot(ctx, t, driver, hshop, nil); strings.Join(graphBefore, "\n") != strings.Join(after, "\n") {
		t.Fatalf("replay changed the graph")
	}
	t.Logf("replay: %d nodes and relationships compared, identical", len(graphBefore))
}

// checkCount fails t unless the query's count n is at least 1.
func checkCount(t *testing.T, ctx context.Context, driver neo4j.DriverWithContext, what, cypher string) {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, driver, cypher, nil, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.Records[0].Get("n"); n.(int64) < 1 {
		t.Errorf("%s: not in the graph (%s)", what, cypher)
	}
}

func writeHQL(t *testing.T, dir, name string, stmts ...string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, []byte(strings.Join(stmts, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// hshop is what the Hive test wrote: every hshop dataset and column, every Hive job and their runs.
const hshop = `MATCH (n) WHERE n.key STARTS WITH 'spark_catalog/hshop.' OR n.key STARTS WITH 'default/hive'
   OR EXISTS { MATCH (j:Job)-[:HAS_RUN]->(n) WHERE j.key STARTS WITH 'default/hive' }`

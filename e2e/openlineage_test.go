//go:build e2e

package e2e

// OpenLineage interoperability end to end (issue 12, docs/openlineage.md): real producers into
// one graph. A Spark job (dev/dbt/lake.sql) runs with colline's listener (to the plan topic) and
// openlineage-spark (its Kafka transport, to the OpenLineage topic); a dbt project
// (dev/dbt/shop, dbt-ol on dbt-duckdb, from the virtualenv of dev/dbt/setup) reads the tables
// Spark wrote and posts its events to the consumer's POST /api/v1/lineage (OpenLineage's HTTP
// transport, with an API key). The column path must run from the Spark source to the dbt model.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/ingest"
)

func TestSparkToDBT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver, err := neo4j.NewDriverWithContext(s.Neo4jURI, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(ctx)
	if err := driver.VerifyConnectivity(ctx); err != nil {
		t.Fatalf("Neo4j is not reachable at %s (start it with dev/services start): %v", s.Neo4jURI, err)
	}
	id := stack.NewID()
	plans, olTopic, group := "colline.e2e.ol-"+id, "colline.e2e.ol-"+id+".openlineage", "colline-e2e-ol-"+id
	if err := s.CreateTopics(ctx, 3, plans, plans+".dlq", olTopic); err != nil {
		t.Fatalf("Kafka is not usable at %s: %v", s.Brokers, err)
	}
	k := s.Kafka()
	defer k.Close()
	defer k.DeleteTopics(context.Background(), plans, plans+".dlq", olTopic)

	// 1. Spark writes the lake (managed tables in the warehouse of this test's work dir): colline's
	// listener to the plan topic, openlineage-spark to the OpenLineage topic.
	work := t.TempDir()
	lake := filepath.Join(work, "spark", "warehouse", "lake.db")
	sqlFile := filepath.Join(s.Root, "dev", "dbt", "lake.sql")
	if err := stack.WipeKeys(ctx, driver, "spark_catalog/lake."); err != nil {
		t.Fatal(err)
	}
	app := "colline-e2e-ol-" + id
	dbtNS := "colline-e2e-dbt-" + id
	start := time.Now()
	if err := s.Spark(ctx, filepath.Join(work, "spark"), plans,
		[]string{"SPARK_LINE=3.5_2.12", "OPENLINEAGE_KAFKA_BOOTSTRAP=" + s.Brokers, "OPENLINEAGE_KAFKA_TOPIC=" + olTopic},
		"--connectors=openlineage", "-Dspark.app.name="+app, sqlFile); err != nil {
		t.Fatal(err)
	}
	sparkEvents, _ := s.Messages(ctx, plans)
	olEvents, _ := s.Messages(ctx, olTopic)
	t.Logf("spark: %.1fs; %d colline events, %d openlineage-spark events", time.Since(start).Seconds(), sparkEvents, olEvents)
	if sparkEvents == 0 || olEvents == 0 {
		t.Fatalf("want events from both listeners, got %d and %d", sparkEvents, olEvents)
	}

	// 2. The consumer reads both topics and serves the HTTP endpoint.
	start = time.Now()
	setup := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "dbt", "setup"))
	setup.Stdout, setup.Stderr = s.Log, s.Log
	if err := setup.Run(); err != nil {
		t.Fatalf("dev/dbt/setup: %v", err)
	}
	t.Logf("dbt virtualenv: %.1fs", time.Since(start).Seconds())
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	duck := filepath.Join(work, "shop.duckdb")
	duckNS := "duckdb://" + duck + "/"
	apiKey := "e2e-" + stack.NewID()
	logFile := filepath.Join(t.TempDir(), "consumer.log")
	c := stack.StartConsumer(t, bin, logFile,
		"COLLINE_KAFKA_BROKERS="+s.Brokers, "COLLINE_KAFKA_TOPIC="+plans, "COLLINE_KAFKA_DLQ_TOPIC="+plans+".dlq",
		"COLLINE_KAFKA_GROUP="+group, "COLLINE_NEO4J_URI="+s.Neo4jURI,
		"COLLINE_OPENLINEAGE_TOPIC="+olTopic, "COLLINE_OPENLINEAGE_HTTP_ADDR=127.0.0.1:0",
		"COLLINE_OPENLINEAGE_HTTP_API_KEY="+apiKey,
		// dbt-duckdb names the views over Spark's files shop.lake.<table>: they are Spark's tables
		"COLLINE_OPENLINEAGE_ALIASES="+duckNS+"shop.lake.=spark_catalog/lake.",
	)
	defer func() { // this test's part of the shared graph: DuckDB's datasets, the OpenLineage jobs and runs
		ctx := context.Background()
		stack.WipeKeys(ctx, driver, duckNS)
		neo4j.ExecuteQuery(ctx, driver, `MATCH (j:Job) WHERE j.namespace = $dbt OR j.name STARTS WITH $spark
OPTIONAL MATCH (j)-[:HAS_RUN]->(r) DETACH DELETE j, r`, map[string]any{"dbt": dbtNS, "spark": strings.ReplaceAll(app, "-", "_")}, neo4j.EagerResultTransformer)
	}()
	endpoint := servingOpenLineage(t, logFile)

	// 3. dbt-ol runs the project on DuckDB, posting to the endpoint.
	olConfig := filepath.Join(work, "openlineage.yml")
	if err := os.WriteFile(olConfig, []byte(fmt.Sprintf("transport:\n  type: http\n  url: http://%s\n  endpoint: api/v1/lineage\n  auth:\n    type: api_key\n    apiKey: %s\n", endpoint, apiKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(s.Root, ".cache", "dbt-venv", "bin")
	dbt := exec.CommandContext(ctx, filepath.Join(venv, "dbt-ol"), "run", "--no-version-check", "--vars", `{"lake": "`+lake+`"}`)
	dbt.Dir = filepath.Join(s.Root, "dev", "dbt", "shop")
	dbt.Env = append(stack.Environ(), "PATH="+venv+":"+os.Getenv("PATH"), "DBT_PROFILES_DIR="+dbt.Dir, "OPENLINEAGE_CONFIG="+olConfig,
		"OPENLINEAGE_NAMESPACE="+dbtNS, "DBT_SEND_ANONYMOUS_USAGE_STATS=false", "COLLINE_DBT_DUCKDB="+duck,
		"DBT_TARGET_PATH="+filepath.Join(work, "target"), "DBT_LOG_PATH="+filepath.Join(work, "logs"))
	dbt.Stdout, dbt.Stderr = s.Log, s.Log
	start = time.Now()
	if err := dbt.Run(); err != nil {
		t.Fatalf("dbt-ol run: %v", err)
	}
	posted, _ := s.Messages(ctx, olTopic)
	t.Logf("dbt-ol: %.1fs; %d dbt-ol events posted and accepted", time.Since(start).Seconds(), posted-olEvents)
	if posted <= olEvents {
		t.Fatal("dbt-ol posted nothing the endpoint accepted")
	}

	// 4. Everything is consumed (the group has no lag on either topic), then the graph is asked.
	backlog := ingest.Backlog{Brokers: strings.Split(s.Brokers, ","), Topics: []string{plans, olTopic}, Group: group}
	for {
		lag, err := backlog.Lag(ctx)
		total := int64(-1)
		if err == nil {
			total = 0
			for _, n := range lag {
				total += n
			}
		}
		if total == 0 {
			break
		}
		if ctx.Err() != nil || !c.Running() {
			t.Fatalf("the consumer did not consume both topics (lag %v, %v); log %s", lag, err, logFile)
		}
		time.Sleep(time.Second)
	}
	if dead, err := s.Messages(ctx, plans+".dlq"); err != nil || dead != 0 {
		t.Errorf("dead letters: %d (%v), want 0", dead, err)
	}

	q := func(cypher string, params map[string]any) []*neo4j.Record {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, driver, cypher, params, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		return res.Records
	}
	dbtModel := duckNS + "shop.main.country_revenue#revenue"

	// a. The column path from the Spark source to the dbt model, across the two tools.
	recs := q(`MATCH p = (:Column {key: 'spark_catalog/lake.raw_orders#amount'})-[:FEEDS*1..6]->(:Column {key: $model})
RETURN [n IN nodes(p) | n.key] AS columns, [r IN relationships(p) | r.job] AS jobs ORDER BY length(p) LIMIT 1`, map[string]any{"model": dbtModel})
	if len(recs) == 0 {
		t.Fatalf("no FEEDS path from spark_catalog/lake.raw_orders#amount to %s", dbtModel)
	}
	cols, jobs := recs[0].Values[0].([]any), recs[0].Values[1].([]any)
	want := []string{"spark_catalog/lake.raw_orders#amount", "spark_catalog/lake.orders#amount_gross",
		duckNS + "shop.main.stg_orders#amount", duckNS + "shop.main.customer_orders#total_amount", dbtModel}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Errorf("path %v, want %v", cols, want)
	}
	t.Logf("column path Spark → dbt: %v\n  jobs: %v", cols, jobs)

	// b. One table, one node: the table Spark wrote has column edges from colline's own job and
	// from openlineage-spark's, and dbt's reads land on it; no other node has its location.
	recs = q(`MATCH (s:Column)-[f:FEEDS]->(:Column {key: 'spark_catalog/lake.orders#amount_gross'})
RETURN collect(DISTINCT f.job) AS jobs`, nil)
	writers := recs[0].Values[0].([]any)
	var collineJob, olJob bool
	for _, j := range writers {
		collineJob = collineJob || strings.HasSuffix(j.(string), "/"+app)
		olJob = olJob || strings.HasPrefix(j.(string), "colline-dev/colline_e2e_ol_")
	}
	if !collineJob || !olJob {
		t.Errorf("jobs writing lake.orders.amount_gross: %v; want colline's (…/%s) and openlineage-spark's (colline-dev/colline_e2e_ol_…)", writers, app)
	}
	recs = q(`MATCH (d:Dataset) WHERE d.key IN ['file' + $loc, $duck + 'shop.lake.orders'] OR d.location ENDS WITH $loc
RETURN collect(d.key) AS keys`, map[string]any{"loc": lake + "/orders", "duck": duckNS})
	if keys := recs[0].Values[0].([]any); len(keys) != 1 || keys[0] != "spark_catalog/lake.orders" {
		t.Errorf("datasets of the table lake.orders (by its path, its DuckDB name, its location): %v, want only spark_catalog/lake.orders", keys)
	}
	recs = q(`MATCH (:Column {key: 'spark_catalog/lake.orders#amount_gross'})-[f:FEEDS]->(:Column {key: $stg}) RETURN f.job AS job`,
		map[string]any{"stg": duckNS + "shop.main.stg_orders#amount"})
	if len(recs) != 1 || recs[0].Values[0] != dbtNS+"/shop.main.shop.stg_orders" {
		t.Errorf("dbt's edge from Spark's table: %v, want one of job %s/shop.main.shop.stg_orders", recs, dbtNS)
	}

	// c. Runs: each OpenLineage run (START, RUNNING, COMPLETE, by runId) is one Run that succeeded;
	// dbt's model runs are children of the dbt run.
	recs = q(`MATCH (j:Job)-[:HAS_RUN]->(r:Run) WHERE j.namespace IN ['colline-dev', $dbt] AND (j.name STARTS WITH 'colline_e2e_ol_' OR j.namespace = $dbt)
OPTIONAL MATCH (r)-[:CHILD_OF]->(p:Run)<-[:HAS_RUN]-(pj:Job)
RETURN j.namespace = $dbt AS dbt, r.status AS status, pj.name AS parent, count(*) AS runs ORDER BY dbt, status, parent`, map[string]any{"dbt": dbtNS})
	var runs []string
	for _, r := range recs {
		runs = append(runs, fmt.Sprintf("dbt=%v status=%v parent=%v runs=%v", r.Values[0], r.Values[1], r.Values[2], r.Values[3]))
	}
	t.Logf("OpenLineage runs: %v", runs)
	var dbtChildren, sparkRuns int64
	for _, r := range recs {
		if r.Values[1] != "success" && r.Values[1] != nil {
			t.Errorf("a run that did not succeed: %v", r.Values)
		}
		if r.Values[0] == true && r.Values[2] == "dbt-run-shop" {
			dbtChildren += r.Values[3].(int64)
		}
		if r.Values[0] == false {
			sparkRuns += r.Values[3].(int64)
		}
	}
	if dbtChildren != 4 || sparkRuns == 0 {
		t.Errorf("runs %v: want the 4 dbt models as children of dbt-run-shop, and openlineage-spark's runs", runs)
	}
	recs = q(`MATCH (j:Job {namespace: $dbt})-[:HAS_RUN]->(r:Run) WITH r.key AS run, count(*) AS n WHERE n > 1 RETURN count(*) AS dup`, map[string]any{"dbt": dbtNS})
	if recs[0].Values[0].(int64) != 0 {
		t.Errorf("a runId is more than one Run")
	}

	// 5. SIGTERM drains and exits 0.
	c.Signal(syscall.SIGTERM)
	if code := c.Wait(t, time.Minute); code != 0 {
		t.Errorf("consumer exit %d; log %s", code, logFile)
	}
}

// servingOpenLineage waits for the consumer's "serving OpenLineage" log line and returns the
// endpoint's address.
func servingOpenLineage(t *testing.T, logFile string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		f, err := os.Open(logFile)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving OpenLineage" {
				f.Close()
				return line.Addr
			}
		}
		f.Close()
	}
	t.Fatalf("no \"serving OpenLineage\" line in %s", logFile)
	return ""
}

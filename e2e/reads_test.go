//go:build e2e

package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
)

// TestReadOnlyJobEndToEnd runs a job that never writes (e2e/testdata/read_only.sql: chained
// temporary views, an aggregate, a collect) with spark.colline.publishReads=true, and checks that
// its reads are in Neo4j, bound to the job and its run: the run READ both tables and WROTE the
// job's result dataset (plan.ResultDataset), whose columns are fed by the columns they depend on.
func TestReadOnlyJobEndToEnd(t *testing.T) {
	for _, line := range sparkLines(t) {
		t.Run("spark-"+line, func(t *testing.T) { testReadOnly(t, line) })
	}
}

func testReadOnly(t *testing.T, line string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, driver, app, topic := jobStack(t, ctx, "colline-e2e-dq", "spark_catalog/dq.", 1)
	job := "default/" + app
	if err := s.Spark(ctx, t.TempDir(), topic, []string{"SPARK_LINE=" + line},
		"-Dspark.app.name="+app, "-Dspark.colline.publishReads=true", "e2e/testdata/read_only.sql"); err != nil {
		t.Fatal(err)
	}
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, bin, topic, topic+".g"); err != nil {
		t.Fatal(err)
	}

	// the result dataset of the collect (dev/spark/SparkSqlRunner.java collects with
	// collectAsList, Spark's funcName): its key is the job's, the action's and the result columns'
	const action = "collectAsList"
	result := plan.ResultDataset(events.App{Namespace: "default", Name: app}, action, []string{"country", "total", "orders"}).Key
	const orders, customers = "spark_catalog/dq.orders", "spark_catalog/dq.customers"

	// 1. the run of the collect read both tables and wrote the result
	res, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH (:Job {key: $job})-[:HAS_RUN]->(r:Run {funcName: $action})-[w:WROTE]->(d:Dataset {key: $result})
MATCH (r)-[:READ]->(src:Dataset)
RETURN d.kind AS kind, w.mode AS mode, collect(src.key) AS reads`,
		map[string]any{"job": job, "result": result, "action": action}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("want one collect run of %s that wrote %s, got %d", job, result, len(res.Records))
	}
	rec := res.Records[0].AsMap()
	reads := make([]string, 0)
	for _, r := range rec["reads"].([]any) {
		reads = append(reads, r.(string))
	}
	sort.Strings(reads)
	if rec["kind"] != "result" || rec["mode"] != action || strings.Join(reads, " ") != customers+" "+orders {
		t.Fatalf("collect run: result kind %v, mode %v, reads %v; want result, %s, [%s %s]", rec["kind"], rec["mode"], reads, action, customers, orders)
	}

	// 2. the result's column lineage, derived from the SQL: the views are collapsed into the tables
	want := []string{
		"dq.customers#country -> " + result + "#country DIRECT/IDENTITY",
		"dq.orders#amount -> " + result + "#total DIRECT/AGGREGATION",
		"dq.customers#country => " + result + " INDIRECT/GROUP_BY",
		"dq.customers#customer_id => " + result + " INDIRECT/JOIN",
		"dq.orders#customer_id => " + result + " INDIRECT/JOIN",
		"dq.orders#status => " + result + " INDIRECT/FILTER",
	}
	sort.Strings(want)
	got := edgeLines(t, ctx, graph.NewReader(driver, ""), job)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lineage of the read-only job in Neo4j:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("read-only job %s on %s: reads %v, %d edges as expected", job, line, reads, len(want))

	// 3. an impact question reaches the check: orders.amount feeds the job's result
	down, err := graph.NewReader(driver, "").Downstream(ctx, orders+"#amount", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(down, result+"#total") {
		t.Fatalf("downstream of %s#amount: %v, want %s#total in it", orders, down, result)
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Fatalf("dead letters: %d (%v), want 0", dead, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Command demo is colline's main job on one machine: a Spark job runs with the listener, its plans
// go through real Kafka to the consumer, and the lineage that is then in Neo4j is printed.
// `make demo` starts Kafka, Neo4j and the explorer (dev/services) and builds the consumer, the listener
// and bin/colline first.
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
)

const (
	app = "colline-demo"
	sql = "e2e/testdata/skeleton.sql"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		return err
	}
	logs, err := os.CreateTemp("", "colline-demo-*.log")
	if err != nil {
		return err
	}
	defer logs.Close()
	s.Log = logs

	// A topic of its own per run, so what earlier runs or other jobs left in colline.plans does
	// not change what this one shows.
	topic := fmt.Sprintf("colline.demo.%d", time.Now().Unix())
	if err := s.CreateTopics(ctx, 3, topic, topic+".dlq"); err != nil {
		return fmt.Errorf("%w (is Kafka up? dev/services start)", err)
	}

	step("1/3", "running %s in local Spark with the colline listener (logs: %s)", sql, logs.Name())
	work, err := os.MkdirTemp("", "colline-demo-spark-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := s.Spark(ctx, work, topic, nil, "-Dspark.app.name="+app, sql); err != nil {
		return fmt.Errorf("%w (see %s)", err, logs.Name())
	}

	step("2/3", "consuming %s into Neo4j at %s", topic, s.Neo4jURI)
	bin := filepath.Join(s.Root, "bin", "colline-consumer")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run `make consumer` (make demo does)", bin)
	}
	if err := s.Consume(ctx, bin, topic, topic); err != nil {
		return fmt.Errorf("%w (see %s)", err, logs.Name())
	}

	step("3/3", "lineage of job default/%s now in Neo4j:", app)
	driver, err := neo4j.NewDriverWithContext(s.Neo4jURI, neo4j.NoAuth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	// one row per role: FEEDS into columns, DECIDES_ROWS into the written dataset ("(rows)")
	res, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS {job: $job}]->(t)
UNWIND range(0, size(f.roles) - 1) AS k
RETURN CASE type(f) WHEN 'FEEDS' THEN t.key ELSE t.key + ' (rows)' END AS target, s.key AS source,
       f.roles[k] AS how, coalesce(f.masked[k], false) AS masked, coalesce(f.exprs[k], '') AS expr
ORDER BY target, how, source`, map[string]any{"job": "default/" + app}, neo4j.EagerResultTransformer)
	if err != nil {
		return err
	}
	if len(res.Records) == 0 {
		return fmt.Errorf("no lineage for job default/%s in Neo4j (see %s)", app, logs.Name())
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tSOURCE COLUMN\tHOW\tEXPRESSION")
	for _, r := range res.Records {
		m := r.AsMap()
		how := m["how"].(string)
		if m["masked"].(bool) {
			how += " (masked)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", short(m["target"]), short(m["source"]), how, cut(m["expr"].(string), 60))
	}
	tw.Flush()

	const key = "spark_catalog/shop.top_countries#revenue"
	path, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH p = (src:Column)-[:FEEDS*1..5 {type: 'DIRECT'}]->(:Column {key: $key})
WHERE NOT ()-[:FEEDS {type: 'DIRECT'}]->(src)
RETURN DISTINCT [n IN nodes(p) | n.key] AS path`, map[string]any{"key": key}, neo4j.EagerResultTransformer)
	if err != nil {
		return err
	}
	fmt.Printf("\nWhere %s comes from, across jobs (each column path once, whichever jobs wrote it):\n", short(key))
	for _, r := range path.Records {
		var hops []string
		for _, k := range r.Values[0].([]any) {
			hops = append(hops, short(k))
		}
		fmt.Println("  " + strings.Join(hops, "  →  "))
	}
	explorer := fmt.Sprintf("http://127.0.0.1:%s/#/lineage?%s", stack.Getenv("COLLINE_UI_PORT", "7480"),
		url.Values{"column": {key}, "dir": {"up"}, "steps": {"5"}}.Encode())
	sqlPanel := fmt.Sprintf("http://127.0.0.1:%s/#/sql", stack.Getenv("COLLINE_UI_PORT", "7480"))
	fmt.Printf(`
See it drawn as tables and columns in the explorer (colline ui, started by make demo):
  %s
Paste SQL and see its lineage before it runs, in the SQL panel (a warm analyzer, started by make
demo; the tables colline knows come from this graph, the others are inferred from the SQL):
  %s
  for example: INSERT INTO shop.top_countries SELECT country, revenue FROM shop.country_revenue WHERE revenue > 100
Browse it in Neo4j Browser: http://127.0.0.1:%s/browser/ (no login; connect to %s); colline's style
and guide load when it connects, or run
  MATCH p = (:Column)-[:FEEDS|DECIDES_ROWS|HAS_COLUMN*1..10]->(:Column {key: '%s'}) RETURN p
Stop the services (the explorer and the analyzer too) with: make services-stop
`, explorer, sqlPanel, stack.Getenv("COLLINE_NEO4J_HTTP_PORT", "17474"), s.Neo4jURI, key)
	return nil
}

func step(n, format string, args ...any) {
	fmt.Printf("==> [%s] %s\n", n, fmt.Sprintf(format, args...))
}

func short(v any) string { return strings.TrimPrefix(fmt.Sprint(v), "spark_catalog/") }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

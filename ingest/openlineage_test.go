package ingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/openlineage/intake"
	"github.com/colline/colline/process"
)

// capturedDBT returns dbt-ol's captured events (openlineage/testdata/dbt), made this test's own:
// every run id replaced by a fresh UUID (the same one for the same run), the DuckDB path and the
// job namespace by fresh ones. Otherwise they are the bytes dbt-ol wrote.
func capturedDBT(t *testing.T, id string) [][]byte {
	t.Helper()
	data, err := os.ReadFile("../openlineage/testdata/dbt/dbt-openlineage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	fresh := map[string]string{}
	data = uuid.ReplaceAllFunc(data, func(u []byte) []byte {
		if fresh[string(u)] == "" {
			fresh[string(u)] = string(u[:24]) + id + "0000"
		}
		return []byte(fresh[string(u)])
	})
	data = bytes.ReplaceAll(data, []byte("/tmp/colline-ol-dbt/shop.duckdb"), []byte("/tmp/"+id+"/shop.duckdb"))
	data = bytes.ReplaceAll(data, []byte(`"namespace": "colline-dev"`), []byte(`"namespace": "it-`+id+`"`))
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// TestOpenLineageTopic runs the loop on a plan topic and an OpenLineage topic at once, against
// the real services: dbt-ol's captured events (START and COMPLETE of every model, twice, and the
// parent job's) land in the graph with one Run per runId, and a broken event goes to the
// dead-letter topic with reason invalid_openlineage, named in its headers. Redelivered from a
// new group, the same events change nothing.
func TestOpenLineageTopic(t *testing.T) {
	k, uri := stack.TestKafka(t), stack.TestNeo4jURI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plans, dlqTopic, group := k.TestTopics(t, "ingest-ol", 1, 0)
	olTopic := plans + ".openlineage"
	if err := k.CreateTopics(ctx, stack.Topic{Name: olTopic, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.DeleteTopics(context.Background(), olTopic) })
	id := stack.NewID()
	evs := capturedDBT(t, id)
	bad := bytes.Replace(evs[1], []byte(`"eventTime"`), []byte(`"eventTimeX"`), 1)
	var msgs []kafka.Message
	for _, e := range append(evs, bad) {
		parsed, err := openlineage.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Key: []byte(openlineage.MessageKey(parsed)), Value: e})
	}
	w := NewProducer(k.Brokers, olTopic, 0, nil)
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()

	driver, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// cleanups run last first: the wipe, then the driver's close
	t.Cleanup(func() { driver.Close(context.Background()) })
	t.Cleanup(func() {
		ctx := context.Background()
		if _, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (j:Job {namespace: $ns}) OPTIONAL MATCH (j)-[:HAS_RUN]->(r) DETACH DELETE j, r`,
			map[string]any{"ns": "it-" + id}, neo4j.EagerResultTransformer); err != nil {
			t.Errorf("wipe the jobs: %v", err)
		}
		if err := stack.WipeKeys(ctx, driver, "duckdb:///tmp/"+id); err != nil {
			t.Error(err)
		}
	})
	store := graph.NewWriter(driver, "")
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	consume := func(group string) *Metrics {
		reader := NewReader(ReaderOptions{Brokers: k.Brokers, Topics: []string{plans, olTopic}, Group: group}, nil)
		defer reader.Close()
		dlq := NewProducer(k.Brokers, dlqTopic, 0, nil)
		defer dlq.Close()
		m := NewMetrics(nil)
		loop, err := New(Params{
			Fetcher: reader, Committer: reader, Writer: store, DeadLetters: dlq, Metrics: m,
			Processor: Topics{plans: Extractor{Metrics: m}, olTopic: intake.Topic{Step: intake.Step{Validator: v}, Metrics: m}},
			Setup:     store.Bootstrap, ExitWhenIdle: 2 * time.Second,
			Backlog: Backlog{Brokers: k.Brokers, Topics: []string{plans, olTopic}, Group: group},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := loop.Run(ctx); err != nil {
			t.Fatalf("Run = %v", err)
		}
		return m
	}
	consume(group)

	ns := "duckdb:///tmp/" + id + "/shop.duckdb/"
	down, err := graph.NewReader(driver, "").Downstream(ctx, ns+"shop.main.stg_orders#amount", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ns + "shop.main.country_revenue#gold_customers", ns + "shop.main.country_revenue#revenue",
		ns + "shop.main.customer_orders#tier", ns + "shop.main.customer_orders#total_amount"}
	if strings.Join(down, " ") != strings.Join(want, " ") {
		t.Errorf("downstream of stg_orders.amount = %v, want %v", down, want)
	}
	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (j:Job)-[:HAS_RUN]->(r:Run) WHERE j.namespace = $ns
OPTIONAL MATCH (r)-[:CHILD_OF]->(p:Run)<-[:HAS_RUN]-(pj:Job)
RETURN j.name AS job, r.status AS status, r.startedAt IS NOT NULL AND r.endedAt >= r.startedAt AS timed, pj.name AS parent ORDER BY job, parent`,
		map[string]any{"ns": "it-" + id}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, r := range res.Records {
		var parent any = r.Values[3]
		runs = append(runs, strings.Join([]string{r.Values[0].(string), r.Values[1].(string), boolString(r.Values[2]), anyString(parent)}, " "))
	}
	wantRuns := []string{
		"dbt-run-shop success true -", "dbt-run-shop success true -",
		"shop.main.shop.country_revenue success true dbt-run-shop", "shop.main.shop.country_revenue success true dbt-run-shop",
		"shop.main.shop.customer_orders success true dbt-run-shop", "shop.main.shop.customer_orders success true dbt-run-shop",
		"shop.main.shop.stg_customers success true dbt-run-shop", "shop.main.shop.stg_customers success true dbt-run-shop",
		"shop.main.shop.stg_orders success true dbt-run-shop", "shop.main.shop.stg_orders success true dbt-run-shop",
	}
	if strings.Join(runs, "\n") != strings.Join(wantRuns, "\n") {
		t.Errorf("runs (job, status, timed, parent job):\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(wantRuns, "\n"))
	}

	dr := kafka.NewReader(kafka.ReaderConfig{Brokers: k.Brokers, Topic: dlqTopic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer dr.Close()
	m, err := dr.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if header(m, HeaderReason) != process.ReasonInvalidOpenLineage || !bytes.Equal(m.Value, bad) || header(m, HeaderSourceTopic) != olTopic ||
		!strings.Contains(header(m, HeaderError), "missing property 'eventTime'") {
		t.Errorf("dead letter: headers %v", m.Headers)
	}
	if n, _ := k.Messages(ctx, dlqTopic); n != 1 {
		t.Errorf("%d dead letters, want 1", n)
	}

	before := olSnapshot(t, ctx, driver, ns, "it-"+id)
	consume(group + "-again")
	if after := olSnapshot(t, ctx, driver, ns, "it-"+id); strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("redelivery changed the graph:\n%s\n---\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
	t.Logf("%d events in, 1 dead letter; %d graph lines unchanged by redelivery", len(evs)+1, len(before))
}

func boolString(v any) string {
	if b, _ := v.(bool); b {
		return "true"
	}
	return "false"
}

func anyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "-"
}

// olSnapshot renders the nodes and relationships of this test's datasets and jobs.
func olSnapshot(t *testing.T, ctx context.Context, d neo4j.DriverWithContext, prefix, jobNS string) []string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, d, `MATCH (n) WHERE n.key STARTS WITH $p OR n.namespace = $ns OR EXISTS { MATCH (:Job {namespace: $ns})-[:HAS_RUN]->(n) }
OPTIONAL MATCH (n)-[r]->(m)
RETURN n.key AS a, properties(n) AS b, type(r) AS c, properties(r) AS d, m.key AS e`,
		map[string]any{"p": prefix, "ns": jobNS}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Records {
		out = append(out, fmt.Sprint(r.Values...))
	}
	sort.Strings(out)
	return out
}

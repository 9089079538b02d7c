package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/record"
)

// colline upgrade against a real Kafka and Neo4j: a graph of model 1 (FEEDS without roles, no
// stamp) is refused by the writer with an error naming the command; the upgrade re-reads the
// topic from the start and leaves exactly what the current writer makes of the same events. The
// events are captured ones of scenarios no other test writes to Neo4j; the test uses its own
// model stamp key so that the shared stamp stays in place for the tests running next to it.
func TestUpgradeFromTopic(t *testing.T) {
	brokers, uri := os.Getenv("COLLINE_TEST_KAFKA_BROKERS"), os.Getenv("COLLINE_TEST_NEO4J_URI")
	if brokers == "" || uri == "" {
		t.Skip("COLLINE_TEST_KAFKA_BROKERS or COLLINE_TEST_NEO4J_URI is not set; run `dev/services start all` and set them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files, _ := filepath.Glob("../plan/testdata/spark-3.5/join_three_way/*.json")
	more, _ := filepath.Glob("../plan/testdata/spark-3.5/subquery_correlated_scalar/*.json")
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("captured events missing: %v", files)
	}
	evs, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}

	topic := "colline-upgrade-test-" + strings.TrimSuffix(testPrefix(t), "/")
	k := stack.TestKafka(t)
	if err := k.CreateTopics(ctx, stack.Topic{Name: topic, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.DeleteTopics(context.Background(), topic) })
	kw := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, Balancer: &kafka.RoundRobin{}, AllowAutoTopicCreation: false,
		Transport: k.Client.Transport} // released with k's connections
	var msgs []kafka.Message
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Value: b})
	}
	msgs = append(msgs, kafka.Message{Value: []byte("not an event")}) // skipped, as the consumer dead-letters it
	if err := kw.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	kw.Close()

	driver, err := graph.NewDriver(uri, os.Getenv("COLLINE_TEST_NEO4J_USER"), os.Getenv("COLLINE_TEST_NEO4J_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(context.Background()) }) // registered first, so it runs after the cleanups below
	w := graph.NewWriter(driver, "")
	w.ModelKey = testPrefix(t) + "model"
	t.Cleanup(func() {
		neo4j.ExecuteQuery(context.Background(), driver, `MATCH (m:GraphModel {key: $k}) DELETE m`, map[string]any{"k": w.ModelKey}, neo4j.EagerResultTransformer)
	})

	// a model-1 graph: the FEEDS of the events as the model-1 writer stored them
	var old []map[string]any
	for _, ev := range evs {
		for _, e := range ev.Lineage.Edges {
			s := e.Summary()
			old = append(old, map[string]any{"s": e.Source, "t": e.Target, "job": record.JobKey(ev.Env.App), "type": s.Type, "subtype": s.Subtype})
		}
	}
	if _, err := neo4j.ExecuteQuery(ctx, driver, `UNWIND $rows AS row
MERGE (s:Column {key: row.s}) MERGE (t:Column {key: row.t})
MERGE (s)-[f:FEEDS {job: row.job}]->(t) SET f.type = row.type, f.subtype = row.subtype REMOVE f.roles`,
		map[string]any{"rows": old}, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	if err := w.Bootstrap(ctx); !errors.Is(err, graph.ErrModelVersion) || !strings.Contains(err.Error(), "colline upgrade") {
		t.Fatalf("Bootstrap on the model-1 graph = %v, want graph.ErrModelVersion naming colline upgrade", err)
	}

	var out bytes.Buffer
	if err := Upgrade(ctx, w, []string{brokers}, topic, 2, &out); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "messages read") || !strings.Contains(out.String(), "1 skipped") {
		t.Errorf("upgrade output lacks progress or the skipped message:\n%s", out.String())
	}
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatalf("Bootstrap after the upgrade: %v", err)
	}

	// the graph's lineage of these datasets is what the writer makes of the events
	items := make([]record.Item, len(evs))
	datasets := map[string]bool{}
	for i, ev := range evs {
		items[i] = record.Item{Event: ev.Env, Lineage: ev.Lineage}
		for _, w := range ev.Lineage.Writes {
			datasets[w.Key] = true
		}
	}
	_, want, err := graph.Preview(items)
	if err != nil {
		t.Fatal(err)
	}
	all, err := graph.NewReader(driver, "").Edges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []graph.EdgeRow
	for _, e := range all {
		ds, _, _ := strings.Cut(e.Target, "#")
		if datasets[ds] {
			got = append(got, e)
		}
	}
	lines := func(es []graph.EdgeRow) []string {
		var l []string
		for _, e := range es {
			l = append(l, e.String())
		}
		sort.Strings(l)
		return l
	}
	if !reflect.DeepEqual(lines(got), lines(want)) {
		t.Errorf("lineage after the upgrade:\n%s\nwant:\n%s", strings.Join(lines(got), "\n"), strings.Join(lines(want), "\n"))
	}
	if len(want) == 0 {
		t.Error("the events have no lineage: nothing was compared")
	}
}

// testPrefix returns a fresh "test-<hex>/" prefix.
func testPrefix(t *testing.T) string {
	t.Helper()
	return "test-" + stack.NewID() + "/"
}

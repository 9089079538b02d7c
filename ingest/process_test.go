package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// event is a hand-built event (a unit-test input, not what Spark emits): INSERT INTO db.out
// SELECT upper(name) FROM db.src, with an extra node of a class no rule knows.
func event(t *testing.T) []byte {
	t.Helper()
	return eventFor(t, "e-1", "src", "out")
}

// eventFor is event with its id and table names chosen.
func eventFor(t *testing.T, eventID, src, out string) []byte {
	t.Helper()
	id := func(n int64) *int64 { return &n }
	q := 1
	table := func(name string) *events.Dataset {
		return &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"db"}, Name: name}
	}
	env := events.Envelope{
		SchemaVersion: "1.0", EventID: eventID, EmittedAt: "2026-11-30T10:15:02.123Z",
		App:   events.App{ID: "local-1", Name: "nightly", Namespace: "spark_catalog"},
		Query: events.Query{ExecutionID: 3, FuncName: "command", Status: "success", EndedAt: "2026-11-30T10:15:02.100Z"},
		Nodes: []events.Node{
			{ID: 0, Class: "org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand", Children: []int{1},
				Write: &events.Write{Dataset: *table(out), Mode: "append", Columns: []string{"name"}, Query: &q}},
			{ID: 1, Class: "org.apache.spark.sql.catalyst.plans.logical.Project", Children: []int{2},
				Output: []events.Attribute{{ExprID: 10, Name: "name", Type: "string"}},
				Exprs: map[string][]events.Expr{"projectList": {{Class: "Alias", ExprID: id(10), Name: "name", SQL: "upper(name) AS name",
					Children: []events.Expr{{Class: "Upper", Children: []events.Expr{{Class: "AttributeReference", ExprID: id(1), Name: "name"}}}}}}}},
			{ID: 2, Class: "com.example.CustomNode", Children: []int{3}, Output: []events.Attribute{{ExprID: 1, Name: "name", Type: "string"}}},
			{ID: 3, Class: "org.apache.spark.sql.execution.datasources.LogicalRelation", Dataset: table(src),
				Output: []events.Attribute{{ExprID: 1, Name: "name", Type: "string"}}},
		},
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExtractor(t *testing.T) {
	m := NewMetrics(nil)
	x := Extractor{Metrics: m}
	it, err := x.Process(kafka.Message{Value: event(t)})
	if err != nil {
		t.Fatalf("Process = %v", err)
	}
	fresh := record.Item{Event: it.Event, Lineage: it.Lineage} // checked anew, not by the mark the step left
	if err := record.Check(&fresh); err != nil {
		t.Fatalf("the item does not pass record.Check: %v", err)
	}
	if len(it.Lineage.Edges) == 0 {
		t.Errorf("no edges in %+v", it.Lineage)
	}
	if got := testutil.ToFloat64(m.unknown.WithLabelValues("com.example.CustomNode")); got != 1 {
		t.Errorf("unknown node classes counted: %v, want 1 (lineage.Unknown = %v)", got, it.Lineage.Unknown)
	}
	if got := testutil.CollectAndCount(m.stage); got != 8 { // decode, extract, reuse, prepare, write, emit, commit, dead_letter
		t.Errorf("stage series = %d, want 8", got)
	}
	// with a Reuse, the same plan again is timed in stage reuse, and held for the pacer
	r := Extractor{Metrics: m, Reuse: NewReuse(1)}
	for range 2 {
		if _, err := r.Process(kafka.Message{Value: event(t)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.CollectAndCount(m.stage, "colline_ingest_stage_duration_seconds"); got != 8 {
		t.Errorf("stage series = %d, want 8", got)
	}
	if n := histCount(t, m, process.StageReuse); n != 1 {
		t.Errorf("stage reuse observed %d times, want 1", n)
	}
	if r.HeldBytes() <= 0 || (Topics{"a": r, "b": x}).HeldBytes() != r.HeldBytes() {
		t.Errorf("held bytes %d, through Topics %d", r.HeldBytes(), (Topics{"a": r, "b": x}).HeldBytes())
	}
	// over the edges budget: an item with the table-level lineage, counted by budget (issue 29)
	x.Budget = plan.Budget{Edges: 1}
	it, err = x.Process(kafka.Message{Value: event(t)})
	if err != nil || it.Lineage.OverBudget == nil || len(it.Lineage.Edges) != 0 || len(it.Lineage.Writes) != 1 {
		t.Errorf("over the edges budget: %+v, %v; want the write, no edge", it.Lineage, err)
	}
	if got := testutil.ToFloat64(m.overBudget.WithLabelValues(plan.BudgetEdges)); got != 1 {
		t.Errorf("colline_plan_over_budget_total{budget=edges} = %v, want 1", got)
	}
}

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	m.countUnknown(map[string]int{"a.B": 1})
	m.batch.Observe(1)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "colline_") {
			t.Errorf("metric %s lacks the colline_ prefix", f.GetName())
		}
	}
}

func TestUnknownClassesAreCapped(t *testing.T) {
	m := NewMetrics(nil)
	for i := range maxClasses + 10 {
		m.countUnknown(map[string]int{fmt.Sprintf("c%d", i): 1})
	}
	if got := testutil.CollectAndCount(m.unknown); got != maxClasses+1 {
		t.Errorf("class series = %d, want %d (+ other)", got, maxClasses+1)
	}
	if got := testutil.ToFloat64(m.unknown.WithLabelValues("other")); got != 10 {
		t.Errorf("other = %v, want 10", got)
	}
}

func TestDeadLetterMessage(t *testing.T) {
	long := strings.Repeat("x", maxErrorHeader+10)
	// a producer's headers, two of them forged in colline's names (issue 29)
	forged := []kafka.Header{{Key: "trace", Value: []byte("t-1")}, {Key: HeaderReason, Value: []byte("ok")}, {Key: "COLLINE.Source.Topic", Value: []byte("elsewhere")}}
	d := deadLetter{msg: kafka.Message{Topic: "t", Partition: 2, Offset: 42, Key: []byte("k"), Value: []byte("v"), Headers: forged}, reason: process.ReasonOther, err: errors.New(long)}
	m := d.message("v1")
	var keys []string
	for _, h := range m.Headers {
		keys = append(keys, h.Key)
	}
	want := []string{"trace", "incoming.colline.reason", "incoming.COLLINE.Source.Topic", HeaderReason, HeaderError, HeaderSourceTopic, HeaderSourcePartition, HeaderSourceOffset, HeaderConsumerVersion}
	if strings.Join(keys, " ") != strings.Join(want, " ") || header(m, HeaderReason) != process.ReasonOther || header(m, "incoming.colline.reason") != "ok" {
		t.Errorf("headers %q, want %q: the producer's colline.* renamed, colline's own last and once", keys, want)
	}
	if got := header(m, HeaderError); len(got) != maxErrorHeader {
		t.Errorf("error header is %d bytes, want it cut at %d", len(got), maxErrorHeader)
	}
	if header(m, HeaderSourcePartition) != "2" || header(m, HeaderSourceOffset) != "42" || header(m, HeaderSourceTopic) != "t" {
		t.Errorf("headers = %v", m.Headers)
	}
	small := withoutValue(m)
	if small.Value != nil || header(small, HeaderValueOmitted) != "too_large" || header(m, HeaderValueOmitted) != "" {
		t.Error("withoutValue must drop the value, mark it, and leave the original alone")
	}
}

// histCount returns how many observations m's stage histogram has for stage.
func histCount(t *testing.T, m *Metrics, stage string) uint64 {
	t.Helper()
	var out dto.Metric
	if err := m.stage.WithLabelValues(stage).(prometheus.Histogram).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetHistogram().GetSampleCount()
}

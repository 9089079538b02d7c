package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/plan/hostile"
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
	if err := graph.Check(it); err != nil {
		t.Fatalf("the item does not pass graph.Check: %v", err)
	}
	if len(it.Lineage.Edges) == 0 {
		t.Errorf("no edges in %+v", it.Lineage)
	}
	if got := testutil.ToFloat64(m.unknown.WithLabelValues("com.example.CustomNode")); got != 1 {
		t.Errorf("unknown node classes counted: %v, want 1 (lineage.Unknown = %v)", got, it.Lineage.Unknown)
	}
	if got := testutil.CollectAndCount(m.stage); got != 5 {
		t.Errorf("stage series = %d, want 5", got)
	}
}

func TestExtractorReasons(t *testing.T) {
	for _, tc := range []struct {
		name, value, reason string
	}{
		{"empty", "", ReasonInvalidJSON},
		{"not json", "{nope", ReasonInvalidJSON},
		{"future major", `{"schemaVersion":"2.0","eventId":"x"}`, ReasonUnsupportedVersion},
		{"no event id", `{"schemaVersion":"1.0"}`, ReasonInvalidEvent},
		{"wrong type", `{"schemaVersion":"1.0","eventId":7}`, ReasonInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Extractor{}.Process(kafka.Message{Value: []byte(tc.value)})
			if err == nil {
				t.Fatal("Process = nil error")
			}
			if got := reason(err); got != tc.reason {
				t.Errorf("reason(%v) = %s, want %s", err, got, tc.reason)
			}
		})
	}
}

// TestHostilePlans sends the hostile shapes (a MUTATED captured event, see plan/hostile) through
// the consumer's Processor with small budgets: each fails as too_complex, naming its budget, and
// the same shape within the budget yields lineage.
func TestHostilePlans(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "plan", "testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	budget := plan.Budget{Depth: 50, Nodes: 100, Edges: 1000, Work: 100000}
	for _, tc := range []struct {
		shape  string
		n      int
		budget string // "" within budget
	}{
		{hostile.DeepFilters, 40, ""},
		{hostile.DeepFilters, 60, plan.BudgetDepth},
		{hostile.DeepFilters, 150, plan.BudgetNodes},
		{hostile.WideFilter, 100, ""},
		{hostile.WideFilter, 300, plan.BudgetEdges},
		{hostile.Fanout, 300, ""},
		{hostile.Fanout, 600, plan.BudgetEdges},
	} {
		data, err := hostile.Make(base, tc.shape, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		item, err := Extractor{Budget: budget}.Process(kafka.Message{Value: data})
		if tc.budget == "" {
			if err != nil || item.Lineage == nil || len(item.Lineage.Edges) == 0 {
				t.Errorf("%s %d: %v, want lineage", tc.shape, tc.n, err)
			}
			continue
		}
		var tce *plan.TooComplexError
		if !errors.As(err, &tce) || tce.Budget != tc.budget || reason(err) != ReasonTooComplex {
			t.Errorf("%s %d: %v (reason %s), want too_complex on the %s budget", tc.shape, tc.n, err, reason(err), tc.budget)
		}
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", events.ErrInvalidJSON), ReasonInvalidJSON},
		{fmt.Errorf("x: %w", events.ErrUnsupportedVersion), ReasonUnsupportedVersion},
		{fmt.Errorf("x: %w", events.ErrInvalid), ReasonInvalidEvent},
		{fmt.Errorf("x: %w", plan.ErrUnsupported), ReasonUnsupportedPlan},
		{fmt.Errorf("x: %w", &plan.TooComplexError{Budget: plan.BudgetDepth, Figure: 9, Limit: 8}), ReasonTooComplex},
		{fmt.Errorf("x: %w", graph.ErrInvalidItem), ReasonInvalidLineage},
		{errors.New("x"), ReasonOther},
	} {
		if got := reason(tc.err); got != tc.want {
			t.Errorf("reason(%v) = %s, want %s", tc.err, got, tc.want)
		}
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
	d := deadLetter{msg: kafka.Message{Topic: "t", Partition: 2, Offset: 42, Key: []byte("k"), Value: []byte("v")}, reason: ReasonOther, err: errors.New(long)}
	m := d.message("v1")
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

func TestExtractorLimits(t *testing.T) {
	x := Extractor{MaxBytes: 1 << 20}
	for _, tc := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"too large", append(event(t), make([]byte, 1<<20)...), ReasonTooLarge},
		{"too deep", []byte(`{"a":` + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting) + `}`), ReasonTooDeep},
		{"deep but allowed", []byte(strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting)), ReasonInvalidEvent},
		{"brackets in strings do not count", []byte(`{"a":"` + strings.Repeat("[", MaxNesting+1) + `"}`), ReasonInvalidEvent},
		{"empty", nil, ReasonInvalidJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x.Process(kafka.Message{Value: tc.value})
			if got := reason(err); got != tc.want {
				t.Errorf("reason = %s (%v), want %s", got, err, tc.want)
			}
		})
	}
	if got := nesting([]byte(`{"a":[1,{"b":"]]]"}],"c":"\"["}`), 10); got != 3 {
		t.Errorf("nesting = %d, want 3", got)
	}
}

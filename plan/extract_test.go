package plan

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// Hand-built plans for edge cases of the rules. They are unit-test inputs, not what Spark emits:
// the captured fixtures under testdata/ are.

func attr(id int64, name string) events.Attribute {
	return events.Attribute{ExprID: id, Name: name, Type: "int"}
}

func ref(id int64, name string) events.Expr {
	return events.Expr{Class: "AttributeReference", ExprID: &id, Name: name}
}

func fn(class string, children ...events.Expr) events.Expr {
	return events.Expr{Class: class, Children: children}
}

func alias(id int64, name, sql string, child events.Expr) events.Expr {
	return events.Expr{Class: "Alias", ExprID: &id, Name: name, SQL: sql, Children: []events.Expr{child}}
}

func table(name string) *events.Dataset {
	return &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"db"}, Name: name}
}

func node(class string, children []int, out []events.Attribute, exprs map[string][]events.Expr) events.Node {
	return events.Node{Class: "org.apache.spark.sql.catalyst.plans.logical." + class, Children: children, Output: out, Exprs: exprs}
}

func leaf(name string, out ...events.Attribute) events.Node {
	n := node("LogicalRelation", nil, out, nil)
	n.Dataset = table(name)
	return n
}

// insert builds an event whose root writes db.<target>(cols) from the plan under it.
func insert(target string, cols []string, plan ...events.Node) *events.Envelope {
	q := 1
	root := events.Node{Class: "org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand",
		Children: []int{1}, Write: &events.Write{Dataset: *table(target), Mode: "append", Columns: cols, Query: &q}}
	nodes := append([]events.Node{root}, plan...)
	for i := range nodes {
		nodes[i].ID = i
	}
	return &events.Envelope{SchemaVersion: "1.0", EventID: "e", Nodes: nodes}
}

// edges renders the lineage as "source -> target TYPE/SUBTYPE" lines, one per transformation, with
// " masked" when set, and row-level dependencies as "source => dataset INDIRECT/SUBTYPE".
func edges(t *testing.T, env *events.Envelope) string {
	t.Helper()
	if err := env.Validate(); err != nil {
		t.Fatalf("test plan is invalid: %v", err)
	}
	lin, err := Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, set := range []struct {
		arrow string
		edges []Edge
	}{{"->", lin.Edges}, {"=>", lin.RowDeps}} {
		for _, e := range set.edges {
			for _, x := range e.Transformations {
				lines = append(lines, fmt.Sprintf("%s %s %s %s", short(e.Source), set.arrow, short(e.Target), x))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func short(key string) string { return strings.TrimPrefix(key, "spark_catalog/db.") }

func check(t *testing.T, env *events.Envelope, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := edges(t, env); got != strings.Join(want, "\n") {
		t.Errorf("edges:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestCaseWhenConditionIsIndirect(t *testing.T) {
	// INSERT INTO out SELECT CASE WHEN status = 1 THEN amount ELSE 0 END FROM s
	check(t, insert("out", []string{"x"},
		node("Project", []int{2}, []events.Attribute{attr(10, "x")}, map[string][]events.Expr{"projectList": {
			alias(10, "x", "CASE WHEN ...", fn("CaseWhen", fn("EqualTo", ref(1, "status"), fn("Literal")), ref(2, "amount"), fn("Literal"))),
		}}),
		leaf("s", attr(1, "status"), attr(2, "amount")),
	),
		"s#amount -> out#x DIRECT/TRANSFORMATION",
		"s#status -> out#x INDIRECT/CONDITIONAL")
}

func TestCastKeepsIdentityAndCountMasks(t *testing.T) {
	check(t, insert("out", []string{"a", "n"},
		node("Aggregate", []int{2}, []events.Attribute{attr(10, "a"), attr(11, "n")}, map[string][]events.Expr{
			"groupingExpressions":  {ref(1, "a")},
			"aggregateExpressions": {alias(10, "a", "CAST(a AS BIGINT) AS a", fn("Cast", ref(1, "a"))), alias(11, "n", "count(b) AS n", fn("AggregateExpression", fn("Count", ref(2, "b"))))},
		}),
		leaf("s", attr(1, "a"), attr(2, "b")),
	),
		"s#a -> out#a DIRECT/IDENTITY",
		"s#a => out INDIRECT/GROUP_BY",
		"s#b -> out#n DIRECT/AGGREGATION masked")
}

func TestUnionMapsEveryChildByPosition(t *testing.T) {
	// The union's output reuses the first child's exprIds; the second child's columns still feed it.
	check(t, insert("out", []string{"v"},
		node("Union", []int{2, 3}, []events.Attribute{attr(1, "v")}, nil),
		leaf("a", attr(1, "v")),
		leaf("b", attr(2, "w")),
	),
		"a#v -> out#v DIRECT/IDENTITY",
		"b#w -> out#v DIRECT/IDENTITY")
}

func TestCTEReferenceMapsToDefinitionByPosition(t *testing.T) {
	// WITH c AS (SELECT x + 1 AS y FROM s) INSERT INTO out SELECT y FROM c — the reference has fresh exprIds.
	cte := node("CTERelationDef", []int{3}, []events.Attribute{attr(20, "y")}, nil)
	cte.Args = map[string]any{"cteId": float64(7)}
	r := node("CTERelationRef", nil, []events.Attribute{attr(30, "y")}, nil)
	r.Args = map[string]any{"cteId": float64(7)}
	check(t, insert("out", []string{"y"},
		node("WithCTE", []int{2, 5}, []events.Attribute{attr(30, "y")}, nil), // 1
		cte, // 2
		node("Project", []int{4}, []events.Attribute{attr(20, "y")}, map[string][]events.Expr{ // 3
			"projectList": {alias(20, "y", "(x + 1) AS y", fn("Add", ref(5, "x"), fn("Literal")))}}),
		leaf("s", attr(5, "x")), // 4
		r,                       // 5
	),
		"s#x -> out#y DIRECT/TRANSFORMATION")
}

func TestUnknownNodeUsesGenericRuleAndIsCounted(t *testing.T) {
	env := insert("out", []string{"k", "z"},
		node("SomeVendorNode", []int{2}, []events.Attribute{attr(1, "k"), attr(9, "z")}, map[string][]events.Expr{
			"expressions": {alias(9, "z", "f(v)", fn("VendorFn", ref(2, "v")))}}),
		leaf("s", attr(1, "k"), attr(2, "v")),
	)
	check(t, env, "s#k -> out#k DIRECT/IDENTITY", "s#v -> out#z DIRECT/TRANSFORMATION")
	lin, _ := Extract(env)
	if got := lin.Unknown["org.apache.spark.sql.catalyst.plans.logical.SomeVendorNode"]; got != 1 {
		t.Errorf("unknown count = %d, want 1 (%v)", got, lin.Unknown)
	}
}

// Filters and joins decide which rows reach the written dataset: one row-level dependency per
// source column and write, not a copy per target column.
func TestFilterAndJoinAreRowLevelOncePerWrite(t *testing.T) {
	check(t, insert("out", []string{"a", "c"},
		node("Project", []int{2}, []events.Attribute{attr(1, "a"), attr(3, "c")}, map[string][]events.Expr{"projectList": {ref(1, "a"), ref(3, "c")}}),
		node("Filter", []int{3}, []events.Attribute{attr(1, "a"), attr(2, "k"), attr(3, "c"), attr(4, "k")}, map[string][]events.Expr{
			"condition": {fn("GreaterThan", ref(1, "a"), fn("Literal"))}}),
		node("Join", []int{4, 5}, []events.Attribute{attr(1, "a"), attr(2, "k"), attr(3, "c"), attr(4, "k")}, map[string][]events.Expr{
			"condition": {fn("EqualTo", ref(2, "k"), ref(4, "k"))}}),
		leaf("l", attr(1, "a"), attr(2, "k")),
		leaf("r", attr(3, "c"), attr(4, "k")),
	),
		"l#a -> out#a DIRECT/IDENTITY",
		"l#a => out INDIRECT/FILTER",
		"l#k => out INDIRECT/JOIN",
		"r#c -> out#c DIRECT/IDENTITY",
		"r#k => out INDIRECT/JOIN")
}

func TestExtractIsDeterministic(t *testing.T) {
	env := insert("out", []string{"x"},
		node("Project", []int{2}, []events.Attribute{attr(10, "x")}, map[string][]events.Expr{"projectList": {
			alias(10, "x", "a + b", fn("Add", ref(1, "a"), ref(2, "b")))}}),
		leaf("s", attr(1, "a"), attr(2, "b")),
	)
	first := edges(t, env)
	for i := 0; i < 20; i++ {
		if got := edges(t, env); got != first {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, got, first)
		}
	}
}

// Summary picks the strongest transformation, whatever the order.
func TestStrongest(t *testing.T) {
	x := func(typ, sub string) Transformation { return Transformation{Type: typ, Subtype: sub} }
	for _, tc := range []struct {
		name string
		ts   []Transformation
		want Transformation
	}{
		{"direct beats indirect", []Transformation{x(Indirect, Conditional), x(Direct, Identity)}, x(Direct, Identity)},
		{"aggregation beats transformation", []Transformation{x(Direct, TransformationSub), x(Direct, Aggregation)}, x(Direct, Aggregation)},
		{"conditional beats join", []Transformation{x(Indirect, JoinSub), x(Indirect, Conditional)}, x(Indirect, Conditional)},
		{"known subtype beats unknown", []Transformation{x(Indirect, "NEW"), x(Indirect, SortSub)}, x(Indirect, SortSub)},
	} {
		for _, ts := range [][]Transformation{tc.ts, {tc.ts[1], tc.ts[0]}} {
			if got := (Edge{Transformations: ts}).Summary(); got != tc.want {
				t.Errorf("%s: Summary(%v) = %v, want %v", tc.name, ts, got, tc.want)
			}
		}
	}
}

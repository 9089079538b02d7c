package plan

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// An operator class the extractor does not know (a vendor's node, a class a new Spark version
// adds) must not fail the plan: the generic rule resolves it, and Lineage.Unknown counts it by
// class so that the consumer can export colline_plan_unknown_nodes_total{class}. This takes a real
// captured event and disguises its operators as unknown classes, serialized the way the listener
// serializes unknown nodes (every expression under the role "expressions").
func TestUnknownClassesFallBackToTheGenericRule(t *testing.T) {
	data, err := os.ReadFile("testdata/spark-3.5/join_then_aggregate/0001-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	known, err := events.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	disguised, _ := events.Decode(data)
	renamed := map[string]int{}
	for i := range disguised.Nodes {
		n := &disguised.Nodes[i]
		switch cls := shortClass(n.Class); cls {
		case "Project", "Aggregate", "Join", "Filter", "SubqueryAlias":
			n.Class = "com.example.Vendor" + cls
			var all []events.Expr
			for _, role := range slices.Sorted(maps.Keys(n.Exprs)) {
				all = append(all, n.Exprs[role]...)
			}
			n.Exprs = map[string][]events.Expr{"expressions": all}
			renamed[n.Class]++
		}
	}
	if len(renamed) < 4 {
		t.Fatalf("fixture changed: renamed only %v", renamed)
	}

	want, err := Extract(known)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Extract(disguised)
	if err != nil {
		t.Fatalf("an unknown class failed the plan: %v", err)
	}
	for cls, n := range renamed {
		if got.Unknown[cls] != n {
			t.Errorf("Unknown[%s] = %d, want %d (all: %v)", cls, got.Unknown[cls], n, got.Unknown)
		}
	}
	if len(want.Unknown) != 0 {
		t.Errorf("the real event has unknown classes: %v", want.Unknown)
	}
	// The generic rule keeps every direct edge (passthrough by exprId, aliases by their
	// expression); it cannot know which expressions of an unknown node filter rows, so indirect
	// edges may be lost: that is what the metric is for.
	direct := map[[2]string]bool{}
	for _, e := range got.Edges {
		if e.Direct() {
			direct[[2]string{e.Source, e.Target}] = true
		}
	}
	for _, e := range want.Edges {
		if e.Direct() && !direct[[2]string{e.Source, e.Target}] {
			t.Errorf("direct edge %s -> %s lost under unknown classes", e.Source, e.Target)
		}
	}
}

// An unknown leaf without identity and an unknown root command are not errors either.
func TestUnknownLeafAndCommand(t *testing.T) {
	env := insert("out", []string{"a", "b"},
		node("Project", []int{2}, []events.Attribute{attr(1, "a"), attr(5, "b")}, map[string][]events.Expr{"projectList": {
			ref(1, "a"), alias(5, "b", "f(x)", fn("VendorFn", ref(2, "x")))}}),
		node("VendorScan", nil, []events.Attribute{attr(1, "a"), attr(2, "x")}, nil),
	)
	env.Nodes[0].Class = "com.example.VendorWriteCommand"
	lin, err := Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	if len(lin.Writes) != 1 || len(lin.Edges) != 0 {
		t.Errorf("writes %v edges %v, want one write and no edges (the source has no identity)", lin.Writes, lin.Edges)
	}
	for cls := range lin.Unknown {
		if !strings.HasSuffix(cls, "VendorScan") {
			t.Errorf("unexpected unknown class %s", cls)
		}
	}
}

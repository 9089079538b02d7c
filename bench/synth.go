package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/colline/colline/events"
)

// synthEvent builds a SYNTHETIC event of about size bytes, shaped like a wide generated ETL query
// (what makes real plans megabytes large): a CTAS of `cols` columns, each a long CASE WHEN over
// three source columns, from a Filter over a left-deep Join of 8 tables of 50 columns. It is valid
// per docs/event-format.md and plan.Extract resolves it, but Spark did not emit it.
func synthEvent(size int, id string, target string) ([]byte, error) {
	const tables, width = 8, 50
	const branches = 40
	// One column's expression is about branches * 750 bytes of JSON.
	cols := max(1, size/(branches*750))
	var nodes []events.Node
	add := func(n events.Node) int {
		n.ID = len(nodes)
		nodes = append(nodes, n)
		return n.ID
	}
	exprID := int64(1)
	attr := func(t, c int) events.Attribute {
		return events.Attribute{ExprID: int64(t*width + c + 1), Name: fmt.Sprintf("t%d_c%02d", t, c), Type: "string", Nullable: true,
			Qualifier: []string{"spark_catalog", "synth", fmt.Sprintf("src_%d", t)}}
	}
	ref := func(a events.Attribute) events.Expr {
		id := a.ExprID
		return events.Expr{Class: "AttributeReference", ExprID: &id, Name: a.Name, Type: a.Type}
	}
	lit := events.Expr{Class: "Literal", Type: "string"}
	exprID = tables*width + 1

	const logical = "org.apache.spark.sql.catalyst.plans.logical."
	q := 1
	add(events.Node{Class: "org.apache.spark.sql.execution.command.CreateDataSourceTableAsSelectCommand", Plans: map[string]int{"query": q},
		Write: &events.Write{Dataset: events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"synth"}, Name: target,
			Provider: "parquet", TableType: "MANAGED"}, Mode: "create", Query: &q}})
	project := add(events.Node{Class: logical + "Project"})
	filter := add(events.Node{Class: logical + "Filter"})
	nodes[project].Children = []int{filter}

	// Left-deep join tree in pre-order: Join_7(Join_6(...Join_1(src_0, src_1)..., src_6), src_7).
	var joinIDs []int
	for j := tables - 1; j >= 1; j-- {
		joinIDs = append(joinIDs, add(events.Node{Class: logical + "Join", Args: map[string]any{"joinType": "Inner"}}))
	}
	var all []events.Attribute
	leaf := func(t int) int {
		var out []events.Attribute
		for c := 0; c < width; c++ {
			out = append(out, attr(t, c))
		}
		all = append(all, out...)
		return add(events.Node{Class: "org.apache.spark.sql.execution.datasources.LogicalRelation", Output: out,
			Dataset: &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"synth"}, Name: fmt.Sprintf("src_%d", t),
				Provider: "parquet", TableType: "MANAGED"}})
	}
	src0 := leaf(0)
	// joinIDs[len-1] is Join_1, the innermost; its children are src_0 and src_1.
	for k := len(joinIDs) - 1; k >= 0; k-- {
		t := tables - 1 - k // Join_t joins the tree so far with src_t
		left := src0
		if k < len(joinIDs)-1 {
			left = joinIDs[k+1]
		}
		right := leaf(t)
		j := &nodes[joinIDs[k]]
		j.Children = []int{left, right}
		j.Exprs = map[string][]events.Expr{"condition": {{Class: "EqualTo", Type: "boolean", SQL: fmt.Sprintf("(t0_c00 = t%d_c00)", t),
			Children: []events.Expr{ref(attr(0, 0)), ref(attr(t, 0))}}}}
	}
	for k := range joinIDs {
		nodes[joinIDs[k]].Output = all[:(tables-k)*width]
	}
	nodes[filter].Children = []int{joinIDs[0]}
	nodes[filter].Output = all
	nodes[filter].Exprs = map[string][]events.Expr{"condition": {{Class: "IsNotNull", Type: "boolean", SQL: "(t1_c01 IS NOT NULL)",
		Children: []events.Expr{ref(attr(1, 1))}}}}

	var list []events.Expr
	var out []events.Attribute
	var names []string
	for c := 0; c < cols; c++ {
		a, b, d := attr(c%tables, 1+c%(width-1)), attr((c+3)%tables, 1+(c*7)%(width-1)), attr((c+5)%tables, 1+(c*13)%(width-1))
		cw := events.Expr{Class: "CaseWhen", Type: "string"}
		for k := 0; k < branches; k++ {
			cw.Children = append(cw.Children,
				events.Expr{Class: "EqualTo", Type: "boolean", Children: []events.Expr{ref(a), lit}},
				events.Expr{Class: "Concat", Type: "string", Children: []events.Expr{
					{Class: "Upper", Type: "string", Children: []events.Expr{ref(b)}}, lit}})
		}
		cw.Children = append(cw.Children, ref(d))
		id := exprID
		exprID++
		name := fmt.Sprintf("out_%05d", c)
		list = append(list, events.Expr{Class: "Alias", ExprID: &id, Name: name, Type: "string",
			SQL:      fmt.Sprintf("CASE WHEN (%s = ?) THEN concat(upper(%s), ?) ... ELSE %s END AS %s", a.Name, b.Name, d.Name, name),
			Children: []events.Expr{cw}})
		out = append(out, events.Attribute{ExprID: id, Name: name, Type: "string", Nullable: true})
		names = append(names, name)
	}
	nodes[project].Exprs = map[string][]events.Expr{"projectList": list}
	nodes[project].Output = out
	nodes[0].Write.Columns = names

	now := time.Now().UTC().Format(time.RFC3339Nano)
	env := events.Envelope{
		SchemaVersion: "1.0", EventID: id, EmittedAt: now,
		Producer: events.Producer{Name: "colline-bench (synthetic)", Version: "0", Spark: "3.5.9", Scala: "2.12"},
		App:      events.App{ID: "local-synthetic", Name: "colline-bench-synthetic", User: "bench", Namespace: "default"},
		Query:    events.Query{ExecutionID: 1, FuncName: "command", Status: "success", DurationMs: 1, EndedAt: now},
		JVMID:    "synthetic", Nodes: nodes,
	}
	return json.Marshal(&env)
}

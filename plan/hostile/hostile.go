// Package hostile builds hostile plans: real captured events mutated into shapes that are valid,
// within the event size limit, and extreme (issue 11). The output is a MUTATION of a real event,
// not something Spark produced as such; its eventId gets the suffix "-hostile-<shape>-<n>".
// Tests use small sizes; the benchmark large ones.
package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/colline/colline/events"
)

// Shapes, by name.
const (
	DeepFilters = "deep-filters" // n Filters chained under the write's query
	WideFilter  = "wide-filter"  // n more columns, all in the filter condition (df.na.drop()) and all written
	Fanout      = "fanout"       // one column fanned out to n written columns
	HotAttr     = "hot-attr"     // an attribute reading n columns, referenced n times by one written column
	AliasChain  = "alias-chain"  // x = concat(n columns), then n Projects each computing x again from x
	Paths       = "paths"        // n more columns read from n paths and written to n paths: n³ column pairs
)

// Shapes lists every shape.
var Shapes = []string{DeepFilters, WideFilter, Fanout, HotAttr, AliasChain, Paths}

// Base is the captured event the shapes start from: INSERT INTO dst SELECT id, name FROM src
// WHERE amount > 10 AND kind = 'buy' (Spark 3.5, plan/testdata/spark-3.5/filter_where); a write,
// a Project, a Filter, a SubqueryAlias and a LogicalRelation.
const Base = "spark-3.5/filter_where/0001-InsertIntoHadoopFsRelationCommand.json"

// Make mutates base (an event with a Filter over a relation under a Project) into shape with
// size n.
func Make(base []byte, shape string, n int) ([]byte, error) {
	var env events.Envelope
	if err := json.Unmarshal(base, &env); err != nil {
		return nil, err
	}
	f, p := -1, -1
	for i := range env.Nodes {
		if strings.HasSuffix(env.Nodes[i].Class, ".Filter") && f < 0 {
			f = i
		}
	}
	for i := range env.Nodes {
		for _, c := range env.Nodes[i].Children {
			if c == f {
				p = i
			}
		}
	}
	if f < 0 || p < 0 || !strings.HasSuffix(env.Nodes[p].Class, ".Project") {
		return nil, fmt.Errorf("hostile: the base needs a Filter under a Project")
	}
	switch shape {
	case DeepFilters:
		// references must point forward: the copies go between the Project and the Filter
		shift(&env, f, n-1)
		// the copies are small (one output column, no condition: about 140 bytes each), so that a
		// chain of a few hundred thousand fits the event size limit
		first := env.Nodes[f].Output[0]
		lean := events.Node{Class: env.Nodes[f].Class, Output: []events.Attribute{{ExprID: first.ExprID, Name: first.Name, Type: first.Type}}}
		chain := make([]events.Node, n-1)
		for k := range chain {
			c := lean
			c.ID, c.Children = f+k, []int{f + k + 1}
			chain[k] = c
		}
		env.Nodes = append(env.Nodes[:f], append(chain, env.Nodes[f:]...)...)
		for i := f + n - 1; i < len(env.Nodes); i++ {
			env.Nodes[i].ID = i
		}
		for k, c := range env.Nodes[p].Children {
			if c == f+n-1 {
				env.Nodes[p].Children[k] = f
			}
		}
	case WideFilter:
		attrs := widen(&env, f, p, n)
		var refs []events.Expr
		for _, a := range attrs {
			refs = append(refs, ref(a))
		}
		env.Nodes[f].Exprs["condition"] = []events.Expr{{Class: "AtLeastNNonNulls", Type: "boolean", SQL: "atleastnnonnulls(...)", Children: refs}}
	case Fanout:
		src := env.Nodes[p].Exprs["projectList"][0]
		id := maxExprID(&env)
		w := write(&env)
		for k := 0; k < n; k++ {
			id++
			name := fmt.Sprintf("%s_%d", src.Name, k)
			x := events.Expr{Class: "Alias", ExprID: ptr(id), Name: name, Type: "bigint", SQL: fmt.Sprintf("(%s + %d) AS %s", src.SQL, k, name),
				Children: []events.Expr{{Class: "Add", Type: "bigint", Children: []events.Expr{src, {Class: "Literal", Type: "bigint"}}}}}
			env.Nodes[p].Exprs["projectList"] = append(env.Nodes[p].Exprs["projectList"], x)
			env.Nodes[p].Output = append(env.Nodes[p].Output, events.Attribute{ExprID: id, Name: name, Type: "bigint", Nullable: true})
			if w != nil && len(w.Columns) > 0 {
				w.Columns = append(w.Columns, name)
			}
		}
	case HotAttr:
		// a Project between the Project and the Filter computes x = concat(n columns); the top
		// Project writes concat(x, x, ... n times)
		attrs := widen(&env, f, p, n)
		shift(&env, f, 1)
		id := maxExprID(&env) + 1
		x := events.Attribute{ExprID: id, Name: "x", Type: "string", Nullable: true}
		var reads, refs []events.Expr
		for _, a := range attrs {
			reads = append(reads, ref(a))
		}
		for k := 0; k < n; k++ {
			refs = append(refs, ref(x))
		}
		mid := events.Node{ID: f, Class: strings.TrimSuffix(env.Nodes[p].Class, "Project") + "Project", Children: []int{f + 1},
			Output: append(append([]events.Attribute(nil), env.Nodes[f].Output...), x),
			Exprs:  map[string][]events.Expr{"projectList": append(append([]events.Expr(nil), reads...), events.Expr{Class: "Alias", ExprID: ptr(id), Name: "x", Type: "string", SQL: "concat(...) AS x", Children: []events.Expr{{Class: "Concat", Type: "string", Children: reads}}})}}
		env.Nodes = append(env.Nodes[:f], append([]events.Node{mid}, env.Nodes[f:]...)...)
		for i := f + 1; i < len(env.Nodes); i++ {
			env.Nodes[i].ID = i
		}
		env.Nodes[p].Children = []int{f}
		y := events.Attribute{ExprID: id + 1, Name: "y", Type: "string", Nullable: true}
		env.Nodes[p].Exprs["projectList"] = append(env.Nodes[p].Exprs["projectList"], events.Expr{Class: "Alias", ExprID: ptr(y.ExprID), Name: "y", Type: "string", SQL: "concat(x, ...) AS y", Children: []events.Expr{{Class: "Concat", Type: "string", Children: refs}}})
		env.Nodes[p].Output = append(env.Nodes[p].Output, y)
		if w := write(&env); w != nil && len(w.Columns) > 0 {
			w.Columns = append(w.Columns, y.Name)
		}
	case AliasChain:
		// withColumn("x", concat(c0..cn)) and then n-1 times withColumn("x", concat(x, '!')): each
		// Project's x reads the same n columns through one more expression. Nodes f..f+n-1 are the
		// chain, top first; the Filter moves to f+n.
		pass := append([]events.Attribute(nil), env.Nodes[f].Output...) // the Filter's columns, passed up the chain
		attrs, _ := addColumns(&env, f, n)
		shift(&env, f, n)
		base := maxExprID(&env)
		xAt := func(k int) events.Attribute { // the x that node f+k outputs
			return events.Attribute{ExprID: base + int64(n-k), Name: "x", Type: "string", Nullable: true}
		}
		chain := make([]events.Node, n)
		for k := range chain {
			var arg []events.Expr
			sql := fmt.Sprintf("concat(x, '!') AS x /* %d */", k)
			if k == n-1 {
				for _, a := range attrs {
					arg = append(arg, ref(a))
				}
				sql = "concat(...) AS x"
			} else {
				arg = []events.Expr{ref(xAt(k + 1)), {Class: "Literal", Type: "string"}}
			}
			list := make([]events.Expr, 0, len(pass)+1)
			for _, a := range pass {
				list = append(list, ref(a))
			}
			x := xAt(k)
			list = append(list, events.Expr{Class: "Alias", ExprID: ptr(x.ExprID), Name: "x", Type: "string", SQL: sql,
				Children: []events.Expr{{Class: "Concat", Type: "string", Children: arg}}})
			chain[k] = events.Node{ID: f + k, Class: env.Nodes[p].Class, Children: []int{f + k + 1},
				Output: append(append([]events.Attribute(nil), pass...), x), Exprs: map[string][]events.Expr{"projectList": list}}
		}
		env.Nodes = append(env.Nodes[:f], append(chain, env.Nodes[f:]...)...)
		for i := f + n; i < len(env.Nodes); i++ {
			env.Nodes[i].ID = i
		}
		env.Nodes[p].Children = []int{f}
		x := xAt(0)
		env.Nodes[p].Exprs["projectList"] = append(env.Nodes[p].Exprs["projectList"], ref(x))
		env.Nodes[p].Output = append(env.Nodes[p].Output, x)
		if w := write(&env); w != nil && len(w.Columns) > 0 {
			w.Columns = append(w.Columns, x.Name)
		}
	case Paths:
		// the relation reads n paths and the write goes to n paths: every written column of every
		// target path reads its column in every source path
		widen(&env, f, p, n)
		leaf := f
		for len(env.Nodes[leaf].Children) > 0 {
			leaf = env.Nodes[leaf].Children[0]
		}
		in := &events.Dataset{Kind: "path", Format: "parquet"}
		out := &events.Dataset{Kind: "path", Format: "parquet"}
		for k := 0; k < n; k++ {
			in.Paths = append(in.Paths, fmt.Sprintf("file:/data/in/part_%d", k))
			out.Paths = append(out.Paths, fmt.Sprintf("file:/data/out/part_%d", k))
		}
		env.Nodes[leaf].Dataset = in
		if w := write(&env); w != nil {
			w.Dataset = *out
		}
	default:
		return nil, fmt.Errorf("hostile: unknown shape %q (one of %s)", shape, strings.Join(Shapes, ", "))
	}
	env.EventID = fmt.Sprintf("%s-hostile-%s-%d", env.EventID, shape, n)
	return encode(&env)
}

// encode writes env as JSON, leaving out the empty fields of nodes (the listener writes them, the
// decoder does not need them), so that the size is the plan's, not the empty fields'.
func encode(env *events.Envelope) ([]byte, error) {
	nodes := env.Nodes
	env.Nodes = nil
	head, err := json.Marshal(env)
	env.Nodes = nodes
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(head[:len(head)-len("null}")])
	buf.WriteByte('[')
	for i := range nodes {
		if i > 0 {
			buf.WriteByte(',')
		}
		fields := map[string]any{"id": nodes[i].ID, "class": nodes[i].Class, "children": nodes[i].Children}
		n := &nodes[i]
		for k, v := range map[string]any{"output": n.Output, "exprs": n.Exprs, "plans": n.Plans, "args": n.Args} {
			if reflect.ValueOf(v).Len() > 0 {
				fields[k] = v
			}
		}
		for k, v := range map[string]any{"dataset": n.Dataset, "write": n.Write, "ddl": n.DDL} {
			if !reflect.ValueOf(v).IsNil() {
				fields[k] = v
			}
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// widen adds n columns to the relation under filter f and passes them through every node up to
// and including the Project p and the write; it returns the relation's attributes, old and new.
func widen(env *events.Envelope, f, p, n int) []events.Attribute {
	all, added := addColumns(env, f, n)
	w := write(env)
	for _, a := range added {
		env.Nodes[p].Exprs["projectList"] = append(env.Nodes[p].Exprs["projectList"], ref(a))
		env.Nodes[p].Output = append(env.Nodes[p].Output, a)
		if w != nil && len(w.Columns) > 0 {
			w.Columns = append(w.Columns, a.Name)
		}
	}
	return all
}

// addColumns adds n columns to the relation under filter f and to the output of every node from
// f down to it; it returns the relation's attributes, old and new, and the new ones.
func addColumns(env *events.Envelope, f, n int) (all, added []events.Attribute) {
	var chain []int // f down to the leaf
	for i := f; ; i = env.Nodes[i].Children[0] {
		chain = append(chain, i)
		if len(env.Nodes[i].Children) == 0 {
			break
		}
	}
	leaf := chain[len(chain)-1]
	id := maxExprID(env)
	for k := 0; k < n; k++ {
		id++
		added = append(added, events.Attribute{ExprID: id, Name: fmt.Sprintf("c%d", k), Type: "string", Nullable: true})
	}
	for _, i := range chain {
		env.Nodes[i].Output = append(env.Nodes[i].Output, added...)
	}
	return env.Nodes[leaf].Output, added
}

// shift adds by to every node reference at or after node at.
func shift(env *events.Envelope, at, by int) {
	move := func(r *int) {
		if *r >= at {
			*r += by
		}
	}
	move(&env.Root)
	var exprs func(list []events.Expr)
	exprs = func(list []events.Expr) {
		for k := range list {
			if list[k].Plan != nil {
				move(list[k].Plan)
			}
			exprs(list[k].Children)
		}
	}
	for i := range env.Nodes {
		n := &env.Nodes[i]
		for k := range n.Children {
			move(&n.Children[k])
		}
		for key, v := range n.Plans {
			move(&v)
			n.Plans[key] = v
		}
		if n.Write != nil && n.Write.Query != nil {
			move(n.Write.Query)
		}
		for _, list := range n.Exprs {
			exprs(list)
		}
	}
}

func write(env *events.Envelope) *events.Write {
	for i := range env.Nodes {
		if env.Nodes[i].Write != nil {
			return env.Nodes[i].Write
		}
	}
	return nil
}

func ref(a events.Attribute) events.Expr {
	return events.Expr{Class: "AttributeReference", ExprID: ptr(a.ExprID), Name: a.Name, Type: a.Type}
}

func maxExprID(env *events.Envelope) int64 {
	var m int64
	for i := range env.Nodes {
		for _, a := range env.Nodes[i].Output {
			m = max(m, a.ExprID)
		}
	}
	return m
}

func ptr[T any](v T) *T { return &v }

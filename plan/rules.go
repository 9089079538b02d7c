package plan

import (
	"maps"
	"slices"
	"strconv"

	"github.com/colline/colline/events"
)

// The rules of node classes (compute dispatches to them): a node's outputs from its children's
// outputs and its own expressions.

// leaf resolves a node that carries a dataset identity: its outputs are that dataset's columns.
// A temporary view is collapsed into its plan; a persistent view is a dataset of its own whose
// columns are fed by the view's plan.
func (r *resolver) leaf(i int, cls string) (scope, bool) {
	n := &r.nodes[i]
	if n.Dataset.Kind == "view" && (n.Dataset.Temporary || len(n.Children) == 0) {
		if len(n.Children) == 0 {
			return scope{}, true
		}
		return nil, false // collapse: resolve through the child
	}
	sets := Identify(n.Dataset)
	if len(sets) == 0 {
		return scope{}, true
	}
	s := make(scope, len(n.Output))
	for _, a := range n.Output {
		d := deps{}
		if a.MetadataCol {
			s[a.ExprID] = d // _file, _pos, …: not a column of the dataset, feeds nothing
			continue
		}
		for k := range sets {
			ds := r.read(sets[k])
			r.addColumn(ds, a.Name, a.Type)
			d.add(ColumnKey(ds.Key, a.Name), dep{{kind: kindIdentity}})
		}
		s[a.ExprID] = d
	}
	if cls == "View" && len(n.Children) > 0 {
		for k := range sets {
			r.sinks = append(r.sinks, sink{target: sets[k], query: n.Children[0], view: true, names: names(n.Output)})
		}
	}
	return s, true
}

// named resolves a list of named expressions (a projection): each output is what its expression
// reads.
func (r *resolver) named(i int, list []events.Expr) scope {
	s := make(scope, len(list))
	for k := range list {
		x := &list[k]
		id := x.ExprID
		if id == nil {
			continue
		}
		if x.Class == "AttributeReference" {
			s[*id] = r.lookup(i, *id)
			continue
		}
		s[*id] = r.expr(i, x, ectx{expr: x.SQL})
	}
	return s
}

func (r *resolver) passthrough(i int) scope {
	s := scope{}
	for _, a := range r.nodes[i].Output {
		if d := r.childDeps(i, a.ExprID); d != nil {
			s[a.ExprID] = d
		}
	}
	return s
}

// generic handles classes without a rule: an output that a child outputs passes through; one
// defined by a named expression of the node reads what that expression reads; anything else
// reads every attribute the node's expressions reference, or failing that every child column.
func (r *resolver) generic(i int) scope {
	n := &r.nodes[i]
	defs := map[int64]*events.Expr{}
	for _, role := range slices.Sorted(maps.Keys(n.Exprs)) {
		for k := range n.Exprs[role] {
			if x := &n.Exprs[role][k]; x.ExprID != nil && x.Class != "AttributeReference" {
				defs[*x.ExprID] = x
			}
		}
	}
	s := make(scope, len(n.Output))
	var all deps
	for _, a := range n.Output {
		if d := r.childDeps(i, a.ExprID); d != nil {
			s[a.ExprID] = d
			continue
		}
		if x, ok := defs[a.ExprID]; ok {
			s[a.ExprID] = r.expr(i, x, ectx{expr: x.SQL})
			continue
		}
		if all == nil {
			all = r.allRefs(i)
		}
		s[a.ExprID] = all
	}
	return s
}

func (r *resolver) allRefs(i int) deps {
	n := &r.nodes[i]
	d := deps{}
	for _, role := range slices.Sorted(maps.Keys(n.Exprs)) {
		r.addAll(d, r.exprDeps(i, n.Exprs[role], ectx{kind: kindTransformation}))
	}
	if len(d) == 0 {
		for _, c := range n.Children {
			for _, cd := range sortedScope(r.outputs(c)) {
				r.addAll(d, r.through(cd, ectx{kind: kindTransformation}))
			}
		}
	}
	return d
}

// positional maps output k of node i to the union of rows[j][k] resolved in its child.
func (r *resolver) positional(i int, rows [][]*events.Expr) scope {
	n := &r.nodes[i]
	s := make(scope, len(n.Output))
	for k, a := range n.Output {
		d := deps{}
		for _, row := range rows {
			if k < len(row) && row[k] != nil {
				r.addAll(d, r.expr(i, row[k], ectx{expr: row[k].SQL}))
			}
		}
		s[a.ExprID] = d
	}
	return s
}

// positionalFromChildren maps output k of node i to output k of each child (Union and friends).
func (r *resolver) positionalFromChildren(i int, rows [][]int64) scope {
	n := &r.nodes[i]
	s := make(scope, len(n.Output))
	for k, a := range n.Output {
		d := deps{}
		for j, row := range rows {
			if k < len(row) && j < len(n.Children) {
				r.addAll(d, r.outputs(n.Children[j])[row[k]])
			}
		}
		s[a.ExprID] = d
	}
	return s
}

func (r *resolver) byPosition(out, in []events.Attribute, src scope) scope {
	s := make(scope, len(out))
	for k, a := range out {
		if k < len(in) {
			s[a.ExprID] = src[in[k].ExprID]
		}
	}
	return s
}

func expandRows(n *events.Node) [][]*events.Expr {
	var rows [][]*events.Expr
	for k := 0; ; k++ {
		list, ok := n.Exprs["projections."+strconv.Itoa(k)]
		if !ok {
			return rows
		}
		row := make([]*events.Expr, len(list))
		for j := range list {
			row[j] = &list[j]
		}
		rows = append(rows, row)
	}
}

// generate resolves a Generate: the child's columns pass through (a peer bug was to give them
// the generator's inputs); each generated column reads the generator's arguments. stack(n, a, b,
// c, d) is positional: with two output columns, the first reads a and c, the second b and d.
func (r *resolver) generate(i int) scope {
	n := &r.nodes[i]
	s := r.passthrough(i)
	gens := n.Exprs["generator"]
	c := ectx{kind: kindTransformation, expr: topSQL(gens)}
	outs := n.Exprs["generatorOutput"]
	if len(gens) == 1 && gens[0].Class == "Stack" && len(gens[0].Children) > 1 && len(outs) > 0 {
		args := gens[0].Children[1:] // the first is the row count
		for j, g := range outs {
			d := deps{}
			for k := j; k < len(args); k += len(outs) {
				r.addAll(d, r.expr(i, &args[k], c))
			}
			if g.ExprID != nil {
				s[*g.ExprID] = d
			}
		}
		return s
	}
	gen := r.exprDeps(i, gens, c)
	for _, g := range outs {
		if g.ExprID != nil {
			s[*g.ExprID] = gen
		}
	}
	return s
}

// mergeRows resolves the MergeRows of a rewritten MERGE (event format 1.3): output k reads
// expression k of every instruction's output (Keep, Split and its other output), whatever clause
// it belongs to; every instruction's condition (`WHEN MATCHED AND …`) decides which instruction,
// hence which value, a row gets: CONDITIONAL for every output (also a Discard's, a DELETE clause:
// copy-on-write plans express it as Discard, merge-on-read ones as a delete row, so one rule keeps
// both modes alike). Without the instruction roles (older events) the generic rule applies.
func (r *resolver) mergeRows(i int) (scope, bool) {
	n := &r.nodes[i]
	var rows [][]*events.Expr
	conds := deps{}
	for _, list := range []string{"matched", "notMatched", "notMatchedBySource"} {
		for k := 0; ; k++ {
			key := list + "." + strconv.Itoa(k)
			if n.Arg(key+".instruction") == "" {
				break
			}
			for _, role := range []string{".output", ".otherOutput"} {
				if es, ok := n.Exprs[key+role]; ok {
					row := make([]*events.Expr, len(es))
					for j := range es {
						row[j] = &es[j]
					}
					rows = append(rows, row)
				}
			}
			cond := n.Exprs[key+".condition"]
			r.addAll(conds, r.exprDeps(i, cond, ectx{kind: kindTransformation, indirect: Conditional, expr: roleSQL(cond)}))
		}
	}
	if len(rows) == 0 {
		return nil, false
	}
	s := r.positional(i, rows)
	for _, a := range n.Output {
		r.addAll(s[a.ExprID], conds)
	}
	return s, true
}

package plan

import (
	"maps"
	"slices"
	"strings"

	"github.com/colline/colline/events"
)

// Resolving a node: outputs(i) is what node i outputs, each attribute with the source columns
// behind it (its scope); decides(i) the columns that decide which rows reach it. Both are
// memoized per node and are where every recursion comes back: the rules per node class
// (rules.go) resolve a node from its children's outputs, and expressions (expr.go) look their
// attributes up in the nodes that output them.

// passthroughs output their child's attributes unchanged (same exprIds); the generic rule
// handles them exactly, so they are listed only to tell them from unknown classes.
var passthroughs = map[string]bool{
	"SubqueryAlias": true, "Filter": true, "Sort": true, "GlobalLimit": true, "LocalLimit": true,
	"Limit": true, "Offset": true, "Tail": true, "Distinct": true, "Deduplicate": true,
	"DeduplicateWithinWatermark": true, "Sample": true, "Repartition": true,
	"RepartitionByExpression": true, "RebalancePartitions": true, "WithCTE": true,
	"CTERelationDef": true, "CollectMetrics": true, "ResolvedHint": true, "Join": true,
	"WithWatermark": true, "EventTimeWatermark": true, "Subquery": true, "View": true,
}

// opaque nodes run user code over deserialized objects (typed Dataset operations): the generic
// rule is their rule (each output reads every input the node's expressions reference), so they
// are not counted as unknown.
var opaque = map[string]bool{
	"DeserializeToObject": true, "SerializeFromObject": true, "MapElements": true, "MapPartitions": true,
	"TypedFilter": true, "AppendColumns": true, "AppendColumnsWithObject": true, "MapGroups": true,
	"FlatMapGroupsWithState": true, "FlatMapGroupsInPandas": true, "CoGroup": true, "MapInPandas": true,
	"MapPartitionsInR": true, "MapPartitionsInRWithArrow": true, "FlatMapGroupsInR": true,
	"FlatMapGroupsInRWithArrow": true, "FlatMapCoGroupsInPandas": true, "PythonMapInArrow": true,
	"MapInArrow": true, "FlatMapGroupsInArrow": true, "FlatMapCoGroupsInArrow": true,
	"TransformWithState": true, "TransformWithStateInPySpark": true, "AttachDistributedSequence": true,
}

// outputs returns the scope of node i.
func (r *resolver) outputs(i int) scope {
	switch r.state[i] {
	case stateDone:
		return r.memo[i]
	case stateBusy:
		return scope{} // a cycle through a global lookup: give up on this path
	}
	r.state[i] = stateBusy
	r.enter()
	s := r.compute(i)
	r.leave()
	r.memo[i], r.state[i] = s, stateDone
	return s
}

func (r *resolver) compute(i int) scope {
	n := &r.nodes[i]
	cls := shortClass(n.Class)
	if q, ok := microBatch(n); ok {
		// the DataFrame a foreachBatch function gets: the streaming query's micro-batch, whose
		// columns are the outputs of the query's input plan, by position (event format 1.5)
		return r.byPosition(n.Output, r.nodes[q].Output, r.outputs(q))
	}
	if n.Dataset != nil {
		if s, ok := r.leaf(i, cls); ok {
			return s
		}
	}
	switch cls {
	case "Project":
		return r.named(i, n.Exprs["projectList"])
	case "Aggregate":
		return r.named(i, n.Exprs["aggregateExpressions"])
	case "Window":
		s := r.passthrough(i)
		for id, d := range r.named(i, n.Exprs["windowExpressions"]) {
			s[id] = d
		}
		return s
	case "Generate":
		return r.generate(i)
	case "ScriptTransformation":
		// an external script: every output may come from every input
		s := scope{}
		all := r.allRefs(i)
		for _, a := range n.Output {
			s[a.ExprID] = all
		}
		return s
	case "LateralJoin":
		// left columns pass through; the lateral subquery's columns are its plan's outputs,
		// which are not children: found by exprId anywhere in the event
		s := scope{}
		for _, a := range n.Output {
			if d := r.lookup(i, a.ExprID); d != nil {
				s[a.ExprID] = d
			}
		}
		return s
	case "Expand":
		return r.positional(i, expandRows(n))
	case "Union":
		rows := make([][]int64, 0, len(n.Children))
		for _, c := range n.Children {
			rows = append(rows, exprIDs(r.nodes[c].Output))
		}
		return r.positionalFromChildren(i, rows)
	case "Intersect", "Except":
		if len(n.Children) > 0 {
			return r.positionalFromChildren(i, [][]int64{exprIDs(r.nodes[n.Children[0]].Output)})
		}
	case "WithCTE":
		// children are the CTE definitions, then the plan: the output is the plan's (a
		// definition may output the same exprIds, so searching every child would be wrong)
		if len(n.Children) > 0 {
			last := n.Children[len(n.Children)-1]
			s := scope{}
			out := r.outputs(last)
			for _, a := range n.Output {
				if d, ok := out[a.ExprID]; ok {
					s[a.ExprID] = d
				}
			}
			return s
		}
	case "UnionLoop":
		// a recursive CTE: output k reads output k of the anchor and of the recursive step
		rows := make([][]int64, 0, len(n.Children))
		for _, c := range n.Children {
			rows = append(rows, exprIDs(r.nodes[c].Output))
		}
		return r.positionalFromChildren(i, rows)
	case "UnionLoopRef":
		// the recursive step's reference to the rows so far: resolved to the loop's anchor, by
		// position (one unrolling: the loop itself is still being resolved when its step is)
		if id, ok := intArg(n, "loopId"); ok {
			if loop, ok := r.loops[id]; ok && len(r.nodes[loop].Children) > 0 {
				anchor := r.nodes[loop].Children[0]
				return r.byPosition(n.Output, r.nodes[anchor].Output, r.outputs(anchor))
			}
		}
		return scope{}
	case "CTERelationRef":
		if id, ok := intArg(n, "cteId"); ok {
			if def, ok := r.cteDefs[id]; ok {
				return r.byPosition(n.Output, r.nodes[def].Output, r.outputs(def))
			}
		}
		return scope{}
	case "LocalRelation", "OneRowRelation", "Range", "LogicalRDD":
		return scope{}
	case "MergeRows":
		if s, ok := r.mergeRows(i); ok {
			return s
		}
	}
	if !passthroughs[cls] && !opaque[cls] && !isCommand(cls) {
		r.unknown[n.Class]++
	}
	return r.generic(i)
}

// lookup finds what exprId id means to node i: in its children's outputs first, else anywhere in
// the event (outer references of correlated subqueries point outside their plan).
func (r *resolver) lookup(i int, id int64) deps {
	for _, c := range r.nodes[i].Children {
		if d, ok := r.outputs(c)[id]; ok {
			return d
		}
	}
	if j, ok := r.lastOut[id]; ok && j != i {
		if d, ok := r.outputs(j)[id]; ok {
			return d
		}
	}
	return nil
}

func (r *resolver) childDeps(i int, id int64) deps {
	for _, c := range r.nodes[i].Children {
		if d, ok := r.outputs(c)[id]; ok {
			return d
		}
	}
	return nil
}

// decides collects the columns that decide which rows reach the root of the plan at q:
// filter conditions, join conditions, grouping keys, sort keys, set operations' right sides, and
// subqueries in those conditions (through walk). Subqueries in SELECT lists decide values, not
// rows: walk handles them for their column only. A persistent view stops the walk: its rows are
// its own sink's business. Results are memoized per node (subqueries are walked from many places).
//
// Below a Union, what decides the rows of one branch decides only the rows that come from that
// branch: such a role is scoped (tr.rows) to the datasets the branch's rows come from
// (rowSources), and is unscoped again where every branch has it (unionDecides).
func (r *resolver) decides(q int) deps {
	if d, ok := r.rowDeps[q]; ok {
		return d
	}
	r.rowDeps[q] = deps{} // in progress: a cycle, impossible in a valid event, yields nothing
	r.enter()
	defer r.leave()
	out := deps{}
	n := &r.nodes[q]
	if n.Dataset != nil && n.Dataset.Kind == "view" && !n.Dataset.Temporary {
		r.rowDeps[q] = out
		return out
	}
	add := func(role, subtype string) {
		c := ectx{kind: kindTransformation, indirect: subtype, expr: roleSQL(n.Exprs[role])}
		r.addAll(out, r.exprDeps(q, n.Exprs[role], c))
	}
	children := n.Children
	switch cls := shortClass(n.Class); cls {
	case "Filter":
		add("condition", FilterSub)
	case "Join":
		add("condition", JoinSub)
	case "LateralJoin":
		// the lateral subquery's output is values (resolved like a join's right side); its
		// correlation and the join condition decide rows
		for k := range n.Exprs["expressions"] {
			x := &n.Exprs["expressions"][k]
			c := ectx{kind: kindTransformation, indirect: JoinSub, expr: x.SQL}
			if x.Plan == nil {
				r.addAll(out, r.expr(q, x, c))
				continue
			}
			for col, d := range r.decides(*x.Plan) {
				out.add(col, dep{{indirect: JoinSub, expr: d[0].expr, rows: d[0].rows}})
			}
			r.addAll(out, r.exprDeps(q, x.Children, c))
		}
	case "TypedFilter":
		add("expressions", FilterSub) // a user function over the row decides which rows stay
	case "Aggregate":
		add("groupingExpressions", GroupBy)
	case "Sort":
		add("order", SortSub)
	case "Intersect", "Except":
		if len(n.Children) > 1 {
			for _, d := range sortedScope(r.outputs(n.Children[1])) {
				r.addAll(out, r.through(d, ectx{indirect: FilterSub, expr: strings.ToUpper(cls)}))
			}
		}
	case "Union":
		r.addAll(out, r.unionDecides(children))
		children = nil
	case "CTERelationRef":
		// the rows of a CTE reference are the rows of its definition
		if id, ok := intArg(n, "cteId"); ok {
			if def, ok := r.cteDefs[id]; ok {
				r.addAll(out, r.decides(def))
			}
		}
	case "LogicalRDD":
		// the rows of a foreachBatch micro-batch are those the streaming query's plan lets through
		if p, ok := microBatch(n); ok {
			r.addAll(out, r.decides(p))
		}
	case "WithCTE":
		// only the plan: a definition's rows matter where a reference reads it
		if len(children) > 0 {
			children = children[len(children)-1:]
		}
	}
	for _, c := range children {
		r.addAll(out, r.decides(c))
	}
	r.rowDeps[q] = out
	return out
}

// unionDecides is what decides the rows of a Union of the branches at children. A role every
// branch has (the same column, the same subtype) decides the union's rows as it decides each
// branch's: it keeps its scope if each branch has it unscoped. A role some branches lack decides
// only the rows of the branches that have it: it is scoped to the datasets their rows come from
// (or to the branch's own scope where a nested union scoped it already).
func (r *resolver) unionDecides(children []int) deps {
	per := make([]deps, len(children))
	for k, c := range children {
		per[k] = r.decides(c)
	}
	out := deps{}
	for k, d := range per {
		for col, x := range d {
			for _, t := range x {
				everywhere := t.rows == ""
				for j := range per {
					if j != k && everywhere {
						everywhere = hasUnscoped(per[j][col], t)
					}
				}
				if !everywhere && t.rows == "" {
					t.rows = r.rowSources(children[k])
				}
				out.add(col, dep{t})
			}
		}
	}
	r.charge(len(out))
	return out
}

// hasUnscoped reports whether x has role t for every row (unscoped).
func hasUnscoped(x dep, t tr) bool {
	for _, y := range x {
		if sameRole(y, t) && y.rows == "" {
			return true
		}
	}
	return false
}

// inlineRows stands, in a role's scope, for the rows of a branch that reads no dataset (VALUES):
// not a dataset key (those have a "/").
const inlineRows = "(inline data)"

// rowSources names the rows the plan at q is made of: the sorted keys of the datasets its rows
// come from (through children, CTE references and micro-batches; not the right side of a semi or
// anti join, INTERSECT or EXCEPT, whose rows only filter, nor subqueries), joined by newlines, or
// inlineRows. Memoized per node.
func (r *resolver) rowSources(q int) string {
	if s, ok := r.sources[q]; ok {
		return s
	}
	r.sources[q] = inlineRows // in progress
	keys := map[string]bool{}
	var visit func(i int)
	seen := map[int]bool{}
	visit = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		n := &r.nodes[i]
		if p, ok := microBatch(n); ok {
			visit(p)
			return
		}
		if n.Dataset != nil && !(n.Dataset.Kind == "view" && n.Dataset.Temporary && len(n.Children) > 0) {
			for _, d := range Identify(n.Dataset) {
				keys[d.Key] = true
			}
			return // a temporary view is collapsed into its plan; anything else is a dataset (or inline)
		}
		children := n.Children
		switch shortClass(n.Class) {
		case "CTERelationRef":
			if id, ok := intArg(n, "cteId"); ok {
				if def, ok := r.cteDefs[id]; ok {
					visit(def)
				}
			}
		case "WithCTE":
			if len(children) > 0 {
				children = children[len(children)-1:]
			}
		case "Intersect", "Except":
			children = children[:min(1, len(children))]
		case "Join":
			switch n.Arg("joinType") {
			case "LeftSemi", "LeftAnti", "ExistenceJoin":
				children = children[:min(1, len(children))]
			}
		}
		for _, c := range children {
			visit(c)
		}
	}
	visit(q)
	s := inlineRows
	if len(keys) > 0 {
		s = strings.Join(slices.Sorted(maps.Keys(keys)), "\n")
	}
	r.sources[q] = s
	return s
}

// microBatch returns the streaming query's input plan that a LogicalRDD stands for: the micro-batch
// DataFrame of a foreachBatch function (plans.microBatch, event format 1.5).
func microBatch(n *events.Node) (int, bool) {
	if shortClass(n.Class) != "LogicalRDD" {
		return 0, false
	}
	q, ok := n.Plans["microBatch"]
	return q, ok
}

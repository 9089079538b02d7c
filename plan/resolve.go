package plan

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/colline/colline/events"
)

// scope maps the exprIds a node outputs to the source columns behind them.
type scope map[int64]deps

// resolver computes node scopes bottom-up, each node once.
type resolver struct {
	nodes   []events.Node
	memo    []scope
	state   []uint8 // 0 new, 1 in progress, 2 done
	lastOut map[int64]int
	cteDefs map[int64]int
	loops   map[int64]int // UnionLoop nodes by loop id
	sinks   []sink
	unknown map[string]int
	changes []Change
	rowDeps map[int]deps       // memo of indirect
	fields  map[string]fieldOf // struct fields met, by key (nested.go)
	budget  Budget
	depth   int // nesting of outputs and indirect now
	deepest int // the most depth reached
	work    int // entries copied or merged so far (Budget.Work)
	collector
}

// enter counts one more level of recursion into a node; leave undoes it.
func (r *resolver) enter() {
	r.depth++
	r.deepest = max(r.deepest, r.depth)
	if r.depth > r.budget.Depth {
		tooComplex(BudgetDepth, r.depth, r.budget.Depth, false)
	}
}

func (r *resolver) leave() { r.depth-- }

// charge counts n entries of work.
func (r *resolver) charge(n int) {
	r.work += n
	if r.work > r.budget.Work {
		tooComplex(BudgetWork, r.work, r.budget.Work, false)
	}
}

// addAll merges o into d, charged to the work budget.
func (r *resolver) addAll(d, o deps) {
	r.charge(len(o))
	d.addAll(o)
}

// through is the package's through, charged to the work budget.
func (r *resolver) through(src deps, step ectx) deps {
	r.charge(len(src))
	return through(src, step)
}

const (
	stateNew = iota
	stateBusy
	stateDone
)

func newResolver(env *events.Envelope, b Budget) *resolver {
	r := &resolver{
		budget:    b,
		nodes:     env.Nodes,
		memo:      make([]scope, len(env.Nodes)),
		state:     make([]uint8, len(env.Nodes)),
		lastOut:   map[int64]int{},
		cteDefs:   map[int64]int{},
		loops:     map[int64]int{},
		unknown:   map[string]int{},
		rowDeps:   map[int]deps{},
		fields:    map[string]fieldOf{},
		collector: newCollector(b.Edges),
	}
	for i := range env.Nodes {
		n := &env.Nodes[i]
		for _, a := range n.Output {
			r.lastOut[a.ExprID] = i
		}
		switch shortClass(n.Class) {
		case "CTERelationDef":
			if id, ok := intArg(n, "cteId"); ok {
				r.cteDefs[id] = i
			}
		case "UnionLoop":
			if id, ok := intArg(n, "loopId"); ok {
				r.loops[id] = i
			}
		}
	}
	return r
}

// shortClass strips the package and a Scala object's trailing "$".
func shortClass(fqcn string) string {
	s := fqcn[strings.LastIndexByte(fqcn, '.')+1:]
	return strings.TrimSuffix(s, "$")
}

func intArg(n *events.Node, key string) (int64, bool) {
	switch v := n.Args[key].(type) {
	case float64:
		return int64(v), true
	case string:
		var x int64
		for _, c := range v {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int64(c-'0')
		}
		return x, v != ""
	}
	return 0, false
}

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

func (r *resolver) passthrough(i int) scope {
	s := scope{}
	for _, a := range r.nodes[i].Output {
		if d := r.childDeps(i, a.ExprID); d != nil {
			s[a.ExprID] = d
		}
	}
	return s
}

func (r *resolver) childDeps(i int, id int64) deps {
	for _, c := range r.nodes[i].Children {
		if d, ok := r.outputs(c)[id]; ok {
			return d
		}
	}
	return nil
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

func (r *resolver) exprDeps(i int, list []events.Expr, c ectx) deps {
	out := newAcc()
	for k := range list {
		r.walk(i, &list[k], c, out)
	}
	return out.d
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

func exprIDs(attrs []events.Attribute) []int64 {
	ids := make([]int64, len(attrs))
	for k, a := range attrs {
		ids[k] = a.ExprID
	}
	return ids
}

func names(attrs []events.Attribute) []string {
	out := make([]string, len(attrs))
	for k, a := range attrs {
		out[k] = a.Name
	}
	return out
}

func topSQL(list []events.Expr) string {
	if len(list) > 0 {
		return list[0].SQL
	}
	return ""
}

package plan

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/colline/colline/events"
)

// ErrUnsupported is returned for plans whose lineage cannot be extracted. It is permanent.
var ErrUnsupported = errors.New("unsupported plan")

// maxExpr bounds the expression text kept on an edge.
const maxExpr = 240

// sink is a dataset whose columns are fed, by position, by the outputs of node query.
type sink struct {
	target Dataset
	names  []string
	query  int
	mode   string
	view   bool
	// row-level writes (ReplaceData, WriteDelta; event format 1.3)
	inputs []int64 // exprId of the query output written to each column (dataInput), when not output k
	delta  bool    // WriteDelta: rows the delta does not touch keep their values
	update bool    // WriteDelta of an UPDATE: its filter chooses the rows that get new values
	// byCommand: the columns are fed by the row-level command at node command, which a connector
	// runs itself (Delta Lake's MERGE / UPDATE / DELETE; event format 1.4; command.go)
	byCommand bool
	command   int
}

// Extract computes the lineage of one event: for every write in the plan (and every persistent
// view it reads), the source columns of each target column, with a transformation type. Of a
// degraded event (markers.truncated) it extracts table-level lineage only (Lineage.Degraded).
//
// A bug that panics on some plan must not stop the consumer: the panic becomes an ErrUnsupported
// error (the event goes to the dead-letter topic). The fuzz test calls extract directly, so that
// such panics are found rather than hidden.
func Extract(env *events.Envelope) (lin *Lineage, err error) {
	return ExtractWithin(env, DefaultBudget)
}

// ExtractWithin is Extract within budget b (zero fields: DefaultBudget's). Of a plan over budget
// it extracts table-level lineage only, as of a degraded event, with Lineage.OverBudget naming the
// budget and the figure: the run, what it read and what it wrote still reach the graph, marked,
// and nothing is lost whole. That pass resolves no column, so its cost is linear in the event,
// whatever the plan's shape, and it needs no budget.
func ExtractWithin(env *events.Envelope, b Budget) (*Lineage, error) {
	lin, err := guarded(env, func() *Lineage { return extract(env, b) })
	var over *TooComplexError
	if !errors.As(err, &over) {
		return lin, err
	}
	lin, err = guarded(env, func() *Lineage { return tableLevel(env) })
	if err != nil {
		return nil, err
	}
	lin.OverBudget = over
	return lin, nil
}

// guarded runs f, turning its panics into errors: a *TooComplexError or ErrUnsupported as they
// are, any other (a bug) into ErrUnsupported.
func guarded(env *events.Envelope, f func() *Lineage) (lin *Lineage, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok && (errors.Is(e, ErrTooComplex) || errors.Is(e, ErrUnsupported)) {
				lin, err = nil, fmt.Errorf("event %s: %w", env.EventID, e)
				return
			}
			lin, err = nil, fmt.Errorf("%w: event %s: %v", ErrUnsupported, env.EventID, p)
		}
	}()
	return f(), nil
}

// extract panics with a *TooComplexError when the plan is over budget b.
func extract(env *events.Envelope, b Budget) *Lineage {
	lin, _ := extractCost(env, b, false)
	return lin
}

// tableLevel extracts the table-level lineage of env, as of a degraded event, with no budget.
func tableLevel(env *events.Envelope) *Lineage {
	lin, _ := extractCost(env, Budget{}, true)
	return lin
}

// extractCost is extract, also returning what the event cost against each budget. With
// tableOnly, or for a degraded event, it resolves no column: the lineage is table-level.
func extractCost(env *events.Envelope, b Budget, tableOnly bool) (*Lineage, Budget) {
	if env.Hive != nil {
		return extractHive(env, b, tableOnly)
	}
	b = b.withDefaults()
	var depth int
	if !tableOnly {
		if n := len(env.Nodes); n > b.Nodes {
			tooComplex(BudgetNodes, n, b.Nodes, true)
		}
		depth = planDepth(env.Nodes)
		if depth > b.Depth {
			tooComplex(BudgetDepth, depth, b.Depth, true)
		}
	}
	r := newResolver(env, b)
	degraded := env.Markers.Truncated || tableOnly
	if !degraded {
		r.checkCTERefs() // a degraded event may have lost the cteId arguments: it resolves no reference
	}
	r.writeSinks(env)
	if s, ok := resultSink(env); ok && len(r.sinks) == 0 && len(r.changes) == 0 {
		r.sinks = append(r.sinks, s)
	}
	if degraded {
		r.datasets(env.Root)
	}
	lin := &Lineage{Unknown: r.unknown, Changes: r.changes, Degraded: env.Markers.Truncated}
	edges, rows := map[[2]string]dep{}, map[[2]string]dep{}
	writes := map[string]*Write{}
	var order []string
	// Resolving a sink can discover persistent views, which are sinks too: loop until done.
	for k := 0; k < len(r.sinks); k++ {
		s := r.sinks[k]
		wr, ok := writes[s.target.Key]
		if !ok {
			wr = &Write{Dataset: s.target, Mode: s.mode}
			writes[s.target.Key] = wr
			order = append(order, s.target.Key)
		}
		if degraded {
			r.declare(s, &wr.Dataset)
		} else {
			r.feed(s, &wr.Dataset, edges, rows)
		}
	}
	r.addFields()
	for _, key := range order {
		w := writes[key]
		if w.Mode == "" && w.Kind == "view" {
			w.Mode = "view"
		}
		if rd, ok := r.reads[key]; ok && w.Kind == "view" && len(w.Columns) == 0 {
			w.Columns = rd.Columns
		}
		lin.Writes = append(lin.Writes, *w)
	}
	for _, key := range sortedKeys(r.reads) {
		if _, isWrite := writes[key]; isWrite && r.reads[key].Kind == "view" {
			continue // a view read by this job is listed once, as the dataset its plan feeds
		}
		lin.Reads = append(lin.Reads, *r.reads[key])
	}
	lin.Edges = sortedEdges(edges)
	lin.RowDeps = sortedEdges(rows)
	return lin, Budget{Depth: max(r.deepest, depth), Nodes: len(env.Nodes), Edges: r.edges, Work: r.work}
}

// resultSink is the sink of a job that writes nothing (a read action the listener published with
// publishReads: collect, count, show): its result is a dataset of its own (ResultDataset), fed by
// the root plan, so that the columns and tables the result depends on, and how, are in the graph
// like any other lineage. There is none for an event with a write or DDL node, a nested write, or
// a command at the root.
func resultSink(env *events.Envelope) (sink, bool) {
	if env.Markers.NestedWrite || env.Root < 0 || env.Root >= len(env.Nodes) {
		return sink{}, false
	}
	for i := range env.Nodes {
		if env.Nodes[i].Write != nil || env.Nodes[i].DDL != nil {
			return sink{}, false
		}
	}
	root := &env.Nodes[env.Root]
	if isCommand(shortClass(root.Class)) || len(root.Output) == 0 {
		return sink{}, false
	}
	cols := names(root.Output)
	return sink{target: ResultDataset(env.App, env.Query.FuncName, cols), names: cols, query: env.Root, mode: env.Query.FuncName}, true
}

// checkCTERefs refuses a plan with a CTE reference whose definition is not in the event: the
// reference's columns would have no source, and the lineage would look complete without them.
func (r *resolver) checkCTERefs() {
	for i := range r.nodes {
		n := &r.nodes[i]
		if shortClass(n.Class) != "CTERelationRef" {
			continue
		}
		id, ok := intArg(n, "cteId")
		if !ok {
			panic(fmt.Errorf("%w: node %d (CTERelationRef) has no cteId argument, so its columns have no source; the plan is incomplete: file an issue with the event", ErrUnsupported, i))
		}
		if _, ok := r.cteDefs[id]; !ok {
			panic(fmt.Errorf("%w: node %d (CTERelationRef) reads CTE %d, which no CTERelationDef in the event defines, so its columns have no source; the plan is incomplete: file an issue with the event", ErrUnsupported, i, id))
		}
	}
}

// writeSinks adds a sink for every write target of the plan and applies its DDL commands.
func (r *resolver) writeSinks(env *events.Envelope) {
	for i := range env.Nodes {
		if env.Markers.NestedWrite {
			break // the outer command's event carries the same lineage with the real target
		}
		if d := env.Nodes[i].DDL; d != nil {
			r.change(d)
			continue
		}
		w := env.Nodes[i].Write
		if w == nil || (w.Dataset.Kind == "view" && w.Dataset.Temporary) {
			continue // a temporary view is collapsed into its readers: never a dataset
		}
		q := i
		if w.Query != nil {
			q = *w.Query
		} else if len(env.Nodes[i].Children) > 0 {
			q = env.Nodes[i].Children[0]
		} else {
			continue // a write without a query (DDL): identities only
		}
		cols := w.Columns
		if len(cols) == 0 {
			cols = names(env.Nodes[q].Output)
		}
		for _, t := range Identify(&w.Dataset) {
			s := sink{target: t, names: cols, query: q, mode: w.Mode}
			rowLevel(&env.Nodes[i], &s)
			command(&env.Nodes[i], i, &s)
			r.sinks = append(r.sinks, s)
		}
	}
}

// datasets reads the dataset leaves of a degraded event (markers.truncated), with the columns they
// still list, and adds a sink for every persistent view among them, as resolution would: the
// listener dropped the expressions (and maybe the outputs) that say how columns connect, but kept
// every identity and the plan tree. A leaf is read when a write's query reaches it through the
// tree (children, named plans), which leaves out the target relation some write commands hold as
// a child, or when it is in a tree the root does not reach: a subquery plan, which only the
// dropped expressions referenced. As in leaf, temporary views are collapsed (the leaves under
// them are read) and a view without a plan is not read. Without a write there is nothing to read
// for, as in a full event.
func (r *resolver) datasets(root int) {
	if len(r.sinks) == 0 {
		return
	}
	reach := func(marked []bool, from ...int) {
		stack := from
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if i < 0 || i >= len(r.nodes) || marked[i] {
				continue
			}
			marked[i] = true
			n := &r.nodes[i]
			stack = append(stack, n.Children...)
			for _, p := range n.Plans {
				stack = append(stack, p)
			}
			if n.Write != nil && n.Write.Query != nil {
				stack = append(stack, *n.Write.Query)
			}
		}
	}
	tree := make([]bool, len(r.nodes))
	reach(tree, root)
	read := make([]bool, len(r.nodes))
	for _, s := range r.sinks {
		reach(read, s.query)
		if s.byCommand {
			reach(read, s.command) // a connector's row-level command plans its source and target itself
		}
	}
	for i := range r.nodes {
		if !tree[i] {
			reach(read, i)
		}
	}
	for i := range r.nodes {
		n := &r.nodes[i]
		if !read[i] || n.Dataset == nil || n.Dataset.Kind == "view" && (n.Dataset.Temporary || len(n.Children) == 0) {
			continue
		}
		for _, d := range Identify(n.Dataset) {
			ds := r.read(d)
			for _, a := range n.Output {
				if !a.MetadataCol {
					r.addColumn(ds, a.Name, a.Type)
				}
			}
			if shortClass(n.Class) == "View" && len(n.Children) > 0 {
				r.sinks = append(r.sinks, sink{target: d, query: n.Children[0], view: true, names: names(n.Output)})
			}
		}
	}
}

// declare adds the columns a sink writes, without their sources: the lineage of a degraded event
// is table-level. A column's type is the query's output type when the query still lists one
// output per column.
func (r *resolver) declare(s sink, target *Dataset) {
	if s.query < 0 {
		return // a write without a plan (LOAD DATA): no columns to map
	}
	out := r.nodes[s.query].Output
	for k, name := range s.names {
		typ := ""
		if len(out) == len(s.names) && s.inputs == nil {
			typ = out[k].Type
		}
		r.addColumn(target, name, typ)
	}
}

// sortedEdges renders edges sorted by target, then source.
func sortedEdges(m map[[2]string]dep) []Edge {
	out := make([]Edge, 0, len(m))
	for pair, d := range m {
		out = append(out, Edge{Source: pair[0], Target: pair[1], Transformations: d.transformations()})
	}
	SortEdges(out)
	return out
}

// SortEdges sorts edges as a Lineage holds them: by target, then source.
func SortEdges(edges []Edge) {
	sort.Slice(edges, func(a, b int) bool {
		x, y := edges[a], edges[b]
		if x.Target != y.Target {
			return x.Target < y.Target
		}
		return x.Source < y.Source
	})
}

// change records what a DDL node did. LOAD DATA also reads its path and writes its table, so
// that the graph links them through the run like any other job; it has no column mapping.
func (r *resolver) change(d *events.DDL) {
	targets := Identify(&d.Dataset)
	if len(targets) != 1 {
		return // not a named dataset
	}
	c := Change{Action: d.Action, Dataset: targets[0]}
	switch d.Action {
	case ChangeRename:
		to := Identify(d.To)
		if len(to) != 1 {
			return
		}
		c.To = &to[0]
	case ChangeAlter:
		// the columns the dataset has now; those it lost are marked in the graph
		for _, col := range d.Columns {
			c.Dataset.Columns = append(c.Dataset.Columns, Column{Key: ColumnKey(c.Dataset.Key, col.Name), Name: col.Name, Type: col.Type})
		}
		for _, name := range d.Dropped {
			c.Dropped = append(c.Dropped, Column{Key: ColumnKey(c.Dataset.Key, name), Name: name})
		}
	case ChangeLoad:
		c.Mode = "append"
		if d.Overwrite {
			c.Mode = "overwrite"
		}
		from := Identify(d.Source)
		if len(from) == 1 {
			c.From = &from[0]
			r.read(from[0])
		}
		r.sinks = append(r.sinks, sink{target: targets[0], query: -1, mode: c.Mode})
	}
	r.changes = append(r.changes, c)
}

// rowLevel completes the sink of a row-level write (MERGE / UPDATE / DELETE rewritten into
// ReplaceData or WriteDelta): the query also outputs the row operation, row ids and metadata
// columns, so column k reads the k-th `dataInput` attribute rather than output k.
func rowLevel(n *events.Node, s *sink) {
	cls := shortClass(n.Class)
	if cls != "ReplaceData" && cls != "WriteDelta" {
		return
	}
	for _, x := range n.Exprs["dataInput"] {
		if x.ExprID == nil {
			s.inputs = nil // not an attribute list: keep the positional mapping
			break
		}
		s.inputs = append(s.inputs, *x.ExprID)
	}
	s.delta = cls == "WriteDelta"
	s.update = s.delta && n.Arg("operation") == "UPDATE"
}

// feed adds the edges of one sink: per column, what its value reads, by position; per written
// dataset, once, the columns of every filter, join, grouping and sort the written rows went
// through (rows).
func (r *resolver) feed(s sink, target *Dataset, edges, rows map[[2]string]dep) {
	if s.query < 0 {
		return // a write without a plan (LOAD DATA): no columns to map
	}
	if s.byCommand {
		r.feedCommand(s, target, edges, rows)
		return
	}
	q := &r.nodes[s.query]
	out := r.outputs(s.query)
	inputs := s.inputs
	if inputs == nil {
		inputs = exprIDs(q.Output)
	}
	types := map[int64]string{}
	for _, a := range q.Output {
		types[a.ExprID] = a.Type
	}
	var targets []string
	for k, name := range s.names {
		typ := ""
		if k < len(inputs) {
			typ = types[inputs[k]]
		}
		r.addColumn(target, name, typ)
		col := ColumnKey(target.Key, name)
		targets = append(targets, col)
		if s.delta {
			// a delta rewrites some rows; the others keep their values
			r.addEdge(edges, col, col, dep{{kind: kindIdentity}})
		}
		if k >= len(inputs) {
			continue
		}
		r.feedColumn(edges, target, name, col, out[inputs[k]])
	}
	for src, d := range r.indirect(s.query) {
		var rowLevel dep
		for _, t := range d {
			if !s.update || t.indirect != FilterSub {
				rowLevel = rowLevel.merge(t)
				continue
			}
			// an UPDATE's delta holds the updated rows only: its WHERE chooses which rows get new
			// values and removes none from the table, so it is CONDITIONAL for the columns the
			// SET changes, and nothing for those it leaves as they are (as in copy-on-write
			// plans, IF(<where>, <new>, <old>))
			t.indirect = Conditional
			for k, col := range targets {
				if k < len(inputs) && copiesItself(out[inputs[k]], col) {
					continue
				}
				r.addEdge(edges, src, col, dep{t})
			}
		}
		if rowLevel != nil {
			r.addEdge(rows, src, target.Key, rowLevel)
		}
	}
}

// copiesItself reports whether the only source of a column is that column, unchanged.
func copiesItself(d deps, col string) bool {
	x, ok := d[col]
	return ok && len(d) == 1 && len(x) == 1 && x[0].indirect == "" && x[0].kind == kindIdentity
}

// addEdge merges d into the edge src -> dst, charging each new pair and role to the edge budget.
func (r *resolver) addEdge(edges map[[2]string]dep, src, dst string, d dep) {
	k := [2]string{src, dst}
	old, had := edges[k]
	if old == nil {
		old = make(dep, 0, len(d))
	}
	before := len(old)
	for _, t := range d {
		old = old.merge(t)
	}
	edges[k] = old
	r.edges += len(old) - before
	if !had {
		r.edges++
	}
	if r.edges > r.budget.Edges {
		tooComplex(BudgetEdges, r.edges, r.budget.Edges, false)
	}
}

// indirect collects the columns that decide which rows reach the root of the plan at q:
// filter conditions, join conditions, grouping keys, sort keys, set operations' right sides, and
// subqueries in those conditions (through walk). Subqueries in SELECT lists decide values, not
// rows: walk handles them for their column only. A persistent view stops the walk: its rows are
// its own sink's business. Results are memoized per node (subqueries are walked from many places).
func (r *resolver) indirect(q int) deps {
	if d, ok := r.rowDeps[q]; ok {
		return d
	}
	r.rowDeps[q] = deps{} // in progress: a cycle, impossible in a valid event, yields nothing
	out := deps{}
	seen := map[int]bool{}
	var visit func(i int)
	visit = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		r.enter()
		defer r.leave()
		n := &r.nodes[i]
		if n.Dataset != nil && n.Dataset.Kind == "view" && !n.Dataset.Temporary {
			return
		}
		add := func(role, subtype string) {
			c := ectx{kind: kindTransformation, indirect: subtype, expr: roleSQL(n.Exprs[role])}
			r.addAll(out, r.exprDeps(i, n.Exprs[role], c))
		}
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
					r.addAll(out, r.expr(i, x, c))
					continue
				}
				for col, d := range r.indirect(*x.Plan) {
					out.add(col, dep{{indirect: JoinSub, expr: d[0].expr}})
				}
				r.addAll(out, r.exprDeps(i, x.Children, c))
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
		case "CTERelationRef":
			// the rows of a CTE reference are the rows of its definition
			if id, ok := intArg(n, "cteId"); ok {
				if def, ok := r.cteDefs[id]; ok {
					visit(def)
				}
			}
		}
		children := n.Children
		if shortClass(n.Class) == "WithCTE" && len(children) > 0 {
			// only the plan: a definition's rows matter where a reference reads it
			children = children[len(children)-1:]
		}
		for _, c := range children {
			visit(c)
		}
	}
	visit(q)
	r.rowDeps[q] = out
	return out
}

// roleSQL is the expression text of a role: its expressions' text, comma-separated.
func roleSQL(list []events.Expr) string {
	var parts []string
	for k := range list {
		if list[k].SQL != "" {
			parts = append(parts, list[k].SQL)
		}
	}
	return strings.Join(parts, ", ")
}

// commands are plan roots that write or change datasets; they have no output of their own.
func isCommand(cls string) bool {
	return strings.HasSuffix(cls, "Command") || strings.HasPrefix(cls, "InsertInto") ||
		strings.HasPrefix(cls, "Create") || strings.HasPrefix(cls, "Replace") ||
		strings.HasPrefix(cls, "Overwrite") || strings.HasPrefix(cls, "Append") ||
		cls == "MergeIntoTable" || cls == "WriteDelta" || cls == "ReplaceData" ||
		cls == "CacheTableAsSelect" || cls == "CommandResult"
}

// Truncate cuts an expression's text to the length kept on an edge (240 bytes), at a UTF-8
// boundary, marking the cut with "…".
func Truncate(s string) string {
	if len(s) <= maxExpr {
		return s
	}
	cut := maxExpr
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

func sortedRoles(m map[string][]events.Expr) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedScope returns a scope's deps in exprId order, so merging is deterministic.
func sortedScope(s scope) []deps {
	ids := make([]int64, 0, len(s))
	for id := range s {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	out := make([]deps, len(ids))
	for k, id := range ids {
		out[k] = s[id]
	}
	return out
}

func itoa(k int) string { return strconv.Itoa(k) }

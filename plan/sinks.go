package plan

import (
	"fmt"

	"github.com/colline/colline/events"
)

// The sinks: what an event's plan writes, each a dataset whose columns are fed, by position, by
// the outputs of a node: the write commands' targets, the persistent views the plan reads (found
// while resolving, rules.go: leaf), and the result of a read action (resultSink). DDL commands are
// recorded as changes.

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
		if foreachBatch(&env.Nodes[i]) {
			// the sink of a foreachBatch stream is the user's function, not a dataset: the writes
			// it makes are events of their own, whose micro-batch stands for this query's input
			// (LogicalRDD, plans.microBatch). The stream's run reads its sources; it writes nothing.
			if env.Markers.Truncated {
				r.readOnly = append(r.readOnly, q) // degraded: its leaves are read (datasets)
			} else {
				r.outputs(q)
				r.decides(q)
			}
			continue
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

// foreachBatch reports whether n is the root of a stream whose sink is foreachBatch (event format
// 1.2: WriteToStream with args.foreachBatch).
func foreachBatch(n *events.Node) bool {
	fb, _ := n.Args["foreachBatch"].(bool)
	return fb && shortClass(n.Class) == "WriteToStream"
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

package plan

import (
	"strconv"
	"strings"

	"github.com/colline/colline/events"
)

// Row-level commands that a connector runs itself rather than through Spark's rewrite into
// ReplaceData / WriteDelta (event format 1.4: Delta Lake's MergeIntoCommand, UpdateCommand and
// DeleteCommand). The node has no query child: the target relation is plans.table, a MERGE's
// source plans.source, and the assignments are aligned `keys` (target attributes) and `values`
// roles. The rules are those of the rewritten commands (docs/lineage-semantics.md, MERGE / UPDATE /
// DELETE), so that a table gets the same lineage whichever way its connector runs the command.

// command marks s as fed by the row-level command at node i, when node i is one.
func command(n *events.Node, i int, s *sink) {
	switch cls := shortClass(n.Class); {
	case cls == "ReplaceData" || cls == "WriteDelta":
		return // rewritten: the query feeds the columns (rowLevel)
	case len(n.Children) > 0:
		return
	}
	switch n.Arg("operation") {
	case "MERGE", "UPDATE", "DELETE":
		if _, ok := n.Plans["table"]; ok {
			s.byCommand, s.command = true, i
		}
	}
}

// feedCommand adds the edges of a row-level command: per target column, the values that a clause
// may give it and the column itself where no clause changes it; per written dataset, the merge
// condition (JOIN), the source's own filters and joins, and a DELETE's condition (FILTER).
func (r *resolver) feedCommand(s sink, target *Dataset) {
	n := &r.nodes[s.command]
	table := r.nodes[n.Plans["table"]].Output
	current := r.outputs(n.Plans["table"])
	byName := map[string]events.Attribute{}
	for _, a := range table {
		byName[strings.ToLower(a.Name)] = a
	}
	// what each column reads, by exprId of its target attribute
	values := map[int64]deps{}
	set := func(key *events.Expr, d deps) {
		if key.ExprID == nil {
			return
		}
		if values[*key.ExprID] == nil {
			values[*key.ExprID] = deps{}
		}
		r.addAll(values[*key.ExprID], d)
	}
	all := deps{} // decides the value of every column (clause conditions)
	op := n.Arg("operation")
	switch op {
	case "MERGE":
		for _, list := range []string{"matched", "notMatched", "notMatchedBySource"} {
			for k := 0; n.Arg(list+"."+strconv.Itoa(k)+".action") != ""; k++ {
				key := list + "." + strconv.Itoa(k)
				keys, vals := n.Exprs[key+".keys"], n.Exprs[key+".values"]
				for j := range keys {
					if j < len(vals) {
						set(&keys[j], r.expr(s.command, &vals[j], ectx{expr: vals[j].SQL}))
					}
				}
				cond := n.Exprs[key+".condition"]
				r.addAll(all, r.exprDeps(s.command, cond, ectx{kind: kindTransformation, indirect: Conditional, expr: roleSQL(cond)}))
			}
		}
		cond := n.Exprs["mergeCondition"]
		for src, d := range r.exprDeps(s.command, cond, ectx{kind: kindTransformation, indirect: JoinSub, expr: roleSQL(cond)}) {
			r.addEdge(r.rows, src, target.Key, d)
		}
		if src, ok := n.Plans["source"]; ok {
			for col, d := range r.decides(src) {
				r.addEdge(r.rows, col, target.Key, d)
			}
		}
	case "UPDATE":
		// as Spark's copy-on-write rewrite has it: SET c = v WHERE w writes IF(w, v, c)
		keys, vals := n.Exprs["keys"], n.Exprs["values"]
		cond := n.Exprs["condition"]
		for j := range keys {
			if j >= len(vals) {
				break
			}
			x, text := &vals[j], vals[j].SQL
			if len(cond) == 1 {
				x = &events.Expr{Class: "If", Children: []events.Expr{cond[0], vals[j], keys[j]}}
				text = "IF(" + cond[0].SQL + ", " + vals[j].SQL + ", " + keys[j].SQL + ")"
			}
			set(&keys[j], r.expr(s.command, x, ectx{expr: text}))
		}
	case "DELETE":
		cond := n.Exprs["condition"]
		for src, d := range r.exprDeps(s.command, cond, ectx{kind: kindTransformation, indirect: FilterSub, expr: roleSQL(cond)}) {
			r.addEdge(r.rows, src, target.Key, d)
		}
	}
	for _, name := range s.names {
		r.addColumn(target, name, byName[strings.ToLower(name)].Type)
		col := ColumnKey(target.Key, name)
		a, ok := byName[strings.ToLower(name)]
		if !ok {
			continue
		}
		v, assigned := values[a.ExprID]
		if !assigned || op != "UPDATE" {
			// rows that no clause changes keep the column's value
			r.feedColumn(target, name, col, current[a.ExprID])
		}
		r.feedColumn(target, name, col, v)
		for src, d := range all {
			r.addEdge(r.edges, src, col, d)
		}
	}
}

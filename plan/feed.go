package plan

// Feeding a sink: per written column, the sources of its value (the outputs of the sink's query,
// resolve.go); per written dataset, once, the columns that decide its rows (decides).

// feed adds the edges of one sink: per column, what its value reads, by position; per written
// dataset, once, the columns of every filter, join, grouping and sort the written rows went
// through (rows).
func (r *resolver) feed(s sink, target *Dataset) {
	if s.query < 0 {
		return // a write without a plan (LOAD DATA): no columns to map
	}
	if s.byCommand {
		r.feedCommand(s, target)
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
			r.addEdge(r.edges, col, col, dep{{kind: kindIdentity}})
		}
		if k >= len(inputs) {
			continue
		}
		r.feedColumn(target, name, col, out[inputs[k]])
	}
	for src, d := range r.decides(s.query) {
		var rowDep dep
		for _, t := range d {
			if !s.update || t.indirect != FilterSub {
				rowDep = rowDep.merge(t)
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
				r.addEdge(r.edges, src, col, dep{t})
			}
		}
		if rowDep != nil {
			r.addEdge(r.rows, src, target.Key, rowDep)
		}
	}
}

// copiesItself reports whether the only source of a column is that column, unchanged.
func copiesItself(d deps, col string) bool {
	x, ok := d[col]
	return ok && len(d) == 1 && len(x) == 1 && x[0].indirect == "" && x[0].kind == kindIdentity
}

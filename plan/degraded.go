package plan

// A degraded event (markers.truncated): the listener dropped the expressions, and maybe the
// outputs, that say how columns connect, but kept every identity and the plan tree. Its lineage is
// table-level: the datasets read and written, with the columns the event still lists.

// datasets reads the dataset leaves of a degraded event (markers.truncated), with the columns they
// still list, and adds a sink for every persistent view among them, as resolution would: the
// listener dropped the expressions (and maybe the outputs) that say how columns connect, but kept
// every identity and the plan tree. A leaf is read when a write's query reaches it through the
// tree (children, named plans), which leaves out the target relation some write commands hold as
// a child, or when it is in a tree the root does not reach: a subquery plan, which only the
// dropped expressions referenced. As in leaf, temporary views are collapsed (the leaves under
// them are read) and a view without a plan is not read. Without a write (or a foreachBatch
// stream, which reads its sources and writes nothing) there is nothing to read for, as in a full
// event.
func (r *resolver) datasets(root int) {
	if len(r.sinks) == 0 && len(r.readOnly) == 0 {
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
	reach(read, r.readOnly...)
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

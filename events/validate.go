package events

import "fmt"

// Validate checks the invariants the rest of the consumer relies on.
func (e *Envelope) Validate() error {
	if err := e.validateHead(); err != nil {
		return err
	}
	if e.Hive != nil {
		if len(e.Nodes) > 0 {
			return fmt.Errorf("%w: event %s has both plan nodes and a hive body; an event is one or the other", ErrInvalid, e.EventID)
		}
		return e.Hive.validate(e.EventID)
	}
	if len(e.Nodes) == 0 {
		return fmt.Errorf("%w: event %s has no plan nodes", ErrInvalid, e.EventID)
	}
	if e.Root < 0 || e.Root >= len(e.Nodes) {
		return fmt.Errorf("%w: event %s: root %d outside nodes[0:%d]", ErrInvalid, e.EventID, e.Root, len(e.Nodes))
	}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		if n.ID != i {
			return fmt.Errorf("%w: event %s: node at index %d has id %d", ErrInvalid, e.EventID, i, n.ID)
		}
		if n.Class == "" {
			return fmt.Errorf("%w: event %s: node %d has no class", ErrInvalid, e.EventID, i)
		}
		ref := func(what string, j int) error {
			if j <= i || j >= len(e.Nodes) {
				return fmt.Errorf("%w: event %s: node %d (%s) %s refers to node %d; references must point forward inside nodes[0:%d]",
					ErrInvalid, e.EventID, i, n.Class, what, j, len(e.Nodes))
			}
			return nil
		}
		for _, c := range n.Children {
			if err := ref("child", c); err != nil {
				return err
			}
		}
		for role, p := range n.Plans {
			if err := ref("plan "+role, p); err != nil {
				return err
			}
		}
		if n.Write != nil && n.Write.Query != nil {
			if err := ref("write query", *n.Write.Query); err != nil {
				return err
			}
		}
		for role, list := range n.Exprs {
			for k := range list {
				if err := walkPlans(&list[k], func(p int) error { return ref("expression "+role, p) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func walkPlans(x *Expr, f func(int) error) error {
	if x.Plan != nil {
		if err := f(*x.Plan); err != nil {
			return err
		}
	}
	for i := range x.Children {
		if err := walkPlans(&x.Children[i], f); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a Hive body: vertex ids are their indexes, every edge's ends are vertices, and
// edge and vertex types are known.
func (h *Hive) validate(id string) error {
	for i, v := range h.Vertices {
		if v.ID != i {
			return fmt.Errorf("%w: event %s: hive.vertices[%d] has id %d; ids are the indexes", ErrInvalid, id, i, v.ID)
		}
		if v.VertexType != HiveColumn && v.VertexType != HiveTable {
			return fmt.Errorf("%w: event %s: hive.vertices[%d] has vertexType %q, want COLUMN or TABLE", ErrInvalid, id, i, v.VertexType)
		}
		if v.VertexID == "" {
			return fmt.Errorf("%w: event %s: hive.vertices[%d] has no vertexId", ErrInvalid, id, i)
		}
	}
	for i, e := range h.Edges {
		if e.EdgeType != HiveProjection && e.EdgeType != HivePredicate {
			return fmt.Errorf("%w: event %s: hive.edges[%d] has edgeType %q, want PROJECTION or PREDICATE", ErrInvalid, id, i, e.EdgeType)
		}
		for _, ends := range [2]struct {
			name string
			ids  []int
		}{{"sources", e.Sources}, {"targets", e.Targets}} {
			for _, v := range ends.ids {
				if v < 0 || v >= len(h.Vertices) {
					return fmt.Errorf("%w: event %s: hive.edges[%d].%s names vertex %d, outside vertices[0:%d]",
						ErrInvalid, id, i, ends.name, v, len(h.Vertices))
				}
			}
		}
	}
	for i, w := range h.Outputs {
		if w.Query != nil {
			return fmt.Errorf("%w: event %s: hive.outputs[%d] has a query; Hive outputs have none", ErrInvalid, id, i)
		}
		if len(w.ColumnTypes) > 0 && len(w.ColumnTypes) != len(w.Columns) {
			return fmt.Errorf("%w: event %s: hive.outputs[%d] has %d columns and %d columnTypes", ErrInvalid, id, i, len(w.Columns), len(w.ColumnTypes))
		}
	}
	return nil
}

// validateHead checks the invariants of the keys before the nodes (DecodeHead).
func (e *Envelope) validateHead() error {
	if e.EventID == "" {
		return fmt.Errorf("%w: eventId is missing", ErrInvalid)
	}
	for p, what := e.Parent, "parent"; p != nil; p, what = p.Root, what+".root" {
		if p.Namespace == "" || p.Name == "" || p.RunID == "" {
			return fmt.Errorf("%w: event %s: %s needs a namespace, a name and a runId, has %q, %q and %q",
				ErrInvalid, e.EventID, what, p.Namespace, p.Name, p.RunID)
		}
	}
	if c := e.Query.Connect; c != nil && (c.UserID == "" || c.SessionID == "") {
		return fmt.Errorf("%w: event %s: query.connect needs a userId and a sessionId", ErrInvalid, e.EventID)
	}
	return nil
}

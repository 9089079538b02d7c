package events

import "fmt"

// Validate checks the invariants the rest of the consumer relies on.
func (e *Envelope) Validate() error {
	if e.EventID == "" {
		return fmt.Errorf("%w: eventId is missing", ErrInvalid)
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

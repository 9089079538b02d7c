package graph

// Preview returns what writing items, in order, to an empty graph leaves in it: the node counts
// per label, the relationship counts per type and the FEEDS edges, sorted like Reader.Edges. It
// runs the Writer's own row building (the same validation, deduplication and newest-wins rule),
// without Neo4j, so tests and tools can compare a graph with the events that built it. Errors
// wrap ErrInvalidItem.
func Preview(items []Item) (Counts, []EdgeRow, error) {
	c := Counts{Nodes: map[string]int64{}, Relationships: map[string]int64{}}
	r, err := buildRows(items)
	if err != nil {
		return c, nil, err
	}
	add := func(m map[string]int64, k string, n int) {
		if n > 0 {
			m[k] += int64(n)
		}
	}
	add(c.Nodes, "Job", len(r.jobs))
	add(c.Nodes, "Dataset", len(r.datasets))
	add(c.Nodes, "Column", len(r.columns))
	add(c.Nodes, "Run", len(r.runs))
	add(c.Relationships, "HAS_COLUMN", len(r.columns))
	add(c.Relationships, "HAS_RUN", len(r.runs))
	add(c.Relationships, "READ", len(r.reads))
	add(c.Relationships, "WROTE", len(r.wrote))
	add(c.Relationships, "FEEDS", len(r.feeds))
	add(c.Relationships, "RENAMED_TO", len(r.renames))
	add(c.Relationships, "CHANGED", len(r.changed))
	edges := make([]EdgeRow, len(r.feeds))
	for i, f := range r.feeds {
		edges[i] = EdgeRow{Source: f.source, Target: f.target, Job: f.job, Type: f.typ, Subtype: f.subtype, Masking: f.masking}
	}
	return c, edges, nil
}

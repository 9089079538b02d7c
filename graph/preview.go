package graph

import (
	"cmp"
	"slices"

	"github.com/colline/colline/record"
)

// Preview returns what writing items, in order, to an empty graph leaves in it: the node counts
// per label, the relationship counts per type and the lineage relationships (FEEDS and
// DECIDES_ROWS), sorted like Reader.Edges. It runs the Writer's own row building (the same
// validation, deduplication and newest-wins rule), without Neo4j, so tests and tools can compare
// a graph with the events that built it. Errors wrap record.ErrInvalidItem.
func Preview(items []record.Item) (Counts, []EdgeRow, error) {
	c := Counts{Nodes: map[string]int64{}, Relationships: map[string]int64{}}
	r, err := buildRows(items)
	if err != nil {
		return c, nil, err
	}
	var edges []EdgeRow
	for _, e := range elements {
		n := int64(len(e.rows(r)))
		if n == 0 {
			continue
		}
		for _, l := range e.nodes {
			c.Nodes[l] += n
		}
		for _, t := range e.relationships {
			c.Relationships[t] += n
		}
		if e.edges != nil {
			edges = append(edges, e.edges(r)...)
		}
	}
	sortEdges(edges)
	return c, edges, nil
}

// sortEdges sorts lineage relationships by source, kind, target and job.
func sortEdges(edges []EdgeRow) {
	slices.SortFunc(edges, func(a, b EdgeRow) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Job, b.Job))
	})
}

package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Diff is how a graph differs from the one expected (Preview's): the lineage relationships
// missing, unexpected and duplicated, and the node and relationship counts that differ.
type Diff struct {
	Expected, Found, Distinct       int      // lineage relationships
	Missing, Unexpected, Duplicated []string // EdgeRow.String(), sorted; duplicated with " xN"
	Counts                          []string // "kind name: expected N, found M", for each count that differs
	Summary                         string   // found/expected per label and type
}

// Compare diffs the graph found (Reader.Counts and Reader.Edges) against the one expected.
func Compare(want Counts, wantEdges []EdgeRow, got Counts, gotEdges []EdgeRow) Diff {
	d := Diff{Expected: len(wantEdges), Found: len(gotEdges)}
	wantSet := map[string]bool{}
	for _, e := range wantEdges {
		wantSet[e.String()] = true
	}
	gotSet := map[string]int{}
	for _, e := range gotEdges {
		gotSet[e.String()]++
	}
	d.Distinct = len(gotSet)
	for k := range wantSet {
		if gotSet[k] == 0 {
			d.Missing = append(d.Missing, k)
		}
	}
	for k, n := range gotSet {
		if !wantSet[k] {
			d.Unexpected = append(d.Unexpected, k)
		}
		if n > 1 {
			d.Duplicated = append(d.Duplicated, fmt.Sprintf("%s x%d", k, n))
		}
	}
	slices.Sort(d.Missing)
	slices.Sort(d.Unexpected)
	slices.Sort(d.Duplicated)
	var found []string
	for _, m := range []struct {
		kind       string
		want, have map[string]int64
	}{{"nodes", want.Nodes, got.Nodes}, {"relationships", want.Relationships, got.Relationships}} {
		names := make([]string, 0, len(m.want)+len(m.have))
		for k := range m.want {
			names = append(names, k)
		}
		for k := range m.have {
			if _, ok := m.want[k]; !ok {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			if m.want[k] != m.have[k] {
				d.Counts = append(d.Counts, fmt.Sprintf("%s %s: expected %d, found %d", m.kind, k, m.want[k], m.have[k]))
			}
			found = append(found, fmt.Sprintf("%s %d/%d", k, m.have[k], m.want[k]))
		}
	}
	d.Summary = strings.Join(found, ", ")
	return d
}

// Equal reports whether nothing differs.
func (d Diff) Equal() bool {
	return len(d.Missing)+len(d.Unexpected)+len(d.Duplicated)+len(d.Counts) == 0
}

// String is the one-line account: "edges expected E, found F (distinct D, missing M, unexpected
// U, duplicated X); found/expected: …", with the first few of each kind of difference after it.
func (d Diff) String() string {
	s := fmt.Sprintf("edges expected %d, found %d (distinct %d, missing %d, unexpected %d, duplicated %d); found/expected: %s",
		d.Expected, d.Found, d.Distinct, len(d.Missing), len(d.Unexpected), len(d.Duplicated), d.Summary)
	first := func(s []string) []string { return s[:min(len(s), 5)] }
	for _, x := range []struct {
		name string
		list []string
	}{{"missing", d.Missing}, {"unexpected", d.Unexpected}, {"duplicated", d.Duplicated}, {"counts", d.Counts}} {
		if len(x.list) > 0 {
			s += fmt.Sprintf("; %s: %q", x.name, first(x.list))
		}
	}
	return s
}

// Diff compares the graph with the one expected (see Preview): what a test or tool that wrote a
// known set of items checks at the end.
func (r *Reader) Diff(ctx context.Context, want Counts, wantEdges []EdgeRow) (Diff, error) {
	got, err := r.Counts(ctx)
	if err != nil {
		return Diff{}, err
	}
	gotEdges, err := r.Edges(ctx)
	if err != nil {
		return Diff{}, err
	}
	return Compare(want, wantEdges, got, gotEdges), nil
}

package impact

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/colline/colline/plan"
)

// Kinds of change.
const (
	DatasetAdded   = "dataset_added"   // the new SQL writes a dataset the old did not
	DatasetRemoved = "dataset_removed" // the old SQL wrote it, the new does not: it is no longer refreshed
	ColumnAdded    = "column_added"
	ColumnRemoved  = "column_removed"
	ColumnRetyped  = "column_retyped"
	EdgeAdded      = "edge_added" // a source column now feeds a target column
	EdgeRemoved    = "edge_removed"
	EdgeChanged    = "edge_changed" // same pair, other roles or expressions
	RowsAdded      = "rows_added"   // a column now decides which rows reach a dataset
	RowsRemoved    = "rows_removed"
	RowsChanged    = "rows_changed"
)

// Change is one difference between the old and the new lineage of a job. Breaking changes
// remove or retype a column, or stop writing a dataset: what reads it downstream breaks.
// Others alter values or rows downstream.
type Change struct {
	Kind     string                `json:"kind"`
	Dataset  string                `json:"dataset"`          // the written dataset's key
	Column   string                `json:"column,omitempty"` // the target column's key (column and edge changes)
	Source   string                `json:"source,omitempty"` // the source column's key (edge and rows changes)
	Before   []plan.Transformation `json:"-"`
	After    []plan.Transformation `json:"-"`
	OldType  string                `json:"oldType,omitempty"`
	NewType  string                `json:"newType,omitempty"`
	Breaking bool                  `json:"breaking"`
	// Affected are the columns whose downstream the change reaches: the target column, or every
	// column of the dataset for rows and dataset changes.
	Affected []string `json:"-"`
}

// Diff compares the lineage of the datasets a job writes, before and after a change. Old and new
// are merged per written dataset: several events (statements) of one side are one lineage.
// Only the datasets written on either side are compared; reads alone are no change.
func Diff(old, new []*plan.Lineage) []Change {
	o, n := merge(old), merge(new)
	var out []Change
	keys := map[string]bool{}
	for k := range o.writes {
		keys[k] = true
	}
	for k := range n.writes {
		keys[k] = true
	}
	for _, ds := range slices.Sorted(maps.Keys(keys)) {
		ow, inOld := o.writes[ds]
		nw, inNew := n.writes[ds]
		switch {
		case !inOld:
			out = append(out, Change{Kind: DatasetAdded, Dataset: ds, Affected: columnKeys(nw)})
		case !inNew:
			out = append(out, Change{Kind: DatasetRemoved, Dataset: ds, Breaking: true, Affected: columnKeys(ow)})
			continue // what it no longer writes is one change, not one per column and edge
		default:
			out = append(out, columnChanges(ds, ow, nw)...)
		}
		out = append(out, edgeChanges(ds, o, n, false)...)
		out = append(out, edgeChanges(ds, o, n, true)...)
	}
	return out
}

// side is one side's lineage, merged: written datasets, edges into their columns, row deps.
type side struct {
	writes map[string]plan.Dataset
	edges  map[[2]string][]plan.Transformation // (source, target column)
	rows   map[[2]string][]plan.Transformation // (source, dataset)
}

func merge(ls []*plan.Lineage) side {
	s := side{writes: map[string]plan.Dataset{}, edges: map[[2]string][]plan.Transformation{}, rows: map[[2]string][]plan.Transformation{}}
	for _, l := range ls {
		if l == nil {
			continue
		}
		for _, w := range l.Writes {
			d, ok := s.writes[w.Key]
			if !ok {
				d = plan.Dataset{Key: w.Key, Namespace: w.Namespace, Name: w.Name, Kind: w.Kind}
			}
			for _, c := range w.Columns {
				if !slices.ContainsFunc(d.Columns, func(x plan.Column) bool { return x.Key == c.Key }) {
					d.Columns = append(d.Columns, c)
				}
			}
			s.writes[w.Key] = d
		}
		add := func(m map[[2]string][]plan.Transformation, e plan.Edge) {
			k := [2]string{e.Source, e.Target}
			for _, t := range e.Transformations {
				if !slices.Contains(m[k], t) {
					m[k] = append(m[k], t)
				}
			}
		}
		for _, e := range l.Edges {
			add(s.edges, e)
		}
		for _, e := range l.RowDeps {
			add(s.rows, e)
		}
	}
	return s
}

func columnChanges(ds string, o, n plan.Dataset) []Change {
	var out []Change
	old := map[string]plan.Column{}
	for _, c := range o.Columns {
		old[c.Key] = c
	}
	seen := map[string]bool{}
	for _, c := range n.Columns {
		seen[c.Key] = true
		oc, ok := old[c.Key]
		switch {
		case !ok:
			out = append(out, Change{Kind: ColumnAdded, Dataset: ds, Column: c.Key, NewType: c.Type, Affected: []string{c.Key}})
		case oc.Type != "" && c.Type != "" && !strings.EqualFold(oc.Type, c.Type):
			out = append(out, Change{Kind: ColumnRetyped, Dataset: ds, Column: c.Key, OldType: oc.Type, NewType: c.Type,
				Breaking: true, Affected: []string{c.Key}})
		}
	}
	for _, c := range o.Columns {
		if !seen[c.Key] {
			out = append(out, Change{Kind: ColumnRemoved, Dataset: ds, Column: c.Key, OldType: c.Type, Breaking: true,
				Affected: []string{c.Key}})
		}
	}
	return out
}

// edgeChanges compares the edges into the columns of ds (rows: the row-level dependencies of ds).
func edgeChanges(ds string, o, n side, rows bool) []Change {
	om, nm := o.edges, n.edges
	added, removed, changed := EdgeAdded, EdgeRemoved, EdgeChanged
	if rows {
		om, nm = o.rows, n.rows
		added, removed, changed = RowsAdded, RowsRemoved, RowsChanged
	}
	into := func(k [2]string) bool {
		if rows {
			return k[1] == ds
		}
		return strings.HasPrefix(k[1], ds+"#")
	}
	affected := func(k [2]string) []string {
		if rows {
			return columnKeys(unionColumns(o.writes[ds], n.writes[ds]))
		}
		return []string{k[1]}
	}
	keys := map[[2]string]bool{}
	for k := range om {
		if into(k) {
			keys[k] = true
		}
	}
	for k := range nm {
		if into(k) {
			keys[k] = true
		}
	}
	sorted := make([][2]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i][1] != sorted[j][1] {
			return sorted[i][1] < sorted[j][1]
		}
		return sorted[i][0] < sorted[j][0]
	})
	var out []Change
	for _, k := range sorted {
		before, inOld := om[k]
		after, inNew := nm[k]
		c := Change{Dataset: ds, Source: k[0], Before: sortedTs(before), After: sortedTs(after), Affected: affected(k)}
		if !rows {
			c.Column = k[1]
		}
		switch {
		case !inOld:
			c.Kind = added
		case !inNew:
			c.Kind = removed
		case !slices.Equal(c.Before, c.After):
			c.Kind = changed
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

func sortedTs(ts []plan.Transformation) []plan.Transformation {
	out := append([]plan.Transformation(nil), ts...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Type+a.Subtype != b.Type+b.Subtype {
			return a.Type+a.Subtype < b.Type+b.Subtype
		}
		if a.Expr != b.Expr {
			return a.Expr < b.Expr
		}
		return !a.Masking && b.Masking
	})
	return out
}

func unionColumns(a, b plan.Dataset) plan.Dataset {
	out := plan.Dataset{Columns: append([]plan.Column(nil), a.Columns...)}
	for _, c := range b.Columns {
		if !slices.ContainsFunc(out.Columns, func(x plan.Column) bool { return x.Key == c.Key }) {
			out.Columns = append(out.Columns, c)
		}
	}
	return out
}

func columnKeys(d plan.Dataset) []string {
	out := make([]string, len(d.Columns))
	for i, c := range d.Columns {
		out[i] = c.Key
	}
	return out
}

package tags

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// DatasetsAnswer is a tag's reach per dataset: for each dataset it reaches, how many of its
// columns it arrives in, by status, and how many indirect uses of the tagged value are in it;
// no column and no hop. It is what Reach's answer groups to (Group), read without reading the
// reached columns: a tag on a hundred columns reaches thousands, and their hops are the cost of
// the whole report. A dataset's columns, with their paths, are ReachIn's.
type DatasetsAnswer struct {
	Tag       string         `json:"tag"`
	Policy    Policy         `json:"policy"`
	Sources   []Tagged       `json:"sources"`  // sorted by column
	Datasets  []DatasetCount `json:"datasets"` // sorted by key: those with a reached column or an indirect use
	Columns   int            `json:"columns"`  // columns reached, the sources included
	Indirect  int            `json:"indirect"` // indirect uses
	Truncated bool           `json:"truncated"`
}

// DatasetCount is a dataset's part of a tag's reach: its columns by how the tag arrives, and the
// indirect uses of the tagged value whose target is in it (the dataset's rows, or a column's value).
type DatasetCount struct {
	DatasetReach
	Uses int `json:"uses"`
}

// DatasetCounter is a Graph that also counts a tag's reach per dataset in its server (Counted),
// from the tagged columns sources, with the aggregation setting stop: ReachByDataset asks it
// first, and walks only when it cannot answer exactly.
type DatasetCounter interface {
	CountReach(ctx context.Context, sources []string, stop bool, limit int) (*Counted, error)
}

// Counted is a DatasetCounter's answer. Exact is false when it could not count what Reach's
// walk finds: a struct column among the reached ones (FIELD and PARENT hops follow only the
// tagged part of a struct, which a count in the server does not), a column only 100 hops or
// more from a source, or more than limit columns (the walk's bounds: its answer is cut).
type Counted struct {
	Exact    bool
	Datasets []DatasetCount // Allowed and Source unset: ReachByDataset sets them
}

// ReachByDataset returns the reach of tag key per dataset: what Group(Reach(…)) returns, counted
// in the server when g is a DatasetCounter that can (Counted.Exact), else from Reach's walk.
func ReachByDataset(ctx context.Context, g Graph, key string, lim Limits) (*DatasetsAnswer, error) {
	dc, ok := g.(DatasetCounter)
	if !ok || lim.steps() != DefaultMaxSteps { // the count looks as far as a default walk
		return walkByDataset(ctx, g, key, lim)
	}
	p, sources, err := tagSources(ctx, g, key)
	if err != nil {
		return nil, err
	}
	ans := &DatasetsAnswer{Tag: key, Policy: p, Sources: sources, Datasets: []DatasetCount{}}
	if len(sources) == 0 {
		return ans, nil
	}
	keys := make([]string, len(sources))
	home := map[string]bool{}
	for i, s := range sources {
		keys[i] = s.Column
		home[s.Dataset] = true
	}
	c, err := dc.CountReach(ctx, keys, p.Aggregation == AggregationStop, lim.columns())
	if err != nil {
		return nil, fmt.Errorf("tags: reach of %s per dataset: %w", key, err)
	}
	if !c.Exact {
		return walkByDataset(ctx, g, key, lim)
	}
	for _, d := range c.Datasets {
		d.Source = home[d.Dataset]
		d.Allowed = d.Unmasked == 0 || d.Source || p.Allows(d.Dataset)
		ans.Columns += d.Unmasked + d.Aggregated + d.Masked
		ans.Indirect += d.Uses
		ans.Datasets = append(ans.Datasets, d)
	}
	slices.SortFunc(ans.Datasets, func(a, b DatasetCount) int { return cmp.Compare(a.Dataset, b.Dataset) })
	return ans, nil
}

func walkByDataset(ctx context.Context, g Graph, key string, lim Limits) (*DatasetsAnswer, error) {
	full, err := Reach(ctx, g, key, lim)
	if err != nil {
		return nil, err
	}
	return Group(full), nil
}

// Group groups a reach answer per dataset: its datasets' counts, with the indirect uses whose
// target is in each.
func Group(ans *ReachAnswer) *DatasetsAnswer {
	out := &DatasetsAnswer{Tag: ans.Tag, Policy: ans.Policy, Sources: ans.Sources, Datasets: []DatasetCount{},
		Columns: len(ans.Columns), Indirect: len(ans.Indirect), Truncated: ans.Truncated}
	by := map[string]*DatasetCount{}
	for _, d := range ans.Datasets {
		by[d.Dataset] = &DatasetCount{DatasetReach: d}
	}
	for _, u := range ans.Indirect {
		d := by[u.Dataset]
		if d == nil {
			d = &DatasetCount{DatasetReach: DatasetReach{Dataset: u.Dataset, Allowed: true, Source: slices.ContainsFunc(ans.Sources, func(s Tagged) bool { return s.Dataset == u.Dataset })}}
			by[u.Dataset] = d
		}
		d.Uses++
	}
	for _, d := range by {
		out.Datasets = append(out.Datasets, *d)
	}
	slices.SortFunc(out.Datasets, func(a, b DatasetCount) int { return cmp.Compare(a.Dataset, b.Dataset) })
	return out
}

// ReachIn returns the columns of dataset (columns, its column keys) that tag key reaches, as
// Reach's answer lists them (each with its arrivals, one per source column, and the whole path
// of each), from a walk up from these columns (Of) rather than down from every source: a
// dataset's part of a broad reach, on demand. Its Datasets is the dataset's count (when the tag
// reaches a column of it); its Indirect is empty: the uses are in Reach's answer.
func ReachIn(ctx context.Context, g Graph, key, dataset string, columns []string, lim Limits) (*ReachAnswer, error) {
	p, sources, err := tagSources(ctx, g, key)
	if err != nil {
		return nil, err
	}
	ans := &ReachAnswer{Tag: key, Policy: p, Sources: sources, Columns: []Reached{}, Datasets: []DatasetReach{}, Indirect: []Use{}}
	if len(columns) == 0 {
		return ans, nil
	}
	cts, err := Of(ctx, g, columns, lim)
	if err != nil {
		return nil, err
	}
	best := map[string]map[string]*arrival{} // source → column → arrival
	datasets := map[string]string{}
	for _, ct := range cts {
		ans.Truncated = ans.Truncated || ct.Truncated
		for _, c := range ct.Tags {
			if c.Tag.Key != key {
				continue
			}
			if best[c.From] == nil {
				best[c.From] = map[string]*arrival{}
			}
			if a := best[c.From][ct.Column]; a == nil || c.Status.rank() > a.status.rank() {
				best[c.From][ct.Column] = &arrival{status: c.Status, path: c.Path}
			}
			datasets[ct.Column] = ct.Dataset
		}
	}
	home := make([]string, len(sources))
	for i, s := range sources {
		home[i] = s.Dataset
	}
	ans.fill(best, datasets, nil, home)
	for i := range ans.Columns {
		for j := range ans.Columns[i].Arrivals {
			if a := &ans.Columns[i].Arrivals[j]; len(a.Path) == 0 {
				a.Path = nil // the source itself, as Reach's
			}
		}
	}
	return ans, nil
}

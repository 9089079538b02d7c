package tags

import (
	"cmp"
	"context"
	"slices"

	"github.com/colline/colline/plan"
)

// Memory is a Graph held in memory: the lineage of some events or of a change (plan's edges and
// row-level dependencies, with their job), rules and settings. `colline explain --tags` walks the
// events it explains with it, `colline impact` the analyzed change, tests made-up graphs. It is
// not safe for concurrent changes.
type Memory struct {
	hops     []Hop
	seen     map[[4]string]bool // kind, from, to, job
	columns  map[string]string  // key → dataset
	rules    []Rule
	policies map[string]Policy
}

// NewMemory returns a Memory with rules and settings, and no lineage yet.
func NewMemory(rules []Rule, policies []Policy) *Memory {
	m := &Memory{seen: map[[4]string]bool{}, columns: map[string]string{}, rules: rules, policies: map[string]Policy{}}
	for _, p := range policies {
		m.policies[p.Key] = p
	}
	return m
}

// AddLineage adds an event's lineage as job's: the columns (and struct fields) of the datasets it
// reads and writes, its edges as FEEDS and its row-level dependencies as DECIDES_ROWS.
func (m *Memory) AddLineage(lin *plan.Lineage, job string) {
	for _, d := range lin.Reads {
		m.addDataset(d)
	}
	for _, w := range lin.Writes {
		m.addDataset(w.Dataset)
	}
	for _, e := range lin.Edges {
		m.AddHop(Hop{Kind: Feeds, From: e.Source, To: e.Target, FromDataset: m.columns[e.Source], ToDataset: m.columns[e.Target],
			Job: job, Roles: Roles(e.Transformations)})
	}
	for _, e := range lin.RowDeps {
		m.AddHop(Hop{Kind: DecidesRows, From: e.Source, To: e.Target, FromDataset: m.columns[e.Source], ToDataset: e.Target,
			Job: job, Roles: Roles(e.Transformations)})
	}
}

func (m *Memory) addDataset(d plan.Dataset) {
	for _, c := range d.Columns {
		m.columns[c.Key] = d.Key
	}
	for _, c := range d.Columns {
		if c.Parent != "" {
			m.AddHop(Hop{Kind: Field, From: c.Parent, To: c.Key, FromDataset: d.Key, ToDataset: d.Key})
			m.AddHop(Hop{Kind: Parent, From: c.Key, To: c.Parent, FromDataset: d.Key, ToDataset: d.Key})
		}
	}
}

// AddColumn adds a column of dataset.
func (m *Memory) AddColumn(key, dataset string) { m.columns[key] = dataset }

// AddHop adds a hop, and its ends as columns (To of a DECIDES_ROWS is a dataset); a hop already
// there (same kind, ends and job) is not added again.
func (m *Memory) AddHop(h Hop) {
	k := [4]string{h.Kind, h.From, h.To, h.Job}
	if m.seen[k] {
		return
	}
	m.seen[k] = true
	m.hops = append(m.hops, h)
	if _, ok := m.columns[h.From]; !ok {
		m.columns[h.From] = h.FromDataset
	}
	if _, ok := m.columns[h.To]; !ok && h.Kind != DecidesRows {
		m.columns[h.To] = h.ToDataset
	}
}

// Step implements Graph.
func (m *Memory) Step(_ context.Context, dir Direction, keys []string) ([]Hop, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []Hop
	for _, h := range m.hops {
		end := h.From
		if dir == Up {
			if h.Kind == DecidesRows {
				continue
			}
			end = h.To
		}
		if want[end] {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b Hop) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Job, b.Job))
	})
	return out, nil
}

// Columns implements Graph.
func (m *Memory) Columns(_ context.Context, keys []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range keys {
		if d, ok := m.columns[k]; ok {
			out[k] = d
		}
	}
	return out, nil
}

// Rules implements Graph: all of them.
func (m *Memory) Rules(context.Context, []string) ([]Rule, error) { return m.rules, nil }

// Tagged implements Graph.
func (m *Memory) Tagged(_ context.Context, key string) ([]Tagged, error) {
	var out []Tagged
	for c, d := range m.columns {
		var ts []Tag
		for _, t := range tagsAt(m.rules, d, c) {
			if t.Key == key {
				ts = append(ts, t)
			}
		}
		if len(ts) > 0 {
			out = append(out, Tagged{Column: c, Dataset: d, Tags: ts})
		}
	}
	slices.SortFunc(out, func(a, b Tagged) int { return cmp.Compare(a.Column, b.Column) })
	return out, nil
}

// Policies implements Graph.
func (m *Memory) Policies(context.Context) (map[string]Policy, error) { return m.policies, nil }

// Upstream implements Upstreamer: breadth first up the FEEDS, at most 100 hops and limit columns
// besides the column.
func (m *Memory) Upstream(_ context.Context, keys []string, limit int) ([]Upstream, error) {
	into := map[string][]Hop{}
	structs := map[string]bool{}
	for _, h := range m.hops {
		switch h.Kind {
		case Feeds:
			into[h.To] = append(into[h.To], h)
		case Field, Parent:
			structs[h.From], structs[h.To] = true, true
		}
	}
	var out []Upstream
	for _, k := range keys {
		d, ok := m.columns[k]
		if !ok {
			continue
		}
		seen := map[string]string{k: d}
		frontier := []string{k}
		for depth := 0; depth < DefaultMaxSteps && len(frontier) > 0 && len(seen) <= limit; depth++ {
			var next []string
			for _, c := range frontier {
				for _, h := range into[c] {
					if _, ok := seen[h.From]; !ok && len(seen) <= limit {
						seen[h.From] = h.FromDataset
						next = append(next, h.From)
					}
				}
			}
			frontier = next
		}
		up := Upstream{Column: k, Dataset: d, Columns: len(seen)}
		for c, cd := range seen {
			up.Structs = up.Structs || structs[c]
			up.Tagged = up.Tagged || len(tagsAt(m.rules, cd, c)) > 0
		}
		out = append(out, up)
	}
	return out, nil
}

// DatasetColumns returns the keys of the columns of dataset, sorted.
func (m *Memory) DatasetColumns(_ context.Context, dataset string) ([]string, error) {
	var out []string
	for c, d := range m.columns {
		if d == dataset {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out, nil
}

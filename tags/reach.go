package tags

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// ReachAnswer is everything a tag reaches: from the columns its sources tag, every column its
// value flows into through DIRECT hops, unmasked, aggregated or masked (where it stops), and,
// apart, the indirect uses of the tagged value (it decides rows or a value without being in it).
type ReachAnswer struct {
	Tag       string         `json:"tag"`
	Policy    Policy         `json:"policy"`
	Sources   []Tagged       `json:"sources"`  // sorted by column
	Columns   []Reached      `json:"columns"`  // the sources too (an arrival with no hops); sorted by dataset, column
	Datasets  []DatasetReach `json:"datasets"` // sorted by key
	Indirect  []Use          `json:"indirect"` // sorted by target, via, job
	Truncated bool           `json:"truncated"`
}

// Reached is a column a tag reaches, with how it arrives from each source that reaches it.
type Reached struct {
	Column   string    `json:"column"`
	Dataset  string    `json:"dataset"`
	Status   Status    `json:"status"`  // the best of its arrivals: unmasked, then aggregated, then masked
	Allowed  bool      `json:"allowed"` // the tag's settings allow it unmasked here (always true but for Unmasked)
	Arrivals []Arrival `json:"arrivals"`
}

// Arrival is how a tag from one source column arrives in a column: its status and one shortest
// path of that status, hop by hop (none for the source itself). A compact answer (Compact) keeps
// only the path's last hop (Via): the hop before it is the Via of the column it comes from, for
// the same source, in the same answer.
type Arrival struct {
	From   string `json:"from"` // the tagged source column
	Tags   []Tag  `json:"tags"` // the source's tags of the key
	Status Status `json:"status"`
	Hops   int    `json:"hops"`
	Path   []Hop  `json:"path,omitempty"`
	Via    *Hop   `json:"via,omitempty"` // Compact: the last hop of Path
}

// Compact drops every arrival's path but its last hop (Via): the answer of a tag that reaches
// thousands of columns is a fraction of the size, and each path can still be followed back hop
// by hop through the columns it passes, which the answer lists too.
func (ans *ReachAnswer) Compact() {
	for i := range ans.Columns {
		for j := range ans.Columns[i].Arrivals {
			a := &ans.Columns[i].Arrivals[j]
			if n := len(a.Path); n > 0 {
				a.Via = &a.Path[n-1]
			}
			a.Path = nil
		}
	}
}

// DatasetReach counts a dataset's columns by how the tag arrives.
type DatasetReach struct {
	Dataset    string `json:"dataset"`
	Unmasked   int    `json:"unmasked"`
	Aggregated int    `json:"aggregated"`
	Masked     int    `json:"masked"`
	Allowed    bool   `json:"allowed"` // no unmasked column here, or the settings allow the tag here
	Source     bool   `json:"source"`  // a tagged column is in this dataset: the tag is always allowed here
}

// Use is an indirect use of a tagged value: Via, a column that carries the tag unmasked, decides
// which rows a dataset gets (Kind "rows": a filter, join, grouping or sort key) or which value a
// column gets (Kind "value": a condition, a window's partition or order), without its value
// reaching the target. It never tags the target.
type Use struct {
	Kind    string `json:"kind"` // rows or value
	From    string `json:"from"` // the tagged source column (the first, when several reach Via)
	Via     string `json:"via"`
	Target  string `json:"target"` // a dataset (rows) or a column (value)
	Dataset string `json:"dataset"`
	Job     string `json:"job"`
	Roles   []Role `json:"roles"`
}

// Uses kinds.
const (
	UseRows  = "rows"
	UseValue = "value"
)

// Reach follows tag key downstream of the columns its sources tag (Graph.Tagged), through
// DIRECT hops: a hop that masks stops it (the column after it is Masked), an aggregation stops
// it when its settings say so (Aggregated), anything else carries it (Unmasked); hops with only
// INDIRECT roles, and DECIDES_ROWS, are Uses. Each column keeps, per source, its best arrival
// along a shortest path. The walk is breadth first, one Graph.Step per depth over the whole
// frontier.
func Reach(ctx context.Context, g Graph, key string, lim Limits) (*ReachAnswer, error) {
	p, sources, err := tagSources(ctx, g, key)
	if err != nil {
		return nil, err
	}
	home := make([]string, len(sources))
	for i, s := range sources {
		home[i] = s.Dataset
	}
	return reach(ctx, g, p, sources, nil, home, lim)
}

// tagSources checks tag key and reads its settings and the columns its sources tag: where every
// answer about a tag's reach starts.
func tagSources(ctx context.Context, g Graph, key string) (Policy, []Tagged, error) {
	if err := checkTag(key, ""); err != nil {
		return Policy{}, nil, err
	}
	ps, err := g.Policies(ctx)
	if err != nil {
		return Policy{}, nil, fmt.Errorf("tags: settings: %w", err)
	}
	sources, err := g.Tagged(ctx, key)
	if err != nil {
		return Policy{}, nil, fmt.Errorf("tags: sources of %s: %w", key, err)
	}
	return policyOf(ps, key), sources, nil
}

// arrival is a walk's best arrival of one source's tag in one column.
type arrival struct {
	status Status
	// within is where the tagged value is inside the column, after PARENT hops: the path of
	// struct fields (".mail"), "" when the column is the tagged value (or a part of it).
	within string
	path   []Hop
}

// better reports whether an arrival of status s within a struct's fields beats a.
func (a *arrival) better(s Status, within string) bool {
	return a == nil || s.rank() > a.status.rank() || s == a.status && len(within) < len(a.within)
}

// descend is where the tagged value is after a FIELD hop to the field rel (".mail") of a column
// whose tagged part is within, or false when the field holds none of it: a column that is the
// tagged value has tagged fields, a struct that holds a tagged field has that field tagged (and
// fields below it), not its other fields.
func descend(within, rel string) (string, bool) {
	if rest, ok := under(within, rel); ok {
		return rest, true
	}
	if _, ok := under(rel, within); ok {
		return "", true
	}
	return "", false
}

// under reports whether path is prefix or a field below it (".a.b" is under ".a", ".ab" is not),
// with the rest.
func under(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	return rest, ok && (rest == "" || rest[0] == '.')
}

// rel is the field path between a struct column's key and its field's key.
func rel(field, parent string) string { return strings.TrimPrefix(field, parent) }

// reach walks down from sources with the settings p; before, when set, gives each source's path
// from further upstream (Carry's paths in the graph before a change's hops); home are the
// datasets where the tag is always allowed (those of the tagged columns).
func reach(ctx context.Context, g Graph, p Policy, sources []Tagged, before map[string][]Hop, home []string, lim Limits) (*ReachAnswer, error) {
	ans := &ReachAnswer{Tag: p.Key, Policy: p, Sources: sources, Columns: []Reached{}, Datasets: []DatasetReach{}, Indirect: []Use{}}
	slices.SortFunc(ans.Sources, func(a, b Tagged) int { return cmp.Compare(a.Column, b.Column) })
	best := map[string]map[string]*arrival{} // source → column → arrival
	datasets := map[string]string{}          // column → dataset
	type item struct{ src, node string }
	var frontier []item
	for _, s := range sources {
		best[s.Column] = map[string]*arrival{s.Column: {status: Unmasked, path: before[s.Column]}}
		datasets[s.Column] = s.Dataset
		frontier = append(frontier, item{s.Column, s.Column})
	}
	uses := map[[3]string]*Use{}
	walk := newStepper(g, Down, lim.columns())
	for depth := 1; len(frontier) > 0 && !ans.Truncated; depth++ {
		if depth > lim.steps() {
			ans.Truncated = true
			break
		}
		nodes := make([]string, len(frontier))
		for i, it := range frontier {
			nodes[i] = it.node
		}
		hops, err := walk.step(ctx, nodes)
		if err != nil {
			return nil, fmt.Errorf("tags: reach of %s, depth %d: %w", p.Key, depth, err)
		}
		var next []item
		for _, it := range frontier {
			from := best[it.src][it.node]
			for _, h := range hops[it.node] {
				within := from.within
				switch h.Kind {
				case Field:
					w, ok := descend(from.within, rel(h.To, h.From))
					if !ok {
						continue // a struct holding a tagged field: its other fields are not tagged
					}
					within = w
				case Parent:
					within = rel(h.From, h.To) + from.within
				}
				c := cross(h)
				st, ok := p.status(c)
				if !ok {
					if k := [3]string{h.From, h.To, h.Job}; uses[k] == nil && h.Kind != Field && h.Kind != Parent {
						kind := UseValue
						if h.Kind == DecidesRows {
							kind = UseRows
						}
						uses[k] = &Use{Kind: kind, From: it.src, Via: h.From, Target: h.To, Dataset: h.ToDataset, Job: h.Job, Roles: h.Roles}
					}
					continue
				}
				if !best[it.src][h.To].better(st, within) {
					continue
				}
				if _, known := datasets[h.To]; !known {
					if len(datasets) >= lim.columns() {
						ans.Truncated = true
						continue
					}
					datasets[h.To] = h.ToDataset
				}
				best[it.src][h.To] = &arrival{status: st, within: within, path: append(slices.Clip(from.path), h)}
				if st == Unmasked {
					next = append(next, item{it.src, h.To})
				}
			}
		}
		frontier = next
	}
	ans.fill(best, datasets, uses, home)
	return ans, nil
}

// fill builds the answer's lists from a walk's arrivals and uses.
func (ans *ReachAnswer) fill(best map[string]map[string]*arrival, datasets map[string]string, uses map[[3]string]*Use, home []string) {
	tagsOf := map[string][]Tag{}
	for _, s := range ans.Sources {
		tagsOf[s.Column] = s.Tags
	}
	srcDatasets := map[string]bool{}
	for _, d := range home {
		srcDatasets[d] = true
	}
	byColumn := map[string]*Reached{}
	for src, cols := range best {
		for col, a := range cols {
			r := byColumn[col]
			if r == nil {
				r = &Reached{Column: col, Dataset: datasets[col]}
				byColumn[col] = r
			}
			r.Arrivals = append(r.Arrivals, Arrival{From: src, Tags: tagsOf[src], Status: a.status, Hops: len(a.path), Path: a.path})
			if a.status.rank() > r.Status.rank() {
				r.Status = a.status
			}
		}
	}
	perDataset := map[string]*DatasetReach{}
	for _, r := range byColumn {
		slices.SortFunc(r.Arrivals, func(a, b Arrival) int {
			return cmp.Or(b.Status.rank()-a.Status.rank(), cmp.Compare(len(a.Path), len(b.Path)), cmp.Compare(a.From, b.From))
		})
		r.Allowed = r.Status != Unmasked || ans.Policy.Allows(r.Dataset) || srcDatasets[r.Dataset]
		ans.Columns = append(ans.Columns, *r)
		d := perDataset[r.Dataset]
		if d == nil {
			d = &DatasetReach{Dataset: r.Dataset, Allowed: true, Source: srcDatasets[r.Dataset]}
			perDataset[r.Dataset] = d
		}
		switch r.Status {
		case Unmasked:
			d.Unmasked++
			d.Allowed = d.Allowed && r.Allowed
		case Aggregated:
			d.Aggregated++
		case Masked:
			d.Masked++
		}
	}
	slices.SortFunc(ans.Columns, func(a, b Reached) int {
		return cmp.Or(cmp.Compare(a.Dataset, b.Dataset), cmp.Compare(a.Column, b.Column))
	})
	for _, d := range perDataset {
		ans.Datasets = append(ans.Datasets, *d)
	}
	slices.SortFunc(ans.Datasets, func(a, b DatasetReach) int { return cmp.Compare(a.Dataset, b.Dataset) })
	for _, u := range uses {
		ans.Indirect = append(ans.Indirect, *u)
	}
	slices.SortFunc(ans.Indirect, func(a, b Use) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Via, b.Via), cmp.Compare(a.Job, b.Job))
	})
}

// Counts sums the answer: columns by status, datasets reached, indirect uses.
func (ans *ReachAnswer) Counts() (unmasked, aggregated, masked, datasets, uses int) {
	for _, c := range ans.Columns {
		switch c.Status {
		case Unmasked:
			unmasked++
		case Aggregated:
			aggregated++
		case Masked:
			masked++
		}
	}
	return unmasked, aggregated, masked, len(ans.Datasets), len(ans.Indirect)
}

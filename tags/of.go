package tags

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// ColumnTags is a column's tags: each tag that reaches it, from which tagged column, how
// (Unmasked: the column carries it; Aggregated or Masked: it arrives only so and stops here),
// and the path, hop by hop from the tagged column.
type ColumnTags struct {
	Column    string    `json:"column"`
	Dataset   string    `json:"dataset"`
	Tags      []Carried `json:"tags"` // sorted: unmasked first, then by key, value, source, from
	Truncated bool      `json:"truncated"`
}

// Carried is one tag arriving in a column.
type Carried struct {
	Tag    Tag    `json:"tag"`
	From   string `json:"from"` // the column the tag's source tags (the column itself: no hops)
	Status Status `json:"status"`
	Path   []Hop  `json:"path"`
}

// ErrNotFound says that a column key names no column.
var ErrNotFound = errors.New("no such column")

// upState is where an upstream walk stands: at node, with what it met between node and the asked
// column. Hops are met in reverse order: first is the hop into the asked column (its last hop).
type upState struct {
	node    string
	self    bool     // node is the asked column
	first   crossing // the last hop of the path (into the asked column)
	restAgg bool     // an aggregation among the other hops
	// need is the struct fields that FIELD hops after node descend into and no PARENT hop
	// between has ascended from (".mail"): a PARENT hop before them must come from these fields
	// (Reach's descend, read backwards).
	need string
}

// resolve is the status of a tag with settings p that starts at the state's node, or false when
// the path does not carry it to the asked column.
func (s upState) resolve(p Policy) (Status, bool) {
	if s.self {
		return Unmasked, true
	}
	if s.restAgg && p.Aggregation == AggregationStop {
		return "", false // it stopped at an aggregation before the last hop
	}
	return p.status(s.first)
}

// Of returns the tags of each of the columns keys: the tags at the column itself and at every
// column upstream whose value reaches it through DIRECT hops that carry it (none masks, but the
// last may: the tag then arrives Masked; an aggregation stops the tags whose settings say so). A
// tag from several columns, or along several paths, is listed once per column it starts at, with
// its best status along a shortest path. The walk goes up breadth first, one Graph.Step per
// depth for all keys together; when g is an Upstreamer, only from the keys that a tag may reach
// (untaggedUpstream). A key that names no column is an error wrapping ErrNotFound.
func Of(ctx context.Context, g Graph, keys []string, lim Limits) ([]ColumnTags, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	untagged, err := untaggedUpstream(ctx, g, keys, lim)
	if err != nil {
		return nil, err
	}
	var walk []string
	for _, k := range keys {
		if _, ok := untagged[k]; !ok {
			walk = append(walk, k)
		}
	}
	out := make([]ColumnTags, 0, len(keys))
	if len(walk) > 0 {
		if out, err = of(ctx, g, walk, lim); err != nil {
			return nil, err
		}
	}
	for _, ct := range untagged {
		out = append(out, ct)
	}
	slices.SortFunc(out, func(a, b ColumnTags) int { return cmp.Compare(a.Column, b.Column) })
	return out, nil
}

// statesPerColumn bounds the states of Of's walk at one column without structs: the asked column
// itself, or its last hop's crossing (3) times an aggregation before it or not.
const statesPerColumn = 7

// untaggedUpstream answers, when g is an Upstreamer, the columns of keys that no tag can reach:
// no column upstream of them through FEEDS (a superset of what Of's walk meets, which follows
// FEEDS that carry, and struct links) is tagged, none is a struct or a struct's field, and their
// walk could not reach its limit of columns. Their answer is no tags, not truncated: what the walk
// finds, without reading a hop. (It could differ only in Truncated, for a column with an upstream
// path of 100 hops or more that meets no tag: the walk stops there and says so.)
func untaggedUpstream(ctx context.Context, g Graph, keys []string, lim Limits) (map[string]ColumnTags, error) {
	u, ok := g.(Upstreamer)
	if !ok || lim.steps() != DefaultMaxSteps { // Upstream looks as far as a default walk
		return nil, nil
	}
	limit := lim.columns() / statesPerColumn
	ups, err := u.Upstream(ctx, keys, limit)
	if err != nil {
		return nil, fmt.Errorf("tags: upstream columns: %w", err)
	}
	out := map[string]ColumnTags{}
	for _, up := range ups {
		if !up.Tagged && !up.Structs && up.Columns <= limit {
			out[up.Column] = ColumnTags{Column: up.Column, Dataset: up.Dataset, Tags: []Carried{}}
		}
	}
	return out, nil
}

// of is Of for columns that may have tags: it walks up from them.
func of(ctx context.Context, g Graph, keys []string, lim Limits) ([]ColumnTags, error) {
	walk := newStepper(g, Up, lim.columns())
	if err := walk.cone(ctx, keys); err != nil {
		return nil, fmt.Errorf("tags: upstream: %w", err)
	}
	datasets := map[string]string{}
	for k, d := range walk.columns {
		datasets[k] = d
	}
	var unknown []string
	for _, k := range keys {
		if _, ok := datasets[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 { // no cone, or columns that do not exist
		found, err := g.Columns(ctx, unknown)
		if err != nil {
			return nil, fmt.Errorf("tags: columns: %w", err)
		}
		for _, k := range unknown {
			d, ok := found[k]
			if !ok {
				return nil, fmt.Errorf("tags of %q: %w", k, ErrNotFound)
			}
			datasets[k] = d
		}
	}
	ps, err := g.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("tags: settings: %w", err)
	}
	type item struct {
		origin string
		st     upState
	}
	visited := map[string]map[upState][]Hop{} // origin → state → path from its node to origin
	truncated := map[string]bool{}
	var frontier []item
	for _, k := range keys {
		st := upState{node: k, self: true}
		visited[k] = map[upState][]Hop{st: nil}
		frontier = append(frontier, item{k, st})
	}
	for depth := 1; len(frontier) > 0; depth++ {
		if depth > lim.steps() {
			for _, it := range frontier {
				truncated[it.origin] = true
			}
			break
		}
		nodes := make([]string, len(frontier))
		for i, it := range frontier {
			nodes[i] = it.st.node
		}
		hops, err := walk.step(ctx, nodes)
		if err != nil {
			return nil, fmt.Errorf("tags: upstream, depth %d: %w", depth, err)
		}
		var next []item
		for _, it := range frontier {
			path := visited[it.origin][it.st]
			for _, h := range hops[it.st.node] {
				c := cross(h)
				if c == blocked {
					continue
				}
				ns := it.st
				switch h.Kind {
				case Field:
					ns.need = rel(h.To, h.From) + ns.need
				case Parent:
					r := rel(h.From, h.To)
					if rest, ok := under(ns.need, r); ok {
						ns.need = rest
					} else if _, ok := under(r, ns.need); ok || ns.need == "" {
						ns.need = ""
					} else {
						continue // a field other than the one the path descends into
					}
				}
				ns.node = h.From
				if it.st.self {
					ns.self, ns.first = false, c
				} else if c == masks {
					continue // masked before the last hop: the tag stopped there
				} else if c == aggregates {
					ns.restAgg = true
				}
				if _, seen := visited[it.origin][ns]; seen {
					continue
				}
				if len(visited[it.origin]) >= lim.columns() {
					truncated[it.origin] = true
					continue
				}
				datasets[h.From] = h.FromDataset
				visited[it.origin][ns] = append([]Hop{h}, path...)
				next = append(next, item{it.origin, ns})
			}
		}
		frontier = next
	}
	var nodes []string
	for _, states := range visited {
		for st := range states {
			nodes = append(nodes, st.node)
		}
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	var outside []string // the nodes whose exact rules the cone did not bring
	for _, n := range nodes {
		if _, ok := walk.columns[n]; !ok {
			outside = append(outside, n)
		}
	}
	rules, err := g.Rules(ctx, outside)
	if err != nil {
		return nil, fmt.Errorf("tags: rules: %w", err)
	}
	rules = append(rules, walk.rules...)
	at := map[string][]Tag{}
	for _, n := range nodes {
		if ts := tagsAt(rules, datasets[n], n); len(ts) > 0 {
			at[n] = ts
		}
	}
	out := make([]ColumnTags, 0, len(keys))
	for _, k := range keys {
		ct := ColumnTags{Column: k, Dataset: datasets[k], Tags: []Carried{}, Truncated: truncated[k]}
		best := map[[2]string]int{} // (tag, from) → index in ct.Tags
		for st, path := range visited[k] {
			for _, t := range at[st.node] {
				s, ok := st.resolve(policyOf(ps, t.Key))
				if !ok {
					continue
				}
				id := [2]string{t.Key + "\x00" + t.Value + "\x00" + t.Source, st.node}
				i, seen := best[id]
				if path == nil {
					path = []Hop{} // the column itself
				}
				c := Carried{Tag: t, From: st.node, Status: s, Path: path}
				switch {
				case !seen:
					best[id] = len(ct.Tags)
					ct.Tags = append(ct.Tags, c)
				case s.rank() > ct.Tags[i].Status.rank() || s == ct.Tags[i].Status && comparePaths(path, ct.Tags[i].Path) < 0:
					ct.Tags[i] = c
				}
			}
		}
		slices.SortFunc(ct.Tags, func(a, b Carried) int {
			return cmp.Or(b.Status.rank()-a.Status.rank(), cmp.Compare(a.Tag.Key, b.Tag.Key), cmp.Compare(a.Tag.Value, b.Tag.Value),
				cmp.Compare(a.Tag.Source, b.Tag.Source), cmp.Compare(len(a.Path), len(b.Path)), cmp.Compare(a.From, b.From))
		})
		out = append(out, ct)
	}
	return out, nil
}

// comparePaths orders paths shortest first, then by their hops' text: ties break the same way
// whatever order a walk met them in.
func comparePaths(a, b []Hop) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := range a {
		if c := cmp.Compare(a[i].String(), b[i].String()); c != 0 {
			return c
		}
	}
	return 0
}

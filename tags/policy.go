package tags

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Violation is a tag arriving unmasked in a dataset that its settings do not allow.
type Violation struct {
	Tag     string `json:"tag"`
	Column  string `json:"column"`
	Dataset string `json:"dataset"`
	From    string `json:"from"` // the column where the walk started (a tagged column, or a change's source carrying the tag)
	Tags    []Tag  `json:"tags"`
	Allowed []Glob `json:"allowed"`
	Path    []Hop  `json:"path"`
}

// Violations lists the columns the answer reaches unmasked where the tag's settings do not
// allow it, each with its shortest unmasked arrival; sorted by dataset, column.
func (ans *ReachAnswer) Violations() []Violation {
	var out []Violation
	for _, c := range ans.Columns {
		if c.Allowed {
			continue
		}
		for _, a := range c.Arrivals {
			if a.Status == Unmasked {
				out = append(out, Violation{Tag: ans.Tag, Column: c.Column, Dataset: c.Dataset, From: a.From, Tags: a.Tags,
					Allowed: ans.Policy.Allowed, Path: a.Path})
				break
			}
		}
	}
	return out
}

// Carry follows tags through a change: the lineage in change (a job's SQL analyzed before it
// runs, or an event just written) starts from columns that the graph g knows, and the tags those
// carry, there or from upstream (Of, over g and change), go down change's hops only (reach). One
// answer per tag key that some source carries unmasked, sorted by key; its Sources are the
// change's source columns with the tags they carry, each path starts at the tag's origin, and
// the tag is always allowed in its origins' datasets (not in the sources' when they differ).
func Carry(ctx context.Context, g Graph, change *Memory, lim Limits) ([]*ReachAnswer, error) {
	var srcs []string
	for _, h := range change.hops {
		if h.Kind != DecidesRows {
			srcs = append(srcs, h.From)
		}
	}
	if len(srcs) == 0 {
		return nil, nil
	}
	cg := &changeGraph{change: change, g: g}
	ofs, err := Of(ctx, cg, srcs, lim)
	if err != nil {
		return nil, err
	}
	ps, err := g.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("tags: settings: %w", err)
	}
	seeds := map[string][]Tagged{} // tag key → sources
	before := map[string]map[string][]Hop{}
	home := map[string][]string{} // tag key → the datasets of its origins
	for _, ct := range ofs {
		byKey := map[string]*Tagged{}
		for _, c := range ct.Tags {
			if c.Status != Unmasked {
				continue
			}
			t := byKey[c.Tag.Key]
			if t == nil {
				t = &Tagged{Column: ct.Column, Dataset: ct.Dataset}
				byKey[c.Tag.Key] = t
				if before[c.Tag.Key] == nil {
					before[c.Tag.Key] = map[string][]Hop{}
				}
				before[c.Tag.Key][ct.Column] = c.Path // the shortest first (Of's order)
			}
			if !slices.Contains(t.Tags, c.Tag) {
				t.Tags = append(t.Tags, c.Tag)
			}
			origin := ct.Dataset
			if len(c.Path) > 0 {
				origin = c.Path[0].FromDataset
			}
			if !slices.Contains(home[c.Tag.Key], origin) {
				home[c.Tag.Key] = append(home[c.Tag.Key], origin)
			}
		}
		for k, t := range byKey {
			seeds[k] = append(seeds[k], *t)
		}
	}
	var out []*ReachAnswer
	for _, k := range slices.Sorted(maps.Keys(seeds)) {
		ans, err := reach(ctx, changeDown{cg}, policyOf(ps, k), seeds[k], before[k], home[k], lim)
		if err != nil {
			return nil, err
		}
		out = append(out, ans)
	}
	return out, nil
}

// changeGraph is the graph with a change laid over it: upstream, both; its columns, both.
type changeGraph struct {
	change *Memory
	g      Graph
}

func (c *changeGraph) Step(ctx context.Context, dir Direction, keys []string) ([]Hop, error) {
	mine, _ := c.change.Step(ctx, dir, keys)
	theirs, err := c.g.Step(ctx, dir, keys)
	if err != nil {
		return nil, err
	}
	for _, h := range theirs {
		if !c.change.seen[[4]string{h.Kind, h.From, h.To, h.Job}] {
			mine = append(mine, h)
		}
	}
	return mine, nil
}

func (c *changeGraph) Columns(ctx context.Context, keys []string) (map[string]string, error) {
	out, err := c.g.Columns(ctx, keys)
	if err != nil {
		return nil, err
	}
	mine, _ := c.change.Columns(ctx, keys)
	for k, d := range mine {
		if _, ok := out[k]; !ok {
			out[k] = d
		}
	}
	return out, nil
}

func (c *changeGraph) Rules(ctx context.Context, keys []string) ([]Rule, error) {
	rs, err := c.g.Rules(ctx, keys)
	return append(rs, c.change.rules...), err
}

func (c *changeGraph) Tagged(ctx context.Context, key string) ([]Tagged, error) {
	return c.g.Tagged(ctx, key)
}

func (c *changeGraph) Policies(ctx context.Context) (map[string]Policy, error) {
	return c.g.Policies(ctx)
}

// changeDown walks down the change's hops only.
type changeDown struct{ *changeGraph }

func (c changeDown) Step(ctx context.Context, dir Direction, keys []string) ([]Hop, error) {
	return c.change.Step(ctx, dir, keys)
}

package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/tags"
)

// TagGraph is what package tags reads of the graph (tags.Graph): one step of lineage at a time,
// the rules where tags were set and the tags' settings. Read transactions only.
type TagGraph struct{ r *Reader }

// Tags returns the reader's tags.Graph.
func (r *Reader) Tags() *TagGraph { return &TagGraph{r: r} }

// One step down from columns $keys: their FEEDS, their DECIDES_ROWS, their struct fields (FIELD)
// and the struct they are a field of (PARENT).
const tagStepDown = `UNWIND $keys AS k
MATCH (s:Column {key: k})
CALL (s) {
  MATCH (s)-[f:FEEDS]->(c:Column)
  RETURN 'FEEDS' AS kind, c.key AS other, c.datasetKey AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, f.masked AS masked
  UNION ALL
  MATCH (s)-[f:DECIDES_ROWS]->(d:Dataset)
  RETURN 'DECIDES_ROWS' AS kind, d.key AS other, d.key AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, [] AS masked
  UNION ALL
  MATCH (s)-[:HAS_FIELD]->(c:Column)
  RETURN 'FIELD' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked
  UNION ALL
  MATCH (c:Column)-[:HAS_FIELD]->(s)
  RETURN 'PARENT' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked
}
RETURN k AS key, s.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked`

// One step up into columns $keys: the FEEDS into them, the struct they are a field of (a FIELD
// hop from it) and their struct fields (a PARENT hop from each).
const tagStepUp = `UNWIND $keys AS k
MATCH (t:Column {key: k})
CALL (t) {
  MATCH (c:Column)-[f:FEEDS]->(t)
  RETURN 'FEEDS' AS kind, c.key AS other, c.datasetKey AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, f.masked AS masked
  UNION ALL
  MATCH (c:Column)-[:HAS_FIELD]->(t)
  RETURN 'FIELD' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked
  UNION ALL
  MATCH (t)-[:HAS_FIELD]->(c:Column)
  RETURN 'PARENT' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked
}
RETURN k AS key, t.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked`

// Step implements tags.Graph: one read query for all keys.
func (g *TagGraph) Step(ctx context.Context, dir tags.Direction, keys []string) ([]tags.Hop, error) {
	q := tagStepDown
	if dir == tags.Up {
		q = tagStepUp
	}
	res, err := g.r.read(ctx, q, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph: tag step %s from %d column(s): %w", dir, len(keys), err)
	}
	out := make([]tags.Hop, 0, len(res.Records))
	for _, rec := range res.Records {
		h := tags.Hop{}
		key, _ := get[string](rec, "key")
		ds, _ := get[string](rec, "dataset")
		other, _ := get[string](rec, "other")
		otherDs, _ := get[string](rec, "otherDataset")
		h.Kind, _ = get[string](rec, "kind")
		h.Job, _ = get[string](rec, "job")
		h.From, h.FromDataset, h.To, h.ToDataset = key, ds, other, otherDs
		if dir == tags.Up {
			h.From, h.FromDataset, h.To, h.ToDataset = other, otherDs, key, ds
		}
		h.Roles = tags.Roles(transformations(rec))
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b tags.Hop) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Job, b.Job))
	})
	return out, nil
}

// Columns implements tags.Graph.
func (g *TagGraph) Columns(ctx context.Context, keys []string) (map[string]string, error) {
	res, err := g.r.read(ctx, `UNWIND $keys AS k MATCH (c:Column {key: k}) RETURN c.key AS key, coalesce(c.datasetKey, '') AS dataset`,
		map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph: columns: %w", err)
	}
	out := make(map[string]string, len(res.Records))
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		d, _ := get[string](rec, "dataset")
		out[k] = d
	}
	return out, nil
}

const ruleFields = `r.tag AS tag, r.value AS value, r.source AS source, r.dataset AS dataset, r.column AS column`

// Rules implements tags.Graph: the rules naming one of keys (index on columnKey), and every
// pattern rule.
func (g *TagGraph) Rules(ctx context.Context, keys []string) ([]tags.Rule, error) {
	res, err := g.r.read(ctx, `UNWIND $keys AS k MATCH (r:TagRule {columnKey: k}) RETURN `+ruleFields+`
UNION ALL
MATCH (r:TagPattern) RETURN `+ruleFields, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph: tag rules: %w", err)
	}
	out := make([]tags.Rule, 0, len(res.Records))
	for _, rec := range res.Records {
		out = append(out, ruleOf(rec))
	}
	return out, nil
}

func ruleOf(rec *neo4j.Record) tags.Rule {
	r := tags.Rule{}
	r.Key, _ = get[string](rec, "tag")
	r.Value, _ = get[string](rec, "value")
	r.Source, _ = get[string](rec, "source")
	ds, _ := get[string](rec, "dataset")
	col, _ := get[string](rec, "column")
	r.Dataset, r.Column = tags.Glob(ds), tags.Glob(col)
	return r
}

// The columns rules tag with $tag: exact rules by their column's key; pattern rules over the
// datasets whose key starts with the pattern's literal prefix (the key constraint's index) and
// matches it, and their columns whose part of the key matches the column pattern.
const taggedQuery = `MATCH (r:TagRule {tag: $tag}) WHERE r.columnKey IS NOT NULL
MATCH (c:Column {key: r.columnKey})
RETURN c.key AS column, coalesce(c.datasetKey, '') AS dataset, r.value AS value, r.source AS source
UNION ALL
MATCH (r:TagPattern {tag: $tag})
CALL (r) {
  MATCH (d:Dataset) WHERE d.key STARTS WITH r.datasetPrefix AND d.key =~ r.datasetRegex
  MATCH (d)-[:HAS_COLUMN]->(c:Column) WHERE substring(c.key, size(d.key) + 1) =~ r.columnRegex
  RETURN c, d
}
RETURN c.key AS column, d.key AS dataset, r.value AS value, r.source AS source`

// Tagged implements tags.Graph.
func (g *TagGraph) Tagged(ctx context.Context, key string) ([]tags.Tagged, error) {
	res, err := g.r.read(ctx, taggedQuery, map[string]any{"tag": key})
	if err != nil {
		return nil, fmt.Errorf("graph: columns tagged %s: %w", key, err)
	}
	by := map[string]*tags.Tagged{}
	for _, rec := range res.Records {
		col, _ := get[string](rec, "column")
		ds, _ := get[string](rec, "dataset")
		t := tags.Tag{Key: key}
		t.Value, _ = get[string](rec, "value")
		t.Source, _ = get[string](rec, "source")
		x := by[col]
		if x == nil {
			x = &tags.Tagged{Column: col, Dataset: ds}
			by[col] = x
		}
		if !slices.Contains(x.Tags, t) {
			x.Tags = append(x.Tags, t)
		}
	}
	out := make([]tags.Tagged, 0, len(by))
	for _, x := range by {
		slices.SortFunc(x.Tags, func(a, b tags.Tag) int { return cmp.Or(cmp.Compare(a.Value, b.Value), cmp.Compare(a.Source, b.Source)) })
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b tags.Tagged) int { return cmp.Compare(a.Column, b.Column) })
	return out, nil
}

// Policies implements tags.Graph.
func (g *TagGraph) Policies(ctx context.Context) (map[string]tags.Policy, error) {
	res, err := g.r.read(ctx, `MATCH (t:Tag) RETURN t.key AS key, t.aggregation AS aggregation, coalesce(t.allowed, []) AS allowed,
       coalesce(t.description, '') AS description, coalesce(t.source, '') AS source`, nil)
	if err != nil {
		return nil, fmt.Errorf("graph: tag settings: %w", err)
	}
	out := make(map[string]tags.Policy, len(res.Records))
	for _, rec := range res.Records {
		p := tags.Policy{}
		p.Key, _ = get[string](rec, "key")
		p.Aggregation, _ = get[string](rec, "aggregation")
		p.Description, _ = get[string](rec, "description")
		p.Source, _ = get[string](rec, "source")
		allowed, _ := get[[]any](rec, "allowed")
		for _, a := range allowed {
			s, _ := a.(string)
			p.Allowed = append(p.Allowed, tags.Glob(s))
		}
		if p.Aggregation == "" {
			p.Aggregation = tags.AggregationPass
		}
		out[p.Key] = p
	}
	return out, nil
}

// TagSummary is a tag key as the graph holds it: its settings and the rules that set it, by source.
type TagSummary struct {
	Key     string         `json:"key"`
	Policy  tags.Policy    `json:"policy"`
	Sources map[string]int `json:"sources"` // rules per source
	Rules   int            `json:"rules"`
}

// TagList returns every tag key that a rule sets or a file describes, sorted.
func (g *TagGraph) TagList(ctx context.Context) ([]TagSummary, error) {
	res, err := g.r.read(ctx, `MATCH (r:TagRule) RETURN r.tag AS key, r.source AS source, count(*) AS n`, nil)
	if err != nil {
		return nil, fmt.Errorf("graph: tags: %w", err)
	}
	ps, err := g.Policies(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*TagSummary{}
	at := func(k string) *TagSummary {
		if by[k] == nil {
			p, ok := ps[k]
			if !ok {
				p = tags.DefaultPolicy(k)
			}
			by[k] = &TagSummary{Key: k, Policy: p, Sources: map[string]int{}}
		}
		return by[k]
	}
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		s, _ := get[string](rec, "source")
		n, _ := get[int64](rec, "n")
		x := at(k)
		x.Sources[s] += int(n)
		x.Rules += int(n)
	}
	for k := range ps {
		at(k)
	}
	out := make([]TagSummary, 0, len(by))
	for _, x := range by {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b TagSummary) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

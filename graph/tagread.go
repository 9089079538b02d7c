package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/tags"
)

// TagGraph is what package tags reads of the graph (tags.Graph, tags.Coner): one step of lineage
// at a time or a whole cone, the rules where tags were set and the tags' settings. Read
// transactions only. The pattern rules and the settings, small and read by every answer, are
// kept for SettingsTTL between reads.
type TagGraph struct {
	r *Reader

	mu       sync.Mutex
	readAt   time.Time
	patterns []tags.Rule
	policies map[string]tags.Policy
}

// SettingsTTL is how long a TagGraph keeps the pattern rules and the tags' settings: a tag file
// loaded is seen by a running explorer within this time.
const SettingsTTL = 5 * time.Second

// Tags returns the reader's tags.Graph.
func (r *Reader) Tags() *TagGraph { return &TagGraph{r: r} }

// settings returns the pattern rules and the tags' settings, read again after SettingsTTL.
func (g *TagGraph) settings(ctx context.Context) ([]tags.Rule, map[string]tags.Policy, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.policies != nil && time.Since(g.readAt) < SettingsTTL {
		return g.patterns, g.policies, nil
	}
	res, err := g.r.read(ctx, `MATCH (r:TagPattern) RETURN 'rule' AS kind, `+ruleFields+`, null AS aggregation, [] AS allowed, null AS description
UNION ALL
MATCH (t:Tag) RETURN 'tag' AS kind, t.key AS tag, null AS value, coalesce(t.source, '') AS source, null AS dataset, null AS column,
       t.aggregation AS aggregation, coalesce(t.allowed, []) AS allowed, coalesce(t.description, '') AS description`, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("graph: tag settings: %w", err)
	}
	var patterns []tags.Rule
	policies := map[string]tags.Policy{}
	for _, rec := range res.Records {
		if kind, _ := get[string](rec, "kind"); kind == "rule" {
			patterns = append(patterns, ruleOf(rec))
			continue
		}
		p := tags.Policy{}
		p.Key, _ = get[string](rec, "tag")
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
		policies[p.Key] = p
	}
	g.patterns, g.policies, g.readAt = patterns, policies, time.Now()
	return patterns, policies, nil
}

// The hops of one column s, downstream (FEEDS, DECIDES_ROWS, its struct fields: FIELD, the struct
// it is a field of: PARENT), and of one column t, upstream (the FEEDS into it, FIELD, PARENT): the
// rows of a step and of a cone.
const hopsDown = `  MATCH (s)-[f:FEEDS]->(c:Column)
  RETURN 'FEEDS' AS kind, c.key AS other, c.datasetKey AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, f.masked AS masked, [] AS rows
  UNION ALL
  MATCH (s)-[f:DECIDES_ROWS]->(d:Dataset)
  RETURN 'DECIDES_ROWS' AS kind, d.key AS other, d.key AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, [] AS masked, f.rows AS rows
  UNION ALL
  MATCH (s)-[:HAS_FIELD]->(c:Column)
  RETURN 'FIELD' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked, [] AS rows
  UNION ALL
  MATCH (c:Column)-[:HAS_FIELD]->(s)
  RETURN 'PARENT' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked, [] AS rows`

const hopsUp = `  MATCH (c:Column)-[f:FEEDS]->(t)
  RETURN 'FEEDS' AS kind, c.key AS other, c.datasetKey AS otherDataset, f.job AS job, f.roles AS roles, f.exprs AS exprs, f.masked AS masked, [] AS rows
  UNION ALL
  MATCH (c:Column)-[:HAS_FIELD]->(t)
  RETURN 'FIELD' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked, [] AS rows
  UNION ALL
  MATCH (t)-[:HAS_FIELD]->(c:Column)
  RETURN 'PARENT' AS kind, c.key AS other, c.datasetKey AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked, [] AS rows`

// One step down from columns $keys: their FEEDS, their DECIDES_ROWS, their struct fields (FIELD)
// and the struct they are a field of (PARENT).
const tagStepDown = `UNWIND $keys AS k
MATCH (s:Column {key: k})
CALL (s) {
` + hopsDown + `
}
RETURN k AS key, s.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked, rows`

// One step up into columns $keys: the FEEDS into them, the struct they are a field of (a FIELD
// hop from it) and their struct fields (a PARENT hop from each).
const tagStepUp = `UNWIND $keys AS k
MATCH (t:Column {key: k})
CALL (t) {
` + hopsUp + `
}
RETURN k AS key, t.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked, rows`

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
	out, _ := g.hops(res.Records, dir)
	return out, nil
}

// hops reads the records of a step or a cone into hops, sorted, and the columns whose hops they
// are (a record of kind "" only says that its column was walked).
func (g *TagGraph) hops(records []*neo4j.Record, dir tags.Direction) ([]tags.Hop, []string) {
	out := make([]tags.Hop, 0, len(records))
	var done []string
	for _, rec := range records {
		h := tags.Hop{}
		key, _ := get[string](rec, "key")
		if kind, _ := get[string](rec, "kind"); kind == "" {
			done = append(done, key)
			continue
		}
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
	return out, done
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
	patterns, _, err := g.settings(ctx)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(patterns)
	if len(keys) == 0 {
		return out, nil
	}
	res, err := g.r.read(ctx, `UNWIND $keys AS k MATCH (r:TagRule {columnKey: k}) RETURN `+ruleFields, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph: tag rules: %w", err)
	}
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
	_, ps, err := g.settings(ctx)
	return ps, err
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

// The cone of columns $keys: the columns their values reach (Down) or come from (Up) through
// FEEDS, found in the server breadth first (a distinct end node is a pruning expansion, not every
// path), at most $limit per start column and in all; then every hop of the start columns and of the cone, as
// Step returns them (FEEDS, HAS_FIELD both ways, DECIDES_ROWS down), and one row of empty kind
// that lists the cone's columns, [key, dataset], and the rules that name one of them. One row per
// hop and one for the whole cone: a row per column doubled the rows, which is what the server's
// time grows with (docs/benchmarks.md).
const tagConeDown = `UNWIND $keys AS k
MATCH (s:Column {key: k})
CALL (s) { MATCH (s)-[:FEEDS*1..100]->(x:Column) RETURN DISTINCT x LIMIT $limit }
WITH collect(DISTINCT s) + collect(DISTINCT x) AS cone
UNWIND cone AS s
WITH DISTINCT s LIMIT $limit
WITH collect(s) AS cone
CALL (cone) {
  UNWIND cone AS s
  CALL (s) {
` + hopsDown + `
  }
  RETURN s.key AS key, s.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked, rows, null AS columns, null AS rules
  UNION ALL
` + coneSummary + `
}
RETURN key, dataset, kind, other, otherDataset, job, roles, exprs, masked, rows, columns, rules`

const tagConeUp = `UNWIND $keys AS k
MATCH (t:Column {key: k})
CALL (t) { MATCH (t)<-[:FEEDS*1..100]-(x:Column) RETURN DISTINCT x LIMIT $limit }
WITH collect(DISTINCT t) + collect(DISTINCT x) AS cone
UNWIND cone AS t
WITH DISTINCT t LIMIT $limit
WITH collect(t) AS cone
CALL (cone) {
  UNWIND cone AS t
  CALL (t) {
` + hopsUp + `
  }
  RETURN t.key AS key, t.datasetKey AS dataset, kind, other, otherDataset, job, roles, exprs, masked, rows, null AS columns, null AS rules
  UNION ALL
` + coneSummary + `
}
RETURN key, dataset, kind, other, otherDataset, job, roles, exprs, masked, rows, columns, rules`

// coneSummary is the cone's row of empty kind: its columns and the rules that name them.
const coneSummary = `  RETURN '' AS key, '' AS dataset, '' AS kind, '' AS other, '' AS otherDataset, '' AS job, [] AS roles, [] AS exprs, [] AS masked, [] AS rows,
         [c IN cone | [c.key, c.datasetKey]] AS columns,
         COLLECT { UNWIND cone AS c MATCH (r:TagRule {columnKey: c.key}) RETURN r {.tag, .value, .source, .dataset, .column} } AS rules`

// Cone implements tags.Coner: one read query for the whole cone of keys (at most limit columns).
func (g *TagGraph) Cone(ctx context.Context, dir tags.Direction, keys []string, limit int) (*tags.Cone, error) {
	q := tagConeDown
	if dir == tags.Up {
		q = tagConeUp
	}
	res, err := g.r.read(ctx, q, map[string]any{"keys": keys, "limit": int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("graph: tag cone %s from %d column(s): %w", dir, len(keys), err)
	}
	c := &tags.Cone{Columns: map[string]string{}}
	c.Hops, _ = g.hops(res.Records, dir)
	for _, rec := range res.Records {
		if kind, _ := get[string](rec, "kind"); kind != "" {
			continue
		}
		columnsOf(rec, c.Columns)
		c.Rules = append(c.Rules, rulesOf(rec)...)
	}
	return c, nil
}

// rulesOf reads a record's rules, a list of maps of a rule's fields.
func rulesOf(rec *neo4j.Record) []tags.Rule {
	list, _ := get[[]any](rec, "rules")
	out := make([]tags.Rule, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		r := tags.Rule{}
		r.Key, _ = m["tag"].(string)
		r.Value, _ = m["value"].(string)
		r.Source, _ = m["source"].(string)
		ds, _ := m["dataset"].(string)
		col, _ := m["column"].(string)
		r.Dataset, r.Column = tags.Glob(ds), tags.Glob(col)
		out = append(out, r)
	}
	return out
}

// For each of columns $keys, what is upstream of it through FEEDS, the column itself included (a
// pruning expansion, at most $limit columns): how many columns, whether one has struct fields or
// is one, and whether a rule tags one (an exact rule by its key, a pattern rule as taggedQuery
// matches it). One row per column, no hop and no column key: the rows' values are what the
// server's time grows with.
const tagUpstream = `UNWIND $keys AS k
MATCH (t:Column {key: k})
CALL (t) {
  WITH collect { MATCH (t)<-[:FEEDS*1..100]-(x:Column) RETURN DISTINCT x LIMIT $limit } AS up
  RETURN [t] + up AS cone
}
WITH k, t, cone, COLLECT { MATCH (r:TagPattern) RETURN r } AS patterns
RETURN k AS key, t.datasetKey AS dataset, size(cone) AS columns,
       any(c IN cone WHERE EXISTS { (c)-[:HAS_FIELD]-(:Column) }) AS structs,
       any(c IN cone WHERE EXISTS { MATCH (:TagRule {columnKey: c.key}) }
         OR any(r IN patterns WHERE c.datasetKey STARTS WITH r.datasetPrefix AND c.datasetKey =~ r.datasetRegex
                AND substring(c.key, size(c.datasetKey) + 1) =~ r.columnRegex)) AS tagged`

// Upstream implements tags.Upstreamer: one read query for all keys.
func (g *TagGraph) Upstream(ctx context.Context, keys []string, limit int) ([]tags.Upstream, error) {
	res, err := g.r.read(ctx, tagUpstream, map[string]any{"keys": keys, "limit": int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("graph: upstream of %d column(s): %w", len(keys), err)
	}
	out := make([]tags.Upstream, 0, len(res.Records))
	for _, rec := range res.Records {
		u := tags.Upstream{}
		u.Column, _ = get[string](rec, "key")
		u.Dataset, _ = get[string](rec, "dataset")
		n, _ := get[int64](rec, "columns")
		u.Columns = int(n)
		u.Structs, _ = get[bool](rec, "structs")
		u.Tagged, _ = get[bool](rec, "tagged")
		out = append(out, u)
	}
	return out, nil
}

// columnsOf adds a record's columns, a list of [key, dataset], to into.
func columnsOf(rec *neo4j.Record, into map[string]string) {
	list, _ := get[[]any](rec, "columns")
	for _, x := range list {
		if kd, _ := x.([]any); len(kd) == 2 {
			k, _ := kd[0].(string)
			into[k], _ = kd[1].(string)
		}
	}
}

// A tag's reach per dataset, counted in the server (tags.DatasetCounter), from the tagged columns
// $keys. The columns the tag reaches unmasked are those a path of FEEDS that carry it reaches (an
// unmasked DIRECT role, not an aggregation when $stop), within 99 hops of a source (the walk's
// frontier): a pruning expansion from each source, over every FEEDS first (%[1]s empty: it reads
// no relationship's roles, the cost of a predicate), over the FEEDS that carry (%[1]s a
// predicate) when a FEEDS between two of the columns found carries nothing (inside > 0: the
// first expansion found more than the tag reaches). A source with more columns within 100 hops
// than within 99 has one 100 hops away (shallow false: the walk's bound, its answer cut). The
// FEEDS out of the reached columns that carry nothing, and their DECIDES_ROWS (one pass over
// both), are indirect uses; the other FEEDS reach a column that is not among them Aggregated (an unmasked aggregation,
// $stop) or Masked (every DIRECT role masks). One row per dataset, with whether a reached column
// is a struct or a struct's field (the walk follows only the tagged part of a struct).
const tagCountReach = `UNWIND $keys AS k
MATCH (s:Column {key: k})
WITH s,
     COLLECT { MATCH (s)-[fs:FEEDS*1..99]->(x:Column) %[1]s RETURN DISTINCT x LIMIT $limit } AS down,
     COUNT { MATCH (s)-[fs:FEEDS*1..100]->(x:Column) %[1]s RETURN DISTINCT x LIMIT $limit } AS down100
WITH collect(s) AS ss, collect(down) AS downs, all(n IN collect(size(down) = down100) WHERE n) AS shallow
UNWIND ss + reduce(all = [], d IN downs | all + d) AS u
WITH DISTINCT shallow, u
WITH shallow, collect(u) AS us
WITH shallow, us, any(u IN us WHERE EXISTS { (u)-[:HAS_FIELD]-(:Column) }) AS structs
CALL (us) {
  UNWIND us AS u
  RETURN coalesce(u.datasetKey, '') AS dataset, count(*) AS unmasked, 0 AS aggregated, 0 AS masked, 0 AS uses, 0 AS inside
  UNION ALL
  UNWIND us AS u
  MATCH (u)-[f:FEEDS|DECIDES_ROWS]->(c)
  WITH u, f, c, CASE WHEN type(f) = 'DECIDES_ROWS' THEN 0
                WHEN NOT true IN coalesce(f.masked, []) THEN
                  CASE WHEN any(r IN f.roles WHERE r STARTS WITH 'DIRECT/' AND NOT ($stop AND r = 'DIRECT/AGGREGATION')) THEN 3
                       WHEN 'DIRECT/AGGREGATION' IN f.roles THEN 2 ELSE 0 END
                ELSE
                  CASE WHEN any(i IN range(0, size(f.roles) - 1) WHERE f.roles[i] STARTS WITH 'DIRECT/' AND NOT coalesce(f.masked[i], false)
                                AND NOT ($stop AND f.roles[i] = 'DIRECT/AGGREGATION')) THEN 3
                       WHEN any(i IN range(0, size(f.roles) - 1) WHERE f.roles[i] = 'DIRECT/AGGREGATION' AND NOT coalesce(f.masked[i], false)) THEN 2
                       WHEN any(r IN f.roles WHERE r STARTS WITH 'DIRECT/') THEN 1 ELSE 0 END
                END AS rank
  WHERE rank < 3
  WITH c, max(CASE WHEN rank > 0 THEN rank END) AS top, collect(DISTINCT CASE WHEN rank = 0 THEN [u.key, coalesce(f.job, '')] END) AS uses,
       c:Column AND c IN us AS in
  WITH CASE WHEN c:Dataset THEN c.key ELSE coalesce(c.datasetKey, '') END AS dataset, CASE WHEN top IS NOT NULL AND NOT in THEN top END AS top,
       size(uses) AS uses, in
  RETURN dataset, 0 AS unmasked, sum(CASE top WHEN 2 THEN 1 ELSE 0 END) AS aggregated, sum(CASE top WHEN 1 THEN 1 ELSE 0 END) AS masked, sum(uses) AS uses,
         sum(CASE WHEN in THEN 1 ELSE 0 END) AS inside
}
WITH shallow, structs, dataset, sum(unmasked) AS unmasked, sum(aggregated) AS aggregated, sum(masked) AS masked, sum(uses) AS uses, sum(inside) AS inside
WHERE unmasked + aggregated + masked + uses + inside > 0
RETURN shallow, structs, dataset, unmasked, aggregated, masked, uses, inside`

// carryFeeds is the expansion's predicate: every FEEDS of the path carries the tag.
const carryFeeds = `WHERE all(f IN fs WHERE any(i IN range(0, size(coalesce(f.roles, [])) - 1) WHERE f.roles[i] STARTS WITH 'DIRECT/'
  AND NOT coalesce(f.masked[i], false) AND NOT ($stop AND f.roles[i] = 'DIRECT/AGGREGATION')))`

// CountReach implements tags.DatasetCounter: one read query, one row per dataset; two when a
// FEEDS among the columns found by the first, over every FEEDS, carries nothing.
func (g *TagGraph) CountReach(ctx context.Context, sources []string, stop bool, limit int) (*tags.Counted, error) {
	params := map[string]any{"keys": sources, "stop": stop, "limit": int64(limit)}
	for _, where := range []string{"", carryFeeds} {
		res, err := g.r.read(ctx, fmt.Sprintf(tagCountReach, where), params)
		if err != nil {
			return nil, fmt.Errorf("graph: reach per dataset from %d column(s): %w", len(sources), err)
		}
		c, inside := &tags.Counted{Exact: true}, 0
		total := 0
		for _, rec := range res.Records {
			shallow, _ := get[bool](rec, "shallow")
			structs, _ := get[bool](rec, "structs")
			if !shallow || structs {
				return &tags.Counted{}, nil
			}
			d := tags.DatasetCount{}
			d.Dataset, _ = get[string](rec, "dataset")
			for name, into := range map[string]*int{"unmasked": &d.Unmasked, "aggregated": &d.Aggregated, "masked": &d.Masked, "uses": &d.Uses, "inside": &inside} {
				n, _ := get[int64](rec, name)
				*into += int(n)
			}
			total += d.Unmasked + d.Aggregated + d.Masked
			if d.Unmasked+d.Aggregated+d.Masked+d.Uses > 0 {
				c.Datasets = append(c.Datasets, d)
			}
		}
		if total > limit {
			return &tags.Counted{}, nil
		}
		if where != "" || inside == 0 {
			return c, nil
		}
	}
	panic("unreachable")
}

// DatasetColumns returns the keys of a dataset's columns and of their struct fields, sorted: what
// tags.ReachIn walks up from.
func (g *TagGraph) DatasetColumns(ctx context.Context, dataset string) ([]string, error) {
	res, err := g.r.read(ctx, `MATCH (:Dataset {key: $key})-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..100]->(c:Column)
RETURN DISTINCT c.key AS key ORDER BY key`, map[string]any{"key": dataset})
	if err != nil {
		return nil, fmt.Errorf("graph: columns of %s: %w", dataset, err)
	}
	out := make([]string, 0, len(res.Records))
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		out = append(out, k)
	}
	return out, nil
}

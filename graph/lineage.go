package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/colline/colline/plan"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Reads for `colline analyze` (datasets to analyze against) and `colline impact` (the lineage a
// job writes today and what lies downstream of a column). They run in read transactions of a
// read-only session: a server refuses any write in them.

// Datasets returns the datasets of the given kinds (all kinds when none) with their columns in
// schema order: each column's position and type as the newest event that listed the dataset's
// columns saw them. Only the columns of that newest event are returned (a column no longer in
// the dataset has an older lastSeen), and datasets dropped since they were last seen are left
// out. Sorted by key.
func (r *Reader) Datasets(ctx context.Context, kinds ...string) ([]plan.Dataset, error) {
	res, err := r.read(ctx, `MATCH (d:Dataset)
WHERE (size($kinds) = 0 OR d.kind IN $kinds) AND (d.droppedAt IS NULL OR d.droppedAt < d.lastSeen)
`+datasetColumns, map[string]any{"kinds": kinds})
	if err != nil {
		return nil, fmt.Errorf("graph datasets: %w", err)
	}
	out := make([]plan.Dataset, 0, len(res.Records))
	for _, rec := range res.Records {
		out = append(out, datasetOf(rec))
	}
	return out, nil
}

// DatasetsByKey returns the datasets of keys that the graph holds, as Datasets does (not
// dropped since last seen, columns of the newest event that listed them), sorted by key.
func (r *Reader) DatasetsByKey(ctx context.Context, keys []string) ([]plan.Dataset, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	res, err := r.read(ctx, `UNWIND $keys AS key
MATCH (d:Dataset {key: key})
WHERE d.droppedAt IS NULL OR d.droppedAt < d.lastSeen
`+datasetColumns, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph datasets: %w", err)
	}
	out := make([]plan.Dataset, 0, len(res.Records))
	for _, rec := range res.Records {
		out = append(out, datasetOf(rec))
	}
	return out, nil
}

// Versions returns, for each of keys the graph holds, a version of the dataset: its lastSeen
// and droppedAt, which every event that mentions it (and so may change its columns) or drops it
// moves. A cache of datasets' schemas (analyze.GraphSchemas) reads a dataset again when it changed.
func (r *Reader) Versions(ctx context.Context, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	res, err := r.read(ctx, `UNWIND $keys AS key
MATCH (d:Dataset {key: key})
RETURN key, coalesce(toString(d.lastSeen), '') + '|' + coalesce(toString(d.droppedAt), '') AS version`, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph dataset versions: %w", err)
	}
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		v, _ := get[string](rec, "version")
		out[k] = v
	}
	return out, nil
}

// datasetColumns ends a query that matched datasets d: each with the columns of the newest event
// that listed its columns (the greatest lastSeen among them: ColumnLastSeen), read by datasetOf.
var datasetColumns = `MATCH (d)-[:HAS_COLUMN]->(c:Column)
WITH d, collect({c: c, seen: ` + ColumnLastSeen("c", "d") + `}) AS cs
WITH d, cs, reduce(m = null, x IN cs | CASE WHEN m IS NULL OR x.seen > m THEN x.seen ELSE m END) AS newest
RETURN d.key AS key, d.namespace AS namespace, d.name AS name, d.kind AS kind, coalesce(d.location, '') AS location,
       [x IN cs WHERE x.seen = newest | {key: x.c.key, name: x.c.name, type: coalesce(x.c.dataType, ''), position: coalesce(x.c.position, -1)}] AS columns
ORDER BY key`

// datasetOf reads a dataset row with its columns (key, name, type, position), ordered by position,
// then name for columns whose position is not known.
func datasetOf(rec *neo4j.Record) plan.Dataset {
	d := plan.Dataset{}
	d.Key, _ = get[string](rec, "key")
	d.Namespace, _ = get[string](rec, "namespace")
	d.Name, _ = get[string](rec, "name")
	d.Kind, _ = get[string](rec, "kind")
	d.Location, _ = get[string](rec, "location")
	cols, _ := get[[]any](rec, "columns")
	type col struct {
		plan.Column
		pos int64
	}
	var cs []col
	for _, x := range cols {
		m, _ := x.(map[string]any)
		c := col{}
		c.Key, _ = m["key"].(string)
		c.Name, _ = m["name"].(string)
		c.Type, _ = m["type"].(string)
		c.pos, _ = m["position"].(int64)
		cs = append(cs, c)
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if (a.pos < 0) != (b.pos < 0) {
			return b.pos < 0
		}
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		return a.Name < b.Name
	})
	for _, c := range cs {
		d.Columns = append(d.Columns, c.Column)
	}
	return d
}

// Written returns the lineage the graph holds into the given datasets: as writes, each dataset
// with its columns (as Datasets); as Edges, every FEEDS into their columns, and as RowDeps every
// DECIDES_ROWS into them, each with its roles, expressions and masking. With job not empty only
// that job's relationships count (a job key, namespace/name), else every job's; the same
// (source, target) written by several jobs is one edge with the union of their roles.
func (r *Reader) Written(ctx context.Context, keys []string, job string) (*plan.Lineage, error) {
	lin := &plan.Lineage{}
	if len(keys) == 0 {
		return lin, nil
	}
	ds, err := r.read(ctx, `UNWIND $keys AS key
MATCH (d:Dataset {key: key})
`+datasetColumns, map[string]any{"keys": keys})
	if err != nil {
		return nil, fmt.Errorf("graph written datasets: %w", err)
	}
	for _, rec := range ds.Records {
		lin.Writes = append(lin.Writes, plan.Write{Dataset: datasetOf(rec)})
	}
	edges, err := r.read(ctx, `UNWIND $keys AS key
MATCH (s:Column)-[f:FEEDS]->(t:Column {datasetKey: key})
WHERE $job = '' OR f.job = $job
RETURN s.key AS source, t.key AS target, f.roles AS roles, coalesce(f.exprs, []) AS exprs, coalesce(f.masked, []) AS masked, [] AS rows
UNION ALL
UNWIND $keys AS key
MATCH (s:Column)-[x:DECIDES_ROWS]->(d:Dataset {key: key})
WHERE $job = '' OR x.job = $job
RETURN s.key AS source, '=>' + d.key AS target, x.roles AS roles, coalesce(x.exprs, []) AS exprs, [] AS masked, coalesce(x.rows, []) AS rows`,
		map[string]any{"keys": keys, "job": job})
	if err != nil {
		return nil, fmt.Errorf("graph written lineage: %w", err)
	}
	merged := map[[2]string][]plan.Transformation{}
	var order [][2]string
	for _, rec := range edges.Records {
		src, _ := get[string](rec, "source")
		tgt, _ := get[string](rec, "target")
		k := [2]string{src, tgt}
		if _, ok := merged[k]; !ok {
			order = append(order, k)
		}
		for _, t := range transformations(rec) {
			if !containsTransformation(merged[k], t) {
				merged[k] = append(merged[k], t)
			}
		}
	}
	for _, k := range order {
		if rest, ok := strings.CutPrefix(k[1], "=>"); ok {
			lin.RowDeps = append(lin.RowDeps, plan.Edge{Source: k[0], Target: rest, Transformations: merged[k]})
		} else {
			lin.Edges = append(lin.Edges, plan.Edge{Source: k[0], Target: k[1], Transformations: merged[k]})
		}
	}
	for _, list := range [][]plan.Edge{lin.Edges, lin.RowDeps} {
		sort.Slice(list, func(i, j int) bool {
			if list[i].Target != list[j].Target {
				return list[i].Target < list[j].Target
			}
			return list[i].Source < list[j].Source
		})
	}
	return lin, nil
}

func containsTransformation(ts []plan.Transformation, t plan.Transformation) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// Reached is a column downstream of another: Hops lineage steps away (FEEDS, or DECIDES_ROWS
// to its dataset) along one of the shortest paths, through the jobs of those steps in order.
type Reached struct {
	From    string   // the column the walk started from
	Column  string   // the downstream column's key
	Dataset string   // its dataset's key
	Hops    int      // lineage steps
	Jobs    []string // the job of each step, from From to Column
}

// ReachLimit bounds Reach per starting column: the nearest ReachLimit columns are kept.
const ReachLimit = 1000

// reachQuery walks downstream of each column $keys breadth first, one relationship a round
// (reduce over the depths, a COLLECT from the nodes met the round before to those not met yet),
// and stops at the depth where it has met $limit columns; it returns every relationship it took
// to a node met for the first time (so several per node when several reach it at that depth),
// with the node's depth and, for a column, its dataset. Browser queries 4 and 5 walk the same
// way (docs/browser.md).
const reachQuery = `UNWIND $keys AS key
CALL (key) {
  MATCH (s:Column {key: key})
  WITH reduce(bfs = {front: [s], seen: [s], reached: []}, depth IN range(1, $depth) |
    CASE WHEN bfs.front = [] OR size(COLLECT { UNWIND bfs.reached AS x WITH x.n AS n WHERE n:Column RETURN DISTINCT n }) >= $limit THEN bfs ELSE
      head([next IN [COLLECT {
        UNWIND bfs.front AS x
        MATCH (x)-[r:` + lineageHops + `]->(n)
        WHERE NOT n IN bfs.seen
        RETURN {n: n, r: r, depth: depth}
      }] | {front: COLLECT { UNWIND next AS x RETURN DISTINCT x.n }, seen: bfs.seen + [x IN next | x.n], reached: bfs.reached + next}])
    END) AS bfs
  UNWIND bfs.reached AS x
  WITH x.n AS n, x.r AS r, x.depth AS depth
  RETURN startNode(r).key AS source, n.key AS node, depth, type(r) = 'HAS_COLUMN' AS inDataset, r.job AS job,
         CASE WHEN n:Column THEN COLLECT { MATCH (ds:Dataset)-[:HAS_COLUMN]->(n) RETURN ds.key } END AS datasets
}
RETURN key, source, node, depth, inDataset, job, datasets`

// Reach returns, for each column key, the columns downstream of it within depth relationships
// (1 to 20; a row-level step counts two, DECIDES_ROWS and HAS_COLUMN): the nearest ReachLimit
// per column, nearest in relationships and then by key, each along the shortest path with the
// fewest lineage steps (then the first by its jobs); sorted by From, Hops, Column. This is Neo4j
// Browser query 4 of docs/browser.md, per column: one read query, whose cost follows the nearest
// columns, not everything within depth.
func (r *Reader) Reach(ctx context.Context, keys []string, depth int) ([]Reached, error) {
	if depth < 1 || depth > maxDepth {
		return nil, fmt.Errorf("graph: depth %d out of range 1..%d", depth, maxDepth)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	res, err := r.read(ctx, reachQuery, map[string]any{"keys": keys, "depth": int64(depth), "limit": ReachLimit})
	if err != nil {
		return nil, fmt.Errorf("graph downstream: %w", err)
	}
	type step struct {
		source, node, job, dataset string
		depth                      int
		inDataset, column          bool
	}
	steps := map[string][]step{}
	for _, rec := range res.Records {
		key, _ := get[string](rec, "key")
		st := step{}
		st.source, _ = get[string](rec, "source")
		st.node, _ = get[string](rec, "node")
		st.job, _ = get[string](rec, "job")
		d, _ := get[int64](rec, "depth")
		st.depth = int(d)
		st.inDataset, _ = get[bool](rec, "inDataset")
		datasets, isColumn := get[[]any](rec, "datasets")
		st.column = isColumn
		if len(datasets) > 0 {
			st.dataset, _ = datasets[0].(string)
		}
		steps[key] = append(steps[key], st)
	}
	var out []Reached
	for from, ss := range steps {
		// By depth, each node takes the path with the fewest lineage steps, then the first by jobs,
		// from the paths to the nodes one relationship nearer.
		slices.SortFunc(ss, func(a, b step) int { return cmp.Compare(a.depth, b.depth) })
		paths := map[string][]string{from: {}}
		var reached []reachedAt
		for _, st := range ss {
			path := paths[st.source]
			if !st.inDataset {
				path = append(slices.Clip(path), st.job)
			}
			best, ok := paths[st.node]
			if ok && cmp.Or(cmp.Compare(len(best), len(path)), slices.Compare(best, path)) <= 0 {
				continue
			}
			paths[st.node] = path
			if st.column && !ok {
				reached = append(reached, reachedAt{Reached{From: from, Column: st.node, Dataset: st.dataset}, st.depth})
			}
		}
		slices.SortFunc(reached, func(a, b reachedAt) int {
			return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.Column, b.Column))
		})
		for _, x := range reached[:min(len(reached), ReachLimit)] {
			if x.Dataset != "" {
				x.Jobs = paths[x.Column]
				x.Hops = len(x.Jobs)
				out = append(out, x.Reached)
			}
		}
	}
	slices.SortFunc(out, func(a, b Reached) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Hops, b.Hops), cmp.Compare(a.Column, b.Column))
	})
	return out, nil
}

type reachedAt struct {
	Reached
	depth int // relationships
}

// read runs a query in a read transaction of a read-only session.
func (r *Reader) read(ctx context.Context, q string, params map[string]any) (*neo4j.EagerResult, error) {
	s := r.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: r.database})
	defer s.Close(ctx)
	res, err := s.ExecuteRead(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		cur, err := tx.Run(ctx, q, params)
		if err != nil {
			return nil, err
		}
		recs, err := cur.Collect(ctx)
		if err != nil {
			return nil, err
		}
		return &neo4j.EagerResult{Records: recs}, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(*neo4j.EagerResult), nil
}

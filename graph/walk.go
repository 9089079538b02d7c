package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// A walk follows lineage one step at a time from a set of columns, upstream or downstream, and
// returns what it met as a Subgraph: the columns (with their datasets and their distance in
// steps) and every lineage relationship between them. A step is a FEEDS between columns, or a
// row-level dependency: DECIDES_ROWS from a column to a dataset, which touches every column of
// that dataset. Each step is one read query over the frontier (UNWIND of keys, index lookups and
// expansions), so the cost follows what is reached, never the number of paths; the walk stops at
// its step count or when the next step would pass its size bounds (Subgraph.Truncated).

// Direction is the way a walk follows lineage.
type Direction string

const (
	Upstream   Direction = "up"   // where the values and the rows come from
	Downstream Direction = "down" // what depends on the columns: the impact of a change
)

// MaxSteps bounds a walk.
const MaxSteps = 20

// Walk is what to walk.
type Walk struct {
	From       []string  // column keys to start from (distance 0)
	Direction  Direction // Upstream or Downstream
	Steps      int       // 1..MaxSteps
	MaxColumns int       // most columns returned; the walk stops before a step would pass it
	MaxEdges   int       // most relationships returned; likewise
	// AsOf, when not zero, is a point in time: only relationships first seen by then are walked,
	// and Stale says whether a later application run of the edge's job wrote its target without
	// confirming it, as of then. Zero: now.
	AsOf time.Time
}

// ErrWalk is the error of a walk that was asked for something out of bounds.
var ErrWalk = errors.New("graph walk")

// A step answers in one row (a row per relationship costs the driver more than the walk costs
// Neo4j): n, the relationships taken (at most $limit); and edges, each [kind, source, target,
// job, the relationship's element id, the column reached, that column's dataset, their element
// ids]. Keys and ids only: the properties of what the walk keeps are read once at its end
// (propsQuery), so a step that would pass a bound, and is dropped, costs half as much.
const stepAnswer = `
WITH kind, source, target, f, c, cd
LIMIT $limit
RETURN count(*) AS n, collect([kind, source, target, f.job, elementId(f), c.key, cd.key, elementId(c), elementId(cd)]) AS edges`

// One step upstream from columns $keys: the FEEDS into them, and the DECIDES_ROWS into their
// datasets, with the source column and its dataset.
const stepUp = `UNWIND $keys AS k
MATCH (t:Column {key: k})
CALL (t) {
  MATCH (c:Column)-[f:FEEDS]->(t) RETURN c, f, t.key AS target
  UNION ALL
  MATCH (c:Column)-[f:DECIDES_ROWS]->(d:Dataset)-[:HAS_COLUMN]->(t) RETURN c, f, d.key AS target
}
WITH DISTINCT c, f, target
WHERE $asOf IS NULL OR f.firstSeen <= $asOf
MATCH (cd:Dataset)-[:HAS_COLUMN]->(c)
WITH type(f) AS kind, c.key AS source, target, f, c, cd` + stepAnswer

// One step downstream from columns $keys: their FEEDS with the target column, and their
// DECIDES_ROWS with every column of the dataset whose rows they decide.
const stepDown = `UNWIND $keys AS k
MATCH (s:Column {key: k})
CALL (s) {
  MATCH (s)-[f:FEEDS]->(c:Column) RETURN f, c.key AS target, c
  UNION ALL
  MATCH (s)-[f:DECIDES_ROWS]->(d:Dataset)-[:HAS_COLUMN]->(c:Column) RETURN f, d.key AS target, c
}
WITH s, f, target, c
WHERE $asOf IS NULL OR f.firstSeen <= $asOf
MATCH (cd:Dataset)-[:HAS_COLUMN]->(c)
WITH type(f) AS kind, s.key AS source, target, f, c, cd` + stepAnswer

// The start columns with their datasets: keys and element ids, as a step's.
const startColumns = `UNWIND $keys AS k
MATCH (cd:Dataset)-[:HAS_COLUMN]->(c:Column {key: k})
RETURN c.key AS col, cd.key AS ds, elementId(c) AS colId, elementId(cd) AS dsId`

// The properties of the columns, datasets and relationships a walk kept, by element id.
const propsQuery = `CALL () {
  UNWIND $columns AS id MATCH (c) WHERE elementId(c) = id RETURN collect(properties(c)) AS columns
}
CALL () {
  UNWIND $datasets AS id MATCH (d) WHERE elementId(d) = id RETURN collect(properties(d)) AS datasets
}
CALL () {
  UNWIND $rels AS id MATCH ()-[f]->() WHERE elementId(f) = id RETURN collect([id, properties(f)]) AS rels
}
RETURN columns, datasets, rels`

// readProps fills the columns, datasets and edges g kept with their properties, in one query.
func (r *Reader) readProps(ctx context.Context, g *walker) error {
	var cols, dss, rels []string
	for _, id := range g.colIDs {
		cols = append(cols, id)
	}
	for _, id := range g.dsIDs {
		dss = append(dss, id)
	}
	for _, id := range g.relIDs {
		rels = append(rels, id)
	}
	res, err := r.query(ctx, propsQuery, map[string]any{"columns": cols, "datasets": dss, "rels": rels})
	if err != nil {
		return fmt.Errorf("graph walk: the properties of %d columns, %d datasets, %d relationships: %w", len(cols), len(dss), len(rels), err)
	}
	rec := res.Records[0]
	list := func(name string) []any { l, _ := get[[]any](rec, name); return l }
	dsProps := map[string]map[string]any{}
	for _, x := range list("datasets") {
		p, _ := x.(map[string]any)
		dsProps[str(p, "key")] = p
		g.datasets[str(p, "key")] = datasetInfo(p)
	}
	for _, x := range list("columns") {
		p, _ := x.(map[string]any)
		c := g.columns[str(p, "key")]
		info := columnInfo(p, dsProps[c.Dataset], c.Distance)
		info.Dataset = c.Dataset
		g.columns[c.Key] = info
	}
	relProps := map[string]map[string]any{}
	for _, x := range list("rels") {
		pair, _ := x.([]any)
		if len(pair) == 2 {
			id, _ := pair[0].(string)
			relProps[id], _ = pair[1].(map[string]any)
		}
	}
	for k, e := range g.edges {
		if p, ok := relProps[g.relIDs[k]]; ok { // else deleted since the step: its keys only
			g.edges[k] = edgeFrom(e.Kind, e.Source, e.Target, p)
		}
	}
	return nil
}

// Walk walks lineage as w says (see the comment at the top of walk.go).
func (r *Reader) Walk(ctx context.Context, w Walk) (*Subgraph, error) {
	if w.Steps < 1 || w.Steps > MaxSteps {
		return nil, fmt.Errorf("%w: steps %d out of range 1..%d", ErrWalk, w.Steps, MaxSteps)
	}
	if w.Direction != Upstream && w.Direction != Downstream {
		return nil, fmt.Errorf("%w: direction %q is neither %q nor %q", ErrWalk, w.Direction, Upstream, Downstream)
	}
	if len(w.From) == 0 {
		return nil, fmt.Errorf("%w: no start column", ErrWalk)
	}
	if w.MaxColumns < 1 || w.MaxEdges < 1 {
		return nil, fmt.Errorf("%w: bounds %d columns, %d edges must be positive", ErrWalk, w.MaxColumns, w.MaxEdges)
	}
	var asOf any
	if !w.AsOf.IsZero() {
		asOf = w.AsOf.UTC()
	}
	g := newWalker(w.MaxColumns, w.MaxEdges)
	res, err := r.query(ctx, startColumns, map[string]any{"keys": w.From})
	if err != nil {
		return nil, fmt.Errorf("graph walk from %d columns: %w", len(w.From), err)
	}
	for _, rec := range res.Records {
		col, _ := get[string](rec, "col")
		ds, _ := get[string](rec, "ds")
		colID, _ := get[string](rec, "colId")
		dsID, _ := get[string](rec, "dsId")
		g.addColumn(stepRow{col: col, ds: ds, colID: colID, dsID: dsID}, 0)
	}
	if len(g.columns) == 0 {
		return nil, fmt.Errorf("%w: %w: no column %q", ErrWalk, ErrNotFound, w.From[0])
	}
	frontier := g.keys()
	q := stepUp
	if w.Direction == Downstream {
		q = stepDown
	}
	sg := &Subgraph{}
	for step := 1; step <= w.Steps; step++ {
		if len(frontier) == 0 {
			sg.Complete = true
			break
		}
		// A row per (relationship, column reached); more rows than both bounds together cannot fit.
		limit := w.MaxEdges + w.MaxColumns + 1
		res, err := r.query(ctx, q, map[string]any{"keys": frontier, "asOf": asOf, "limit": int64(limit)})
		if err != nil {
			return nil, fmt.Errorf("graph walk step %d from %d columns: %w", step, len(frontier), err)
		}
		rows, n := stepRows(res.Records[0])
		if n == limit {
			sg.Truncated = true
			break
		}
		edges := len(g.edges)
		next, ok := g.step(rows, step)
		if !ok {
			sg.Truncated = true
			break
		}
		if len(next) > 0 || len(g.edges) > edges {
			sg.Steps = step
		}
		frontier = next
	}
	if !sg.Truncated && !sg.Complete && len(frontier) == 0 {
		sg.Complete = true
	}
	if err := r.readProps(ctx, g); err != nil {
		return nil, err
	}
	if err := r.markStale(ctx, g, asOf); err != nil {
		return nil, err
	}
	g.fill(sg)
	return sg, nil
}

// ErrNotFound says that a key names nothing in the graph.
var ErrNotFound = errors.New("not found")

// walker accumulates a walk; a step is applied whole or not at all. It holds keys and element
// ids until readProps reads the properties of what it kept.
type walker struct {
	maxColumns, maxEdges int
	columns              map[string]ColumnInfo
	datasets             map[string]DatasetInfo
	edges                map[[3]string]*Edge // kind+source, target, job
	colIDs, dsIDs        map[string]string   // element ids by key
	relIDs               map[[3]string]string
}

func newWalker(maxColumns, maxEdges int) *walker {
	return &walker{maxColumns: maxColumns, maxEdges: maxEdges,
		columns: map[string]ColumnInfo{}, datasets: map[string]DatasetInfo{}, edges: map[[3]string]*Edge{},
		colIDs: map[string]string{}, dsIDs: map[string]string{}, relIDs: map[[3]string]string{}}
}

func (g *walker) keys() []string {
	out := make([]string, 0, len(g.columns))
	for k := range g.columns {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// addColumn records the column of row at distance d, unless known.
func (g *walker) addColumn(r stepRow, d int) (string, bool) {
	if _, known := g.columns[r.col]; known {
		return r.col, false
	}
	g.columns[r.col] = ColumnInfo{Key: r.col, Dataset: r.ds, Distance: d}
	g.colIDs[r.col] = r.colID
	g.datasets[r.ds] = DatasetInfo{Key: r.ds}
	g.dsIDs[r.ds] = r.dsID
	return r.col, true
}

// stepRow is a relationship a step took, with the column it reached and that column's dataset.
type stepRow struct {
	kind, source, target, job, rel string
	col, ds, colID, dsID           string
}

// key is the walk's key of the row's relationship.
func (r stepRow) key() [3]string { return [3]string{r.kind + "\x00" + r.source, r.target, r.job} }

// stepRows reads a step's answer (stepAnswer): its rows, and n.
func stepRows(rec *neo4j.Record) ([]stepRow, int) {
	n, _ := get[int64](rec, "n")
	edges, _ := get[[]any](rec, "edges")
	rows := make([]stepRow, 0, len(edges))
	for _, x := range edges {
		e, _ := x.([]any)
		if len(e) != 9 {
			continue
		}
		s := func(i int) string { v, _ := e[i].(string); return v }
		rows = append(rows, stepRow{kind: s(0), source: s(1), target: s(2), job: s(3), rel: s(4), col: s(5), ds: s(6), colID: s(7), dsID: s(8)})
	}
	return rows, int(n)
}

// step applies one step's rows: it returns the new frontier, or false (and changes nothing)
// when the step would pass a bound.
func (g *walker) step(rows []stepRow, d int) ([]string, bool) {
	newEdges := map[[3]string]stepRow{}
	newCols := map[string]bool{}
	for _, r := range rows {
		k := r.key()
		if _, ok := g.edges[k]; !ok {
			newEdges[k] = r
		}
		if _, ok := g.columns[r.col]; !ok {
			newCols[r.col] = true
		}
	}
	if len(g.edges)+len(newEdges) > g.maxEdges || len(g.columns)+len(newCols) > g.maxColumns {
		return nil, false
	}
	var next []string
	for _, r := range rows {
		if key, added := g.addColumn(r, d); added {
			next = append(next, key)
		}
	}
	for k, r := range newEdges {
		g.edges[k] = &Edge{Kind: r.kind, Source: r.source, Target: r.target, Job: r.job}
		g.relIDs[k] = r.rel
	}
	slices.Sort(next)
	return next, true
}

// fill copies the walk's content, sorted, into sg.
func (g *walker) fill(sg *Subgraph) {
	for _, d := range g.datasets {
		sg.Datasets = append(sg.Datasets, d)
	}
	slices.SortFunc(sg.Datasets, func(a, b DatasetInfo) int { return cmp.Compare(a.Key, b.Key) })
	for _, c := range g.columns {
		sg.Columns = append(sg.Columns, c)
	}
	slices.SortFunc(sg.Columns, func(a, b ColumnInfo) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Key, b.Key))
	})
	for _, e := range g.edges {
		sg.Edges = append(sg.Edges, *e)
	}
	SortEdges(sg.Edges)
}

// What the walk needs of an edge's job, in one query: a current edge (no lastSeen of its own)
// takes its lastSeen and lastRun from its job's LINEAGE into the target's dataset (version.go);
// then, whether the edge is stale: a later application run of its job (another app id than its
// last run's) wrote its target dataset, as of $asOf, without confirming it. Runs of the same
// application (several queries writing one table) do not make each other's flows stale.
const staleQuery = `UNWIND $items AS it
OPTIONAL MATCH (:Job {key: it.job})-[l:LINEAGE]->(:Dataset {key: it.dataset})
WHERE it.current
WITH it, CASE WHEN it.current THEN l.lastSeen ELSE it.lastSeen END AS lastSeen,
     CASE WHEN it.current THEN l.lastRun ELSE it.lastRun END AS lastRun
OPTIONAL MATCH (lr:Run {key: lastRun})
RETURN it.i AS i, lastSeen, lastRun, lr IS NOT NULL AND EXISTS {
  MATCH (:Job {key: it.job})-[:HAS_RUN]->(r:Run)-[:WROTE]->(:Dataset {key: it.dataset})
  WHERE r.appId <> lr.appId AND coalesce(r.endedAt, r.emittedAt) > lastSeen
    AND ($asOf IS NULL OR coalesce(r.endedAt, r.emittedAt) <= $asOf)
} AS stale`

// markStale fills the lastSeen and lastRun of current edges and sets Edge.Stale, with one query
// for every distinct (job, target dataset, last run, lastSeen), current edges grouped by (job,
// target dataset).
func (r *Reader) markStale(ctx context.Context, g *walker, asOf any) error {
	type group struct {
		job, dataset, lastRun string
		lastSeen              time.Time
		current               bool
	}
	var groups []group
	index := map[group]int{}
	members := map[int][]*Edge{}
	for _, e := range g.edges {
		ds := e.Target
		if e.Kind == Feeds {
			ds = g.columns[e.Target].Dataset
		}
		gr := group{job: e.Job, dataset: ds, current: e.LastSeen == nil}
		if !gr.current {
			if e.LastRun == "" {
				continue
			}
			gr.lastRun, gr.lastSeen = e.LastRun, *e.LastSeen
		}
		i, ok := index[gr]
		if !ok {
			i = len(groups)
			index[gr] = i
			groups = append(groups, gr)
		}
		members[i] = append(members[i], e)
	}
	if len(groups) == 0 {
		return nil
	}
	items := make([]map[string]any, len(groups))
	for i, gr := range groups {
		items[i] = map[string]any{"i": int64(i), "job": gr.job, "dataset": gr.dataset, "lastRun": gr.lastRun, "lastSeen": zeroNil(gr.lastSeen), "current": gr.current}
	}
	res, err := r.query(ctx, staleQuery, map[string]any{"items": items, "asOf": asOf})
	if err != nil {
		return fmt.Errorf("graph stale edges: %w", err)
	}
	for _, rec := range res.Records {
		i, _ := get[int64](rec, "i")
		stale, _ := get[bool](rec, "stale")
		lastRun, _ := get[string](rec, "lastRun")
		lastSeen, seen := get[time.Time](rec, "lastSeen")
		for _, e := range members[int(i)] {
			e.Stale = stale
			if groups[i].current && seen {
				t := lastSeen.UTC()
				e.LastSeen, e.LastRun = &t, lastRun
			}
		}
	}
	return nil
}

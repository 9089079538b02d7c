package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/colline/colline/plan"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Reader runs read queries over the lineage graph, for tests, demos and tooling.
type Reader struct {
	driver   neo4j.DriverWithContext
	database string
}

// NewReader returns a Reader on database (empty: the server's default database).
func NewReader(driver neo4j.DriverWithContext, database string) *Reader {
	return &Reader{driver: driver, database: database}
}

// Counts is the number of nodes per label and relationships per type.
type Counts struct {
	Nodes         map[string]int64
	Relationships map[string]int64
}

// Edges returns every lineage relationship (FEEDS and DECIDES_ROWS), sorted by source, kind,
// target and job.
func (r *Reader) Edges(ctx context.Context) ([]EdgeRow, error) {
	res, err := r.query(ctx, `MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS]->(t)
RETURN type(f) AS kind, s.key AS source, t.key AS target, f.job AS job, f.roles AS roles,
       coalesce(f.masked, []) AS masked, coalesce(f.rows, []) AS rows`, nil)
	if err != nil {
		return nil, fmt.Errorf("graph edges: %w", err)
	}
	out := make([]EdgeRow, 0, len(res.Records))
	for _, rec := range res.Records {
		e := EdgeRow{}
		e.Kind, _ = get[string](rec, "kind")
		e.Source, _ = get[string](rec, "source")
		e.Target, _ = get[string](rec, "target")
		e.Job, _ = get[string](rec, "job")
		out = append(out, newEdgeRow(e.Kind, e.Source, e.Target, e.Job, transformations(rec)))
	}
	sortEdges(out)
	return out, nil
}

// Counts counts nodes by label (but the model stamp) and relationships by type.
func (r *Reader) Counts(ctx context.Context) (Counts, error) {
	c := Counts{Nodes: map[string]int64{}, Relationships: map[string]int64{}}
	nodes, err := r.query(ctx, `MATCH (n) WHERE NOT n:GraphModel UNWIND labels(n) AS label RETURN label AS name, count(*) AS n`, nil)
	if err != nil {
		return c, fmt.Errorf("graph node counts: %w", err)
	}
	rels, err := r.query(ctx, `MATCH ()-[r]->() RETURN type(r) AS name, count(*) AS n`, nil)
	if err != nil {
		return c, fmt.Errorf("graph relationship counts: %w", err)
	}
	for _, x := range []struct {
		res *neo4j.EagerResult
		m   map[string]int64
	}{{nodes, c.Nodes}, {rels, c.Relationships}} {
		for _, rec := range x.res.Records {
			name, _ := get[string](rec, "name")
			n, _ := get[int64](rec, "n")
			x.m[name] = n
		}
	}
	return c, nil
}

// maxDepth bounds Upstream and Downstream: variable-length bounds cannot be parameters, and an
// unbounded traversal of a dense lineage graph explodes.
const maxDepth = 20

// lineageHops is the relationship pattern of one lineage step: a FEEDS between columns, or a
// row-level dependency, DECIDES_ROWS to a dataset and HAS_COLUMN to each of its columns (two
// relationships: a depth counts relationships), or HAS_FIELD from a column to its struct fields
// (a change of a column reaches what its fields feed).
const lineageHops = `FEEDS|DECIDES_ROWS|HAS_COLUMN|HAS_FIELD`

// Upstream returns the keys of the columns that column key depends on, for its values (FEEDS) or
// for which rows its dataset holds (DECIDES_ROWS), directly or through up to depth relationships
// (1 to 20), sorted.
func (r *Reader) Upstream(ctx context.Context, key string, depth int) ([]string, error) {
	return r.walk(ctx, key, depth, `MATCH (u:Column)-[:`+lineageHops+`*1..%d]->(:Column {key: $key}) RETURN DISTINCT u.key AS key`)
}

// Downstream returns the keys of the columns that depend on column key, through up to depth
// relationships (1 to 20; see Upstream), sorted: what a change to it may break.
func (r *Reader) Downstream(ctx context.Context, key string, depth int) ([]string, error) {
	return r.walk(ctx, key, depth, `MATCH (:Column {key: $key})-[:`+lineageHops+`*1..%d]->(d:Column) RETURN DISTINCT d.key AS key`)
}

func (r *Reader) walk(ctx context.Context, key string, depth int, format string) ([]string, error) {
	if depth < 1 || depth > maxDepth {
		return nil, fmt.Errorf("graph: depth %d out of range 1..%d", depth, maxDepth)
	}
	res, err := r.query(ctx, fmt.Sprintf(format, depth), map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph lineage of %q: %w", key, err)
	}
	out := make([]string, 0, len(res.Records))
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// query runs q in a read transaction (access mode read: Neo4j refuses writes in it). When ctx
// has a deadline, the transaction gets it as its timeout too, so Neo4j stops working on a query
// the caller no longer waits for.
func (r *Reader) query(ctx context.Context, q string, params map[string]any) (*neo4j.EagerResult, error) {
	opts := []neo4j.ExecuteQueryConfigurationOption{neo4j.ExecuteQueryWithDatabase(r.database), neo4j.ExecuteQueryWithReadersRouting()}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left > 0 {
			opts = append(opts, neo4j.ExecuteQueryWithTransactionConfig(neo4j.WithTxTimeout(left)))
		}
	}
	return neo4j.ExecuteQuery(ctx, r.driver, q, params, neo4j.EagerResultTransformer, opts...)
}

// transformations reads a relationship's roles, exprs, masked and rows lists (the parallel lists
// roleLists and DECIDES_ROWS store; all but roles may be absent) back into transformations.
func transformations(rec *neo4j.Record) []plan.Transformation {
	roles, _ := get[[]any](rec, "roles")
	exprs, _ := get[[]any](rec, "exprs")
	masked, _ := get[[]any](rec, "masked")
	rows, _ := get[[]any](rec, "rows")
	var ts []plan.Transformation
	for k, x := range roles {
		s, _ := x.(string)
		t := plan.Transformation{}
		t.Type, t.Subtype, _ = strings.Cut(s, "/")
		if k < len(exprs) {
			t.Expr, _ = exprs[k].(string)
		}
		if k < len(masked) {
			t.Masking, _ = masked[k].(bool)
		}
		if k < len(rows) {
			t.Rows, _ = rows[k].(string)
		}
		ts = append(ts, t)
	}
	return ts
}

func get[T any](rec *neo4j.Record, key string) (T, bool) {
	v, ok := rec.Get(key)
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

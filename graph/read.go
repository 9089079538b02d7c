package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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

// EdgeRow is one FEEDS relationship.
type EdgeRow struct {
	Source  string // source Column key
	Target  string // target Column key
	Job     string // Job key
	Type    string // DIRECT or INDIRECT
	Subtype string
	Masking bool
}

// Counts is the number of nodes per label and relationships per type.
type Counts struct {
	Nodes         map[string]int64
	Relationships map[string]int64
}

// Edges returns every FEEDS relationship, sorted by source, target and job.
func (r *Reader) Edges(ctx context.Context) ([]EdgeRow, error) {
	res, err := r.query(ctx, `MATCH (s:Column)-[f:FEEDS]->(t:Column)
RETURN s.key AS source, t.key AS target, f.job AS job, f.type AS type, f.subtype AS subtype,
       coalesce(f.masking, false) AS masking`, nil)
	if err != nil {
		return nil, fmt.Errorf("graph edges: %w", err)
	}
	out := make([]EdgeRow, 0, len(res.Records))
	for _, rec := range res.Records {
		e := EdgeRow{}
		e.Source, _ = get[string](rec, "source")
		e.Target, _ = get[string](rec, "target")
		e.Job, _ = get[string](rec, "job")
		e.Type, _ = get[string](rec, "type")
		e.Subtype, _ = get[string](rec, "subtype")
		e.Masking, _ = get[bool](rec, "masking")
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b EdgeRow) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Job, b.Job))
	})
	return out, nil
}

// Counts counts nodes by label and relationships by type.
func (r *Reader) Counts(ctx context.Context) (Counts, error) {
	c := Counts{Nodes: map[string]int64{}, Relationships: map[string]int64{}}
	nodes, err := r.query(ctx, `MATCH (n) UNWIND labels(n) AS label RETURN label AS name, count(*) AS n`, nil)
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

// Upstream returns the keys of the columns that feed column key, directly or through up to depth
// FEEDS hops (1 to 20), sorted.
func (r *Reader) Upstream(ctx context.Context, key string, depth int) ([]string, error) {
	return r.walk(ctx, key, depth, `MATCH (u:Column)-[:FEEDS*1..%d]->(:Column {key: $key}) RETURN DISTINCT u.key AS key`)
}

// Downstream returns the keys of the columns that column key feeds, directly or through up to
// depth FEEDS hops (1 to 20), sorted: what a change to it may break.
func (r *Reader) Downstream(ctx context.Context, key string, depth int) ([]string, error) {
	return r.walk(ctx, key, depth, `MATCH (:Column {key: $key})-[:FEEDS*1..%d]->(d:Column) RETURN DISTINCT d.key AS key`)
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

func (r *Reader) query(ctx context.Context, q string, params map[string]any) (*neo4j.EagerResult, error) {
	return neo4j.ExecuteQuery(ctx, r.driver, q, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(r.database), neo4j.ExecuteQueryWithReadersRouting())
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

package analyze

import (
	"context"
	"fmt"
	"sync"

	"github.com/colline/colline/plan"
)

// DatasetReader reads datasets from colline's graph (graph.Reader).
type DatasetReader interface {
	// DatasetsByKey returns the datasets of keys that the graph holds (and that were not
	// dropped since last seen), with their columns in schema order, as Datasets does.
	DatasetsByKey(ctx context.Context, keys []string) ([]plan.Dataset, error)
	// Versions returns, for each key the graph holds, a value that changes whenever an event
	// mentions the dataset again (its columns may have changed) or drops it.
	Versions(ctx context.Context, keys []string) (map[string]string, error)
}

// Schemas gives the schemas it holds of tables, by name, as Tables (GraphSchemas), and why it
// cannot give some it holds (a column type is missing, ...).
type Schemas interface {
	Tables(ctx context.Context, names []TableName) (tables []Table, skipped []string, err error)
}

// GraphSchemas gives the schemas colline's graph holds of the tables a request names (only
// those: Client.Names says which), as Tables of source graph: columns in order with their types
// (nested fields are in a struct column's type), as GraphTables makes them. It caches them and
// reads a table again only when the graph has seen it since (its version changed): one small
// query per request when nothing changed. Safe for concurrent use.
type GraphSchemas struct {
	Reader DatasetReader

	mu    sync.Mutex
	cache map[string]graphEntry
	stats GraphStats
}

// GraphStats counts GraphSchemas' lookups: tables served from its cache, read from the graph,
// and names the graph does not hold.
type GraphStats struct{ Cached, Read, Missing int }

type graphEntry struct {
	version string
	table   *Table // nil: the graph holds the dataset but it cannot be a Table (skipped says why)
	skipped string
}

// Stats returns the lookups so far.
func (g *GraphSchemas) Stats() GraphStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// Tables returns the Tables of the names the graph holds, in the order of names.
func (g *GraphSchemas) Tables(ctx context.Context, names []TableName) ([]Table, []string, error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	keys := make([]string, 0, len(names))
	for _, n := range names {
		keys = append(keys, n.Key())
	}
	versions, err := g.Reader.Versions(ctx, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("the graph's tables: %w", err)
	}
	g.mu.Lock()
	if g.cache == nil {
		g.cache = map[string]graphEntry{}
	}
	var stale []string
	for _, k := range keys {
		v, held := versions[k]
		e, cached := g.cache[k]
		switch {
		case !held:
			delete(g.cache, k)
			g.stats.Missing++
		case cached && e.version == v:
			g.stats.Cached++
		default:
			stale = append(stale, k)
		}
	}
	g.mu.Unlock()
	if len(stale) > 0 {
		ds, err := g.Reader.DatasetsByKey(ctx, stale)
		if err != nil {
			return nil, nil, fmt.Errorf("the graph's tables: %w", err)
		}
		tables, skipped := graphTables(ds)
		g.mu.Lock()
		for _, k := range stale {
			e := graphEntry{version: versions[k], table: tables[k], skipped: skipped[k]}
			if e.table == nil && e.skipped == "" {
				e.skipped = k + ": not in the graph any more"
			}
			g.cache[k] = e
			g.stats.Read++
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Table
	var notes []string
	for _, k := range keys {
		e, ok := g.cache[k]
		switch {
		case !ok:
		case e.table != nil:
			out = append(out, *e.table)
		default:
			notes = append(notes, e.skipped)
		}
	}
	return out, notes, nil
}

// Resolve gives req, as Tables, the schemas src holds of the tables its SQL names that nothing
// else defines (Client.Names): the analyzer's catalog (its DDL, a metastore), req's own Schema
// and Tables and the statements of its files come first, then src (the graph); what none of
// them holds is inferred when req.Infer. It returns the names asked for and src's notes.
func (c *Client) Resolve(ctx context.Context, req *Request, src Schemas) (names []TableName, notes []string, err error) {
	if src == nil {
		return nil, nil, nil
	}
	names, err = c.Names(ctx, *req)
	if err != nil || len(names) == 0 {
		return names, nil, err
	}
	tables, notes, err := src.Tables(ctx, names)
	if err != nil {
		return names, nil, err
	}
	req.Tables = append(req.Tables, tables...)
	return names, notes, nil
}

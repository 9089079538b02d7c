package graph

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// Column: a column of a dataset, or a struct field of a column (plan's Column.Parent), keyed by
// plan's Column.Key. A column hangs off its dataset, a field off its parent column or field;
// table is its dataset's name (shop.orders), so that a caption "{table}.{name}" (Neo4j Browser's
// style, neo4jbrowser/) says which table it is. An alter that dropped a column marks its newest drop
// (a column exists while droppedAt is absent or older than lastSeen).
//
//	(:Dataset)-[:HAS_COLUMN]->(:Column {key, name, table, datasetKey, dataType, position, firstSeen, lastSeen, schema?, droppedAt?})
//	(:Column)-[:HAS_FIELD]->(:Column {key, name, table, datasetKey, parent, dataType, firstSeen, lastSeen, schema?})
//
// position is the column's 0-based place in its dataset's schema, as the newest event listed the
// dataset's columns: what `colline analyze` needs to define the dataset again (docs/analyze.md).

type columnRow struct {
	seen
	key, datasetKey, name, table, dataType, parent string
	position                                       int // -1: unknown
}

// columnProperties sets a column's (or field's) properties from its row: the newest observation
// wins, an empty value never erases a known one (rows.go: newer); schema, when the row has one
// (version), makes it a current column of its dataset's schema (schema.go).
const columnProperties = `    c.name = CASE WHEN row.name <> '' AND (c.name IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.name ELSE c.name END,
    c.table = CASE WHEN row.table <> '' AND (c.table IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.table ELSE c.table END,
    c.dataType = CASE WHEN row.dataType <> '' AND (c.dataType IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.dataType ELSE c.dataType END,
    c.position = CASE WHEN row.position >= 0 AND (c.position IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.position ELSE c.position END,
    c.firstSeen = CASE WHEN c.firstSeen IS NULL OR row.firstSeen < c.firstSeen THEN row.firstSeen ELSE c.firstSeen END,
    c.schema = coalesce(row.version, c.schema),
    c.lastSeen = CASE WHEN c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen THEN row.lastSeen ELSE c.lastSeen END
`

// newColumns creates the columns the graph does not hold (existing.go), each with its HAS_COLUMN;
// columns sets the properties of those it holds, which have their HAS_COLUMN since they were
// created (a column key starts with its dataset's key: its dataset never changes).
var newColumns = element{
	name:          "new columns",
	nodes:         []string{"Column"},
	relationships: []string{"HAS_COLUMN"},
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
CREATE (d)-[:HAS_COLUMN]->(:Column {key: row.key, datasetKey: row.dataset, name: row.newName, table: row.newTable, dataType: row.newType,
                                    position: row.newPosition, firstSeen: row.firstSeen, lastSeen: row.lastSeen, schema: row.version})
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		var out []map[string]any
		for _, c := range r.columns {
			if c.parent == "" && !r.oldColumns[c.key] && r.writesColumns(c.datasetKey) {
				var pos any
				if c.position >= 0 {
					pos = int64(c.position)
				}
				out = append(out, map[string]any{"key": c.key, "dataset": c.datasetKey, "newName": stringOrNil(c.name), "newTable": stringOrNil(c.table),
					"newType": stringOrNil(c.dataType), "newPosition": pos, "firstSeen": c.first, "lastSeen": c.last, "version": r.version(c.key)})
			}
		}
		return out
	},
}

var columns = element{
	name:  "columns",
	nodes: []string{"Column"},
	query: `UNWIND $rows AS row
MATCH (c:Column {key: row.key})
SET c.datasetKey = row.dataset
SET ` + strings.TrimLeft(columnProperties, " ") + `RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return columnRows(r, false, func(c columnRow) bool { return r.oldColumns[c.key] })
	},
}

// fields are the struct fields of columns: Column nodes like columns (datasetKey set), with the
// key of their parent (a column or a field); fieldLinks hangs each under its parent. Two
// statements, so that neither reads the label it writes (no Eager operator).
var fields = element{
	name:  "fields",
	nodes: []string{"Column"},
	query: `UNWIND $rows AS row
MERGE (c:Column {key: row.key})
ON MATCH SET c.key = row.key
SET c.datasetKey = row.dataset, c.parent = row.parent,
` + columnProperties + `RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return columnRows(r, true, nil) },
}

var fieldLinks = element{
	name:          "fieldLinks",
	relationships: []string{"HAS_FIELD"},
	query: `UNWIND $rows AS row
MATCH (p:Column {key: row.parent})
MATCH (c:Column {key: row.key})
MERGE (p)-[:HAS_FIELD]->(c)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return columnRows(r, true, nil) },
}

// columnRows are the rows of the columns (fields false) or of the struct fields (true), those
// that keep returns true for (nil: all).
func columnRows(r *rows, fields bool, keep func(columnRow) bool) []map[string]any {
	of := slices.DeleteFunc(slices.Clone(r.columns), func(c columnRow) bool {
		return (c.parent != "") != fields || (keep != nil && !keep(c)) || !r.writesColumns(c.datasetKey)
	})
	return params(of, func(c columnRow) map[string]any {
		return map[string]any{
			"key": c.key, "dataset": c.datasetKey, "name": c.name, "table": c.table, "dataType": c.dataType, "parent": c.parent, "position": int64(c.position),
			"firstSeen": c.first, "lastSeen": c.last, "version": r.version(c.key),
		}
	})
}

// columnMarkRow records the newest drop of a column by an alter (plan.ChangeAlter).
type columnMarkRow struct {
	column    string
	droppedAt time.Time
}

var columnMarks = element{
	name: "columnMarks",
	query: `UNWIND $rows AS row
MATCH (c:Column {key: row.column})
SET c.droppedAt = CASE WHEN c.droppedAt IS NULL OR c.droppedAt < row.droppedAt THEN row.droppedAt ELSE c.droppedAt END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.colMarks, func(m columnMarkRow) map[string]any {
			return map[string]any{"column": m.column, "droppedAt": m.droppedAt}
		})
	},
}

// column merges column c of dataset d observed at ts, at place pos among d's own columns (a
// struct field has none). A column listed under two datasets is an error.
func (b *batch) column(d *plan.Dataset, c plan.Column, pos int, ts time.Time) error {
	r := b.columns.get(c.Key, func() *columnRow { return &columnRow{key: c.Key, datasetKey: d.Key, position: -1} })
	if r.datasetKey != d.Key {
		return fmt.Errorf("%w: column %q is listed under datasets %q and %q", record.ErrInvalidItem, c.Key, r.datasetKey, d.Key)
	}
	win := r.observe(ts)
	r.name = newer(win, r.name, c.Name)
	r.table = newer(win, r.table, d.Name)
	r.dataType = newer(win, r.dataType, c.Type)
	r.parent = newer(win, r.parent, c.Parent)
	if c.Parent == "" && (win || r.position < 0) {
		r.position = pos
	}
	return nil
}

// columnDrop merges the drop of a column by an alter at ts.
func (b *batch) columnDrop(column string, ts time.Time) {
	m := b.colMarks.get(column, func() *columnMarkRow { return &columnMarkRow{column: column} })
	if ts.After(m.droppedAt) {
		m.droppedAt = ts
	}
}

func (a *columnRow) compare(b *columnRow) int         { return cmp.Compare(a.key, b.key) }
func (a *columnMarkRow) compare(b *columnMarkRow) int { return cmp.Compare(a.column, b.column) }

package graph

// Column: a column of a dataset, keyed by plan's Column.Key; table is its dataset's name (shop.orders),
// so that a caption "{table}.{name}" (Neo4j Browser's style, browser/) says which table it is.
//
//	(:Dataset)-[:HAS_COLUMN]->(:Column {key, name, table, datasetKey, dataType, position, firstSeen, lastSeen})
//
// position is the column's 0-based place in its dataset's schema, as the newest event listed the
// dataset's columns: what `colline analyze` needs to define the dataset again (docs/analyze.md).

type columnRow struct {
	seen
	key, datasetKey, name, table, dataType string
	position                               int // -1: unknown
}

var columns = element{
	name:          "columns",
	nodes:         []string{"Column"},
	relationships: []string{"HAS_COLUMN"},
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.datasetKey})
MERGE (c:Column {key: row.key})
SET c.datasetKey = row.datasetKey,
    c.name = CASE WHEN row.name <> '' AND (c.name IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.name ELSE c.name END,
    c.table = CASE WHEN row.table <> '' AND (c.table IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.table ELSE c.table END,
    c.dataType = CASE WHEN row.dataType <> '' AND (c.dataType IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.dataType ELSE c.dataType END,
    c.position = CASE WHEN row.position >= 0 AND (c.position IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.position ELSE c.position END,
    c.firstSeen = CASE WHEN c.firstSeen IS NULL OR row.firstSeen < c.firstSeen THEN row.firstSeen ELSE c.firstSeen END,
    c.lastSeen = CASE WHEN c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen THEN row.lastSeen ELSE c.lastSeen END
MERGE (d)-[:HAS_COLUMN]->(c)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.columns))
		for _, c := range r.columns {
			out = append(out, map[string]any{
				"key": c.key, "datasetKey": c.datasetKey, "name": c.name, "table": c.table, "dataType": c.dataType, "position": int64(c.position),
				"firstSeen": c.first, "lastSeen": c.last,
			})
		}
		return out
	},
}

package graph

import "time"

// Column: a column of a dataset, keyed by plan's Column.Key; an alter that dropped it marks its
// newest drop (a column exists while droppedAt is absent or older than lastSeen).
//
//	(:Dataset)-[:HAS_COLUMN]->(:Column {key, name, datasetKey, dataType, firstSeen, lastSeen, droppedAt})

type columnRow struct {
	seen
	key, datasetKey, name, dataType string
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
    c.dataType = CASE WHEN row.dataType <> '' AND (c.dataType IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.dataType ELSE c.dataType END,
    c.firstSeen = CASE WHEN c.firstSeen IS NULL OR row.firstSeen < c.firstSeen THEN row.firstSeen ELSE c.firstSeen END,
    c.lastSeen = CASE WHEN c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen THEN row.lastSeen ELSE c.lastSeen END
MERGE (d)-[:HAS_COLUMN]->(c)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.columns))
		for _, c := range r.columns {
			out = append(out, map[string]any{
				"key": c.key, "datasetKey": c.datasetKey, "name": c.name, "dataType": c.dataType,
				"firstSeen": c.first, "lastSeen": c.last,
			})
		}
		return out
	},
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
		out := make([]map[string]any, 0, len(r.colMarks))
		for _, m := range r.colMarks {
			out = append(out, map[string]any{"column": m.column, "droppedAt": m.droppedAt})
		}
		return out
	},
}

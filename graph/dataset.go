package graph

import "time"

// Dataset: a source or target, keyed by plan's Dataset.Key; DDL marks its newest drop and
// truncation, and a rename links the old identity to the new one.
//
//	(:Dataset {key, namespace, name, kind, location, firstSeen, lastSeen, droppedAt, truncatedAt})
//	(:Dataset)-[:RENAMED_TO {firstSeen, lastSeen, lastRun}]->(:Dataset)

type datasetRow struct {
	seen
	key, namespace, name, kind, location string
}

var datasets = element{
	name:  "datasets",
	nodes: []string{"Dataset"},
	query: `UNWIND $rows AS row
MERGE (d:Dataset {key: row.key})
SET d.namespace = CASE WHEN row.namespace <> '' AND (d.namespace IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.namespace ELSE d.namespace END,
    d.name = CASE WHEN row.name <> '' AND (d.name IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.name ELSE d.name END,
    d.kind = CASE WHEN row.kind <> '' AND (d.kind IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.kind ELSE d.kind END,
    d.location = CASE WHEN row.location <> '' AND (d.location IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.location ELSE d.location END,
    d.firstSeen = CASE WHEN d.firstSeen IS NULL OR row.firstSeen < d.firstSeen THEN row.firstSeen ELSE d.firstSeen END,
    d.lastSeen = CASE WHEN d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen THEN row.lastSeen ELSE d.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.datasets))
		for _, d := range r.datasets {
			out = append(out, map[string]any{
				"key": d.key, "namespace": d.namespace, "name": d.name, "kind": d.kind, "location": d.location,
				"firstSeen": d.first, "lastSeen": d.last,
			})
		}
		return out
	},
}

// markRow records the newest drop and truncation of a dataset (zero: none in the batch).
type markRow struct {
	dataset              string
	droppedAt, truncated time.Time
}

// marks: a dataset exists while droppedAt is absent or older than lastSeen (a later write
// re-created it).
var marks = element{
	name: "marks",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
SET d.droppedAt = CASE WHEN row.droppedAt IS NOT NULL AND (d.droppedAt IS NULL OR d.droppedAt < row.droppedAt) THEN row.droppedAt ELSE d.droppedAt END,
    d.truncatedAt = CASE WHEN row.truncatedAt IS NOT NULL AND (d.truncatedAt IS NULL OR d.truncatedAt < row.truncatedAt) THEN row.truncatedAt ELSE d.truncatedAt END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.marks))
		for _, m := range r.marks {
			out = append(out, map[string]any{
				"dataset": m.dataset, "droppedAt": zeroNil(m.droppedAt), "truncatedAt": zeroNil(m.truncated),
			})
		}
		return out
	},
}

type renameRow struct {
	seen
	from, to, lastRun string
}

var renames = element{
	name:          "renames",
	relationships: []string{"RENAMED_TO"},
	query: `UNWIND $rows AS row
MATCH (a:Dataset {key: row.from})
MATCH (b:Dataset {key: row.to})
MERGE (a)-[x:RENAMED_TO]->(b)
SET x.lastRun = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.renames))
		for _, x := range r.renames {
			out = append(out, map[string]any{
				"from": x.from, "to": x.to, "lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last,
			})
		}
		return out
	},
}

package graph

import "github.com/colline/colline/plan"

// DECIDES_ROWS: a source column decides which rows a job writes to a dataset (plan.Lineage's
// RowDeps: filters, joins, grouping, sorting), once per (column, dataset, job) rather than once
// per written column. roles[k] is "INDIRECT/SUBTYPE", exprs[k] its expression ("" when none).
//
//	(:Column)-[:DECIDES_ROWS {job, roles, exprs, lastRun, firstSeen, lastSeen}]->(:Dataset)

type decideRow struct {
	seen
	source, dataset, job, lastRun string
	ts                            []plan.Transformation
}

var decides = element{
	name:          "decides",
	relationships: []string{"DECIDES_ROWS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (d:Dataset {key: row.dataset})
MERGE (s)-[x:DECIDES_ROWS {job: row.job}]->(d)
SET x.roles = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.roles ELSE x.roles END,
    x.exprs = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.exprs ELSE x.exprs END,
    x.lastRun = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.stale = CASE WHEN x.lastSeen < row.lastSeen THEN null ELSE x.stale END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.decides))
		for _, x := range r.decides {
			roles, exprs, _ := roleLists(x.ts)
			out = append(out, map[string]any{
				"source": x.source, "dataset": x.dataset, "job": x.job, "roles": roles, "exprs": exprs,
				"lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last,
			})
		}
		return out
	},
	edges: func(r *rows) []EdgeRow {
		out := make([]EdgeRow, len(r.decides))
		for i, x := range r.decides {
			out[i] = newEdgeRow(DecidesRows, x.source, x.dataset, x.job, x.ts)
		}
		return out
	},
}

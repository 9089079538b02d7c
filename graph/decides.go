package graph

// DECIDES_ROWS: a source column decides which rows a job writes to a dataset (plan.Lineage's
// RowDeps: filters, joins, grouping, sorting), once per (column, dataset, job) rather than once
// per written column. roles[k] is "INDIRECT/SUBTYPE", exprs[k] its expression ("" when none),
// rows[k] the rows it decides: "" for every row the job writes, else the keys of the datasets
// whose rows it decides, one a line (plan.Transformation.Rows: a filter in one UNION branch).
//
//	(:Column)-[:DECIDES_ROWS {job, roles, exprs, rows, lastRun, firstSeen, lastSeen}]->(:Dataset)
//
// Its rows are lineageRows (element.go) whose target is the dataset.

var decides = element{
	name:          "decides",
	relationships: []string{"DECIDES_ROWS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (d:Dataset {key: row.dataset})
MERGE (s)-[x:DECIDES_ROWS {job: row.job}]->(d)
SET x.roles = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.roles ELSE x.roles END,
    x.exprs = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.exprs ELSE x.exprs END,
    x.rows = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.rows ELSE x.rows END,
    x.lastRun = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.stale = CASE WHEN x.lastSeen < row.lastSeen THEN null ELSE x.stale END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.decides, func(x lineageRow) map[string]any {
			roles, exprs, _ := roleLists(x.ts)
			rows := make([]string, len(x.ts))
			for k, t := range x.ts {
				rows[k] = t.Rows
			}
			return map[string]any{
				"source": x.source, "dataset": x.target, "job": x.job, "roles": roles, "exprs": exprs, "rows": rows,
				"lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last,
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(DecidesRows, r.decides) },
}

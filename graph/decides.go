package graph

import "github.com/colline/colline/plan"

// DECIDES_ROWS: a source column decides which rows a job writes to a dataset (plan.Lineage's
// RowDeps: filters, joins, grouping, sorting), once per (column, dataset, job) rather than once
// per written column. roles[k] is "INDIRECT/SUBTYPE", exprs[k] its expression ("" when none),
// rows[k] the rows it decides: "" for every row the job writes, else the keys of the datasets
// whose rows it decides, one a line (plan.Transformation.Rows: a filter in one UNION branch).
//
//	(:Column)-[:DECIDES_ROWS {job, roles, exprs, rows, firstSeen, lastSeen?, lastRun?, stale?}]->(:Dataset)
//
// lastSeen and lastRun are absent while the edge is current (as FEEDS'). Its rows are
// lineageRows (element.go) whose target is the dataset.

var decides = element{
	name:          "decides",
	relationships: []string{"DECIDES_ROWS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (d:Dataset {key: row.dataset})
MERGE (s)-[x:DECIDES_ROWS {job: row.job}]->(d)
SET x.roles = CASE WHEN ` + rowWins("x") + ` THEN row.roles ELSE x.roles END,
    x.exprs = CASE WHEN ` + rowWins("x") + ` THEN row.exprs ELSE x.exprs END,
    x.rows = CASE WHEN ` + rowWins("x") + ` THEN row.rows ELSE x.rows END,
    x.lastRun = CASE WHEN row.current THEN null WHEN ` + rowWins("x") + ` THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.stale = CASE WHEN ` + storedSeen("x") + ` < row.lastSeen THEN null ELSE x.stale END,
    x.lastSeen = CASE WHEN row.current THEN null WHEN ` + rowWins("x") + ` THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(lineageRows(r.decides, false), func(x lineageRow) map[string]any {
			roles, exprs, _ := roleLists(x.ts)
			rows := rowLists(x.ts)
			return map[string]any{
				"source": x.source, "dataset": x.target, "job": x.job, "roles": roles, "exprs": exprs, "rows": rows,
				"lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last, "current": x.current, "slotSeen": zeroNil(x.slotSeen),
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(DecidesRows, lineageRows(r.decides, false)) },
}

// newDecides creates the DECIDES_ROWS of lineage the graph does not hold yet, as newFeeds.
var newDecides = element{
	name:          "new decides",
	relationships: []string{"DECIDES_ROWS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (d:Dataset {key: row.dataset})
CREATE (s)-[:DECIDES_ROWS {job: row.job, roles: row.roles, exprs: row.exprs, rows: row.rows, firstSeen: row.firstSeen, lastSeen: row.ownSeen, lastRun: row.ownRun}]->(d)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(lineageRows(r.decides, true), func(x lineageRow) map[string]any {
			roles, exprs, _ := roleLists(x.ts)
			return map[string]any{
				"source": x.source, "dataset": x.target, "job": x.job, "roles": roles, "exprs": exprs, "rows": rowLists(x.ts),
				"firstSeen": x.first, "ownSeen": x.ownSeen(), "ownRun": x.ownRun(),
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(DecidesRows, lineageRows(r.decides, true)) },
}

// rowLists is the parallel list of the rows each role decides (plan.Transformation.Rows).
func rowLists(ts []plan.Transformation) []string {
	rows := make([]string, len(ts))
	for k, t := range ts {
		rows[k] = t.Rows
	}
	return rows
}

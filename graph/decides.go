package graph

import (
	"cmp"
	"time"

	"github.com/colline/colline/plan"
)

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
		return params(r.decides, func(x decideRow) map[string]any {
			roles, exprs, _ := roleLists(x.ts)
			return map[string]any{
				"source": x.source, "dataset": x.dataset, "job": x.job, "roles": roles, "exprs": exprs,
				"lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last,
			}
		})
	},
	edges: func(r *rows) []EdgeRow {
		out := make([]EdgeRow, len(r.decides))
		for i, x := range r.decides {
			out[i] = newEdgeRow(DecidesRows, x.source, x.dataset, x.job, x.ts)
		}
		return out
	},
}

// decide merges a row-level dependency of job, in run, observed at ts: the newest observation's
// roles win.
func (b *batch) decide(e plan.Edge, job, run string, ts time.Time) {
	x := b.decides.get([3]string{e.Source, e.Target, job}, func() *decideRow { return &decideRow{source: e.Source, dataset: e.Target, job: job} })
	if x.observe(ts) {
		x.ts, x.lastRun = e.Transformations, run
	}
}

func (a *decideRow) compare(b *decideRow) int {
	return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.job, b.job))
}

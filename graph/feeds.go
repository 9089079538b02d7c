package graph

import "github.com/colline/colline/plan"

// FEEDS: a source column takes part in the value of a target column, in a job, in every way
// listed: roles[k] is "TYPE/SUBTYPE" (plan.Transformation), exprs[k] its expression ("" when
// none) and masked[k] whether it masks the value. type and subtype are the strongest role
// (plan.Strongest), derived for display and simple filters. One per (source, target, job).
//
//	(:Column)-[:FEEDS {job, roles, exprs, masked, type, subtype, lastRun, firstSeen, lastSeen}]->(:Column)
//
// Its rows are lineageRows (element.go), as DECIDES_ROWS' are.

var feeds = element{
	name:          "feeds",
	relationships: []string{"FEEDS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (t:Column {key: row.target})
MERGE (s)-[f:FEEDS {job: row.job}]->(t)
SET f.roles = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.roles ELSE f.roles END,
    f.exprs = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.exprs ELSE f.exprs END,
    f.masked = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.masked ELSE f.masked END,
    f.type = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.type ELSE f.type END,
    f.subtype = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.subtype ELSE f.subtype END,
    f.lastRun = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.lastRun ELSE f.lastRun END,
    f.firstSeen = CASE WHEN f.firstSeen IS NULL OR row.firstSeen < f.firstSeen THEN row.firstSeen ELSE f.firstSeen END,
    f.stale = CASE WHEN f.lastSeen < row.lastSeen THEN null ELSE f.stale END,
    f.lastSeen = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.lastSeen ELSE f.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.feeds, func(f lineageRow) map[string]any {
			roles, exprs, masked := roleLists(f.ts)
			sum := plan.Strongest(f.ts)
			return map[string]any{
				"source": f.source, "target": f.target, "job": f.job,
				"roles": roles, "exprs": exprs, "masked": masked, "type": sum.Type, "subtype": sum.Subtype,
				"lastRun": f.lastRun, "firstSeen": f.first, "lastSeen": f.last,
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(Feeds, r.feeds) },
}

// roleLists splits transformations into the parallel lists stored on a relationship (Neo4j
// lists hold no nulls and no maps).
func roleLists(ts []plan.Transformation) (roles, exprs []string, masked []bool) {
	for _, t := range ts {
		roles = append(roles, t.Type+"/"+t.Subtype)
		exprs = append(exprs, t.Expr)
		masked = append(masked, t.Masking)
	}
	return roles, exprs, masked
}

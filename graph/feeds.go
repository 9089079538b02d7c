package graph

import "github.com/colline/colline/plan"

// FEEDS: a source column takes part in the value of a target column, in a job, in every way
// listed: roles[k] is "TYPE/SUBTYPE" (plan.Transformation), exprs[k] its expression ("" when
// none) and masked[k] whether it masks the value. type and subtype are the strongest role
// (plan.Strongest), derived for display and simple filters. One per (source, target, job).
//
//	(:Column)-[:FEEDS {job, roles, exprs, masked, type, subtype, firstSeen, lastSeen?, lastRun?, stale?}]->(:Column)
//
// lastSeen and lastRun are absent while the edge is current: an edge of the version its job's
// LINEAGE into the target's dataset holds (version.go), whose lastSeen and lastRun are the
// edge's. Its rows are lineageRows (element.go), as DECIDES_ROWS' are.

var feeds = element{
	name:          "feeds",
	relationships: []string{"FEEDS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (t:Column {key: row.target})
MERGE (s)-[f:FEEDS {job: row.job}]->(t)
SET f.roles = CASE WHEN ` + rowWins("f") + ` THEN row.roles ELSE f.roles END,
    f.exprs = CASE WHEN ` + rowWins("f") + ` THEN row.exprs ELSE f.exprs END,
    f.masked = CASE WHEN ` + rowWins("f") + ` THEN row.masked ELSE f.masked END,
    f.type = CASE WHEN ` + rowWins("f") + ` THEN row.type ELSE f.type END,
    f.subtype = CASE WHEN ` + rowWins("f") + ` THEN row.subtype ELSE f.subtype END,
    f.lastRun = CASE WHEN row.current THEN null WHEN ` + rowWins("f") + ` THEN row.lastRun ELSE f.lastRun END,
    f.firstSeen = CASE WHEN f.firstSeen IS NULL OR row.firstSeen < f.firstSeen THEN row.firstSeen ELSE f.firstSeen END,
    f.stale = CASE WHEN ` + storedSeen("f") + ` < row.lastSeen THEN null ELSE f.stale END,
    f.lastSeen = CASE WHEN row.current THEN null WHEN ` + rowWins("f") + ` THEN row.lastSeen ELSE f.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(lineageRows(r.feeds, false), func(f lineageRow) map[string]any {
			roles, exprs, masked := roleLists(f.ts)
			sum := plan.Strongest(f.ts)
			return map[string]any{
				"source": f.source, "target": f.target, "job": f.job,
				"roles": roles, "exprs": exprs, "masked": masked, "type": sum.Type, "subtype": sum.Subtype,
				"lastRun": f.lastRun, "firstSeen": f.first, "lastSeen": f.last, "current": f.current, "slotSeen": zeroNil(f.slotSeen),
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(Feeds, lineageRows(r.feeds, false)) },
}

// newFeeds creates the FEEDS of lineage the graph does not hold yet (fresh rows): no MERGE, no
// test of a stored lastSeen, and no property but those of the relationship's first write.
var newFeeds = element{
	name:          "new feeds",
	relationships: []string{"FEEDS"},
	query: `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (t:Column {key: row.target})
CREATE (s)-[:FEEDS {job: row.job, roles: row.roles, exprs: row.exprs, masked: row.masked, type: row.type, subtype: row.subtype,
                    firstSeen: row.firstSeen, lastSeen: row.ownSeen, lastRun: row.ownRun}]->(t)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(lineageRows(r.feeds, true), func(f lineageRow) map[string]any {
			roles, exprs, masked := roleLists(f.ts)
			sum := plan.Strongest(f.ts)
			return map[string]any{
				"source": f.source, "target": f.target, "job": f.job,
				"roles": roles, "exprs": exprs, "masked": masked, "type": sum.Type, "subtype": sum.Subtype,
				"firstSeen": f.first, "ownSeen": f.ownSeen(), "ownRun": f.ownRun(),
			}
		})
	},
	edges: func(r *rows) []EdgeRow { return edgeRows(Feeds, lineageRows(r.feeds, true)) },
}

// storedSeen is the lastSeen of lineage relationship x as stored: its own, or for a current edge
// (none of its own) its LINEAGE's, which the writer read and passes as row.slotSeen.
func storedSeen(x string) string { return "coalesce(" + x + ".lastSeen, row.slotSeen)" }

// rowWins says that a row's observation replaces relationship x's roles and run: x is new (no
// roles yet), or the row is the newest run that showed x (ties go to the row, the later write),
// or the row makes x current (a new version of its job's lineage, version.go).
func rowWins(x string) string {
	return "(row.current OR " + x + ".roles IS NULL OR coalesce(" + x + ".lastSeen, row.slotSeen, row.lastSeen) <= row.lastSeen)"
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

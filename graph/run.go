package graph

import "time"

// Run: one event (its key is the event id), with what it read, wrote and changed by DDL.
//
//	(:Job)-[:HAS_RUN]->(:Run {key, appId, executionId, funcName, status, sparkVersion, endedAt, emittedAt, analyzed})
//
// analyzed is true for an event of `colline analyze` (markers.analyzed): lineage Spark's analyzer
// derived from SQL that did not run; absent for runs.
//	(:Run)-[:READ]->(:Dataset)
//	(:Run)-[:WROTE {mode}]->(:Dataset)
//	(:Run)-[:CHANGED {action}]->(:Dataset)

type runRow struct {
	key, jobKey, appID, funcName, status, sparkVersion string
	executionID                                        int64
	endedAt, emittedAt                                 *time.Time
	analyzed                                           bool
}

// A run is one event: its properties never change, so they are simply set.
var runs = element{
	name:          "runs",
	nodes:         []string{"Run"},
	relationships: []string{"HAS_RUN"},
	query: `UNWIND $rows AS row
MATCH (j:Job {key: row.jobKey})
MERGE (r:Run {key: row.key})
SET r.appId = row.appId,
    r.executionId = row.executionId,
    r.funcName = row.funcName,
    r.status = row.status,
    r.sparkVersion = row.sparkVersion,
    r.endedAt = row.endedAt,
    r.emittedAt = row.emittedAt,
    r.analyzed = CASE WHEN row.analyzed THEN true ELSE null END
MERGE (j)-[:HAS_RUN]->(r)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.runs))
		for _, x := range r.runs {
			out = append(out, map[string]any{
				"key": x.key, "jobKey": x.jobKey, "appId": x.appID, "executionId": x.executionID,
				"funcName": x.funcName, "status": x.status, "sparkVersion": x.sparkVersion,
				"endedAt": timeOrNil(x.endedAt), "emittedAt": timeOrNil(x.emittedAt), "analyzed": x.analyzed,
			})
		}
		return out
	},
}

type readRow struct{ run, dataset string }

var reads = element{
	name:          "reads",
	relationships: []string{"READ"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[:READ]->(d)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.reads))
		for _, x := range r.reads {
			out = append(out, map[string]any{"run": x.run, "dataset": x.dataset})
		}
		return out
	},
}

type wroteRow struct{ run, dataset, mode string }

var wrote = element{
	name:          "wrote",
	relationships: []string{"WROTE"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[w:WROTE]->(d)
SET w.mode = row.mode
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.wrote))
		for _, x := range r.wrote {
			out = append(out, map[string]any{"run": x.run, "dataset": x.dataset, "mode": stringOrNil(x.mode)})
		}
		return out
	},
}

// changedRow links a run to a dataset it changed by DDL.
type changedRow struct{ run, dataset, action string }

var changed = element{
	name:          "changed",
	relationships: []string{"CHANGED"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[:CHANGED {action: row.action}]->(d)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		out := make([]map[string]any, 0, len(r.changed))
		for _, x := range r.changed {
			out = append(out, map[string]any{"run": x.run, "dataset": x.dataset, "action": x.action})
		}
		return out
	},
}

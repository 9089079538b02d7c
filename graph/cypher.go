package graph

import "time"

// Write statements, in the order Writer runs them. Node MERGEs come first; the relationship
// statements only MATCH nodes written earlier in the same transaction, so no statement MERGEs and
// MATCHes the same label in one pipeline. Every statement returns the number of rows it handled,
// so that a MATCH that found nothing is an error rather than a silently dropped row.
//
// Property rules, shared with rows.go: a row is newer when its time is at least the stored
// lastSeen. Node strings take the row's value when it is not empty and the row is newer or nothing
// is stored yet; edge properties take the row's values when the row is newer; firstSeen only moves
// back and lastSeen only forward. The "newer" test is written out in each SET item rather than
// computed once in a WITH: a projection reading lastSeen before the SET that writes it makes the
// planner add an Eager operator (TestNoEager guards this). SET evaluates all its items before
// assigning any, and lastSeen is assigned last anyway.
const (
	mergeJobs = `UNWIND $rows AS row
MERGE (j:Job {key: row.key})
SET j.namespace = CASE WHEN row.namespace <> '' AND (j.namespace IS NULL OR j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen) THEN row.namespace ELSE j.namespace END,
    j.name = CASE WHEN row.name <> '' AND (j.name IS NULL OR j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen) THEN row.name ELSE j.name END,
    j.firstSeen = CASE WHEN j.firstSeen IS NULL OR row.firstSeen < j.firstSeen THEN row.firstSeen ELSE j.firstSeen END,
    j.lastSeen = CASE WHEN j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen THEN row.lastSeen ELSE j.lastSeen END
RETURN count(*) AS n`

	mergeDatasets = `UNWIND $rows AS row
MERGE (d:Dataset {key: row.key})
SET d.namespace = CASE WHEN row.namespace <> '' AND (d.namespace IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.namespace ELSE d.namespace END,
    d.name = CASE WHEN row.name <> '' AND (d.name IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.name ELSE d.name END,
    d.kind = CASE WHEN row.kind <> '' AND (d.kind IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.kind ELSE d.kind END,
    d.location = CASE WHEN row.location <> '' AND (d.location IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.location ELSE d.location END,
    d.firstSeen = CASE WHEN d.firstSeen IS NULL OR row.firstSeen < d.firstSeen THEN row.firstSeen ELSE d.firstSeen END,
    d.lastSeen = CASE WHEN d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen THEN row.lastSeen ELSE d.lastSeen END
RETURN count(*) AS n`

	mergeColumns = `UNWIND $rows AS row
MATCH (d:Dataset {key: row.datasetKey})
MERGE (c:Column {key: row.key})
SET c.datasetKey = row.datasetKey,
    c.name = CASE WHEN row.name <> '' AND (c.name IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.name ELSE c.name END,
    c.dataType = CASE WHEN row.dataType <> '' AND (c.dataType IS NULL OR c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen) THEN row.dataType ELSE c.dataType END,
    c.firstSeen = CASE WHEN c.firstSeen IS NULL OR row.firstSeen < c.firstSeen THEN row.firstSeen ELSE c.firstSeen END,
    c.lastSeen = CASE WHEN c.lastSeen IS NULL OR c.lastSeen <= row.lastSeen THEN row.lastSeen ELSE c.lastSeen END
MERGE (d)-[:HAS_COLUMN]->(c)
RETURN count(*) AS n`

	// A run is one event: its properties never change, so they are simply set.
	mergeRuns = `UNWIND $rows AS row
MATCH (j:Job {key: row.jobKey})
MERGE (r:Run {key: row.key})
SET r.appId = row.appId,
    r.executionId = row.executionId,
    r.funcName = row.funcName,
    r.status = row.status,
    r.sparkVersion = row.sparkVersion,
    r.endedAt = row.endedAt,
    r.emittedAt = row.emittedAt
MERGE (j)-[:HAS_RUN]->(r)
RETURN count(*) AS n`

	mergeReads = `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[:READ]->(d)
RETURN count(*) AS n`

	mergeWrote = `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[w:WROTE]->(d)
SET w.mode = row.mode
RETURN count(*) AS n`

	// DDL: the newest drop and truncation of a dataset. A dataset exists while droppedAt is
	// absent or older than lastSeen (a later write re-created it).
	markDatasets = `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
SET d.droppedAt = CASE WHEN row.droppedAt IS NOT NULL AND (d.droppedAt IS NULL OR d.droppedAt < row.droppedAt) THEN row.droppedAt ELSE d.droppedAt END,
    d.truncatedAt = CASE WHEN row.truncatedAt IS NOT NULL AND (d.truncatedAt IS NULL OR d.truncatedAt < row.truncatedAt) THEN row.truncatedAt ELSE d.truncatedAt END
RETURN count(*) AS n`

	mergeRenames = `UNWIND $rows AS row
MATCH (a:Dataset {key: row.from})
MATCH (b:Dataset {key: row.to})
MERGE (a)-[x:RENAMED_TO]->(b)
SET x.lastRun = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`

	mergeChanged = `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[:CHANGED {action: row.action}]->(d)
RETURN count(*) AS n`

	mergeFeeds = `UNWIND $rows AS row
MATCH (s:Column {key: row.source})
MATCH (t:Column {key: row.target})
MERGE (s)-[f:FEEDS {job: row.job}]->(t)
SET f.type = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.type ELSE f.type END,
    f.subtype = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.subtype ELSE f.subtype END,
    f.masking = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.masking ELSE f.masking END,
    f.expr = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.expr ELSE f.expr END,
    f.lastRun = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.lastRun ELSE f.lastRun END,
    f.firstSeen = CASE WHEN f.firstSeen IS NULL OR row.firstSeen < f.firstSeen THEN row.firstSeen ELSE f.firstSeen END,
    f.lastSeen = CASE WHEN f.lastSeen IS NULL OR f.lastSeen <= row.lastSeen THEN row.lastSeen ELSE f.lastSeen END
RETURN count(*) AS n`
)

// schema is run by Bootstrap, one statement per transaction. Uniqueness constraints exist in the
// Community Edition and give MERGE its index. There is deliberately no index on FEEDS.job: with
// one, the planner may answer the FEEDS MERGE by scanning every edge of the job instead of
// expanding between the two matched columns.
var schema = []string{
	`CREATE CONSTRAINT dataset_key IF NOT EXISTS FOR (n:Dataset) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT column_key IF NOT EXISTS FOR (n:Column) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT job_key IF NOT EXISTS FOR (n:Job) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT run_key IF NOT EXISTS FOR (n:Run) REQUIRE n.key IS UNIQUE`,
	`CREATE INDEX column_name IF NOT EXISTS FOR (n:Column) ON (n.name)`,
}

// statement is one UNWIND statement with its rows as flat maps of scalars.
type statement struct {
	name  string
	query string
	rows  []map[string]any
}

// statements turns rows into the ordered statement list of one transaction.
func (r *rows) statements() []statement {
	st := []statement{
		{name: "jobs", query: mergeJobs},
		{name: "datasets", query: mergeDatasets},
		{name: "columns", query: mergeColumns},
		{name: "runs", query: mergeRuns},
		{name: "reads", query: mergeReads},
		{name: "wrote", query: mergeWrote},
		{name: "feeds", query: mergeFeeds},
		{name: "marks", query: markDatasets},
		{name: "renames", query: mergeRenames},
		{name: "changed", query: mergeChanged},
	}
	for _, j := range r.jobs {
		st[0].rows = append(st[0].rows, map[string]any{
			"key": j.key, "namespace": j.namespace, "name": j.name,
			"firstSeen": j.first, "lastSeen": j.last,
		})
	}
	for _, d := range r.datasets {
		st[1].rows = append(st[1].rows, map[string]any{
			"key": d.key, "namespace": d.namespace, "name": d.name, "kind": d.kind, "location": d.location,
			"firstSeen": d.first, "lastSeen": d.last,
		})
	}
	for _, c := range r.columns {
		st[2].rows = append(st[2].rows, map[string]any{
			"key": c.key, "datasetKey": c.datasetKey, "name": c.name, "dataType": c.dataType,
			"firstSeen": c.first, "lastSeen": c.last,
		})
	}
	for _, x := range r.runs {
		st[3].rows = append(st[3].rows, map[string]any{
			"key": x.key, "jobKey": x.jobKey, "appId": x.appID, "executionId": x.executionID,
			"funcName": x.funcName, "status": x.status, "sparkVersion": x.sparkVersion,
			"endedAt": timeOrNil(x.endedAt), "emittedAt": timeOrNil(x.emittedAt),
		})
	}
	for _, x := range r.reads {
		st[4].rows = append(st[4].rows, map[string]any{"run": x.run, "dataset": x.dataset})
	}
	for _, x := range r.wrote {
		st[5].rows = append(st[5].rows, map[string]any{"run": x.run, "dataset": x.dataset, "mode": stringOrNil(x.mode)})
	}
	for _, f := range r.feeds {
		st[6].rows = append(st[6].rows, map[string]any{
			"source": f.source, "target": f.target, "job": f.job,
			"type": f.typ, "subtype": f.subtype, "masking": f.masking, "expr": stringOrNil(f.expr),
			"lastRun": f.lastRun, "firstSeen": f.first, "lastSeen": f.last,
		})
	}
	for _, m := range r.marks {
		st[7].rows = append(st[7].rows, map[string]any{
			"dataset": m.dataset, "droppedAt": zeroNil(m.droppedAt), "truncatedAt": zeroNil(m.truncated),
		})
	}
	for _, x := range r.renames {
		st[8].rows = append(st[8].rows, map[string]any{
			"from": x.from, "to": x.to, "lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last,
		})
	}
	for _, x := range r.changed {
		st[9].rows = append(st[9].rows, map[string]any{"run": x.run, "dataset": x.dataset, "action": x.action})
	}
	return st
}

func zeroNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func stringOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

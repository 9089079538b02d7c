package graph

import (
	"cmp"
	"slices"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// Run: a listener event (its key is the event id), or an OpenLineage run (its key is the runId),
// with what it read, wrote and changed by DDL, and the run it was spawned from.
//
//	(:Job)-[:HAS_RUN]->(:Run {key, status, startedAt, endedAt, producer,
//	                          appId, executionId, funcName, sparkVersion, emittedAt, degraded, overBudget?, analyzed,
//	                          connectUserId, connectUserName, connectSessionId, connectOperationId, connectClientType})
//
// connect* are the Spark Connect operation that ran a listener event's execution (query.connect):
// the user id and name as the client sent them (not authenticated), the session, the operation
// and the client's type; absent for executions that did not come through Spark Connect.
//
// analyzed is true for an event of `colline analyze` (markers.analyzed): lineage Spark's analyzer
// derived from SQL that did not run; absent for runs.
//	(:Run)-[:READ]->(:Dataset)
//	(:Run)-[:WROTE {mode, columnLineage?}]->(:Dataset)
//	(:Run)-[:CHANGED {action}]->(:Dataset)
//	(:Run)-[:CHILD_OF]->(:Run)          an OpenLineage run's parent facet, or the scheduler's run
//	                                    a listener event names (and that run's root run)
//
// A listener run is one event. An OpenLineage run is all the events of its runId, in any order
// and any number of times: status is running until a terminal event (success, failure, aborted)
// and then the newest terminal one; startedAt is the earliest START; endedAt the time of the
// terminal status kept. A degraded listener event (plan.Lineage.Degraded) has degraded = true and
// columnLineage = "missing" on each of its WROTE: the run wrote those columns, but the event did
// not say from what. An event over an extraction budget (plan.Lineage.OverBudget) has
// columnLineage = "missing" likewise, and overBudget = the budget's name (depth, nodes, edges,
// work): a listener run's is replaced when its event is written again (a replay within a larger
// budget clears it), an OpenLineage run's stays once one of its events set it.

// Run statuses. The listener reports success or failure; OpenLineage events map onto them.
const (
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusAborted = "aborted"
)

// runStatus maps an OpenLineage eventType onto a run status ("" for OTHER or none).
func runStatus(eventType string) string {
	switch eventType {
	case "START", "RUNNING":
		return StatusRunning
	case "COMPLETE":
		return StatusSuccess
	case "FAIL":
		return StatusFailure
	case "ABORT":
		return StatusAborted
	}
	return ""
}

// statusRank orders statuses: a terminal status is never replaced by running.
func statusRank(s string) int {
	switch s {
	case "":
		return 0
	case StatusRunning:
		return 1
	}
	return 2
}

type runRow struct {
	key, jobKey, appID, funcName, status, sparkVersion, producer string
	executionID                                                  *int64
	startedAt, endedAt, emittedAt                                *time.Time
	degraded                                                     *bool // a listener run's; nil for OpenLineage
	overBudget                                                   string
	analyzed                                                     bool // markers.analyzed
	connect                                                      *events.Connect
}

// listener reports a listener event's run (one event, with a degraded flag); OpenLineage runs
// and parent runs have none.
func (x runRow) listener() bool { return x.degraded != nil }

// ColumnLineageMissing is the columnLineage of a WROTE whose column lineage the event did not carry
// (a degraded event) or colline did not extract (a plan over budget).
const ColumnLineageMissing = "missing"

// overBudget is the name of the budget lin was over, or "".
func overBudget(lin *plan.Lineage) string {
	if lin == nil || lin.OverBudget == nil {
		return ""
	}
	return lin.OverBudget.Budget
}

// newRunRow is the run of one item observed at ts.
func newRunRow(it record.Item, jobKey string, ts time.Time) *runRow {
	if env := it.Event; env != nil {
		x, degraded := env.Query.ExecutionID, it.Lineage.Degraded
		return &runRow{overBudget: overBudget(it.Lineage),
			key: env.EventID, jobKey: jobKey, appID: env.App.ID, executionID: &x, funcName: env.Query.FuncName,
			status: env.Query.Status, sparkVersion: env.Producer.Spark,
			endedAt: parseTime(env.Query.EndedAt), emittedAt: parseTime(env.EmittedAt), degraded: &degraded,
			analyzed: env.Markers.Analyzed, connect: env.Query.Connect,
		}
	}
	o := it.OpenLineage
	r := &runRow{key: o.RunID, jobKey: jobKey, producer: o.Producer, status: runStatus(o.EventType), overBudget: overBudget(it.Lineage)}
	switch {
	case o.EventType == "START":
		r.startedAt = &ts
	case statusRank(r.status) == 2:
		r.endedAt = &ts
	}
	return r
}

// merge returns the run of r and then n, by the rules above (n's descriptive values win).
func (r *runRow) merge(n *runRow) *runRow {
	m := *r
	if n.jobKey != "" {
		m.jobKey = n.jobKey
	}
	for _, p := range [][2]*string{{&m.appID, &n.appID}, {&m.funcName, &n.funcName}, {&m.sparkVersion, &n.sparkVersion}, {&m.producer, &n.producer}} {
		if *p[1] != "" {
			*p[0] = *p[1]
		}
	}
	if n.executionID != nil {
		m.executionID = n.executionID
	}
	if n.emittedAt != nil {
		m.emittedAt = n.emittedAt
	}
	if n.degraded != nil {
		m.degraded = n.degraded
		m.overBudget = n.overBudget
	} else if n.overBudget != "" {
		m.overBudget = n.overBudget
	}
	if n.connect != nil {
		m.connect = n.connect
	}
	m.analyzed = m.analyzed || n.analyzed
	if n.startedAt != nil && (m.startedAt == nil || n.startedAt.Before(*m.startedAt)) {
		m.startedAt = n.startedAt
	}
	if statusWins(m.status, m.endedAt, n.status, n.endedAt) {
		m.status = n.status
		if n.endedAt != nil {
			m.endedAt = n.endedAt
		}
	}
	return &m
}

// statusWins reports whether a status observed later replaces the stored one: a higher rank, or
// the same terminal rank and a time at least as new. The Cypher below applies the same rule.
func statusWins(old string, oldAt *time.Time, status string, at *time.Time) bool {
	if status == "" {
		return false
	}
	ro, rn := statusRank(old), statusRank(status)
	return rn > ro || (rn == ro && rn == 2 && (oldAt == nil || (at != nil && !at.Before(*oldAt))))
}

// rank(x) in Cypher, as statusRank.
const storedRank = `CASE WHEN r.status IS NULL THEN 0 WHEN r.status = 'running' THEN 1 ELSE 2 END`
const rowRank = `CASE WHEN row.status IS NULL THEN 0 WHEN row.status = 'running' THEN 1 ELSE 2 END`
const statusWinsCypher = `row.status IS NOT NULL AND (` + rowRank + ` > ` + storedRank + ` OR (` + rowRank + ` = 2 AND ` + storedRank +
	` = 2 AND (r.endedAt IS NULL OR (row.endedAt IS NOT NULL AND r.endedAt <= row.endedAt))))`

// runs merges the runs that are not new listener runs (OpenLineage runs, parent runs, listener
// runs written before); runJobs links them to their jobs.
var runs = element{
	name:  "runs",
	nodes: []string{"Run"},
	query: `UNWIND $rows AS row
MERGE (r:Run {key: row.key})
ON MATCH SET r.key = row.key
SET r.appId = coalesce(row.appId, r.appId),
    r.executionId = coalesce(row.executionId, r.executionId),
    r.funcName = coalesce(row.funcName, r.funcName),
    r.sparkVersion = coalesce(row.sparkVersion, r.sparkVersion),
    r.emittedAt = coalesce(row.emittedAt, r.emittedAt),
    r.producer = coalesce(row.producer, r.producer),
    r.degraded = coalesce(row.degraded, r.degraded),
    r.overBudget = CASE WHEN row.degraded IS NOT NULL THEN row.overBudget ELSE coalesce(row.overBudget, r.overBudget) END,
    r.analyzed = CASE WHEN row.analyzed THEN true ELSE r.analyzed END,
    r.connectUserId = coalesce(row.connectUserId, r.connectUserId),
    r.connectUserName = coalesce(row.connectUserName, r.connectUserName),
    r.connectSessionId = coalesce(row.connectSessionId, r.connectSessionId),
    r.connectOperationId = coalesce(row.connectOperationId, r.connectOperationId),
    r.connectClientType = coalesce(row.connectClientType, r.connectClientType),
    r.startedAt = CASE WHEN row.startedAt IS NOT NULL AND (r.startedAt IS NULL OR row.startedAt < r.startedAt) THEN row.startedAt ELSE r.startedAt END,
    r.endedAt = CASE WHEN ` + statusWinsCypher + ` AND row.endedAt IS NOT NULL THEN row.endedAt ELSE r.endedAt END,
    r.status = CASE WHEN ` + statusWinsCypher + ` THEN row.status ELSE r.status END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.mergedRuns(), func(x runRow) map[string]any {
			var exec any
			if x.executionID != nil {
				exec = *x.executionID
			}
			row := map[string]any{
				"key": x.key, "jobKey": x.jobKey, "appId": stringOrNil(x.appID), "executionId": exec,
				"funcName": stringOrNil(x.funcName), "status": stringOrNil(x.status), "sparkVersion": stringOrNil(x.sparkVersion),
				"producer": stringOrNil(x.producer), "startedAt": timeOrNil(x.startedAt),
				"endedAt": timeOrNil(x.endedAt), "emittedAt": timeOrNil(x.emittedAt), "degraded": boolOrNil(x.degraded), "overBudget": stringOrNil(x.overBudget), "analyzed": x.analyzed,
			}
			connectParams(row, x.connect)
			return row
		})
	},
}

// runJobs links the runs of runs to their jobs: a statement of its own, because the job's MATCH
// reads the key that runs writes to take the run's lock (element.go, "Lock order"), and the two
// in one statement plan an Eager operator.
var runJobs = element{
	name:          "run jobs",
	relationships: []string{"HAS_RUN"},
	query: `UNWIND $rows AS row
MATCH (j:Job {key: row.jobKey})
MATCH (r:Run {key: row.key})
MERGE (j)-[:HAS_RUN]->(r)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.mergedRuns(), func(x runRow) map[string]any { return map[string]any{"key": x.key, "jobKey": x.jobKey} })
	},
}

// mergedRuns are the batch's runs that are not new listener runs (newRun).
func (r *rows) mergedRuns() []runRow {
	return slices.DeleteFunc(slices.Clone(r.runs), func(x runRow) bool { return r.newRun(x.key) })
}

// connectParams adds a run's Spark Connect operation to its statement parameters (every value
// null when the run has none, so that the SET keeps what is stored).
func connectParams(row map[string]any, c *events.Connect) {
	if c == nil {
		c = &events.Connect{}
	}
	row["connectUserId"], row["connectUserName"] = stringOrNil(c.UserID), stringOrNil(c.UserName)
	row["connectSessionId"], row["connectOperationId"] = stringOrNil(c.SessionID), stringOrNil(c.OperationID)
	row["connectClientType"] = stringOrNil(c.ClientType)
}

// newRuns creates the listener runs the graph does not hold (existing.go) with their HAS_RUN: a
// listener run is one event, so its first write is all of it (a null property is not stored).
var newRuns = element{
	name:          "new runs",
	nodes:         []string{"Run"},
	relationships: []string{"HAS_RUN"},
	query: `UNWIND $rows AS row
MATCH (j:Job {key: row.jobKey})
CREATE (j)-[:HAS_RUN]->(:Run {key: row.key, appId: row.appId, executionId: row.executionId, funcName: row.funcName, status: row.status,
                              sparkVersion: row.sparkVersion, endedAt: row.endedAt, emittedAt: row.emittedAt, degraded: row.degraded,
                              overBudget: row.overBudget, analyzed: row.analyzed,
                              connectUserId: row.connectUserId, connectUserName: row.connectUserName, connectSessionId: row.connectSessionId,
                              connectOperationId: row.connectOperationId, connectClientType: row.connectClientType})
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(slices.DeleteFunc(slices.Clone(r.runs), func(x runRow) bool { return !r.newRun(x.key) }), func(x runRow) map[string]any {
			var analyzed any
			if x.analyzed {
				analyzed = true
			}
			row := map[string]any{
				"key": x.key, "jobKey": x.jobKey, "appId": stringOrNil(x.appID), "executionId": *x.executionID,
				"funcName": stringOrNil(x.funcName), "status": stringOrNil(x.status), "sparkVersion": stringOrNil(x.sparkVersion),
				"endedAt": timeOrNil(x.endedAt), "emittedAt": timeOrNil(x.emittedAt), "degraded": boolOrNil(x.degraded),
				"overBudget": stringOrNil(x.overBudget), "analyzed": analyzed,
			}
			connectParams(row, x.connect)
			return row
		})
	},
}

// parentRow links an OpenLineage run to its parent run (both are in the runs rows).
type parentRow struct{ run, parent string }

var parents = element{
	name:          "parents",
	relationships: []string{"CHILD_OF"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (p:Run {key: row.parent})
MERGE (r)-[:CHILD_OF]->(p)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.parents, func(x parentRow) map[string]any { return map[string]any{"run": x.run, "parent": x.parent} })
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
		return params(slices.DeleteFunc(slices.Clone(r.reads), func(x readRow) bool { return r.newRun(x.run) }), readParams)
	},
}

// newReads creates the READ of new runs (newRuns).
var newReads = element{
	name:          "new reads",
	relationships: []string{"READ"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
CREATE (r)-[:READ]->(d)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(slices.DeleteFunc(slices.Clone(r.reads), func(x readRow) bool { return !r.newRun(x.run) }), readParams)
	},
}

func readParams(x readRow) map[string]any { return map[string]any{"run": x.run, "dataset": x.dataset} }

// wroteRow links a run to a dataset it wrote; columnLineage is ColumnLineageMissing or "".
type wroteRow struct{ run, dataset, mode, columnLineage string }

var wrote = element{
	name:          "wrote",
	relationships: []string{"WROTE"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
MERGE (r)-[w:WROTE]->(d)
SET w.mode = coalesce(row.mode, w.mode),
    w.columnLineage = row.columnLineage
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(slices.DeleteFunc(slices.Clone(r.wrote), func(x wroteRow) bool { return r.newRun(x.run) }), wroteParams)
	},
}

// newWrote creates the WROTE of new runs (newRuns).
var newWrote = element{
	name:          "new wrote",
	relationships: []string{"WROTE"},
	query: `UNWIND $rows AS row
MATCH (r:Run {key: row.run})
MATCH (d:Dataset {key: row.dataset})
CREATE (r)-[:WROTE {mode: row.mode, columnLineage: row.columnLineage}]->(d)
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(slices.DeleteFunc(slices.Clone(r.wrote), func(x wroteRow) bool { return !r.newRun(x.run) }), wroteParams)
	},
}

func wroteParams(x wroteRow) map[string]any {
	return map[string]any{"run": x.run, "dataset": x.dataset, "mode": stringOrNil(x.mode), "columnLineage": stringOrNil(x.columnLineage)}
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
		return params(r.changed, func(x changedRow) map[string]any {
			return map[string]any{"run": x.run, "dataset": x.dataset, "action": x.action}
		})
	},
}

// run merges the run of an item observed at ts.
func (b *batch) run(it record.Item, jobKey string, ts time.Time) {
	r := newRunRow(it, jobKey, ts)
	if old := b.runs[r.key]; old != nil {
		r = old.merge(r)
	}
	b.runs[r.key] = r
}

// parent merges the link of run to its parent run p, p's job, and p's run when the batch has
// none; then, when p has a root run, the link of p to it in the same way.
func (b *batch) parent(run string, p *record.ParentRun, ts time.Time) {
	job := p.JobNamespace + "/" + p.JobName
	b.job(job, p.JobNamespace, p.JobName, ts)
	b.runs.get(p.RunID, func() *runRow { return &runRow{key: p.RunID, jobKey: job} })
	k := parentRow{run: run, parent: p.RunID}
	b.parents[k] = &k
	if p.Root != nil && p.Root.RunID != p.RunID && p.Root.RunID != run {
		b.parent(p.RunID, p.Root, ts)
	}
}

// read merges the READ of a dataset by run.
func (b *batch) read(run, dataset string) {
	k := readRow{run: run, dataset: dataset}
	b.reads[k] = &k
}

// write merges the WROTE of w by run (the newest item's mode wins).
func (b *batch) write(run string, w *plan.Write, tableLevel bool) {
	x := &wroteRow{run: run, dataset: w.Key, mode: w.Mode}
	if tableLevel {
		x.columnLineage = ColumnLineageMissing
	}
	b.wrote[[2]string{run, w.Key}] = x
}

func (a *runRow) compare(b *runRow) int { return cmp.Compare(a.key, b.key) }
func (a *parentRow) compare(b *parentRow) int {
	return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.parent, b.parent))
}
func (a *readRow) compare(b *readRow) int {
	return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset))
}
func (a *wroteRow) compare(b *wroteRow) int {
	return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset))
}
func (a *changedRow) compare(b *changedRow) int {
	return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.action, b.action))
}

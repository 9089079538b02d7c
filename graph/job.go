package graph

import (
	"cmp"
	"time"
)

// Job: one per Spark application name and namespace (JobKey).
//
//	(:Job {key, namespace, name, firstSeen, lastSeen})

type jobRow struct {
	seen
	key, namespace, name string
}

var jobs = element{
	name:  "jobs",
	nodes: []string{"Job"},
	query: `UNWIND $rows AS row
MERGE (j:Job {key: row.key})
ON MATCH SET j.key = row.key
SET j.namespace = CASE WHEN row.namespace <> '' AND (j.namespace IS NULL OR j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen) THEN row.namespace ELSE j.namespace END,
    j.name = CASE WHEN row.name <> '' AND (j.name IS NULL OR j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen) THEN row.name ELSE j.name END,
    j.firstSeen = CASE WHEN j.firstSeen IS NULL OR row.firstSeen < j.firstSeen THEN row.firstSeen ELSE j.firstSeen END,
    j.lastSeen = CASE WHEN j.lastSeen IS NULL OR j.lastSeen <= row.lastSeen THEN row.lastSeen ELSE j.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.jobs, func(j jobRow) map[string]any {
			return map[string]any{"key": j.key, "namespace": j.namespace, "name": j.name, "firstSeen": j.first, "lastSeen": j.last}
		})
	},
}

// job merges a job observed at ts.
func (b *batch) job(key, namespace, name string, ts time.Time) {
	j := b.jobs.get(key, func() *jobRow { return &jobRow{key: key} })
	win := j.observe(ts)
	j.namespace = newer(win, j.namespace, namespace)
	j.name = newer(win, j.name, name)
}

func (a *jobRow) compare(b *jobRow) int { return cmp.Compare(a.key, b.key) }

package graph

import (
	"cmp"
	"time"

	"github.com/colline/colline/plan"
)

// Dataset: a source or target, keyed by plan's Dataset.Key; DDL marks its newest drop and
// truncation, and a rename links the old identity to the new one.
//
//	(:Dataset {key, namespace, name, kind, location, firstSeen, lastSeen, droppedAt, truncatedAt})
//	(:Dataset)-[:RENAMED_TO {firstSeen, lastSeen, lastRun}]->(:Dataset)

type datasetRow struct {
	seen
	key, namespace, name, kind, location string
	listings                             []listing // of its columns, in item order (schema.go)
	partial                              bool      // some of its columns were named outside a listing (an alter's dropped ones)
}

var datasets = element{
	name:  "datasets",
	nodes: []string{"Dataset"},
	query: `UNWIND $rows AS row
MERGE (d:Dataset {key: row.key})
ON MATCH SET d.key = row.key
SET d.namespace = CASE WHEN row.namespace <> '' AND (d.namespace IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.namespace ELSE d.namespace END,
    d.name = CASE WHEN row.name <> '' AND (d.name IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.name ELSE d.name END,
    d.kind = CASE WHEN row.kind <> '' AND (d.kind IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.kind ELSE d.kind END,
    d.location = CASE WHEN row.location <> '' AND (d.location IS NULL OR d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen) THEN row.location ELSE d.location END,
    d.firstSeen = CASE WHEN d.firstSeen IS NULL OR row.firstSeen < d.firstSeen THEN row.firstSeen ELSE d.firstSeen END,
    d.lastSeen = CASE WHEN d.lastSeen IS NULL OR d.lastSeen <= row.lastSeen THEN row.lastSeen ELSE d.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.datasets, func(d datasetRow) map[string]any {
			return map[string]any{
				"key": d.key, "namespace": d.namespace, "name": d.name, "kind": d.kind, "location": d.location,
				"firstSeen": d.first, "lastSeen": d.last,
			}
		})
	},
}

// markRow records the newest drop and truncation of a dataset (zero: none in the batch).
type markRow struct {
	dataset              string
	droppedAt, truncated time.Time
}

// marks: a dataset exists while droppedAt is absent or older than lastSeen (a later write
// re-created it).
var marks = element{
	name: "marks",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
SET d.droppedAt = CASE WHEN row.droppedAt IS NOT NULL AND (d.droppedAt IS NULL OR d.droppedAt < row.droppedAt) THEN row.droppedAt ELSE d.droppedAt END,
    d.truncatedAt = CASE WHEN row.truncatedAt IS NOT NULL AND (d.truncatedAt IS NULL OR d.truncatedAt < row.truncatedAt) THEN row.truncatedAt ELSE d.truncatedAt END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.marks, func(m markRow) map[string]any {
			return map[string]any{"dataset": m.dataset, "droppedAt": zeroNil(m.droppedAt), "truncatedAt": zeroNil(m.truncated)}
		})
	},
}

type renameRow struct {
	seen
	from, to, lastRun string
}

var renames = element{
	name:          "renames",
	relationships: []string{"RENAMED_TO"},
	query: `UNWIND $rows AS row
MATCH (a:Dataset {key: row.from})
MATCH (b:Dataset {key: row.to})
MERGE (a)-[x:RENAMED_TO]->(b)
SET x.lastRun = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastRun ELSE x.lastRun END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR x.lastSeen <= row.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.renames, func(x renameRow) map[string]any {
			return map[string]any{"from": x.from, "to": x.to, "lastRun": x.lastRun, "firstSeen": x.first, "lastSeen": x.last}
		})
	},
}

// dataset merges a dataset observed at ts, with its columns: a listing of them, when it has any.
func (b *batch) dataset(d *plan.Dataset, ts time.Time) error { return b.observeDataset(d, ts, true) }

// observeDataset merges a dataset observed at ts with its columns, all of them (listing) or some.
func (b *batch) observeDataset(d *plan.Dataset, ts time.Time, listed bool) error {
	r := b.datasets.get(d.Key, func() *datasetRow { return &datasetRow{key: d.Key} })
	if !listed {
		r.partial = true
	} else if len(d.Columns) > 0 {
		l := listing{fingerprint: schemaFingerprint(d), at: ts, columns: make([]string, len(d.Columns))}
		for i, c := range d.Columns {
			l.columns[i] = c.Key
		}
		r.listings = append(r.listings, l)
	}
	win := r.observe(ts)
	r.namespace = newer(win, r.namespace, d.Namespace)
	r.name = newer(win, r.name, d.Name)
	r.kind = newer(win, r.kind, d.Kind)
	r.location = newer(win, r.location, d.Location)
	pos := 0 // the place among the dataset's own columns; a struct field has none
	for _, c := range d.Columns {
		if err := b.column(d, c, pos, ts); err != nil {
			return err
		}
		if c.Parent == "" {
			pos++
		}
	}
	return nil
}

// change merges a DDL change of run observed at ts: the datasets it names, the run's CHANGED, and
// the newest drop or truncation, the columns an alter dropped, or the rename.
func (b *batch) change(c plan.Change, run string, ts time.Time) error {
	for _, d := range []*plan.Dataset{&c.Dataset, c.To, c.From} {
		if d == nil {
			continue
		}
		if err := b.dataset(d, ts); err != nil {
			return err
		}
	}
	if run != "" {
		k := changedRow{run: run, dataset: c.Dataset.Key, action: c.Action}
		b.changed[k] = &k
	}
	m := b.marks.get(c.Dataset.Key, func() *markRow { return &markRow{dataset: c.Dataset.Key} })
	switch c.Action {
	case plan.ChangeDrop:
		if ts.After(m.droppedAt) {
			m.droppedAt = ts
		}
	case plan.ChangeTruncate:
		if ts.After(m.truncated) {
			m.truncated = ts
		}
	case plan.ChangeAlter:
		// the dataset's columns came with it; the dropped ones exist until then
		for _, col := range c.Dropped {
			d := plan.Dataset{Key: c.Dataset.Key, Columns: []plan.Column{col}}
			if err := b.observeDataset(&d, ts, false); err != nil {
				return err
			}
			b.columnDrop(col.Key, ts)
		}
	case plan.ChangeRename:
		x := b.renames.get([2]string{c.Dataset.Key, c.To.Key}, func() *renameRow { return &renameRow{from: c.Dataset.Key, to: c.To.Key} })
		if x.observe(ts) {
			x.lastRun = run
		}
	}
	return nil
}

func (a *datasetRow) compare(b *datasetRow) int { return cmp.Compare(a.key, b.key) }
func (a *markRow) compare(b *markRow) int       { return cmp.Compare(a.dataset, b.dataset) }

// none reports a mark of neither a drop nor a truncation (a rename, an alter, a load): no row.
func (m markRow) none() bool { return m.droppedAt.IsZero() && m.truncated.IsZero() }

func (a *renameRow) compare(b *renameRow) int {
	return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
}

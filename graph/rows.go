package graph

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/colline/colline/record"
)

// rows is one batch turned into deduplicated, key-sorted rows, one slice per statement.
type rows struct {
	jobs     []jobRow
	datasets []datasetRow
	columns  []columnRow
	runs     []runRow
	reads    []readRow
	wrote    []wroteRow
	versions []versionRow // each (job, dataset) with what the batch's items showed of it
	marks    []markRow
	colMarks []columnMarkRow
	renames  []renameRow
	changed  []changedRow
	parents  []parentRow

	// listenerRuns are the keys of the runs of listener events (one event each).
	listenerRuns map[string]bool
	// Set by existing (existing.go): the listener runs and columns of the batch the graph holds.
	oldRuns, oldColumns map[string]bool

	// Set by decideSchemas (schema.go) from the datasets' listings and stored schemas: the
	// datasets whose columns the batch does not write, the columns it makes current (their
	// fingerprint), the schemas to supersede and to write.
	confirmed       map[string]bool
	current         map[string]string
	supersedeSchema []supersedeSchemaRow
	schemas         []schemaUpdate

	// Set by decide (version.go) from the versions and the stored LINEAGEs.
	supersede []supersedeRow
	feeds     []lineageRow
	decides   []lineageRow
	lineages  []lineageUpdate
}

// seen is the time span over which an element was observed in a batch.
type seen struct{ first, last time.Time }

// observe widens s to t and reports whether t is at least as new as anything seen so far, i.e.
// whether the observation's properties win (ties go to the later observation, as in Neo4j).
func (s *seen) observe(t time.Time) bool {
	if s.first.IsZero() || t.Before(s.first) {
		s.first = t
	}
	if s.last.IsZero() || !t.Before(s.last) {
		s.last = t
		return true
	}
	return false
}

// newer returns v if it is not empty and the observation wins or nothing is known yet, else old:
// an unknown value never erases a known one, and a known one fills a gap even from an older event.
// The Cypher statements apply the same rule.
func newer(win bool, old, v string) string {
	if v != "" && (win || old == "") {
		return v
	}
	return old
}

// batch is a batch of items being merged into rows: for each kind of element, its rows by the key
// its statement merges on, so that an element met twice is one row. Each element's file holds its
// merge step (job, dataset, column, change, run, parent, read, write; versions for the lineage
// of each (job, dataset): its FEEDS and DECIDES_ROWS).
type batch struct {
	jobs     set[string, jobRow]
	datasets set[string, datasetRow]
	columns  set[string, columnRow]
	runs     set[string, runRow]
	parents  set[parentRow, parentRow]
	reads    set[readRow, readRow]
	wrote    set[[2]string, wroteRow]   // (run, dataset)
	lineages set[[2]string, versionRow] // (job, dataset)
	marks    set[string, markRow]
	colMarks set[string, columnMarkRow]
	renames  set[[2]string, renameRow] // (from, to)
	changed  set[changedRow, changedRow]
}

// set holds the rows of one kind of element in a batch.
type set[K comparable, R any] map[K]*R

// get returns the row of key k, adding fresh() when there is none.
func (s set[K, R]) get(k K, fresh func() *R) *R {
	r, ok := s[k]
	if !ok {
		r = fresh()
		s[k] = r
	}
	return r
}

// sorted returns the rows in the order of compare.
func (s set[K, R]) sorted(compare func(a, b *R) int) []R {
	ptrs := slices.SortedFunc(maps.Values(s), compare)
	out := make([]R, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

// buildRows checks the items (record.Check: a no-op for those a processing step checked) and
// merges them into rows. Items are applied in order; for equal times the later item wins, exactly
// as if they were written one after the other. The lineage rows are decided as for an empty
// graph; the writer decides them again from the LINEAGEs it reads.
func buildRows(items []record.Item) (*rows, error) {
	b := &batch{
		jobs: set[string, jobRow]{}, datasets: set[string, datasetRow]{}, columns: set[string, columnRow]{},
		runs: set[string, runRow]{}, parents: set[parentRow, parentRow]{}, reads: set[readRow, readRow]{},
		wrote: set[[2]string, wroteRow]{}, lineages: set[[2]string, versionRow]{},
		marks: set[string, markRow]{}, colMarks: set[string, columnMarkRow]{}, renames: set[[2]string, renameRow]{},
		changed: set[changedRow, changedRow]{},
	}
	for i, it := range items {
		if err := b.add(it); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
	}
	r := b.rows()
	r.listenerRuns = map[string]bool{}
	for _, x := range r.runs {
		if x.listener() {
			r.listenerRuns[x.key] = true
		}
	}
	r.decide(nil)
	r.decideSchemas(nil)
	return r, nil
}

// add merges one item: its job and run (with the run's parent), the datasets it read, wrote and
// changed with their columns, and its column edges and row-level dependencies.
func (b *batch) add(it record.Item) error {
	if err := record.Check(&it); err != nil {
		return err
	}
	lin := it.Lineage
	ts, _ := it.Time() // checked above
	jk, jns, jname := it.Job()
	run := it.Run() // "" for an OpenLineage JobEvent or DatasetEvent
	b.job(jk, jns, jname, ts)
	if run != "" {
		b.run(it, jk, ts)
	}
	if p := it.Parent(); p != nil {
		b.parent(run, p, ts)
	}
	for k := range lin.Reads {
		if err := b.dataset(&lin.Reads[k], ts); err != nil {
			return err
		}
		if run != "" {
			b.read(run, lin.Reads[k].Key)
		}
	}
	for k := range lin.Writes {
		w := &lin.Writes[k]
		if err := b.dataset(&w.Dataset, ts); err != nil {
			return err
		}
		if run != "" {
			b.write(run, w, lin.TableLevel())
		}
	}
	for _, c := range lin.Changes {
		if err := b.change(c, run, ts); err != nil {
			return err
		}
	}
	b.versions(lin, jk, run, ts)
	return nil
}

// rows sorts each kind of element by its key.
func (b *batch) rows() *rows {
	return &rows{
		jobs:     b.jobs.sorted((*jobRow).compare),
		datasets: b.datasets.sorted((*datasetRow).compare),
		columns:  b.columns.sorted((*columnRow).compare),
		runs:     b.runs.sorted((*runRow).compare),
		parents:  b.parents.sorted((*parentRow).compare),
		reads:    b.reads.sorted((*readRow).compare),
		wrote:    b.wrote.sorted((*wroteRow).compare),
		versions: b.lineages.sorted((*versionRow).compare),
		marks:    slices.DeleteFunc(b.marks.sorted((*markRow).compare), markRow.none),
		colMarks: b.colMarks.sorted((*columnMarkRow).compare),
		renames:  b.renames.sorted((*renameRow).compare),
		changed:  b.changed.sorted((*changedRow).compare),
	}
}

// params are the parameters of a statement: one map of scalars and lists per row.
func params[R any](rows []R, row func(R) map[string]any) []map[string]any {
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		out = append(out, row(r))
	}
	return out
}

func parseTime(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}

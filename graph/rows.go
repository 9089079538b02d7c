package graph

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/colline/colline/plan"
)

// rows is one batch turned into deduplicated, key-sorted rows, one slice per statement.
type rows struct {
	jobs     []jobRow
	datasets []datasetRow
	columns  []columnRow
	runs     []runRow
	reads    []readRow
	wrote    []wroteRow
	feeds    []feedRow
	decides  []decideRow
	marks    []markRow
	colMarks []columnMarkRow
	renames  []renameRow
	changed  []changedRow
	parents  []parentRow
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

// buildRows validates the items and merges them into rows. Items are applied in order; for equal
// times the later item wins, exactly as if they were written one after the other.
func buildRows(items []Item) (*rows, error) {
	jobs := map[string]*jobRow{}
	datasets := map[string]*datasetRow{}
	columns := map[string]*columnRow{}
	runs := map[string]*runRow{}
	reads := map[readRow]bool{}
	wrote := map[[2]string]*wroteRow{}
	feeds := map[[3]string]*feedRow{}
	decides := map[[3]string]*decideRow{}
	marks := map[string]*markRow{}
	colMarks := map[string]*columnMarkRow{}
	renames := map[[2]string]*renameRow{}
	changed := map[changedRow]bool{}
	parents := map[[2]string]bool{} // (run, parent run)

	for i, it := range items {
		if err := Check(it); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		lin := it.Lineage
		ts, _ := it.Time() // checked above
		jk, jns, jname := it.Job()
		run := it.Run() // "" for an OpenLineage JobEvent or DatasetEvent

		j := jobs[jk]
		if j == nil {
			j = &jobRow{key: jk}
			jobs[jk] = j
		}
		win := j.observe(ts)
		j.namespace = newer(win, j.namespace, jns)
		j.name = newer(win, j.name, jname)

		if run != "" {
			r := newRunRow(it, jk, ts)
			if old := runs[run]; old != nil {
				r = old.merge(r)
			}
			runs[run] = r
		}
		if p := parentOf(it); p != nil {
			pk := p.JobNamespace + "/" + p.JobName
			pj := jobs[pk]
			if pj == nil {
				pj = &jobRow{key: pk}
				jobs[pk] = pj
			}
			win := pj.observe(ts)
			pj.namespace = newer(win, pj.namespace, p.JobNamespace)
			pj.name = newer(win, pj.name, p.JobName)
			if runs[p.RunID] == nil {
				runs[p.RunID] = &runRow{key: p.RunID, jobKey: pk}
			}
			parents[[2]string{run, p.RunID}] = true
		}

		addDataset := func(d *plan.Dataset) error {
			r := datasets[d.Key]
			if r == nil {
				r = &datasetRow{key: d.Key}
				datasets[d.Key] = r
			}
			win := r.observe(ts)
			r.namespace = newer(win, r.namespace, d.Namespace)
			r.name = newer(win, r.name, d.Name)
			r.kind = newer(win, r.kind, d.Kind)
			r.location = newer(win, r.location, d.Location)
			pos := 0 // the place among the dataset's own columns; a struct field has none
			for _, c := range d.Columns {
				cr := columns[c.Key]
				if cr == nil {
					cr = &columnRow{key: c.Key, datasetKey: d.Key, position: -1}
					columns[c.Key] = cr
				}
				if cr.datasetKey != d.Key {
					return fmt.Errorf("%w: column %q is listed under datasets %q and %q", ErrInvalidItem, c.Key, cr.datasetKey, d.Key)
				}
				win := cr.observe(ts)
				cr.name = newer(win, cr.name, c.Name)
				cr.table = newer(win, cr.table, d.Name)
				cr.dataType = newer(win, cr.dataType, c.Type)
				cr.parent = newer(win, cr.parent, c.Parent)
				if c.Parent == "" {
					if win || cr.position < 0 {
						cr.position = pos
					}
					pos++
				}
			}
			return nil
		}
		for k := range lin.Reads {
			if err := addDataset(&lin.Reads[k]); err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if run != "" {
				reads[readRow{run: run, dataset: lin.Reads[k].Key}] = true
			}
		}
		for k := range lin.Writes {
			w := &lin.Writes[k]
			if err := addDataset(&w.Dataset); err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if run != "" {
				wr := &wroteRow{run: run, dataset: w.Key, mode: w.Mode}
				if lin.TableLevel() {
					wr.columnLineage = ColumnLineageMissing
				}
				wrote[[2]string{run, w.Key}] = wr
			}
		}

		for _, c := range lin.Changes {
			for _, d := range []*plan.Dataset{&c.Dataset, c.To, c.From} {
				if d == nil {
					continue
				}
				if err := addDataset(d); err != nil {
					return nil, fmt.Errorf("item %d: %w", i, err)
				}
			}
			if run != "" {
				changed[changedRow{run: run, dataset: c.Dataset.Key, action: c.Action}] = true
			}
			m := marks[c.Dataset.Key]
			if m == nil {
				m = &markRow{dataset: c.Dataset.Key}
				marks[c.Dataset.Key] = m
			}
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
				// the dataset's columns came with it (addDataset); the dropped ones exist until then
				for _, col := range c.Dropped {
					d := plan.Dataset{Key: c.Dataset.Key, Columns: []plan.Column{col}}
					if err := addDataset(&d); err != nil {
						return nil, fmt.Errorf("item %d: %w", i, err)
					}
					cm := colMarks[col.Key]
					if cm == nil {
						cm = &columnMarkRow{column: col.Key}
						colMarks[col.Key] = cm
					}
					if ts.After(cm.droppedAt) {
						cm.droppedAt = ts
					}
				}
			case plan.ChangeRename:
				rk := [2]string{c.Dataset.Key, c.To.Key}
				rn := renames[rk]
				if rn == nil {
					rn = &renameRow{from: c.Dataset.Key, to: c.To.Key}
					renames[rk] = rn
				}
				if rn.observe(ts) {
					rn.lastRun = run
				}
			}
		}

		for _, e := range lin.Edges {
			fk := [3]string{e.Source, e.Target, jk}
			f := feeds[fk]
			if f == nil {
				f = &feedRow{source: e.Source, target: e.Target, job: jk}
				feeds[fk] = f
			}
			if f.observe(ts) {
				f.ts, f.lastRun = e.Transformations, run
			}
		}
		for _, e := range lin.RowDeps {
			fk := [3]string{e.Source, e.Target, jk}
			x := decides[fk]
			if x == nil {
				x = &decideRow{source: e.Source, dataset: e.Target, job: jk}
				decides[fk] = x
			}
			if x.observe(ts) {
				x.ts, x.lastRun = e.Transformations, run
			}
		}
	}

	r := &rows{
		jobs:     sortedValues(jobs, func(a, b *jobRow) int { return cmp.Compare(a.key, b.key) }),
		datasets: sortedValues(datasets, func(a, b *datasetRow) int { return cmp.Compare(a.key, b.key) }),
		columns:  sortedValues(columns, func(a, b *columnRow) int { return cmp.Compare(a.key, b.key) }),
		runs:     sortedValues(runs, func(a, b *runRow) int { return cmp.Compare(a.key, b.key) }),
		wrote: sortedValues(wrote, func(a, b *wroteRow) int {
			return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset))
		}),
		feeds: sortedValues(feeds, func(a, b *feedRow) int {
			return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.target, b.target), cmp.Compare(a.job, b.job))
		}),
		decides: sortedValues(decides, func(a, b *decideRow) int {
			return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.job, b.job))
		}),
	}
	for _, m := range marks {
		if !m.droppedAt.IsZero() || !m.truncated.IsZero() {
			r.marks = append(r.marks, *m)
		}
	}
	slices.SortFunc(r.marks, func(a, b markRow) int { return cmp.Compare(a.dataset, b.dataset) })
	r.colMarks = sortedValues(colMarks, func(a, b *columnMarkRow) int { return cmp.Compare(a.column, b.column) })
	r.renames = sortedValues(renames, func(a, b *renameRow) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	for k := range changed {
		r.changed = append(r.changed, k)
	}
	slices.SortFunc(r.changed, func(a, b changedRow) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.action, b.action))
	})
	for k := range parents {
		r.parents = append(r.parents, parentRow{run: k[0], parent: k[1]})
	}
	slices.SortFunc(r.parents, func(a, b parentRow) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.parent, b.parent))
	})
	for k := range reads {
		r.reads = append(r.reads, k)
	}
	slices.SortFunc(r.reads, func(a, b readRow) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.dataset, b.dataset))
	})
	return r, nil
}

func sortedValues[K comparable, V any](m map[K]*V, less func(a, b *V) int) []V {
	ptrs := make([]*V, 0, len(m))
	for _, v := range m {
		ptrs = append(ptrs, v)
	}
	slices.SortFunc(ptrs, less)
	out := make([]V, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
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

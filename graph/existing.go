package graph

import (
	"context"
	"fmt"
	"time"
)

// newRun reports whether key is a listener run of the batch that the graph does not hold: it is
// created (newRuns) with its READ and WROTE (newReads, newWrote). Before existing ran (Preview,
// an empty graph) none is held.
func (r *rows) newRun(key string) bool { return r.listenerRuns[key] && !r.oldRuns[key] }

// existing reads which of the batch's listener runs and columns the graph holds, so that the
// others are created with their relationships (newRuns, newReads, newWrote, newColumns) rather
// than merged, and the stored schema of each dataset the batch lists the columns of, from which
// the writer decides which columns it writes (schema.go). A listener run is one event, and its
// job is locked by this transaction (the jobs statement); a dataset is locked likewise (the
// datasets statement), and so are its columns and schema: whatever another writer creates or
// changes of them, it does before this read or after this commit.
var existing = element{
	name:  "existing",
	query: existingQuery,
	rows:  func(r *rows) []map[string]any { return nil },
	read:  readExisting,
}

// The columns of a dataset whose every listing in the batch has its stored fingerprint (only)
// exist: they were written when it became current, and columns are never deleted.
const existingQuery = `RETURN [k IN $runs WHERE EXISTS { MATCH (:Run {key: k}) }] AS runs,
       [x IN $datasets | head(COLLECT {
         MATCH (d:Dataset {key: x.key})
         RETURN {key: x.key, schema: d.schema, since: d.schemaSince, seen: d.schemaSeen,
                 columns: CASE WHEN x.only IS NOT NULL AND d.schema = x.only THEN x.columns
                               ELSE [k IN x.columns WHERE EXISTS { MATCH (:Column {key: k}) }] END}
       })] AS datasets`

func readExisting(ctx context.Context, tx runner, r *rows, prefix string, observe observer) error {
	var runs []string
	for _, x := range r.runs {
		if x.listener() {
			runs = append(runs, x.key)
		}
	}
	columns := map[string][]any{} // dataset → its own columns' keys (fields are merged)
	for _, c := range r.columns {
		if c.parent == "" {
			columns[c.datasetKey] = append(columns[c.datasetKey], c.key)
		}
	}
	var datasets []map[string]any
	n := len(runs)
	for _, d := range r.datasets {
		if len(d.listings) == 0 && len(columns[d.key]) == 0 {
			continue
		}
		var only any // the one fingerprint of the batch's listings of d, if it has one and nothing else
		if len(d.listings) > 0 && !d.partial {
			only = d.listings[0].fingerprint
			for _, l := range d.listings {
				if l.fingerprint != only {
					only = nil
					break
				}
			}
		}
		datasets = append(datasets, map[string]any{"key": d.key, "only": only, "columns": columns[d.key]})
		n += 1 + len(columns[d.key])
	}
	r.oldRuns, r.oldColumns = map[string]bool{}, map[string]bool{}
	if len(runs)+len(datasets) == 0 {
		r.decideSchemas(nil)
		return nil
	}
	recs, err := collect(ctx, tx, "existing", prefix+keepPlan+existingQuery, map[string]any{"runs": runs, "datasets": datasets}, n, observe)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return fmt.Errorf("%w: statement existing returned %d records", errRowCount, len(recs))
	}
	keys, _ := get[[]any](recs[0], "runs")
	for _, x := range keys {
		if s, ok := x.(string); ok {
			r.oldRuns[s] = true
		}
	}
	states := map[string]schemaState{}
	ds, _ := get[[]any](recs[0], "datasets")
	for _, x := range ds {
		m, ok := x.(map[string]any)
		if !ok {
			continue // a dataset the graph does not hold: nothing stored, no column exists
		}
		key, _ := m["key"].(string)
		st := schemaState{}
		st.fingerprint, _ = m["schema"].(string)
		for k, t := range map[string]*time.Time{"since": &st.since, "seen": &st.seen} {
			if v, ok := m[k].(time.Time); ok {
				*t = v.UTC()
			}
		}
		states[key] = st
		cols, _ := m["columns"].([]any)
		for _, c := range cols {
			if s, ok := c.(string); ok {
				r.oldColumns[s] = true
			}
		}
	}
	r.decideSchemas(states)
	return nil
}

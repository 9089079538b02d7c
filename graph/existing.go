package graph

import (
	"context"
	"fmt"
)

// newRun reports whether key is a listener run of the batch that the graph does not hold: it is
// created (newRuns) with its READ and WROTE (newReads, newWrote). Before existing ran (Preview,
// an empty graph) none is held.
func (r *rows) newRun(key string) bool { return r.listenerRuns[key] && !r.oldRuns[key] }

// existing reads which of the batch's listener runs and columns the graph holds, so that the
// others are created with their relationships (newRuns, newReads, newWrote, newColumns) rather
// than merged. A listener run is one event, and its job is locked by this transaction (the jobs
// statement); a column's dataset is locked likewise (the datasets statement): whatever another
// writer creates of them, it creates before this read or after this commit.
var existing = element{
	name:  "existing",
	query: existingQuery,
	rows:  func(r *rows) []map[string]any { return nil },
	read:  readExisting,
}

const existingQuery = `RETURN [k IN $runs WHERE EXISTS { MATCH (:Run {key: k}) }] AS runs,
       [k IN $columns WHERE EXISTS { MATCH (:Column {key: k}) }] AS columns`

func readExisting(ctx context.Context, tx runner, r *rows, prefix string, observe observer) error {
	var runs, columns []string
	for _, x := range r.runs {
		if x.listener() {
			runs = append(runs, x.key)
		}
	}
	for _, c := range r.columns {
		if c.parent == "" {
			columns = append(columns, c.key)
		}
	}
	r.oldRuns, r.oldColumns = map[string]bool{}, map[string]bool{}
	if len(runs)+len(columns) == 0 {
		return nil
	}
	recs, err := collect(ctx, tx, "existing", prefix+keepPlan+existingQuery, map[string]any{"runs": runs, "columns": columns}, len(runs)+len(columns), observe)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return fmt.Errorf("%w: statement existing returned %d records", errRowCount, len(recs))
	}
	for k, m := range map[string]map[string]bool{"runs": r.oldRuns, "columns": r.oldColumns} {
		keys, _ := get[[]any](recs[0], k)
		for _, x := range keys {
			if s, ok := x.(string); ok {
				m[s] = true
			}
		}
	}
	return nil
}

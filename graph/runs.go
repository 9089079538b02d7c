package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"
)

// The runs of a Spark application, or under a scheduler's run, with what they did: the question a
// scheduler asks after it launched a Spark application (by its application id) or ran a task
// (by its own job and run, which the listener records as the parent of every run: CHILD_OF).

// MaxRunsDepth bounds the CHILD_OF steps from a parent run down to the runs under it: a DAG run,
// its tasks' runs, an application's runs.
const MaxRunsDepth = 4

// RunQuery selects runs: those of one Spark application (App, its spark.app.id), or those under
// one parent run (Parent, its run id: every run CHILD_OF it, directly or through runs between,
// at most MaxRunsDepth steps; ParentJob, when set, is the job the parent must belong to).
// Exactly one of App and Parent is set. Limit bounds the runs returned (default 100).
type RunQuery struct {
	App       string
	Parent    string
	ParentJob string
	Limit     int
}

// RunSet is what a set of runs did. Runs are the runs, oldest first, at most the query's Limit
// (Truncated: there were more); Reads and Writes the datasets they read and wrote; Edges the
// column lineage into what they wrote: every FEEDS and DECIDES_ROWS of their jobs into a dataset
// one of them wrote, from a dataset that run read. The graph keeps lineage per job, not per run,
// so an edge that another run of the same job made into the same dataset from the same inputs is
// there too (its lastRun says which run showed it last).
type RunSet struct {
	App       string    `json:"app,omitempty"`
	Parent    *RunRef   `json:"parent,omitempty"`
	Runs      []RunInfo `json:"runs"`
	Truncated bool      `json:"truncated"`
	Reads     []string  `json:"reads"`
	Writes    []string  `json:"writes"`
	Edges     []Edge    `json:"edges"`
}

// RunRef names a run and its job.
type RunRef struct {
	Key string `json:"key"`
	Job string `json:"job"`
}

// Runs answers a RunQuery. An application or parent run the graph does not know is an error
// wrapping ErrNotFound.
func (r *Reader) Runs(ctx context.Context, q RunQuery) (*RunSet, error) {
	if (q.App == "") == (q.Parent == "") {
		return nil, errors.New("graph runs: give an application id or a parent run, one of the two")
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	out := &RunSet{App: q.App, Runs: []RunInfo{}, Reads: []string{}, Writes: []string{}, Edges: []Edge{}}
	what := "application " + q.App
	match := `MATCH (r:Run {appId: $app})`
	if q.Parent != "" {
		what = "parent run " + q.Parent
		p, err := r.query(ctx, `MATCH (j:Job)-[:HAS_RUN]->(p:Run {key: $key}) RETURN p.key AS key, j.key AS job`, map[string]any{"key": q.Parent})
		if err != nil {
			return nil, fmt.Errorf("graph runs of %s: %w", what, err)
		}
		if len(p.Records) == 0 {
			return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		out.Parent = &RunRef{}
		out.Parent.Key, _ = get[string](p.Records[0], "key")
		out.Parent.Job, _ = get[string](p.Records[0], "job")
		if q.ParentJob != "" && q.ParentJob != out.Parent.Job {
			return nil, fmt.Errorf("%s is a run of job %s, not of %s: %w", what, out.Parent.Job, q.ParentJob, ErrNotFound)
		}
		match = fmt.Sprintf(`MATCH (:Run {key: $parent})<-[:CHILD_OF*1..%d]-(r:Run)`, MaxRunsDepth)
	}
	res, err := r.query(ctx, match+`
WITH DISTINCT r
MATCH (j:Job)-[:HAS_RUN]->(r)
WITH j, r ORDER BY coalesce(r.endedAt, r.emittedAt, r.startedAt), r.key LIMIT $n
RETURN `+runFields, map[string]any{"app": q.App, "parent": q.Parent, "n": int64(q.Limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("graph runs of %s: %w", what, err)
	}
	if len(res.Records) == 0 && q.App != "" {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	keys := []string{}
	reads, writes := map[string]bool{}, map[string]bool{}
	for i, rec := range res.Records {
		if i == q.Limit {
			out.Truncated = true
			break
		}
		ri := runInfo(rec)
		out.Runs = append(out.Runs, ri)
		keys = append(keys, ri.Key)
		for _, d := range ri.Reads {
			reads[d] = true
		}
		for _, d := range ri.Writes {
			writes[d] = true
		}
	}
	out.Reads, out.Writes = sortedKeys(reads), sortedKeys(writes)
	edges, err := r.query(ctx, `UNWIND $runs AS key
MATCH (j:Job)-[:HAS_RUN]->(r:Run {key: key})-[:WROTE]->(d:Dataset)
CALL (j, r, d) {
  MATCH (s:Column)-[rel:FEEDS {job: j.key}]->(t:Column {datasetKey: d.key})
  WHERE EXISTS { (r)-[:READ]->(:Dataset {key: s.datasetKey}) }
  RETURN 'FEEDS' AS kind, s.key AS source, t.key AS target, rel
  UNION
  MATCH (s:Column)-[rel:DECIDES_ROWS {job: j.key}]->(d)
  WHERE EXISTS { (r)-[:READ]->(:Dataset {key: s.datasetKey}) }
  RETURN 'DECIDES_ROWS' AS kind, s.key AS source, d.key AS target, rel
}
RETURN DISTINCT kind, source, target, rel`, map[string]any{"runs": keys})
	if err != nil {
		return nil, fmt.Errorf("graph lineage of the runs of %s: %w", what, err)
	}
	seen := map[string]bool{} // a relationship met through several runs is one edge
	for _, rec := range edges.Records {
		rel, _ := get[dbtype.Relationship](rec, "rel")
		if !seen[rel.ElementId] {
			seen[rel.ElementId] = true
			out.Edges = append(out.Edges, *edgeOf(rec))
		}
	}
	SortEdges(out.Edges)
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ParseParent reads a parent run as a user names it: its run id, or <namespace>/<job>/<runId>
// (the job's namespace and name as the scheduler passed them, then the run id after the last
// slash; a namespace may hold slashes itself, a run id does not). The graph keys runs by run id
// and jobs by namespace/name, so it returns the run id and the job key ("" when not given).
func ParseParent(s string) (runID, jobKey string) {
	i := strings.LastIndex(s, "/")
	if i < 0 {
		return s, ""
	}
	return s[i+1:], s[:i]
}

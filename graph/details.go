package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"
)

// DatasetDetail is a dataset with its columns and the jobs that read and write it.
type DatasetDetail struct {
	DatasetInfo
	Columns []ColumnInfo `json:"columns"`
	Writers []string     `json:"writers"` // job keys
	Readers []string     `json:"readers"`
}

// Dataset returns the dataset key with its columns (sorted by name), or an error wrapping
// ErrNotFound.
func (r *Reader) Dataset(ctx context.Context, key string) (*DatasetDetail, error) {
	res, err := r.query(ctx, `MATCH (d:Dataset {key: $key})
RETURN d,
  COLLECT { MATCH (d)-[:HAS_COLUMN]->(c:Column) RETURN c ORDER BY c.name } AS columns,
  COLLECT { MATCH (j:Job)-[:HAS_RUN]->(:Run)-[:WROTE]->(d) RETURN DISTINCT j.key AS k ORDER BY k } AS writers,
  COLLECT { MATCH (j:Job)-[:HAS_RUN]->(:Run)-[:READ]->(d) RETURN DISTINCT j.key AS k ORDER BY k } AS readers`, map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph dataset %q: %w", key, err)
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("dataset %q: %w", key, ErrNotFound)
	}
	rec := res.Records[0]
	d, _ := get[dbtype.Node](rec, "d")
	out := &DatasetDetail{DatasetInfo: datasetInfo(d.Props), Columns: []ColumnInfo{}}
	cols, _ := get[[]any](rec, "columns")
	for _, c := range cols {
		if n, ok := c.(dbtype.Node); ok {
			ci := columnInfo(n.Props, d.Props, 0)
			ci.Dataset = out.Key
			out.Columns = append(out.Columns, ci)
		}
	}
	out.Writers = stringList(rec.Values[2])
	out.Readers = stringList(rec.Values[3])
	return out, nil
}

// ColumnDetail is a column with its dataset and the jobs that write it.
type ColumnDetail struct {
	ColumnInfo
	DatasetInfo DatasetInfo `json:"datasetInfo"`
	Writers     []string    `json:"writers"` // jobs of the FEEDS into it and the DECIDES_ROWS into its dataset
}

// Column returns the column key, or an error wrapping ErrNotFound.
func (r *Reader) Column(ctx context.Context, key string) (*ColumnDetail, error) {
	res, err := r.query(ctx, `MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column {key: $key})
RETURN c, d, COLLECT {
  MATCH (:Column)-[f:FEEDS]->(c) RETURN f.job AS job
  UNION
  MATCH (:Column)-[f:DECIDES_ROWS]->(d) RETURN f.job AS job
} AS writers`, map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph column %q: %w", key, err)
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("column %q: %w", key, ErrNotFound)
	}
	rec := res.Records[0]
	c, _ := get[dbtype.Node](rec, "c")
	d, _ := get[dbtype.Node](rec, "d")
	out := &ColumnDetail{ColumnInfo: columnInfo(c.Props, d.Props, 0), DatasetInfo: datasetInfo(d.Props)}
	out.Dataset = out.DatasetInfo.Key
	out.Writers = stringList(rec.Values[2])
	slices.Sort(out.Writers)
	return out, nil
}

// RunInfo is one run of a job.
type RunInfo struct {
	Key          string     `json:"key"`
	Job          string     `json:"job"`
	AppID        string     `json:"appId"`
	ExecutionID  int64      `json:"executionId"`
	FuncName     string     `json:"funcName,omitempty"`
	Status       string     `json:"status"`
	SparkVersion string     `json:"sparkVersion,omitempty"`
	EndedAt      *time.Time `json:"endedAt,omitempty"`
	EmittedAt    *time.Time `json:"emittedAt,omitempty"`
	Reads        []string   `json:"reads"`
	Writes       []string   `json:"writes"`
	// Parent is the run this one is CHILD_OF: an OpenLineage run's parent, or the scheduler's
	// run a listener event named (spark.openlineage.parentRunId, spark.colline.parent.runId).
	Parent *RunRef `json:"parent,omitempty"`
	// Connect is the Spark Connect operation that ran the execution: who, as the client said it.
	Connect *RunConnect `json:"connect,omitempty"`
}

// RunConnect is the Spark Connect operation of a run (events.Connect as stored). The user id
// is what the client sent: Spark Connect does not authenticate it.
type RunConnect struct {
	UserID      string `json:"userId"`
	UserName    string `json:"userName,omitempty"`
	SessionID   string `json:"sessionId"`
	OperationID string `json:"operationId,omitempty"`
	ClientType  string `json:"clientType,omitempty"`
}

const runFields = `r, j.key AS job,
  COLLECT { MATCH (r)-[:READ]->(d:Dataset) RETURN d.key AS k ORDER BY k } AS reads,
  COLLECT { MATCH (r)-[:WROTE]->(d:Dataset) RETURN d.key AS k ORDER BY k } AS writes,
  COLLECT { MATCH (r)-[:CHILD_OF]->(p:Run)<-[:HAS_RUN]-(pj:Job) RETURN [p.key, pj.key] AS x ORDER BY x LIMIT 1 } AS parent`

func runInfo(rec interface{ Get(string) (any, bool) }) RunInfo {
	v, _ := rec.Get("r")
	n, _ := v.(dbtype.Node)
	p := n.Props
	ri := RunInfo{Key: str(p, "key"), AppID: str(p, "appId"), FuncName: str(p, "funcName"), Status: str(p, "status"),
		SparkVersion: str(p, "sparkVersion"), EndedAt: timeProp(p, "endedAt"), EmittedAt: timeProp(p, "emittedAt")}
	ri.ExecutionID, _ = p["executionId"].(int64)
	j, _ := rec.Get("job")
	ri.Job, _ = j.(string)
	reads, _ := rec.Get("reads")
	writes, _ := rec.Get("writes")
	ri.Reads, ri.Writes = stringList(reads), stringList(writes)
	parent, _ := rec.Get("parent")
	if ps, _ := parent.([]any); len(ps) == 1 {
		if x := stringList(ps[0]); len(x) == 2 {
			ri.Parent = &RunRef{Key: x[0], Job: x[1]}
		}
	}
	if u := str(p, "connectUserId"); u != "" {
		ri.Connect = &RunConnect{UserID: u, UserName: str(p, "connectUserName"), SessionID: str(p, "connectSessionId"),
			OperationID: str(p, "connectOperationId"), ClientType: str(p, "connectClientType")}
	}
	return ri
}

// Run returns the run key, or an error wrapping ErrNotFound.
func (r *Reader) Run(ctx context.Context, key string) (*RunInfo, error) {
	res, err := r.query(ctx, `MATCH (j:Job)-[:HAS_RUN]->(r:Run {key: $key}) RETURN `+runFields, map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph run %q: %w", key, err)
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("run %q: %w", key, ErrNotFound)
	}
	ri := runInfo(res.Records[0])
	return &ri, nil
}

// JobDetail is a job: its newest runs, what it reads and writes over all its runs, and how many
// runs ended in each status.
type JobDetail struct {
	Key       string           `json:"key"`
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	FirstSeen *time.Time       `json:"firstSeen,omitempty"`
	LastSeen  *time.Time       `json:"lastSeen,omitempty"`
	RunCount  int64            `json:"runCount"`
	Statuses  map[string]int64 `json:"statuses"` // runs per status, over all runs
	Runs      []RunInfo        `json:"runs"`     // the newest, newest first
	Reads     []Access         `json:"reads"`
	Writes    []Access         `json:"writes"`
}

// Access is a dataset a job reads or writes, over all its runs.
type Access struct {
	Dataset string     `json:"dataset"`
	Runs    int64      `json:"runs"`
	Last    *time.Time `json:"last,omitempty"` // the newest run's end
}

// Job returns the job key with its newest runs (at most runs), or an error wrapping ErrNotFound.
func (r *Reader) Job(ctx context.Context, key string, runs int) (*JobDetail, error) {
	res, err := r.query(ctx, `MATCH (j:Job {key: $key})
OPTIONAL MATCH (j)-[:HAS_RUN]->(r:Run)
WITH j, r.status AS status, count(r) AS n
RETURN j, collect([status, n]) AS statuses`, map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph job %q: %w", key, err)
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("job %q: %w", key, ErrNotFound)
	}
	n, _ := get[dbtype.Node](res.Records[0], "j")
	jd := &JobDetail{Key: str(n.Props, "key"), Namespace: str(n.Props, "namespace"), Name: str(n.Props, "name"),
		FirstSeen: timeProp(n.Props, "firstSeen"), LastSeen: timeProp(n.Props, "lastSeen"), Statuses: map[string]int64{},
		Runs: []RunInfo{}, Reads: []Access{}, Writes: []Access{}}
	sts, _ := get[[]any](res.Records[0], "statuses")
	for _, x := range sts {
		pair, _ := x.([]any)
		if len(pair) != 2 || pair[0] == nil {
			continue
		}
		s, _ := pair[0].(string)
		c, _ := pair[1].(int64)
		jd.Statuses[s] += c
		jd.RunCount += c
	}
	rs, err := r.query(ctx, `MATCH (j:Job {key: $key})-[:HAS_RUN]->(r:Run)
WITH j, r ORDER BY coalesce(r.endedAt, r.emittedAt) DESC, r.key LIMIT $n
RETURN `+runFields, map[string]any{"key": key, "n": int64(runs)})
	if err != nil {
		return nil, fmt.Errorf("graph runs of job %q: %w", key, err)
	}
	for _, rec := range rs.Records {
		jd.Runs = append(jd.Runs, runInfo(rec))
	}
	acc, err := r.query(ctx, `MATCH (:Job {key: $key})-[:HAS_RUN]->(r:Run)-[a:READ|WROTE]->(d:Dataset)
RETURN type(a) AS access, d.key AS dataset, count(DISTINCT r) AS runs, max(coalesce(r.endedAt, r.emittedAt)) AS last
ORDER BY dataset`, map[string]any{"key": key})
	if err != nil {
		return nil, fmt.Errorf("graph datasets of job %q: %w", key, err)
	}
	for _, rec := range acc.Records {
		kind, _ := get[string](rec, "access")
		a := Access{}
		a.Dataset, _ = get[string](rec, "dataset")
		a.Runs, _ = get[int64](rec, "runs")
		if t, ok := get[time.Time](rec, "last"); ok {
			t = t.UTC()
			a.Last = &t
		}
		if kind == "READ" {
			jd.Reads = append(jd.Reads, a)
		} else {
			jd.Writes = append(jd.Writes, a)
		}
	}
	return jd, nil
}

// stringList converts a list value of strings.
func stringList(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Impacted is one column a change reaches downstream: its distance in lineage steps and the jobs
// of the relationships by which the walk reached it at that distance.
type Impacted struct {
	Dataset  string   `json:"dataset"`
	Column   string   `json:"column"` // name
	Key      string   `json:"key"`
	Distance int      `json:"distance"`
	Jobs     []string `json:"jobs"`
}

// Impact lists the columns of a downstream walk but its start (distance 0), nearest first.
func (sg *Subgraph) Impact() []Impacted {
	dist := map[string]int{}
	for _, c := range sg.Columns {
		dist[c.Key] = c.Distance
	}
	// A DECIDES_ROWS reaches every column of its dataset met by the walk.
	byDataset := map[string][]string{}
	for _, c := range sg.Columns {
		byDataset[c.Dataset] = append(byDataset[c.Dataset], c.Key)
	}
	jobs := map[string]map[string]bool{}
	for _, e := range sg.Edges {
		targets := []string{e.Target}
		if e.Kind == DecidesRows {
			targets = byDataset[e.Target]
		}
		for _, t := range targets {
			if d, ok := dist[t]; ok && d > 0 && dist[e.Source] == d-1 {
				if jobs[t] == nil {
					jobs[t] = map[string]bool{}
				}
				jobs[t][e.Job] = true
			}
		}
	}
	var out []Impacted
	for _, c := range sg.Columns {
		if c.Distance == 0 {
			continue
		}
		im := Impacted{Dataset: c.Dataset, Column: c.Name, Key: c.Key, Distance: c.Distance, Jobs: []string{}}
		for j := range jobs[c.Key] {
			im.Jobs = append(im.Jobs, j)
		}
		slices.Sort(im.Jobs)
		out = append(out, im)
	}
	slices.SortFunc(out, func(a, b Impacted) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Dataset, b.Dataset), cmp.Compare(a.Column, b.Column))
	})
	return out
}

// Ping runs a trivial read query: whether Neo4j answers.
func (r *Reader) Ping(ctx context.Context) error {
	_, err := r.query(ctx, `RETURN 1`, nil)
	return err
}

// Known returns which of the dataset and column keys the graph holds.
func (r *Reader) Known(ctx context.Context, datasets, columns []string) (map[string]bool, error) {
	res, err := r.query(ctx, `CALL () {
  UNWIND $datasets AS k MATCH (d:Dataset {key: k}) RETURN d.key AS key
  UNION
  UNWIND $columns AS k MATCH (c:Column {key: k}) RETURN c.key AS key
}
RETURN key`, map[string]any{"datasets": datasets, "columns": columns})
	if err != nil {
		return nil, fmt.Errorf("graph known keys: %w", err)
	}
	out := map[string]bool{}
	for _, rec := range res.Records {
		k, _ := get[string](rec, "key")
		out[k] = true
	}
	return out, nil
}

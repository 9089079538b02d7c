package ui

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/colline/colline/graph"
)

// Bounds of request parameters.
const (
	maxQueryLen   = 200  // search text
	maxKeyLen     = 4096 // a dataset, column, job or run key
	maxStartKeys  = 500  // columns one lineage request starts from
	defaultSteps  = 3    // lineage steps when a request names none
	defaultHits   = 20
	defaultRuns   = 50
	maxRuns       = 500
	datePrecision = "2006-01-02"
)

// badRequest is an error in a request's parameters (400).
type badRequest struct{ error }

func bad(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

func (s *server) failReq(w http.ResponseWriter, r *http.Request, err error) {
	var br badRequest
	if errors.As(err, &br) {
		fail(w, http.StatusBadRequest, err)
		return
	}
	s.failGraph(w, r, err)
}

func key(v url.Values, name string) (string, error) {
	k := v.Get(name)
	if k == "" {
		return "", bad("parameter %s is required", name)
	}
	if len(k) > maxKeyLen {
		return "", bad("parameter %s is %d bytes long; keys are at most %d", name, len(k), maxKeyLen)
	}
	return k, nil
}

func number(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, bad("parameter %s=%q is not a number in %d..%d", name, s, lo, hi)
	}
	return n, nil
}

// asOf reads asOf: an RFC 3339 time, or a date (its end, UTC). Empty: now.
func asOf(v url.Values) (time.Time, error) {
	s := v.Get("asOf")
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.Parse(datePrecision, s); err == nil {
		return d.Add(24*time.Hour - time.Nanosecond), nil
	}
	return time.Time{}, bad("parameter asOf=%q is neither a date (2026-11-30) nor an RFC 3339 time", s)
}

func (s *server) config(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{
		"version": s.p.Version, "user": User(r.Context()), "analyzer": s.p.Analyzer != nil,
		"maxSteps": s.p.MaxSteps, "maxColumns": s.p.MaxColumns, "maxEdges": s.p.MaxEdges, "defaultSteps": min(defaultSteps, s.p.MaxSteps),
	})
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := strings.TrimSpace(v.Get("q"))
	if len(q) > maxQueryLen {
		fail(w, http.StatusBadRequest, fmt.Errorf("the search text is %d bytes long; at most %d", len(q), maxQueryLen))
		return
	}
	limit, err := number(v, "limit", defaultHits, 1, graph.MaxHits)
	if err != nil {
		s.failReq(w, r, err)
		return
	}
	hits, err := s.r.Search(r.Context(), q, limit)
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	if hits == nil {
		hits = []graph.Hit{}
	}
	reply(w, map[string]any{"query": q, "hits": hits})
}

// walkOf reads a walk from the request: column=K (repeatable) or dataset=K (all its columns),
// dir=up|down, steps=N, asOf=date.
func (s *server) walkOf(r *http.Request, dir graph.Direction, steps int) (graph.Walk, error) {
	v := r.URL.Query()
	w := graph.Walk{Direction: dir, MaxColumns: s.p.MaxColumns, MaxEdges: s.p.MaxEdges}
	if d := v.Get("dir"); d != "" {
		w.Direction = graph.Direction(d)
		if w.Direction != graph.Upstream && w.Direction != graph.Downstream {
			return w, bad("parameter dir=%q is neither up nor down", d)
		}
	}
	var err error
	if w.Steps, err = number(v, "steps", steps, 1, s.p.MaxSteps); err != nil {
		return w, err
	}
	if w.AsOf, err = asOf(v); err != nil {
		return w, err
	}
	cols := v["column"]
	if len(cols) > maxStartKeys {
		return w, bad("%d columns to start from; at most %d", len(cols), maxStartKeys)
	}
	for _, c := range cols {
		if c == "" || len(c) > maxKeyLen {
			return w, bad("a column key is empty or longer than %d bytes", maxKeyLen)
		}
	}
	w.From = cols
	if ds := v.Get("dataset"); ds != "" {
		if len(ds) > maxKeyLen {
			return w, bad("the dataset key is longer than %d bytes", maxKeyLen)
		}
		d, err := s.r.Dataset(r.Context(), ds)
		if err != nil {
			return w, err
		}
		for _, c := range d.Columns {
			w.From = append(w.From, c.Key)
		}
		if len(w.From) == 0 {
			return w, bad("dataset %q has no columns in the graph", ds)
		}
	}
	if len(w.From) == 0 {
		return w, bad("parameter column or dataset is required")
	}
	return w, nil
}

func (s *server) lineage(w http.ResponseWriter, r *http.Request) {
	walk, err := s.walkOf(r, graph.Upstream, min(defaultSteps, s.p.MaxSteps))
	if err != nil {
		s.failReq(w, r, err)
		return
	}
	sg, err := s.r.Walk(r.Context(), walk)
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	reply(w, subgraphJSON(sg, walk))
}

// subgraphJSON is a walk's answer: what it met, and how it was asked.
func subgraphJSON(sg *graph.Subgraph, w graph.Walk) map[string]any {
	out := map[string]any{
		"datasets": nonNil(sg.Datasets), "columns": nonNil(sg.Columns), "edges": nonNil(sg.Edges),
		"steps": sg.Steps, "truncated": sg.Truncated, "complete": sg.Complete,
		"from": w.From, "direction": w.Direction, "askedSteps": w.Steps, "maxColumns": w.MaxColumns, "maxEdges": w.MaxEdges,
	}
	if !w.AsOf.IsZero() {
		out["asOf"] = w.AsOf
	}
	return out
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// impact lists every column downstream of column=K or dataset=K, with its distance and the jobs
// that reach it, as JSON or (format=csv) as a CSV download.
func (s *server) impact(w http.ResponseWriter, r *http.Request) {
	walk, err := s.walkOf(r, graph.Downstream, s.p.MaxSteps)
	if err != nil {
		s.failReq(w, r, err)
		return
	}
	walk.Direction = graph.Downstream
	sg, err := s.r.Walk(r.Context(), walk)
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	rows := sg.Impact()
	if r.URL.Query().Get("format") != "csv" {
		reply(w, map[string]any{"from": walk.From, "steps": sg.Steps, "truncated": sg.Truncated, "complete": sg.Complete, "impact": nonNil(rows)})
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="colline-impact.csv"`)
	w.Header().Set("X-Colline-Truncated", strconv.FormatBool(sg.Truncated))
	cw := csv.NewWriter(w)
	cw.Write([]string{"dataset", "column", "key", "distance", "jobs"})
	for _, x := range rows {
		cw.Write([]string{csvSafe(x.Dataset), csvSafe(x.Column), csvSafe(x.Key), strconv.Itoa(x.Distance), csvSafe(strings.Join(x.Jobs, " "))})
	}
	cw.Flush()
}

// csvSafe keeps a spreadsheet from reading a name as a formula (=, +, -, @ at the start: CSV
// injection); names come from Spark plans and may be anything.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// detail answers GET ?key=K with what read returns for it.
func detail[T any](s *server, read func(ctx context.Context, key string, v url.Values) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query()
		k, err := key(v, "key")
		if err != nil {
			s.failReq(w, r, err)
			return
		}
		x, err := read(r.Context(), k, v)
		if err != nil {
			s.failReq(w, r, err)
			return
		}
		reply(w, x)
	}
}

func (s *server) column() http.HandlerFunc {
	return detail(s, func(ctx context.Context, k string, _ url.Values) (*graph.ColumnDetail, error) {
		return s.r.Column(ctx, k)
	})
}

func (s *server) dataset() http.HandlerFunc {
	return detail(s, func(ctx context.Context, k string, _ url.Values) (*graph.DatasetDetail, error) {
		d, err := s.r.Dataset(ctx, k)
		if err == nil && len(d.Columns) > s.p.MaxColumns {
			d.Columns = d.Columns[:s.p.MaxColumns]
		}
		return d, err
	})
}

func (s *server) job() http.HandlerFunc {
	return detail(s, func(ctx context.Context, k string, v url.Values) (*graph.JobDetail, error) {
		n, err := number(v, "runs", defaultRuns, 1, maxRuns)
		if err != nil {
			return nil, err
		}
		return s.r.Job(ctx, k, n)
	})
}

func (s *server) run() http.HandlerFunc {
	return detail(s, func(ctx context.Context, k string, _ url.Values) (*graph.RunInfo, error) { return s.r.Run(ctx, k) })
}

// runs answers GET /api/runs?app=<spark.app.id> or ?parent=<runId | namespace/job/runId>: the
// runs of a Spark application, or every run under a scheduler's run (CHILD_OF), oldest first
// (limit=N, default 50, at most 500), with the datasets they read and wrote and the column
// lineage into what they wrote (graph.RunSet).
func (s *server) runs(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	app, parent := v.Get("app"), v.Get("parent")
	if (app == "") == (parent == "") {
		s.failReq(w, r, bad("give one of the parameters app (a Spark application id) and parent (a run id, or namespace/job/runId)"))
		return
	}
	for name, x := range map[string]string{"app": app, "parent": parent} {
		if len(x) > maxKeyLen {
			s.failReq(w, r, bad("parameter %s is %d bytes long; at most %d", name, len(x), maxKeyLen))
			return
		}
	}
	n, err := number(v, "limit", defaultRuns, 1, maxRuns)
	if err != nil {
		s.failReq(w, r, err)
		return
	}
	q := graph.RunQuery{App: app, Limit: n}
	if parent != "" {
		q.Parent, q.ParentJob = graph.ParseParent(parent)
		if q.Parent == "" {
			s.failReq(w, r, bad("parameter parent=%q has no run id after its last slash", parent))
			return
		}
	}
	set, err := s.r.Runs(r.Context(), q)
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	reply(w, set)
}

package ui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// The SQL panel shows the lineage of statements that have not run, drawn like the graph's and
// joined to it. Its input is plan events, the listener's format: pasted (POST /api/preview, e.g.
// what `colline explain` reads), or made from SQL by colline analyze (POST /api/sql, through
// Params.Analyzer). Each event goes through process.Step, the consumer's own processing step,
// so the panel shows exactly what the consumer would write; nothing is written.

// Analyzer turns SQL into plan events (one JSON value after another, docs/event-format.md)
// without running it: colline analyze's service. Its errors are shown to the user as they are.
type Analyzer interface {
	Analyze(ctx context.Context, sql, dialect string) ([]byte, error)
}

// previewSteps is how far the panel follows the graph downstream of what a statement writes.
const previewSteps = 3

// previewEvent is what the panel says about one event.
type previewEvent struct {
	Index  int      `json:"index"`
	Job    string   `json:"job,omitempty"`
	Writes []string `json:"writes,omitempty"`
	Error  string   `json:"error,omitempty"`
	Reason string   `json:"reason,omitempty"` // the dead-letter reason the consumer would give
}

func (s *server) preview(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.failBody(w, err)
		return
	}
	s.previewEvents(w, r, body)
}

func (s *server) failBody(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("the request is larger than %d bytes (COLLINE_UI_MAX_BODY_BYTES)", mb.Limit))
		return
	}
	fail(w, http.StatusBadRequest, err)
}

func (s *server) sql(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SQL     string `json:"sql"`
		Dialect string `json:"dialect"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.failBody(w, err)
		return
	}
	if req.Dialect == "" {
		req.Dialect = "spark"
	}
	if req.Dialect != "spark" && req.Dialect != "hive" {
		fail(w, http.StatusBadRequest, fmt.Errorf("dialect %q is neither spark nor hive", req.Dialect))
		return
	}
	if s.p.Analyzer == nil {
		fail(w, http.StatusNotImplemented, errors.New("SQL needs colline analyze, which this explorer is not connected to (COLLINE_UI_ANALYZER_URL); paste plan events instead"))
		return
	}
	evs, err := s.p.Analyzer.Analyze(r.Context(), req.SQL, req.Dialect)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	s.previewEvents(w, r, evs)
}

// previewEvents answers with the lineage of the events in body, which graph datasets and columns
// are already known, and the graph downstream of the columns they write.
func (s *server) previewEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	raws, err := process.Split(body)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	step := process.Step{MaxBytes: int(s.p.MaxBodyBytes)}
	lw := newLineageBuilder()
	var evs []previewEvent
	for i, raw := range raws {
		pe := previewEvent{Index: i + 1}
		it, err := step.Item(raw)
		if err != nil {
			pe.Error, pe.Reason = err.Error(), process.Reason(err)
		} else {
			pe.Job = record.JobKey(it.Event.App)
			for _, wr := range it.Lineage.Writes {
				pe.Writes = append(pe.Writes, wr.Key)
			}
			lw.add(pe.Job, it.Lineage)
		}
		evs = append(evs, pe)
	}
	sg := lw.subgraph()
	var dsKeys, colKeys []string
	for _, d := range sg.Datasets {
		dsKeys = append(dsKeys, d.Key)
	}
	for _, c := range sg.Columns {
		colKeys = append(colKeys, c.Key)
	}
	known, err := s.r.Known(r.Context(), dsKeys, colKeys)
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	// The graph downstream of what the statements write and the graph already has.
	var from []string
	for _, c := range sg.Columns {
		if c.Distance == 0 && known[c.Key] {
			from = append(from, c.Key)
		}
	}
	out := map[string]any{"events": evs, "lineage": subgraphJSON(sg, graph.Walk{}), "known": nonNil(slices.Sorted(maps.Keys(known)))}
	if len(from) > 0 {
		walk := graph.Walk{From: from, Direction: graph.Downstream, Steps: min(previewSteps, s.p.MaxSteps), MaxColumns: s.p.MaxColumns, MaxEdges: s.p.MaxEdges}
		down, err := s.r.Walk(r.Context(), walk)
		if err != nil {
			s.failGraph(w, r, err)
			return
		}
		out["downstream"] = subgraphJSON(down, walk)
	}
	reply(w, out)
}

// lineageBuilder turns extracted lineage into the subgraph the page draws: written columns at
// distance 0, the columns they come from at 1.
type lineageBuilder struct {
	datasets map[string]graph.DatasetInfo
	columns  map[string]graph.ColumnInfo
	edges    []graph.Edge
}

func newLineageBuilder() *lineageBuilder {
	return &lineageBuilder{datasets: map[string]graph.DatasetInfo{}, columns: map[string]graph.ColumnInfo{}}
}

func (b *lineageBuilder) add(job string, lin *plan.Lineage) {
	colDataset := map[string]plan.Dataset{}
	addDS := func(d plan.Dataset) {
		b.datasets[d.Key] = graph.DatasetInfo{Key: d.Key, Namespace: d.Namespace, Name: d.Name, Kind: d.Kind, Location: d.Location}
		for _, c := range d.Columns {
			colDataset[c.Key] = d
		}
	}
	for _, d := range lin.Reads {
		addDS(d)
	}
	for _, wr := range lin.Writes {
		addDS(wr.Dataset)
		for _, c := range wr.Columns {
			b.columns[c.Key] = graph.ColumnInfo{Key: c.Key, Name: c.Name, Dataset: wr.Key, DataType: c.Type}
		}
	}
	source := func(key string) {
		if _, ok := b.columns[key]; ok {
			return
		}
		d := colDataset[key]
		ci := graph.ColumnInfo{Key: key, Dataset: d.Key, Distance: 1}
		for _, c := range d.Columns {
			if c.Key == key {
				ci.Name, ci.DataType = c.Name, c.Type
			}
		}
		b.columns[key] = ci
	}
	edge := func(kind string, e plan.Edge) graph.Edge {
		ge := graph.Edge{Kind: kind, Source: e.Source, Target: e.Target, Job: job}
		for _, t := range e.Transformations {
			ge.Roles = append(ge.Roles, graph.Role{Type: t.Type, Subtype: t.Subtype, Expr: t.Expr, Masked: t.Masking})
		}
		if kind == graph.Feeds {
			st := plan.Strongest(e.Transformations)
			ge.Type, ge.Subtype = st.Type, st.Subtype
		}
		return ge
	}
	for _, e := range lin.Edges {
		source(e.Source)
		b.edges = append(b.edges, edge(graph.Feeds, e))
	}
	for _, e := range lin.RowDeps {
		source(e.Source)
		b.edges = append(b.edges, edge(graph.DecidesRows, e))
	}
}

func (b *lineageBuilder) subgraph() *graph.Subgraph {
	sg := &graph.Subgraph{Steps: 1, Complete: true}
	for _, d := range b.datasets {
		sg.Datasets = append(sg.Datasets, d)
	}
	slices.SortFunc(sg.Datasets, func(x, y graph.DatasetInfo) int { return cmp.Compare(x.Key, y.Key) })
	for _, c := range b.columns {
		sg.Columns = append(sg.Columns, c)
	}
	slices.SortFunc(sg.Columns, func(x, y graph.ColumnInfo) int {
		return cmp.Or(cmp.Compare(x.Distance, y.Distance), cmp.Compare(x.Key, y.Key))
	})
	sg.Edges = b.edges
	graph.SortEdges(sg.Edges)
	return sg
}

// ServiceAnalyzer is the SQL panel's analyzer: colline's warm analyzer service (dev/spark-analyze,
// docs/analyze.md) through analyze.Client, which sends the analyzer's bearer token
// (COLLINE_UI_ANALYZER_TOKEN_FILE) and the JSON content type the service requires. The SQL is one
// file; the answer is the events of its statements, in order, one per line; the first statement
// Spark refused, or that the analyzer refused to analyze (ADD JAR, a read of files by path, ...),
// is the error, with its line and column. Spark's parser reads the SQL whatever the dialect
// (HiveQL's DML and DDL are mostly Spark SQL too).
type ServiceAnalyzer struct{ Client *analyze.Client }

// Analyze sends sql to the service.
func (a ServiceAnalyzer) Analyze(ctx context.Context, sql, dialect string) ([]byte, error) {
	res, err := a.Client.Analyze(ctx, analyze.Request{App: "colline-ui", Files: []analyze.Part{{Name: "panel.sql", SQL: sql}}})
	if err != nil {
		return nil, fmt.Errorf("colline analyze: %w", err)
	}
	var out bytes.Buffer
	n := 0
	for _, f := range res.Files {
		for _, st := range f.Statements {
			n++
			if e := st.Error; e != nil {
				return nil, fmt.Errorf("colline analyze: statement %d, line %d, column %d (%s): %s", st.Index, e.Line, e.Column, e.Stage, e.Message)
			}
			if st.Outcome == analyze.OutcomeRefused {
				return nil, fmt.Errorf("colline analyze: statement %d, line %d, column %d: refused: %s", st.Index, st.Line, st.Column, st.Reason)
			}
			for _, ev := range st.Events {
				out.Write(ev)
				out.WriteByte('\n')
			}
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("colline analyze: no lineage to draw: none of the %d statement(s) writes a dataset", n)
	}
	return out.Bytes(), nil
}

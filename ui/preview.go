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
	"strings"

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
// without running it: colline analyze's service. Its errors are shown to the user as they are;
// a *SQLError says where in the SQL.
type Analyzer interface {
	Analyze(ctx context.Context, sql, dialect string) (*Analysis, error)
}

// Analysis is what the analyzer made of the SQL: the events of its statements, one JSON value
// after another, and each statement's outcome and tables.
type Analysis struct {
	Events     []byte
	Statements []SQLStatement
}

// SQLStatement is what became of one statement of the SQL panel: its place, its outcome (event,
// skipped, tableLevel, ...), the tables it names with where their schemas came from, the tables
// inferred for it; for a table-level one, what could not be inferred and the tables it reads
// and writes (dataset keys).
type SQLStatement struct {
	Index       int        `json:"index"`
	Line        int        `json:"line"`
	Column      int        `json:"column"`
	Outcome     string     `json:"outcome"`
	Reason      string     `json:"reason,omitempty"`
	Tables      []SQLTable `json:"tables,omitempty"`
	Inferred    []SQLTable `json:"inferred,omitempty"`
	CannotInfer []string   `json:"cannotInfer,omitempty"`
	Reads       []string   `json:"reads,omitempty"`
	Writes      []string   `json:"writes,omitempty"`
}

// SQLTable is a table a statement names: its dataset key, where its schema came from (ddl,
// graph, script, inferred, view, ...), and for an inferred one its columns.
type SQLTable struct {
	Key     string      `json:"key"`
	Source  string      `json:"source"`
	Columns []SQLColumn `json:"columns,omitempty"`
}

// SQLColumn is a column of an inferred table, with the type Spark's analysis asked of it.
type SQLColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// SQLError is a statement the analyzer refused, or Spark could not parse or analyze: the
// panel's error, with where it is in the SQL (1-based).
type SQLError struct {
	Statement, Line, Column int
	Message                 string
}

func (e *SQLError) Error() string {
	return fmt.Sprintf("colline analyze: statement %d, line %d, column %d: %s", e.Statement, e.Line, e.Column, e.Message)
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
	a, err := s.p.Analyzer.Analyze(r.Context(), req.SQL, req.Dialect)
	var se *SQLError
	switch {
	case errors.As(err, &se):
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": se.Error(), "line": se.Line, "column": se.Column, "statement": se.Statement})
		return
	case err != nil:
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	s.previewSQL(w, r, a)
}

// previewEvents answers with the lineage of the events in body, which graph datasets and columns
// are already known, and the graph downstream of the columns they write.
func (s *server) previewEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	s.previewSQL(w, r, &Analysis{Events: body})
}

// previewSQL answers with the preview of an analysis: its events' lineage, the datasets of its
// table-level statements, and its statements.
func (s *server) previewSQL(w http.ResponseWriter, r *http.Request, a *Analysis) {
	var raws []json.RawMessage
	if len(a.Events) > 0 || a.Statements == nil { // SQL may give no event (table-level statements only)
		var err error
		if raws, err = process.Split(a.Events); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
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
	for _, st := range a.Statements {
		if st.Outcome == analyze.OutcomeTableLevel {
			lw.tables(append(append([]string(nil), st.Reads...), st.Writes...))
		}
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
	out := map[string]any{"events": nonNil(evs), "lineage": subgraphJSON(sg, graph.Walk{}), "known": nonNil(slices.Sorted(maps.Keys(known)))}
	if a.Statements != nil {
		out["statements"] = a.Statements
	}
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

// tables adds datasets by key, without columns: the tables of a statement with table-level
// lineage only (their keys are spark_catalog/<db>.<table>).
func (b *lineageBuilder) tables(keys []string) {
	for _, k := range keys {
		if _, ok := b.datasets[k]; ok {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		b.datasets[k] = graph.DatasetInfo{Key: k, Namespace: ns, Name: name, Kind: "table"}
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
// file. The tables it names that nothing else defines come from Graph (the explorer's graph, as
// data), and what no one described is inferred when Infer. The answer is the events of its
// statements, in order, and each statement's outcome; the first statement Spark refused, or
// that the analyzer refused to analyze (ADD JAR, a read of files by path, ...), is the error
// (*SQLError), with its line and column. Spark's parser reads the SQL whatever the dialect
// (HiveQL's DML and DDL are mostly Spark SQL too).
type ServiceAnalyzer struct {
	Client *analyze.Client
	Graph  analyze.Schemas
	Infer  bool
}

// Analyze sends sql to the service.
func (a ServiceAnalyzer) Analyze(ctx context.Context, sql, dialect string) (*Analysis, error) {
	req := analyze.Request{App: "colline-ui", Infer: a.Infer, Files: []analyze.Part{{Name: "panel.sql", SQL: sql}}}
	if _, _, err := a.Client.Resolve(ctx, &req, a.Graph); err != nil {
		return nil, fmt.Errorf("colline analyze: %w", err)
	}
	res, err := a.Client.Analyze(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("colline analyze: %w", err)
	}
	out := &Analysis{Statements: []SQLStatement{}}
	var events bytes.Buffer
	lineage := false
	for _, f := range res.Files {
		for _, st := range f.Statements {
			if e := st.Error; e != nil {
				return nil, &SQLError{Statement: st.Index, Line: e.Line, Column: e.Column, Message: "(" + e.Stage + ") " + e.Message}
			}
			if st.Outcome == analyze.OutcomeRefused {
				return nil, &SQLError{Statement: st.Index, Line: st.Line, Column: st.Column, Message: "refused: " + st.Reason}
			}
			ps := SQLStatement{Index: st.Index, Line: st.Line, Column: st.Column, Outcome: st.Outcome, Reason: st.Reason, CannotInfer: st.CannotInfer}
			for _, t := range st.Tables {
				key := t.Key()
				if t.Database == "" {
					key = t.Table // a temporary view
				}
				ps.Tables = append(ps.Tables, SQLTable{Key: key, Source: t.Source})
			}
			for _, t := range st.Inferred {
				it := SQLTable{Key: t.Key(), Source: analyze.SourceInferred}
				for _, c := range t.Columns {
					it.Columns = append(it.Columns, SQLColumn{Name: c.Name, Type: c.Type})
				}
				ps.Inferred = append(ps.Inferred, it)
			}
			for _, n := range st.Reads {
				ps.Reads = append(ps.Reads, n.Key())
			}
			for _, n := range st.Writes {
				ps.Writes = append(ps.Writes, n.Key())
			}
			out.Statements = append(out.Statements, ps)
			lineage = lineage || st.Outcome == analyze.OutcomeTableLevel
			for _, ev := range st.Events {
				events.Write(ev)
				events.WriteByte('\n')
				lineage = true
			}
		}
	}
	if !lineage {
		return nil, fmt.Errorf("colline analyze: no lineage to draw: none of the %d statement(s) writes a dataset", len(out.Statements))
	}
	out.Events = events.Bytes()
	return out, nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/cli"
	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
)

// Schema sources of the analyze part (-analyze-schemas).
const (
	anDDL      = "ddl"      // the analyzer started with the TPC-DS DDL (dev/spark-analyze --ddl): the baseline
	anGraph    = "graph"    // no DDL: the tables a statement names come from colline's graph (analyze.GraphSchemas)
	anInferred = "inferred" // no DDL, no graph: inferred from the statement (Request.Infer)
)

// benchAnalyze measures colline's analyzer as a warm service (docs/analyze.md), per statement, as
// the explorer's SQL panel, `colline analyze` and repeated CI calls send them: passes over the 103
// TPC-DS queries, each a request of its own, with the schemas from each source of sources (ddl,
// graph, inferred) side by side. The first pass warms the JIT; the figures are those of the later
// passes, interleaved source by source: the round trip per statement (with graph: the names the
// statement reads, asked of the analyzer, and their schemas looked up in the graph, as
// analyze.Client.Resolve does; then the request, the analysis, serialization and the answer), and
// the analysis alone, in wall time and in the analyzing thread's CPU time (on a busy machine,
// wall time is mostly waiting for a core). For graph, the captured TPC-DS runs of Spark 3.5 are
// first written to the graph by the consumer's writer. Targets: median round trip under 100 ms
// with DDL (issue 13), at most 150 ms with the graph and inferred (issue 28).
func benchAnalyze(ctx context.Context, r *report, env *benchEnv, evs []event, lines, tpcdsDir string, passes int, sources string) error {
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	if passes < 2 {
		return fmt.Errorf("analyze: -analyze-passes %d: at least 2 (the first warms up)", passes)
	}
	srcs := strings.Split(sources, ",")
	queries, schema, err := tpcdsQueries(tpcdsDir)
	if err != nil {
		return err
	}
	defer os.Remove(schema)
	var schemas *analyze.GraphSchemas
	for _, s := range srcs {
		switch s {
		case anDDL, anInferred:
		case anGraph:
			if schemas, err = tpcdsGraph(ctx, r, env, evs); err != nil {
				return err
			}
		default:
			return fmt.Errorf("analyze: -analyze-schemas %q: one of ddl, graph, inferred", s)
		}
	}
	for _, line := range strings.Split(lines, ",") {
		procs := map[string]*analyze.Process{}
		closeAll := func() {
			for _, p := range procs {
				p.Close()
			}
		}
		for _, s := range srcs {
			args := []string{}
			if s == anDDL {
				args = []string{"--ddl", schema}
			}
			start := time.Now()
			p, err := analyze.Start(ctx, analyze.Options{Launcher: filepath.Join(root, "dev", "spark-analyze"), SparkLine: line, Args: args})
			if err != nil {
				closeAll()
				return err
			}
			procs[s] = p
			r.notef("analyze %s, schemas from %s: ready in %.1fs (JVM start to serving, as it reports: %.1fs); load average %s", line, s, time.Since(start).Seconds(), p.Startup.Seconds(), loadAvg())
			if s == anDDL {
				r.add(row{part: "analyze", metric: "start-up, Spark " + line + " (launcher to serving, TPC-DS schema loaded)",
					value: fmt.Sprintf("%.1f s", time.Since(start).Seconds()), baseline: "-", target: "-"})
			}
		}
		m := map[string]*anSamples{}
		for pass := 1; pass <= passes; pass++ {
			for _, s := range srcs {
				if m[s] == nil {
					m[s] = &anSamples{outcomes: map[string]int{}}
				}
				for _, q := range queries {
					if err := analyzeOne(ctx, procs[s].Client(), s, line, q, schemas, m[s], pass > 1); err != nil {
						closeAll()
						return err
					}
				}
				r.notef("analyze %s, schemas from %s: pass %d of %d over %d queries done", line, s, pass, passes, len(queries))
			}
		}
		// the fixed cost of a request: an empty one (GET /healthz), as the names and every answer pay it
		var empty []float64
		for range 50 {
			t0 := time.Now()
			if _, err := procs[srcs[0]].Client().Health(ctx); err != nil {
				closeAll()
				return err
			}
			empty = append(empty, float64(time.Since(t0).Microseconds())/1000)
		}
		r.add(row{part: "analyze", metric: fmt.Sprintf("an empty request's round trip (GET /healthz), Spark %s (median)", line),
			value: fmt.Sprintf("%.1f ms", percentile(empty, 50)), baseline: "-", target: "-", result: fmt.Sprintf("p99 %.1f ms", percentile(empty, 99))})
		closeAll()
		base := m[anDDL]
		for _, s := range srcs {
			x := m[s]
			med, p99 := percentile(x.trip, 50), percentile(x.trip, 99)
			rw := row{part: "analyze", value: fmt.Sprintf("%.0f ms", med), baseline: "-",
				result: fmt.Sprintf("p99 %.0f ms; analysis alone: median %.0f ms wall, %.0f ms CPU", p99, percentile(x.wall, 50), percentile(x.cpu, 50))}
			switch s {
			case anDDL:
				rw.metric = fmt.Sprintf("warm round trip per TPC-DS statement, Spark %s, schemas from DDL (median)", line)
				rw.target, rw.met = "< 100 ms", med < 100
			default:
				rw.metric = fmt.Sprintf("warm round trip per TPC-DS statement, Spark %s, schemas %s (median)", line, map[string]string{anGraph: "from the graph", anInferred: "inferred"}[s])
				rw.target, rw.met = "≤ 150 ms", med <= 150
				if base != nil {
					rw.baseline = fmt.Sprintf("DDL %.0f ms (%.2f×)", percentile(base.trip, 50), med/percentile(base.trip, 50))
				}
			}
			if s == anGraph {
				rw.result += fmt.Sprintf("; names and graph lookup: median %.1f ms, p99 %.1f ms", percentile(x.lookup, 50), percentile(x.lookup, 99))
			}
			if s == anInferred {
				rw.result += fmt.Sprintf("; outcomes per statement: %s", x.outcomeList())
			}
			r.add(rw)
		}
	}
	if schemas != nil {
		st := schemas.Stats()
		r.notef("analyze: graph lookups: %d read, %d cached, %d not in the graph", st.Read, st.Cached, st.Missing)
	}
	return nil
}

// anSamples are the timed statements of one schema source, in ms.
type anSamples struct {
	trip, wall, cpu, lookup []float64
	outcomes                map[string]int
}

func (x *anSamples) outcomeList() string {
	var out []string
	for o, n := range x.outcomes {
		out = append(out, fmt.Sprintf("%s %d", o, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// analyzeOne sends q as one request, with its schemas from src, and records it in x when timed.
// Only an event answers with DDL or the graph; inferred may also answer table-level lineage
// (an unqualified column that two unknown tables could hold).
func analyzeOne(ctx context.Context, c *analyze.Client, src, line string, q analyze.Part, schemas *analyze.GraphSchemas, x *anSamples, timed bool) error {
	req := analyze.Request{Reads: true, Files: []analyze.Part{q}}
	if strings.HasPrefix(line, "4.") && (q.Name == "q84" || q.Name == "q90") {
		// as dev/tpcds/capture ran them: they fail under Spark 4's default ANSI mode
		req.Conf = map[string]string{"spark.sql.ansi.enabled": "false"}
	}
	t0 := time.Now()
	var lookup time.Duration
	switch src {
	case anGraph:
		req.Infer = true
		names, notes, err := c.Resolve(ctx, &req, schemas)
		if err != nil {
			return fmt.Errorf("analyze %s %s: the graph's tables: %w", line, q.Name, err)
		}
		if len(notes) > 0 || len(req.Tables) != len(names) {
			return fmt.Errorf("analyze %s %s: the graph gave %d of the %d tables it names: %v", line, q.Name, len(req.Tables), len(names), notes)
		}
		lookup = time.Since(t0)
	case anInferred:
		req.Infer = true
	}
	resp, err := c.Analyze(ctx, req)
	if err != nil {
		return err
	}
	took := time.Since(t0)
	st := resp.Files[0].Statements[len(resp.Files[0].Statements)-1]
	if st.Outcome != analyze.OutcomeEvent && !(src == anInferred && st.Outcome == analyze.OutcomeTableLevel) {
		return fmt.Errorf("analyze %s %s, schemas from %s: %s %s %+v", line, q.Name, src, st.Outcome, st.Reason, st.Error)
	}
	if src == anGraph && len(st.Inferred) > 0 {
		return fmt.Errorf("analyze %s %s: tables inferred, want them all from the graph: %+v", line, q.Name, st.Inferred)
	}
	if !timed {
		return nil
	}
	x.trip = append(x.trip, float64(took.Microseconds())/1000)
	x.wall = append(x.wall, float64(st.AnalyzeMicros)/1000)
	x.cpu = append(x.cpu, float64(st.AnalyzeCPU)/1000)
	if src == anGraph {
		x.lookup = append(x.lookup, float64(lookup.Microseconds())/1000)
	}
	x.outcomes[st.Outcome]++
	return nil
}

// tpcdsQueries reads the 103 TPC-DS queries of dir, each a plain query in database tpcds (the
// duplicate-named columns of q14b, q39a, q39b and q64 do not matter to a query), and writes the
// schema file of the DDL baseline (the caller removes it).
func tpcdsQueries(dir string) ([]analyze.Part, string, error) {
	ddl, err := os.ReadFile(filepath.Join(dir, "ddl.sql"))
	if err != nil {
		return nil, "", fmt.Errorf("analyze: the TPC-DS schema (-tpcds): %w", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "queries", "q*.sql"))
	sort.Strings(files)
	var queries []analyze.Part
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, "", err
		}
		queries = append(queries, analyze.Part{Name: strings.TrimSuffix(filepath.Base(f), ".sql"), SQL: "USE tpcds;\n" + string(data)})
	}
	schema := filepath.Join(os.TempDir(), fmt.Sprintf("colline-bench-tpcds-%d.sql", os.Getpid()))
	err = os.WriteFile(schema, []byte("CREATE DATABASE IF NOT EXISTS tpcds;\nUSE tpcds;\n"+string(ddl)+"\nCREATE DATABASE IF NOT EXISTS tpcds_out;\n"), 0o644)
	return queries, schema, err
}

// tpcdsGraph wipes the graph and writes the captured TPC-DS runs of Spark 3.5 (the CTAS events,
// not their nested inserts) to it with the consumer's writer: the graph then holds the TPC-DS
// tables with their columns and types, as it would after those jobs ran under the listener.
func tpcdsGraph(ctx context.Context, r *report, env *benchEnv, evs []event) (*analyze.GraphSchemas, error) {
	if env.driver == nil {
		return nil, fmt.Errorf("analyze: schemas from the graph need Neo4j (-neo4j)")
	}
	if _, err := stack.WipeGraph(ctx, env.driver); err != nil {
		return nil, err
	}
	var runs []cli.Event
	for _, e := range evs {
		if e.nested || !strings.HasPrefix(e.name, "spark-3.5/") {
			continue
		}
		it, err := process.Step{}.Item(e.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.name, err)
		}
		runs = append(runs, cli.Event{Source: e.name, Env: it.Event, Lineage: it.Lineage})
	}
	start := time.Now()
	if err := cli.Replay(ctx, env.writer, runs, 20); err != nil {
		return nil, err
	}
	r.notef("analyze: %d captured TPC-DS runs (Spark 3.5) written to the graph in %.1fs", len(runs), time.Since(start).Seconds())
	return &analyze.GraphSchemas{Reader: graph.NewReader(env.driver, "")}, nil
}

// percentile of xs (0 to 100), nearest rank.
func percentile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

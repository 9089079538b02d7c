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
	"github.com/colline/colline/e2e/stack"
)

// benchAnalyze measures colline's analyzer as a warm service (docs/analyze.md): its start-up
// with the TPC-DS schema as its baseline (dev/spark-analyze --ddl), then passes over the 103
// TPC-DS queries, each a request of its own (as the explorer's SQL panel and repeated CI calls
// send them). The first pass warms the JIT; the figures are those of the later passes: the
// round trip per statement (request, analysis, serialization, answer) and the analysis alone,
// in wall time and in the analyzing thread's CPU time (on a busy machine, wall time is mostly
// waiting for a core). Target: median round trip under 100 ms.
func benchAnalyze(ctx context.Context, r *report, lines, tpcdsDir string, passes int) error {
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	ddl, err := os.ReadFile(filepath.Join(tpcdsDir, "ddl.sql"))
	if err != nil {
		return fmt.Errorf("analyze: the TPC-DS schema (-tpcds): %w", err)
	}
	schema := filepath.Join(os.TempDir(), fmt.Sprintf("colline-bench-tpcds-%d.sql", os.Getpid()))
	if err := os.WriteFile(schema, []byte("CREATE DATABASE IF NOT EXISTS tpcds;\nUSE tpcds;\n"+string(ddl)+
		"\nCREATE DATABASE IF NOT EXISTS tpcds_out;\n"), 0o644); err != nil {
		return err
	}
	defer os.Remove(schema)
	files, _ := filepath.Glob(filepath.Join(tpcdsDir, "queries", "q*.sql"))
	sort.Strings(files)
	var queries []analyze.Part
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		q := strings.TrimSuffix(filepath.Base(f), ".sql")
		// as a plain query: the duplicate-named columns of q14b, q39a, q39b and q64 do not matter
		queries = append(queries, analyze.Part{Name: q, SQL: "USE tpcds;\n" + string(data)})
	}
	for _, line := range strings.Split(lines, ",") {
		start := time.Now()
		p, err := analyze.Start(ctx, analyze.Options{Launcher: filepath.Join(root, "dev", "spark-analyze"), SparkLine: line,
			Args: []string{"--ddl", schema}})
		if err != nil {
			return err
		}
		startup := time.Since(start)
		r.notef("analyze %s: ready in %.1fs (JVM start to serving, as it reports: %.1fs); load average %s", line, startup.Seconds(), p.Startup.Seconds(), loadAvg())
		r.add(row{part: "analyze", metric: "start-up, Spark " + line + " (launcher to serving, TPC-DS schema loaded)",
			value: fmt.Sprintf("%.1f s", startup.Seconds()), baseline: "-", target: "-"})
		c := p.Client()
		var trip, wall, cpu []float64
		for pass := 1; pass <= passes; pass++ {
			for _, q := range queries {
				t0 := time.Now()
				var conf map[string]string
				if strings.HasPrefix(line, "4.") && (q.Name == "q84" || q.Name == "q90") {
					// as dev/tpcds/capture ran them: they fail under Spark 4's default ANSI mode
					conf = map[string]string{"spark.sql.ansi.enabled": "false"}
				}
				resp, err := c.Analyze(ctx, analyze.Request{Reads: true, Conf: conf, Files: []analyze.Part{q}})
				if err != nil {
					p.Close()
					return err
				}
				took := time.Since(t0)
				st := resp.Files[0].Statements[len(resp.Files[0].Statements)-1]
				if st.Outcome != analyze.OutcomeEvent {
					p.Close()
					return fmt.Errorf("analyze %s %s: %s %s %+v", line, q.Name, st.Outcome, st.Reason, st.Error)
				}
				if pass > 1 {
					trip = append(trip, float64(took.Microseconds())/1000)
					wall = append(wall, float64(st.AnalyzeMicros)/1000)
					cpu = append(cpu, float64(st.AnalyzeCPU)/1000)
				}
			}
			r.notef("analyze %s: pass %d of %d over %d queries done", line, pass, passes, len(queries))
		}
		if err := p.Close(); err != nil {
			return err
		}
		if len(trip) == 0 {
			return fmt.Errorf("analyze: -analyze-passes %d: at least 2 (the first warms up)", passes)
		}
		med := percentile(trip, 50)
		r.add(row{part: "analyze", metric: fmt.Sprintf("warm round trip per TPC-DS statement, Spark %s (median; p90 %.0f ms)", line, percentile(trip, 90)),
			value: fmt.Sprintf("%.0f ms", med), baseline: "-", target: "< 100 ms", met: med < 100,
			result: fmt.Sprintf("analysis alone: median %.0f ms wall, %.0f ms CPU", percentile(wall, 50), percentile(cpu, 50))})
	}
	return nil
}

// percentile of xs (0 to 100), nearest rank.
func percentile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

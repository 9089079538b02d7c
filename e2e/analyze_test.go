//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
)

// The analyzer tests share one analyzer (one JVM, one Spark session) per Spark line for the
// whole package: analyzers starts it on first use, TestMain stops them.
var analyzers struct {
	sync.Mutex
	procs map[string]*analyze.Process
	errs  map[string]error
}

func TestMain(m *testing.M) {
	code := m.Run()
	analyzers.Lock()
	for _, p := range analyzers.procs {
		_ = p.Close()
	}
	analyzers.Unlock()
	os.Exit(code)
}

// analyzerCatalogs is the own catalog of the package's analyzer per Spark line: both kinds are
// tested, TPC-DS and the goldens in each, with one analyzer (one JVM) per line. Lines not listed
// (make lines) use memory.
var analyzerCatalogs = map[string]string{"3.5_2.12": "hive", "4.1_2.13": "memory"}

// analyzerFor returns a client of the package's analyzer of a Spark line (its own catalog:
// analyzerCatalogs), started once.
func analyzerFor(t *testing.T, line string) *analyze.Client {
	t.Helper()
	return analyzerProcess(t, line).Client()
}

// analyzerReadTimeout is the --read-timeout of the package's analyzers (seconds): short, so that
// TestAnalyzeDoor's slow clients are dropped soon.
const analyzerReadTimeout = 5

// analyzerProcess returns the package's analyzer of a Spark line (its URL and token file), started once.
func analyzerProcess(t *testing.T, line string) *analyze.Process {
	t.Helper()
	analyzers.Lock()
	defer analyzers.Unlock()
	if analyzers.procs == nil {
		analyzers.procs, analyzers.errs = map[string]*analyze.Process{}, map[string]error{}
	}
	if err := analyzers.errs[line]; err != nil {
		t.Fatalf("analyzer %s: %v", line, err)
	}
	if p := analyzers.procs[line]; p != nil {
		return p
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	p, err := analyze.Start(ctx, analyze.Options{Launcher: filepath.Join(root, "dev", "spark-analyze"), SparkLine: line,
		Catalog: analyzerCatalog(line), Args: []string{"--read-timeout", fmt.Sprint(analyzerReadTimeout)}})
	if err != nil {
		analyzers.errs[line] = err
		t.Fatalf("analyzer %s: %v", line, err)
	}
	t.Logf("analyzer %s (%s catalog): Spark %s ready in %.1fs (the JVM reports %.1fs from its start)", line, analyzerCatalog(line), p.Spark,
		time.Since(start).Seconds(), p.Startup.Seconds())
	analyzers.procs[line] = p
	return p
}

func analyzerCatalog(line string) string {
	if c := analyzerCatalogs[line]; c != "" {
		return c
	}
	return "memory"
}

// TestAnalyzeTPCDS analyzes the 103 TPC-DS queries, without running them, as the CTAS that
// dev/tpcds/capture ran (same schema, same statements, same settings), and compares the lineage
// of each with the lineage of the captured run (plan/testdata/tpcds): they must be the same,
// dataset for dataset, column for column, edge for edge, with every role and expression.
func TestAnalyzeTPCDS(t *testing.T) {
	for _, line := range sparkLines(t) {
		t.Run("spark-"+line, func(t *testing.T) {
			t.Parallel()
			testAnalyzeTPCDS(t, line, nil)
		})
	}
}

// testAnalyzeTPCDS analyzes the TPC-DS queries against the schema of dev/tpcds/data/ddl.sql,
// or, with graph, against the tables the graph gives (analyze.Client.Resolve: only those the
// queries name), with inference on: then every table must come from the graph, none inferred.
func testAnalyzeTPCDS(t *testing.T, line string, graph analyze.Schemas) {
	c := analyzerFor(t, line)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, _ := stack.RepoRoot()
	tpcds := filepath.Join(root, "dev", "tpcds", "data")
	ddl, err := os.ReadFile(filepath.Join(tpcds, "ddl.sql"))
	if err != nil {
		t.Fatalf("the TPC-DS schema: %v", err)
	}
	// the schema exactly as dev/tpcds/capture creates it
	schema := []analyze.Part{{Name: "ddl.sql", SQL: "CREATE DATABASE IF NOT EXISTS tpcds;\nUSE tpcds;\n" + string(ddl) +
		"\nCREATE DATABASE IF NOT EXISTS tpcds_out;\n"}}
	short := strings.SplitN(line, "_", 2)[0]
	captured := filepath.Join(root, "plan", "testdata", "tpcds", "spark-"+short)
	names, _ := filepath.Glob(filepath.Join(tpcds, "queries", "q*.sql"))
	queries := map[string]string{}
	for _, f := range names {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		queries[strings.TrimSuffix(filepath.Base(f), ".sql")] = stripComments(string(data))
	}
	if len(queries) != 103 {
		t.Fatalf("%d TPC-DS queries in %s, want 103", len(queries), tpcds)
	}

	// What the capture did differently for some queries (dev/tpcds/TpcdsDuplicateColumns.java),
	// done here the same way: Spark 4's ANSI mode off for q84 and q90; the repeated column names
	// of q14b, q39a, q39b and q64 renamed <name>_2.
	noANSI := map[string]bool{}
	if strings.HasPrefix(line, "4.") {
		noANSI["q84"], noANSI["q90"] = true, true
	}
	duplicates := map[string]bool{"q14b": true, "q39a": true, "q39b": true, "q64": true}
	ctas := func(q, body string) analyze.Part {
		return analyze.Part{Name: q, SQL: "CREATE TABLE tpcds_out." + q + " USING parquet AS\n" + body}
	}
	var plain, offANSI, dups []analyze.Part
	for _, q := range sortedQueries(queries) {
		switch {
		case duplicates[q]:
			dups = append(dups, analyze.Part{Name: q, SQL: queries[q]})
		case noANSI[q]:
			offANSI = append(offANSI, ctas(q, queries[q]))
		default:
			plain = append(plain, ctas(q, queries[q]))
		}
	}
	if graph != nil {
		// no DDL: the tables come from the graph; the databases are those the capture used
		schema = []analyze.Part{{Name: "use.sql", SQL: "USE tpcds;\nCREATE DATABASE IF NOT EXISTS tpcds_out;\n"}}
	}
	got := map[string]*analyze.Statement{}
	var micros, cpuMicros, eventMicros []int64
	run := func(req analyze.Request) *analyze.Response {
		req.App, req.Schema = "colline-tpcds", schema
		start := time.Now()
		if graph != nil {
			req.Infer = true
			names, notes, err := c.Resolve(ctx, &req, graph)
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) > 0 || len(req.Tables) != len(names) {
				t.Fatalf("the graph gave %d of the %d tables the queries name: %v", len(req.Tables), len(names), notes)
			}
			t.Logf("spark %s: %d tables from the graph, as the %d queries name them", line, len(req.Tables), len(req.Files))
		}
		resp, err := c.Analyze(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range resp.Tables {
			if tr.Outcome != analyze.OutcomeApplied {
				t.Fatalf("table %s from the %s: %s %s", tr.Name, tr.Source, tr.Outcome, tr.Reason)
			}
		}
		for _, f := range resp.Files {
			for _, st := range f.Statements {
				if len(st.Inferred) > 0 {
					t.Errorf("%s: tables inferred, want them all from the graph: %+v", f.Name, st.Inferred)
				}
				for _, ts := range st.Tables {
					if want := analyze.SourceGraph; graph != nil && ts.Database == "tpcds" && ts.Source != want {
						t.Errorf("%s: table %s from %q, want %q", f.Name, ts.TableName, ts.Source, want)
					}
				}
			}
		}
		for _, f := range resp.Schema {
			for _, st := range f.Statements {
				if st.Outcome != analyze.OutcomeApplied {
					t.Fatalf("schema statement %d (line %d) %s: %s %+v", st.Index, st.Line, st.Outcome, st.Reason, st.Error)
				}
			}
		}
		t.Logf("spark %s: %d file(s) analyzed in %.1fs", line, len(req.Files), time.Since(start).Seconds())
		return resp
	}
	collect := func(resp *analyze.Response) {
		for _, f := range resp.Files {
			if len(f.Statements) != 1 {
				t.Fatalf("%s: %d statements, want 1", f.Name, len(f.Statements))
			}
			st := f.Statements[0]
			got[f.Name] = &st
			if st.Outcome == analyze.OutcomeEvent {
				micros = append(micros, st.AnalyzeMicros)
				cpuMicros = append(cpuMicros, st.AnalyzeCPU)
				eventMicros = append(eventMicros, st.EventMicros)
			}
		}
	}
	collect(run(analyze.Request{Files: plain}))
	if len(offANSI) > 0 {
		collect(run(analyze.Request{Files: offANSI, Conf: map[string]string{"spark.sql.ansi.enabled": "false"}}))
	}
	// the duplicates: what the query returns (an event of the plain query), its repeats renamed
	// as the capture's DataFrame did, then the CTAS over it
	var renamed []analyze.Part
	for _, f := range run(analyze.Request{Files: dups, Reads: true}).Files {
		st := f.Statements[0]
		if st.Outcome != analyze.OutcomeEvent {
			t.Fatalf("%s as a query: %s %s %+v", f.Name, st.Outcome, st.Reason, st.Error)
		}
		env, err := events.Decode(st.Events[0])
		if err != nil {
			t.Fatal(err)
		}
		cols := uniqueNames(env.Nodes[env.Root].Output)
		renamed = append(renamed, ctas(f.Name, "SELECT * FROM (\n"+queries[f.Name]+"\n) AS q("+strings.Join(cols, ", ")+")"))
	}
	collect(run(analyze.Request{Files: renamed}))

	same, diffs := 0, []string{}
	for _, q := range sortedQueries(queries) {
		st := got[q]
		if st == nil || st.Outcome != analyze.OutcomeEvent {
			diffs = append(diffs, fmt.Sprintf("%s: no event: %+v", q, st))
			continue
		}
		if len(st.Events) != 1 {
			diffs = append(diffs, fmt.Sprintf("%s: %d events, want the CTAS's one", q, len(st.Events)))
			continue
		}
		it, err := process.Step{}.Item(st.Events[0])
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: the analyzed event does not process: %v", q, err))
			continue
		}
		if !it.Event.Markers.Analyzed {
			t.Errorf("%s: the event is not marked analyzed", q)
		}
		want := capturedLineage(t, filepath.Join(captured, q+".json.gz"))
		if d := lineageDiff(want, lineageText(it.Lineage)); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s differs from the captured run (- run, + analyzed):\n%s", q, d))
			continue
		}
		same++
	}
	from := "the TPC-DS DDL"
	if graph != nil {
		from = "the graph only (replayed from the captured runs; no DDL, no metastore)"
	}
	t.Logf("spark %s: TPC-DS with schemas from %s: %d of %d queries analyzed without running give exactly the lineage of the captured run",
		line, from, same, len(queries))
	t.Logf("spark %s: analysis per statement (first pass, JIT still warming): wall %s; CPU %s; serialization %s", line,
		spread(micros), spread(cpuMicros), spread(eventMicros))
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestAnalyzeGoldens analyzes every golden scenario that is plain SQL (plan/testdata/scenarios,
// no DataFrame program, no connector) and compares the lineage of its events with the lineage of
// the events captured from its run (plan/testdata/spark-<line>/<scenario>/, the goldens' input).
// A run's nested writes (the inner insert of a CTAS) have no lineage and no analyzed twin: they
// are left out. The scenarios that cannot agree are listed in analyzeGoldenLimits with the reason.
func TestAnalyzeGoldens(t *testing.T) {
	for _, line := range sparkLines(t) {
		t.Run("spark-"+line, func(t *testing.T) {
			t.Parallel()
			testAnalyzeGoldens(t, line)
		})
	}
}

// analyzeGoldenLimits are the golden scenarios whose analysis cannot give the run's lineage, and
// why: what only running gives.
var analyzeGoldenLimits = map[string]string{
	"write_path_roundtrip": "it reads by path the files an earlier statement wrote: Spark infers a path's schema from its files when it analyzes, and analysis wrote none",
	"read_only_chain":      "a read action's result is a dataset named after the action that ran (collectAsList): analysis runs none",
	"connect_sql":          "it ends with a read action (spark.colline.publishReads), whose result is a dataset named after the action that ran (collectAsList): analysis runs none",
	"write_jdbc_sql":       "a CTAS creates a JDBC table that later statements read: Spark reads a JDBC table's schema from the database when it analyzes, and analysis created none",
}

// hiveOnly says whether an analysis error is Spark's refusal of Hive-format tables without Hive
// support: on an analyzer with the memory catalog, the Hive-format scenarios end there (they agree
// on the lines whose analyzer has the hive catalog).
func hiveOnly(msg string) bool {
	return strings.Contains(msg, "NOT_SUPPORTED_COMMAND_WITHOUT_HIVE_SUPPORT") || strings.Contains(msg, "Hive support is required")
}

func testAnalyzeGoldens(t *testing.T, line string) {
	c := analyzerFor(t, line)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, _ := stack.RepoRoot()
	short := strings.SplitN(line, "_", 2)[0]
	files, _ := filepath.Glob(filepath.Join(root, "plan", "testdata", "scenarios", "*.sql"))
	header := regexp.MustCompile(`(?m)^-- (spark|connectors): (.*)$`)
	var parts []analyze.Part
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		skip := false
		for _, m := range header.FindAllStringSubmatch(string(data), -1) {
			if m[1] == "connectors" || m[1] == "spark" && !strings.Contains(" "+m[2]+" ", " "+short+" ") {
				skip = true
			}
		}
		if _, err := os.Stat(filepath.Join(root, "plan", "testdata", "spark-"+short, name)); err != nil || skip {
			continue
		}
		parts = append(parts, analyze.Part{Name: name, SQL: string(data)})
	}
	same, agreeLimited, needHive := 0, 0, 0
	var problems []string
	start := time.Now()
	for _, p := range parts {
		// one request per scenario: each starts from the empty catalog, as its run did
		resp, err := c.Analyze(ctx, analyze.Request{App: "colline-spark-sql", Files: []analyze.Part{p}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var errs []string
		hive := false
		for _, st := range resp.Files[0].Statements {
			switch st.Outcome {
			case analyze.OutcomeEvent:
				for _, raw := range st.Events {
					it, err := process.Step{}.Item(raw)
					if err != nil {
						errs = append(errs, fmt.Sprintf("line %d: %v", st.Line, err))
						continue
					}
					got = append(got, lineageText(it.Lineage))
				}
			case analyze.OutcomeError:
				errs = append(errs, fmt.Sprintf("line %d: %s: %s", st.Error.Line, st.Error.Stage, firstLine(st.Error.Message)))
				hive = hive || hiveOnly(st.Error.Message)
			}
		}
		want := runLineage(t, filepath.Join(root, "plan", "testdata", "spark-"+short, p.Name))
		d := lineageDiff(strings.Join(want, "==\n"), strings.Join(got, "==\n"))
		reason, limited := analyzeGoldenLimits[p.Name]
		switch {
		case d == "" && len(errs) == 0 && !limited:
			same++
		case d == "" && len(errs) == 0:
			// what only running gives may be on disk already (a path an earlier run wrote)
			same++
			t.Logf("%s agrees although it need not (%s)", p.Name, reason)
		case limited:
			agreeLimited++
			t.Logf("%s differs, as expected (%s)", p.Name, reason)
		case hive && analyzerCatalog(line) == "memory":
			needHive++
			t.Logf("%s needs Hive support, which the memory catalog lacks: %s", p.Name, errs[0])
		default:
			problems = append(problems, fmt.Sprintf("%s: %d run event(s), %d analyzed; errors: %v\n%s", p.Name, len(want), len(got), errs, d))
		}
	}
	t.Logf("spark %s (%s catalog): golden scenarios: %d of %d plain-SQL scenarios analyzed give exactly the lineage of their run; "+
		"%d differ as listed in analyzeGoldenLimits; %d need Hive support; %.1fs",
		line, analyzerCatalog(line), same, len(parts), agreeLimited, needHive, time.Since(start).Seconds())
	for _, p := range problems {
		t.Error(p)
	}
}

// lineageText is everything an event's lineage says but the run-specific storage locations:
// reads and writes with their columns and types, every edge and row-level dependency with every
// role, masking and expression, identity changes and unknown node classes.
func lineageText(l *plan.Lineage) string {
	var lines []string
	cols := func(cs []plan.Column) string {
		s := make([]string, len(cs))
		for i, c := range cs {
			s[i] = c.Name + ":" + c.Type
		}
		return strings.Join(s, ", ")
	}
	for _, r := range l.Reads {
		lines = append(lines, fmt.Sprintf("read %s %s (%s)", r.Kind, r.Key, cols(r.Columns)))
	}
	for _, w := range l.Writes {
		lines = append(lines, fmt.Sprintf("write %s %s %s (%s)", w.Kind, w.Key, w.Mode, cols(w.Columns)))
	}
	for _, c := range l.Changes {
		lines = append(lines, "change "+c.String())
	}
	for cls, n := range l.Unknown {
		lines = append(lines, fmt.Sprintf("unknown %s %d", cls, n))
	}
	for _, e := range l.Edges {
		for _, x := range e.Transformations {
			lines = append(lines, fmt.Sprintf("%s -> %s %s %q", e.Source, e.Target, x, x.Expr))
		}
	}
	for _, e := range l.RowDeps {
		for _, x := range e.Transformations {
			lines = append(lines, fmt.Sprintf("%s => %s %s %q", e.Source, e.Target, x, x.Expr))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// runLineage is the lineageText of each event a run captured in dir (*.json, in order), but its
// nested writes: they carry no lineage, and analysis has no twin of them.
func runLineage(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if env.Markers.NestedWrite {
			continue
		}
		lin, err := plan.Extract(env)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, lineageText(lin))
	}
	return out
}

func capturedLineage(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	env, err := events.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	lin, err := plan.Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	return lineageText(lin)
}

// lineageDiff lists the lines only in want (-) and only in got (+); "" when they are the same.
func lineageDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[l]++
	}
	for _, l := range g {
		inG[l]++
	}
	var b strings.Builder
	for _, l := range w {
		if inG[l] < inW[l] {
			b.WriteString("  - " + l + "\n")
		}
	}
	for _, l := range g {
		if inW[l] < inG[l] {
			b.WriteString("  + " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "  (the same lines, in another order or grouping)\n"
	}
	return b.String()
}

// uniqueNames renames the second and later occurrences of an output name <name>_2, _3, ... (case
// insensitively), as dev/tpcds/TpcdsDuplicateColumns.java does, backquoted for SQL.
func uniqueNames(out []events.Attribute) []string {
	seen := map[string]int{}
	names := make([]string, len(out))
	for i, a := range out {
		n := a.Name
		seen[strings.ToLower(n)]++
		if k := seen[strings.ToLower(n)]; k > 1 {
			n = fmt.Sprintf("%s_%d", n, k)
		}
		names[i] = analyze.Quote(n)
	}
	return names
}

// stripComments drops full-line -- comments and blank lines, as dev/tpcds/capture does.
func stripComments(sql string) string {
	var out []string
	for _, l := range strings.Split(sql, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.HasPrefix(strings.TrimSpace(l), "--") || l == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// sortedQueries are the query names in natural order: q1 q2 ... q14a q14b ... q99.
func sortedQueries(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for q := range m {
		out = append(out, q)
	}
	num := func(q string) (int, string) {
		n, i := 0, 1
		for i < len(q) && q[i] >= '0' && q[i] <= '9' {
			n = n*10 + int(q[i]-'0')
			i++
		}
		return n, q[i:]
	}
	sort.Slice(out, func(i, j int) bool {
		a, as := num(out[i])
		b, bs := num(out[j])
		if a != b {
			return a < b
		}
		return as < bs
	})
	return out
}

// spread is the median, 90th percentile and maximum of microsecond timings, in milliseconds.
func spread(us []int64) string {
	if len(us) == 0 {
		return "none"
	}
	s := append([]int64(nil), us...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(v int64) float64 { return float64(v) / 1000 }
	return fmt.Sprintf("median %.1f ms, p90 %.1f ms, max %.1f ms (%d statements)", ms(s[len(s)/2]), ms(s[len(s)*9/10]), ms(s[len(s)-1]), len(s))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

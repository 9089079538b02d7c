//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
)

// TestImpact checks `colline impact` end to end against a real Neo4j and a real analyzer:
//   - the graph holds the captured skeleton run (job spark_catalog/colline-spark-sql: orders and
//     customers → country_revenue → top_countries) and a second job, weekly-report, whose SQL
//     (report.sql) was analyzed against the graph's own tables (--schema-from-graph) and replayed
//     as analyzed events: top_countries → report;
//   - a change to the country_revenue job that renames revenue breaks what reads it: exit 3,
//     with top_countries (1 step) and report (2 steps, through weekly-report) downstream;
//   - a change of the orders column, which nothing reads, breaks and alters nothing: exit 0,
//     also with --fail-on alter;
//   - a change of revenue's expression alters top_countries: exit 0, and 4 with --fail-on alter.
func TestImpact(t *testing.T) {
	const line = "3.5_2.12"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver := s.Neo4j(ctx, t)
	// the shop datasets are this test's (TestSkeletonEndToEnd, which uses them too, runs before or after, never at once),
	// and so is the weekly-report job with its runs (an analyzed run's key is new each time: a run of
	// this test before, that failed or was stopped, would be counted)
	wipe := func(ctx context.Context) error {
		if _, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (j:Job {key: 'default/weekly-report'})
OPTIONAL MATCH (j)-[:HAS_RUN]->(r:Run)
DETACH DELETE r, j`, nil, neo4j.EagerResultTransformer); err != nil {
			return err
		}
		return stack.WipeKeys(ctx, driver, "spark_catalog/shop.")
	}
	if err := wipe(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wipe(context.Background()) })
	analyzer := analyzerProcess(t, line)
	bin := stack.TestColline(ctx, t, s.Root)
	colline := func(args ...string) (string, string, int) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = s.Root
		cmd.Env = append(os.Environ(), "COLLINE_NEO4J_URI="+s.Neo4jURI, "COLLINE_ANALYZER_URL="+analyzer.URL,
			"COLLINE_ANALYZER_TOKEN_FILE="+analyzer.TokenFile)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := exitCode(err)
		if code < 0 {
			t.Fatalf("colline %s: %v", strings.Join(args, " "), err)
		}
		return stdout.String(), stderr.String(), code
	}
	if out, errOut, code := colline("replay", "plan/testdata/spark-3.5/skeleton"); code != 0 {
		t.Fatalf("replay of the skeleton: exit %d\n%s%s", code, out, errOut)
	}
	// the second job: analyzed against the graph, its events replayed into it
	events := filepath.Join(t.TempDir(), "report.jsonl")
	out, errOut, code := colline("analyze", "--schema-from-graph", "--app", "weekly-report", "--format", "events", "e2e/testdata/analyze/report.sql")
	if code != 0 {
		t.Fatalf("analyze report.sql: exit %d\n%s", code, errOut)
	}
	if err := os.WriteFile(events, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := colline("replay", events); code != 0 {
		t.Fatalf("replay of report.sql's analyzed events: exit %d\n%s%s", code, out, errOut)
	}
	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (:Job {key: 'default/weekly-report'})-[:HAS_RUN]->(r:Run)
RETURN count(r) AS runs, all(x IN collect(r.analyzed) WHERE x) AS analyzed`, nil, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if runs, _ := res.Records[0].Get("runs"); runs != int64(1) {
		t.Fatalf("weekly-report has %v runs in the graph, want 1", runs)
	}
	if a, _ := res.Records[0].Get("analyzed"); a != true {
		t.Errorf("the weekly-report run is not marked analyzed")
	}

	job := "spark_catalog/colline-spark-sql"
	type change struct {
		Kind       string
		Column     string
		Breaking   bool
		Downstream []struct {
			Column string
			Hops   int
			Jobs   []string
		}
	}
	var report struct {
		Changes []change
		Summary struct {
			Breaking, Altering int
			DownstreamJobs     []string
		}
		Exit int
	}
	impact := func(file string, extra ...string) int {
		args := append([]string{"impact", "--job", job, "--format", "json"}, extra...)
		out, errOut, code := colline(append(args, file)...)
		if code == 1 || code == 2 {
			t.Fatalf("impact %s: exit %d\n%s", file, code, errOut)
		}
		report.Changes = nil
		jsonField(t, []byte(out), &report)
		if report.Exit != code {
			t.Errorf("impact %s: exit %d, the report says %d", file, code, report.Exit)
		}
		t.Logf("impact %s %v: exit %d, %d change(s), %d breaking, %d altering, downstream jobs %v", filepath.Base(file), extra, code,
			len(report.Changes), report.Summary.Breaking, report.Summary.Altering, report.Summary.DownstreamJobs)
		return code
	}

	// 1. breaking: revenue is gone
	if code := impact("e2e/testdata/analyze/country_revenue_breaking.sql"); code != 3 {
		t.Errorf("renaming revenue: exit %d, want 3", code)
	}
	var removed *change
	for i, c := range report.Changes {
		if c.Kind == "column_removed" && c.Column == "spark_catalog/shop.country_revenue#revenue" {
			removed = &report.Changes[i]
		}
	}
	if removed == nil || !removed.Breaking {
		t.Fatalf("no breaking column_removed of country_revenue#revenue in %+v", report.Changes)
	}
	var reached []string
	for _, d := range removed.Downstream {
		reached = append(reached, d.Column+" "+strings.Join(d.Jobs, ">"))
	}
	wantReached := []string{
		"spark_catalog/shop.top_countries#revenue " + job,
		"spark_catalog/shop.report#revenue " + job + ">default/weekly-report",
	}
	for _, w := range wantReached {
		if !slices.Contains(reached, w) {
			t.Errorf("downstream of the removed revenue: want %q in %q", w, reached)
		}
	}
	if !slices.Contains(report.Summary.DownstreamJobs, job) {
		t.Errorf("downstream jobs %v, want %s (it reads revenue into top_countries)", report.Summary.DownstreamJobs, job)
	}
	text, _, _ := colline("impact", "--job", job, "e2e/testdata/analyze/country_revenue_breaking.sql")
	md, _, _ := colline("impact", "--job", job, "--format", "markdown", "e2e/testdata/analyze/country_revenue_breaking.sql")
	if !strings.Contains(text, "BREAKS    column removed spark_catalog/shop.country_revenue#revenue") || !strings.Contains(md, "| BREAKS | column removed") {
		t.Errorf("the text or Markdown report does not say what breaks:\n%s\n%s", text, md)
	}
	t.Logf("text report:\n%s", text)

	// 2. nothing downstream reads orders
	for _, failOn := range []string{"breaking", "alter"} {
		if code := impact("e2e/testdata/analyze/country_revenue_orders.sql", "--fail-on", failOn); code != 0 {
			t.Errorf("changing orders, --fail-on %s: exit %d, want 0", failOn, code)
		}
	}
	if len(report.Changes) == 0 || report.Summary.Breaking+report.Summary.Altering != 0 {
		t.Errorf("changing orders: want changes that reach nothing, got %+v", report)
	}
	for _, c := range report.Changes {
		if c.Column != "spark_catalog/shop.country_revenue#orders" {
			t.Errorf("changing orders changed %s %s too", c.Kind, c.Column)
		}
	}

	// 3. revenue's values change: top_countries reads them
	if code := impact("e2e/testdata/analyze/country_revenue_net.sql"); code != 0 {
		t.Errorf("changing revenue's expression: exit %d, want 0 (it alters, it does not break)", code)
	}
	if report.Summary.Altering == 0 || report.Summary.Breaking != 0 {
		t.Errorf("changing revenue's expression: want altering changes only, got %+v", report.Summary)
	}
	if code := impact("e2e/testdata/analyze/country_revenue_net.sql", "--fail-on", "alter"); code != 4 {
		t.Errorf("changing revenue's expression, --fail-on alter: exit %d, want 4", code)
	}
}

//go:build browser

package ui_test

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

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/cli"
	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/ui"
)

// TestExplorerInChromium is the explorer as a user sees it: the colline binary (with the page
// bundle) serves it against a real Neo4j that `colline replay` loaded with the captured skeleton
// run, and headless Chromium (Debian's, driven by playwright-core) opens it; ui/web/test/*.test.mjs
// (node's test runner) click through it and assert what is drawn. A column with hostile names
// (the skeleton's lineage renamed, written through graph.Writer) checks that names stay text.
// `make ui-test` runs it; COLLINE_UI_SCREENSHOTS=dir keeps screenshots there (make
// ui-screenshots: docs/img).
func TestExplorerInChromium(t *testing.T) {
	uri := stack.TestNeo4jURI(t)
	if !ui.Built() {
		t.Fatal("the page bundle is not built: run make ui-bundle (make ui-test does)")
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	chromium, err := exec.Command(filepath.Join(root, "dev", "chromium")).Output()
	if err != nil {
		t.Fatalf("dev/chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	driver, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	const hostilePrefix = "test-ui-hostile/"
	clean := func() {
		for _, p := range []string{"spark_catalog/shop.", "spark_catalog/roles_several.", hostilePrefix} {
			if err := stack.WipeKeys(context.Background(), driver, p); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { driver.Close(context.Background()) })
	clean()

	dir := t.TempDir()
	bin := stack.TestColline(ctx, t, root)
	replay := exec.CommandContext(ctx, bin, "replay", "--neo4j", uri, filepath.Join(root, "plan", "testdata", "spark-3.5", "skeleton"))
	out, err := replay.CombinedOutput()
	if err != nil {
		t.Fatalf("colline replay: %v\n%s", err, out)
	}
	t.Logf("colline replay: %s", strings.TrimSpace(string(out)))
	// a UNION with a filter in one branch (roles_several's union_branch_filter): a row-level
	// dependency of some rows only
	replay = exec.CommandContext(ctx, bin, "replay", "--neo4j", uri,
		filepath.Join(root, "plan", "testdata", "spark-3.5", "roles_several", "0004-InsertIntoHadoopFsRelationCommand.json"))
	if out, err := replay.CombinedOutput(); err != nil {
		t.Fatalf("colline replay: %v\n%s", err, out)
	}
	hostile := writeHostile(t, ctx, driver, root, hostilePrefix)
	// tags (docs/tags.md): the orders' amount and id are tagged; the amount reaches both tables
	// unmasked, the id reaches country_revenue.orders through a count (masked)
	tagKey, tagSource := "ui-pii", "ui-test-"+stack.NewID()
	tagFile := filepath.Join(dir, "tags.yaml")
	if err := os.WriteFile(tagFile, []byte("version: 1\nsource: "+tagSource+"\ncolumns:\n  - dataset: spark_catalog/shop.orders\n    columns: [amount, order_id]\n    tags: {"+tagKey+": x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, bin, "tags", "load", "--neo4j", uri, tagFile).CombinedOutput(); err != nil {
		t.Fatalf("colline tags load: %v\n%s", err, out)
	}
	t.Cleanup(func() { graph.NewWriter(driver, "").RemoveTags(context.Background(), []string{"file:" + tagSource}) })

	// colline ui on a free port; its first line says where.
	t.Cleanup(clean) // after the explorer stops
	u := stack.StartUI(t, bin, filepath.Join(dir, "ui.log"), "COLLINE_NEO4J_URI="+uri)
	t.Logf("%s", u.Line)

	shots := os.Getenv("COLLINE_UI_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "screenshots")
	} else if !filepath.IsAbs(shots) {
		shots = filepath.Join(root, shots)
	}
	env := []string{"COLLINE_CHROMIUM=" + strings.TrimSpace(string(chromium)), "COLLINE_UI_SCREENSHOTS=" + shots,
		"COLLINE_HOSTILE_COLUMN=" + hostile.column, "COLLINE_HOSTILE_NAME=" + hostile.name, "COLLINE_TAG_KEY=" + tagKey}
	node(t, ctx, root, append(env, "COLLINE_UI_URL="+u.URL))

	// the SQL panel as make demo serves it: a warm analyzer (no DDL, no metastore), the explorer
	// sending it the SQL with the schemas of the tables it names read from the graph; the tests
	// named "SQL panel with the analyzer" (skipped above) paste SQL over known and unknown tables
	p, err := analyze.Start(ctx, analyze.Options{Launcher: filepath.Join(root, "dev", "spark-analyze")})
	if err != nil {
		t.Fatalf("the analyzer: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	t.Logf("analyzer: Spark %s at %s, ready in %.1fs", p.Spark, p.URL, p.Startup.Seconds())
	// warm, as make demo's is by the time a user pastes SQL: the first analyses of a fresh JVM
	// (inference's rounds included) are its slowest, and the explorer gives a request
	// COLLINE_UI_QUERY_TIMEOUT (15 s by default)
	warm := time.Now()
	if _, err := p.Client().Analyze(ctx, analyze.Request{App: "colline-ui-warm-up", Infer: true, Files: []analyze.Part{{Name: "warm.sql",
		SQL: "CREATE TABLE warm.t USING parquet AS SELECT s.id, sum(s.amount) AS total FROM warm.s s WHERE s.kind = 'x' GROUP BY s.id"}}}); err != nil {
		t.Fatalf("the analyzer's warm-up: %v", err)
	}
	t.Logf("analyzer warmed up in %.1fs", time.Since(warm).Seconds())
	withSQL := stack.StartUI(t, bin, filepath.Join(dir, "ui-sql.log"), "COLLINE_NEO4J_URI="+uri,
		"COLLINE_UI_ANALYZER_URL="+p.URL, "COLLINE_UI_ANALYZER_TOKEN_FILE="+p.TokenFile)
	node(t, ctx, root, append(env, "COLLINE_UI_URL="+withSQL.URL, "COLLINE_UI_ANALYZER=1"), "--test-name-pattern=SQL panel with the analyzer")
}

// node runs the page's tests (ui/web/test, node's test runner) with env, and fails t if one fails.
func node(t *testing.T, ctx context.Context, root string, env []string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", append(append([]string{"--test", "--test-reporter=spec", "--test-concurrency=1"}, args...), "test/")...)
	cmd.Dir = filepath.Join(root, "ui", "web")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s ui/web/test:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("the browser tests failed: %v", err)
	}
}

type hostileColumn struct{ column, name string }

// writeHostile writes the skeleton's last event with every key under prefix (so that it stays
// apart from the skeleton's graph) and its target table and one column renamed to markup, a
// bidirectional override and a newline (a mutation of the decoded lineage: Spark accepts such
// names quoted), and returns the renamed column's key and name.
func writeHostile(t *testing.T, ctx context.Context, d neo4j.DriverWithContext, root, prefix string) hostileColumn {
	t.Helper()
	evs, err := cli.Load([]string{filepath.Join(root, "plan", "testdata", "spark-3.5", "skeleton", "0004-8-InsertIntoHadoopFsRelationCommand.json")})
	if err != nil {
		t.Fatal(err)
	}
	const name = "<img src=x onerror=\"document.title='pwned'\">\u202e<b>rev\nenue</b>"
	ev := evs[0]
	ev.Env.EventID = prefix + ev.Env.EventID
	ev.Env.App.Namespace = prefix + ev.Env.App.Namespace
	target := ev.Lineage.Writes[0].Key
	hostile := prefix + target + "#" + strings.ToLower(name)
	key := func(k string) string {
		if k == target+"#revenue" {
			return hostile
		}
		return prefix + k
	}
	ds := func(d plan.Dataset) plan.Dataset {
		d.Key = prefix + d.Key
		if d.Key == prefix+target {
			d.Name = "shop.<script>alert(1)</script>"
		}
		d.Columns = slices.Clone(d.Columns)
		for i, c := range d.Columns {
			d.Columns[i].Key = key(strings.TrimPrefix(d.Key, prefix) + "#" + strings.ToLower(c.Name))
			if d.Columns[i].Key == hostile {
				d.Columns[i].Name = name
			}
		}
		return d
	}
	lin := *ev.Lineage
	lin.Reads = slices.Clone(lin.Reads)
	for i := range lin.Reads {
		lin.Reads[i] = ds(lin.Reads[i])
	}
	lin.Writes = slices.Clone(lin.Writes)
	for i := range lin.Writes {
		w := &lin.Writes[i]
		w.Dataset = ds(w.Dataset)
		w.Columns = slices.Clone(w.Dataset.Columns)
	}
	for _, edges := range []*[]plan.Edge{&lin.Edges, &lin.RowDeps} {
		*edges = slices.Clone(*edges)
		for i := range *edges {
			(*edges)[i].Source = key((*edges)[i].Source)
			(*edges)[i].Target = key((*edges)[i].Target)
		}
	}
	ev.Lineage = &lin
	if err := cli.Replay(ctx, graph.NewWriter(d, ""), []cli.Event{ev}, 1); err != nil {
		t.Fatalf("write the hostile names: %v", err)
	}
	return hostileColumn{column: hostile, name: name}
}

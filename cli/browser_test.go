package cli

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/neo4jbrowser"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/tags"
)

// The Neo4j Browser queries shipped in neo4jbrowser/queries (package neo4jbrowser), run against a real Neo4j
// loaded with the captured skeleton run through the real pipeline (events.Decode, plan.Extract,
// graph.Writer). Every key is prefixed so that the test shares the database with other tests.

func browserQueries(t *testing.T) map[string]string {
	t.Helper()
	qs := map[string]string{}
	for _, q := range neo4jbrowser.Queries() {
		qs[q.Name] = q.Text
	}
	if len(qs) == 0 {
		t.Fatal("no shipped queries")
	}
	return qs
}

// TestBrowserQueriesDocumented: docs/browser.md shows every shipped query as it is.
func TestBrowserQueriesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/browser.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, q := range browserQueries(t) {
		if !strings.Contains(string(doc), q) {
			t.Errorf("docs/browser.md does not contain %s.cypher verbatim", name)
		}
	}
}

// prefixed returns a copy of evs whose dataset, column, job and run keys start with prefix.
func prefixed(evs []Event, prefix string) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		env := *ev.Env
		env.EventID = prefix + env.EventID
		env.App.Namespace = prefix + env.App.Namespace
		lin := *ev.Lineage
		ds := func(d plan.Dataset) plan.Dataset {
			d.Key = prefix + d.Key
			d.Columns = slices.Clone(d.Columns)
			for j := range d.Columns {
				d.Columns[j].Key = prefix + d.Columns[j].Key
			}
			return d
		}
		lin.Reads = slices.Clone(lin.Reads)
		for j := range lin.Reads {
			lin.Reads[j] = ds(lin.Reads[j])
		}
		lin.Writes = slices.Clone(lin.Writes)
		for j := range lin.Writes {
			lin.Writes[j].Dataset = ds(lin.Writes[j].Dataset)
		}
		lin.Edges = slices.Clone(lin.Edges)
		for j := range lin.Edges {
			lin.Edges[j].Source = prefix + lin.Edges[j].Source
			lin.Edges[j].Target = prefix + lin.Edges[j].Target
		}
		lin.RowDeps = slices.Clone(lin.RowDeps)
		for j := range lin.RowDeps {
			lin.RowDeps[j].Source = prefix + lin.RowDeps[j].Source
			lin.RowDeps[j].Target = prefix + lin.RowDeps[j].Target
		}
		out[i] = Event{Source: ev.Source, Env: &env, Lineage: &lin}
	}
	return out
}

// testGraph connects to the test Neo4j (skipping t without one) and returns a driver and a key
// prefix of t's own. Cleanups run last-registered first, so t's nodes are deleted while the driver
// is still open (a deferred Close would run before any t.Cleanup).
func testGraph(t *testing.T) (neo4j.DriverWithContext, string) {
	t.Helper()
	driver, err := graph.NewDriver(stack.TestNeo4jURI(t), os.Getenv("COLLINE_TEST_NEO4J_USER"), os.Getenv("COLLINE_TEST_NEO4J_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(context.Background()) })
	prefix := "test-" + stack.NewID() + "/"
	t.Cleanup(func() {
		if err := stack.WipeKeys(context.Background(), driver, prefix); err != nil {
			t.Error(err)
		}
	})
	return driver, prefix
}

func TestBrowserQueries(t *testing.T) {
	driver, prefix := testGraph(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	evs, err := Load([]string{skeleton})
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(ctx, graph.NewWriter(driver, ""), prefixed(evs, prefix), 2); err != nil {
		t.Fatal(err)
	}

	const (
		job = "spark_catalog/colline-spark-sql"
		cr  = "spark_catalog/shop.country_revenue"
		tc  = "spark_catalog/shop.top_countries"
		ord = "spark_catalog/shop.orders"
		cus = "spark_catalog/shop.customers"
	)
	queries := browserQueries(t)
	tests := []struct {
		query  string
		params map[string]any
		want   []string // rows, "|"-separated, prefix removed, lists sorted, times as <time>
		paths  []string // for graph queries: the column keys on the returned paths
	}{
		{query: "01-find-column", params: map[string]any{"name": "revenue"}, want: []string{
			cr + "#revenue|table|decimal(20,2)|<time>",
			tc + "#revenue|table|decimal(20,2)|<time>",
		}},
		// the paths pass through the datasets whose rows a column decides
		{query: "02-upstream-graph", params: map[string]any{"column": tc + "#revenue"}, paths: []string{
			cr, cr + "#revenue", cus + "#country", cus + "#customer_id", ord + "#amount", ord + "#customer_id", ord + "#status", tc, tc + "#revenue",
		}},
		// every source reaches top_countries.revenue also through a row decision: the filter on
		// country_revenue.revenue (WHERE revenue > 100) decides which rows top_countries holds
		{query: "03-upstream-table", params: map[string]any{"column": tc + "#revenue"}, want: []string{
			cr + "|revenue|1|true|true",
			cus + "|country|2|false|true",
			cus + "|customer_id|2|false|true",
			ord + "|amount|2|true|true",
			ord + "|customer_id|2|false|true",
			ord + "|status|2|false|true",
		}},
		{query: "04-downstream-impact", params: map[string]any{"column": ord + "#amount"}, want: []string{
			cr + "|[revenue]|1|[" + job + "]",
			tc + "|[country revenue]|2|[" + job + "]",
		}},
		{query: "05-downstream-graph", params: map[string]any{"column": ord + "#amount"}, paths: []string{
			cr + "#revenue", ord + "#amount", tc, tc + "#country", tc + "#revenue",
		}},
		{query: "06-jobs", want: []string{job + "|4|<time>|0"}},
		{query: "07-job-reads-writes", params: map[string]any{"job": job}, want: []string{
			"READ|" + cr + "|table|1|<time>|[]",
			"READ|" + cus + "|table|1|<time>|[]",
			"READ|" + ord + "|table|1|<time>|[]",
			"WROTE|" + cr + "|table|1|<time>|[append]",
			"WROTE|" + cus + "|table|1|<time>|[append]",
			"WROTE|" + ord + "|table|1|<time>|[append]",
			"WROTE|" + tc + "|table|1|<time>|[append]",
		}},
		// upstream|downstream|FEEDS|DIRECT ones|DECIDES_ROWS|jobs|lastSeen
		{query: "08-table-lineage", want: []string{
			cr + "|" + tc + "|2|2|1|[" + job + "]|<time>",
			cus + "|" + cr + "|1|1|2|[" + job + "]|<time>",
			ord + "|" + cr + "|2|2|2|[" + job + "]|<time>",
		}},
		// 5 FEEDS and 5 DECIDES_ROWS (model 1 had 17 FEEDS: the row-level ones copied per column)
		{query: "09-stale-edges", params: map[string]any{"days": 0}, want: []string{job + "|10|<time>|<time>"}},
		{query: "09-stale-edges", params: map[string]any{"days": 36500}, want: nil},
		// job|runs|FEEDS|DECIDES_ROWS|already stale: all of the skeleton is older than now
		{query: "11-retention-preview", params: map[string]any{"runDays": 0, "edgeDays": 0}, want: []string{job + "|4|5|5|0"}},
		{query: "11-retention-preview", params: map[string]any{"runDays": 36500, "edgeDays": 36500}, want: nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.query, tc.params), func(t *testing.T) {
			q, ok := queries[tc.query]
			if !ok {
				t.Fatalf("no %s.cypher", tc.query)
			}
			if tc.query == "08-table-lineage" {
				// The query lists every pair in the graph, 500 at most; the database is shared with
				// other tests, whose pairs can fill the 500 before this test's prefix sorts.
				if !strings.HasSuffix(strings.TrimSpace(q), "LIMIT 500") {
					t.Fatal("08-table-lineage no longer ends with LIMIT 500")
				}
				q = strings.TrimSuffix(strings.TrimSpace(q), "LIMIT 500")
			}
			params := map[string]any{}
			for k, v := range tc.params {
				if s, ok := v.(string); ok && k != "name" {
					v = prefix + s
				}
				params[k] = v
			}
			res, err := neo4j.ExecuteQuery(ctx, driver, q, params, neo4j.EagerResultTransformer)
			if err != nil {
				t.Fatal(err)
			}
			if tc.paths != nil {
				keys := map[string]bool{}
				for _, rec := range res.Records {
					p, ok := rec.Values[0].(dbtype.Path)
					if !ok {
						t.Fatalf("not a path: %T", rec.Values[0])
					}
					for _, n := range p.Nodes {
						keys[strings.TrimPrefix(n.Props["key"].(string), prefix)] = true
					}
				}
				if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, tc.paths) {
					t.Errorf("columns on the paths:\n got %q\nwant %q", got, tc.paths)
				}
				return
			}
			var got []string
			for _, rec := range res.Records {
				if s, ok := rec.Values[0].(string); ok && !strings.HasPrefix(s, prefix) && !strings.HasPrefix(tc.query, "07") {
					continue // another test's data in the shared database
				}
				cells := make([]string, len(rec.Values))
				for i, v := range rec.Values {
					cells[i] = cell(v, prefix)
				}
				got = append(got, strings.Join(cells, "|"))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestMissingColumnLineageQuery: browser.md query 10 lists the write of a degraded captured event
// (markers.truncated, dev/capture --degraded), loaded through the real pipeline, and not the
// writes of whole events.
func TestMissingColumnLineageQuery(t *testing.T) {
	driver, prefix := testGraph(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	evs, err := Load([]string{degraded, skeleton})
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(ctx, graph.NewWriter(driver, ""), prefixed(evs, prefix), 10); err != nil {
		t.Fatal(err)
	}
	res, err := neo4j.ExecuteQuery(ctx, driver, browserQueries(t)["10-missing-column-lineage"], nil, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range res.Records {
		if s, _ := rec.Values[0].(string); !strings.HasPrefix(s, prefix) {
			continue // another test's data in the shared database
		}
		cells := make([]string, len(rec.Values))
		for i, v := range rec.Values {
			cells[i] = cell(v, prefix)
		}
		got = append(got, strings.Join(cells, "|"))
	}
	if want := []string{"spark_catalog/join_inner.dst|default/colline-capture|1|<time>"}; !slices.Equal(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
}

// cell renders one value: strings without the test prefix, lists sorted, times as <time>.
func cell(v any, prefix string) string {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, prefix, "")
	case time.Time:
		return "<time>"
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = cell(e, prefix)
		}
		slices.Sort(s)
		return "[" + strings.Join(s, " ") + "]"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// TestImpactQueries: browser.md queries 4 and 5 and graph.Reader.Downstream on a small graph built
// by hand, whose answers are known: a column's values (FEEDS) and the rows it decides (DECIDES_ROWS,
// reaching every column of the dataset), the nearest distance in lineage steps when two paths
// reach a column, the jobs that write, and nothing upstream.
func TestImpactQueries(t *testing.T) {
	driver, p := testGraph(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// u.s -> a.v -> b.v -> d.z, d.z decides e's rows; a.k decides b's rows and feeds c.x directly
	// (and b.w feeds c.x: a.k reaches c.x in 1 step, not 2); job j<x> writes dataset x.
	tables := map[string][]string{"u": {"s"}, "a": {"k", "v"}, "b": {"k", "v", "w"}, "c": {"x"}, "d": {"z"}, "e": {"q", "r"}}
	feeds := [][3]string{{"u.s", "a.v", "a"}, {"a.v", "b.v", "b"}, {"b.w", "c.x", "c"}, {"a.k", "c.x", "c"}, {"b.v", "d.z", "d"}}
	decides := [][3]string{{"a.k", "b", "b"}, {"d.z", "e", "e"}}
	// n.k feeds near.x (1 relationship) and decides the rows of big (2 relationships: DECIDES_ROWS,
	// HAS_COLUMN), whose 1200 columns exceed the query's LIMIT 1000: the nearest are kept, and of
	// big's columns (all as near) the first 999 by key. They are created in a shuffled order, so
	// that a query keeping the first it meets keeps others.
	bigCols := make([]string, 1200)
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(len(bigCols)) {
		bigCols[i] = fmt.Sprintf("c%04d", j)
	}
	tables["n"], tables["near"], tables["big"] = []string{"k"}, []string{"x"}, bigCols
	feeds = append(feeds, [3]string{"n.k", "near.x", "near"})
	decides = append(decides, [3]string{"n.k", "big", "big"})
	col := func(s string) string { return p + strings.Replace(s, ".", "#", 1) }
	run := func(q string, params map[string]any) {
		t.Helper()
		if _, err := neo4j.ExecuteQuery(ctx, driver, q, params, neo4j.EagerResultTransformer); err != nil {
			t.Fatal(err)
		}
	}
	for ds, cols := range tables {
		run(`CREATE (:Job {key: $ds + 'job'})-[:HAS_RUN]->(:Run {key: $ds + 'run'})-[:WROTE]->(d:Dataset {key: $ds})
WITH d UNWIND $cols AS c CREATE (d)-[:HAS_COLUMN]->(:Column {key: $ds + '#' + c, name: c})`, map[string]any{"ds": p + ds, "cols": cols})
	}
	for _, f := range feeds {
		run(`MATCH (s:Column {key: $s}), (t:Column {key: $t}) CREATE (s)-[:FEEDS {job: $j}]->(t)`, map[string]any{"s": col(f[0]), "t": col(f[1]), "j": p + f[2] + "job"})
	}
	for _, f := range decides {
		run(`MATCH (s:Column {key: $s}), (t:Dataset {key: $t}) CREATE (s)-[:DECIDES_ROWS {job: $j}]->(t)`, map[string]any{"s": col(f[0]), "t": p + f[1], "j": p + f[2] + "job"})
	}

	queries := browserQueries(t)
	for _, tc := range []struct {
		start string
		want  []string // query 4: dataset|columns|hops|viaJobs
		paths []string // query 5: the nodes on the returned paths
		down  []string // Reader.Downstream(start, 4)
	}{
		{"a.k",
			[]string{"b|[k v w]|1|[bjob]", "c|[x]|1|[cjob]", "d|[z]|2|[djob]", "e|[q r]|3|[ejob]"},
			[]string{"a#k", "b", "b#k", "b#v", "b#w", "c#x", "d#z", "e", "e#q", "e#r"},
			[]string{"b#k", "b#v", "b#w", "c#x", "d#z"}}, // e's columns are 5 relationships away
		{"a.v",
			[]string{"b|[v]|1|[bjob]", "d|[z]|2|[djob]", "e|[q r]|3|[ejob]"},
			[]string{"a#v", "b#v", "d#z", "e", "e#q", "e#r"},
			[]string{"b#v", "d#z", "e#q", "e#r"}},
		{"c.x", nil, nil, nil},
	} {
		t.Run(tc.start, func(t *testing.T) {
			params := map[string]any{"column": col(tc.start)}
			res, err := neo4j.ExecuteQuery(ctx, driver, queries["04-downstream-impact"], params, neo4j.EagerResultTransformer)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rec := range res.Records {
				cells := make([]string, len(rec.Values))
				for i, v := range rec.Values {
					cells[i] = cell(v, p)
				}
				got = append(got, strings.Join(cells, "|"))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("query 4 rows:\n got %q\nwant %q", got, tc.want)
			}

			res, err = neo4j.ExecuteQuery(ctx, driver, queries["05-downstream-graph"], params, neo4j.EagerResultTransformer)
			if err != nil {
				t.Fatal(err)
			}
			keys := map[string]bool{}
			for _, rec := range res.Records {
				for _, n := range rec.Values[0].(dbtype.Path).Nodes {
					keys[strings.TrimPrefix(n.Props["key"].(string), p)] = true
				}
			}
			if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, tc.paths) {
				t.Errorf("query 5 nodes on the paths:\n got %q\nwant %q", got, tc.paths)
			}

			down, err := graph.NewReader(driver, "").Downstream(ctx, col(tc.start), 4)
			if err != nil {
				t.Fatal(err)
			}
			for i := range down {
				down[i] = strings.TrimPrefix(down[i], p)
			}
			if !slices.Equal(down, tc.down) && len(down)+len(tc.down) > 0 {
				t.Errorf("Reader.Downstream(%s, 4):\n got %q\nwant %q", tc.start, down, tc.down)
			}
		})
	}

	res, err := neo4j.ExecuteQuery(ctx, driver, queries["04-downstream-impact"], map[string]any{"column": col("n.k")}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(bigCols)
	nearest := []string{"big|[" + strings.Join(bigCols[:999], " ") + "]|1", "near|[x]|1"}
	var got []string
	for _, rec := range res.Records {
		got = append(got, fmt.Sprintf("%s|%s|%v", cell(rec.Values[0], p), cell(rec.Values[1], p), rec.Values[2]))
	}
	if !slices.Equal(got, nearest) {
		t.Errorf("query 4 past its LIMIT:\n got %.300q\nwant %.300q", got, nearest)
	}
	reached, err := graph.NewReader(driver, "").Reach(ctx, []string{col("n.k")}, 20)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, x := range reached {
		got = append(got, fmt.Sprintf("%s %d %s", strings.TrimPrefix(x.Column, p), x.Hops, strings.ReplaceAll(strings.Join(x.Jobs, ">"), p, "")))
	}
	want := []string{"near#x 1 nearjob"}
	for _, c := range bigCols[:999] {
		want = append(want, "big#"+c+" 1 bigjob")
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Reader.Reach past its limit:\n got %.300q\nwant %.300q", got, want)
	}
	// query 5: big and near.x (1 relationship), then the first 998 of big's columns by key (2)
	res, err = neo4j.ExecuteQuery(ctx, driver, queries["05-downstream-graph"], map[string]any{"column": col("n.k")}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, rec := range res.Records {
		nodes := rec.Values[0].(dbtype.Path).Nodes
		ends = append(ends, strings.TrimPrefix(nodes[len(nodes)-1].Props["key"].(string), p))
	}
	want = []string{"big", "near#x"}
	for _, c := range bigCols[:998] {
		want = append(want, "big#"+c)
	}
	if !slices.Equal(ends, want) {
		t.Errorf("query 5 past its LIMIT: paths ending in\n %.300q\nwant %.300q", ends, want)
	}
}

// TestTagBrowserQueries: browser.md queries 12 to 14 over the skeleton with orders.amount tagged
// by an exact rule and orders.order_id by a pattern: amount reaches country_revenue.revenue
// (through sum) and top_countries.revenue unmasked; order_id reaches country_revenue.orders only
// through count(), masked.
func TestTagBrowserQueries(t *testing.T) {
	driver, prefix := testGraph(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	evs, err := Load([]string{skeleton})
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(ctx, graph.NewWriter(driver, ""), prefixed(evs, prefix), 2); err != nil {
		t.Fatal(err)
	}
	tag, src := "pii-"+stack.NewID(), "file:"+prefix+"tags.yaml"
	ord := prefix + "spark_catalog/shop.orders"
	w := graph.NewWriter(driver, "")
	if err := w.WriteTags(ctx, []graph.TagSet{{Key: src, Source: src, Rules: []tags.Rule{
		{Tag: tags.Tag{Key: tag, Value: "amount", Source: src}, Dataset: tags.Glob(ord), Column: "amount"},
		{Tag: tags.Tag{Key: tag, Value: "id", Source: src}, Dataset: tags.Glob(prefix + "spark_catalog/shop.or*"), Column: "order_?d"},
	}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.RemoveTags(context.Background(), []string{src}) })
	queries := browserQueries(t)
	rows := func(name string, params map[string]any) []string {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, driver, queries[name], params, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out []string
		for _, rec := range res.Records {
			var cells []string
			for i, v := range rec.Values {
				if _, isPath := v.(dbtype.Path); isPath {
					continue
				}
				if rec.Keys[i] == "tag" && v != tag {
					cells = nil // another test's tag in the shared database
					break
				}
				cells = append(cells, strings.ReplaceAll(cell(v, prefix), tag, "<tag>"))
			}
			if cells != nil {
				out = append(out, strings.Join(cells, "|"))
			}
		}
		return out
	}
	const job = "spark_catalog/colline-spark-sql"
	cr, tc := "spark_catalog/shop.country_revenue", "spark_catalog/shop.top_countries"
	for _, c := range []struct {
		name   string
		params map[string]any
		want   []string
	}{
		{"12-tags", nil, []string{"<tag>|file:tags.yaml|2|[spark_catalog/shop.or*#order_?d spark_catalog/shop.orders#amount]|pass|[]"}},
		{"13-tag-reach", map[string]any{"tag": tag}, []string{
			cr + "|orders|masked|1|spark_catalog/shop.orders#order_id|[" + job + "]",
			cr + "|revenue|unmasked|1|spark_catalog/shop.orders#amount|[" + job + "]",
			tc + "|revenue|unmasked|2|spark_catalog/shop.orders#amount|[" + job + " " + job + "]",
		}},
		{"14-column-tags", map[string]any{"column": prefix + tc + "#revenue"}, []string{"<tag>|amount|file:tags.yaml|unmasked|2"}},
		{"14-column-tags", map[string]any{"column": prefix + cr + "#orders"}, []string{"<tag>|id|file:tags.yaml|masked|1"}},
	} {
		if got := rows(c.name, c.params); !slices.Equal(got, c.want) {
			t.Errorf("%s %v:\n got %q\nwant %q", c.name, c.params, got, c.want)
		}
	}
}

package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/tags"
)

// TestTPCDSReach is the tags' acceptance test on TPC-DS: the captured corpus of a Spark line
// (plan/testdata/tpcds, 103 CTAS events) replayed into Neo4j with `colline replay`, the customer's
// personal columns tagged by a tag file (testdata/tags/tpcds-pii.yaml) loaded with `colline tags
// load`, and the report of `colline tags reach` compared, column by column, with the truth
// derived by hand from the queries' SQL (testdata/tags/tpcds-pii-truth.txt). Every difference is
// listed. The graph is shared with other tests: the corpus's databases, app, event ids and the
// tag key are given a prefix of this run (tpcds → <p>tpcds, …), and the report is read back
// without it.
func TestTPCDSReach(t *testing.T) {
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if uri == "" {
		t.Skip("COLLINE_TEST_NEO4J_URI is not set; run `dev/services start neo4j` and set it to bolt://127.0.0.1:17687")
	}
	for _, line := range []string{"spark-3.5", "spark-4.1"} {
		t.Run(line, func(t *testing.T) { testTPCDSReach(t, uri, line) })
	}
}

func testTPCDSReach(t *testing.T, uri, line string) {
	ctx := context.Background()
	b := make([]byte, 3)
	rand.Read(b)
	p := "tg" + hex.EncodeToString(b) + "_"
	key := p + "pii"
	driver, err := graph.NewDriver(uri, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(ctx) }) // after the cleanup below
	t.Cleanup(func() {
		for _, prefix := range []string{"spark_catalog/" + p, "default/colline-" + p, p} {
			stack.WipeKeys(ctx, driver, prefix)
		}
		graph.NewWriter(driver, "").RemoveTags(ctx, []string{"file:" + p + "tpcds-pii"})
	})

	// the corpus, renamed
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join("../plan/testdata/tpcds", line, "q*.json.gz"))
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".nested.json.gz") {
			continue // no lineage (plan/testdata/tpcds/README.md)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := io.ReadAll(z)
		if err != nil {
			t.Fatal(err)
		}
		ev = bytes.ReplaceAll(ev, []byte("tpcds"), []byte(p+"tpcds"))
		ev = bytes.Replace(ev, []byte(`"eventId":"`), []byte(`"eventId":"`+p), 1)
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		if err := os.WriteFile(filepath.Join(dir, name), ev, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 103 {
		t.Fatalf("%d TPC-DS events of %s, want 103", n, line)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		start := time.Now()
		if code := Main(ctx, "test", args, &out, &errOut); code != want {
			t.Fatalf("colline %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, errOut.String())
		}
		t.Logf("colline %s: %v", strings.Join(args[:2], " "), time.Since(start).Round(time.Millisecond))
		return out.String()
	}
	run(0, "replay", "--neo4j", uri, dir)

	tagFile := func(agg string) string {
		src, err := os.ReadFile("testdata/tags/tpcds-pii.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(src), "tpcds", p+"tpcds")
		s = strings.ReplaceAll(s, "\n  pii:\n", "\n  "+key+":\n")
		s = strings.ReplaceAll(s, "{pii:", "{"+key+":")
		s = strings.ReplaceAll(s, "aggregation: pass", "aggregation: "+agg)
		f := filepath.Join(t.TempDir(), "tags.yaml")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	run(0, "tags", "load", "--neo4j", uri, tagFile("pass"))
	js := run(0, "tags", "reach", "--neo4j", uri, "--format", "json", key)
	var ans tags.ReachAnswer
	if err := json.Unmarshal([]byte(js), &ans); err != nil {
		t.Fatal(err)
	}
	got := truthLines(&ans, p)
	raw, err := os.ReadFile("testdata/tags/tpcds-pii-truth.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want, knownMissing, knownUnexpected []string
	for _, l := range strings.Split(string(raw), "\n") {
		switch l = strings.TrimSpace(l); {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "- "):
			knownMissing = append(knownMissing, l[2:])
		case strings.HasPrefix(l, "+ "):
			knownUnexpected = append(knownUnexpected, l[2:])
		default:
			want = append(want, l)
		}
	}
	slices.Sort(want)
	var missing, unexpected []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			unexpected = append(unexpected, g)
		}
	}
	un, agg, masked, datasets, uses := ans.Counts()
	t.Logf("%s: reach of pii: %d sources, %d columns in %d datasets (%d unmasked, %d aggregated, %d masked), %d indirect uses; %d of the truth's %d lines found",
		line, len(ans.Sources), len(ans.Columns), datasets, un, agg, masked, uses, len(want)-len(missing), len(want))
	t.Logf("%s: differences (listed with their reasons in the truth file):\n  - %s\n  + %s", line, strings.Join(missing, "\n  - "), strings.Join(unexpected, "\n  + "))
	if !slices.Equal(missing, knownMissing) || !slices.Equal(unexpected, knownUnexpected) {
		t.Errorf("the report differs from the truth otherwise than the truth file lists:\nmissing (in the truth, not in the report):\n  %s\nunexpected (in the report, not in the truth):\n  %s",
			strings.Join(missing, "\n  "), strings.Join(unexpected, "\n  "))
	}

	// the other formats say the same
	csv := run(0, "tags", "reach", "--neo4j", uri, "--format", "csv", key)
	rows := 0
	for _, c := range ans.Columns {
		rows += len(c.Arrivals)
	}
	if lines := strings.Count(csv, "\n"); lines != rows+1 {
		t.Errorf("csv: %d lines, want %d arrivals and a header", lines, rows)
	}
	table := run(0, "tags", "reach", "--neo4j", uri, key)
	if !strings.Contains(table, fmt.Sprintf("reach: %d column(s) in %d dataset(s): %d unmasked", len(ans.Columns), datasets, un)) {
		t.Errorf("table:\n%s", table)
	}

	// the column view explains a target's tags hop by hop
	col := run(0, "tags", "column", "--neo4j", uri, "spark_catalog/"+p+"tpcds_out.q84#customername")
	for _, s := range []string{key + "=name unmasked, source file:" + p + "tpcds-pii", "from spark_catalog/" + p + "tpcds.customer#c_first_name in 1 hop(s)",
		"-> spark_catalog/" + p + "tpcds_out.q84#customername [default/colline-" + p + "tpcds] DIRECT/TRANSFORMATION"} {
		if !strings.Contains(col, s) {
			t.Errorf("tags column of q84#customername lacks %q:\n%s", s, col)
		}
	}

	// the policy after the run: pii is allowed in tpcds only, so every unmasked column of
	// tpcds_out is a violation, and check exits 5
	check := run(ExitTagPolicy, "tags", "check", "--neo4j", uri, "--format", "json")
	var vs []tags.Violation
	if err := json.Unmarshal([]byte(check), &vs); err != nil {
		t.Fatal(err)
	}
	var outCols int
	for _, c := range ans.Columns {
		if c.Status == tags.Unmasked && strings.Contains(c.Dataset, "tpcds_out.") {
			outCols++
		}
	}
	mine := 0
	for _, v := range vs {
		if v.Tag == key {
			mine++
		}
	}
	if mine != outCols || outCols == 0 {
		t.Errorf("check: %d violations of %s, want the %d unmasked columns of tpcds_out", mine, key, outCols)
	}

	checkByDataset(t, ctx, graph.NewReader(driver, "").Tags(), &ans)

	// with aggregation: stop, q18's average of the birth year is aggregated, and stops there
	run(0, "tags", "load", "--neo4j", uri, tagFile("stop"))
	js = run(0, "tags", "reach", "--neo4j", uri, "--format", "json", key)
	var stop tags.ReachAnswer
	if err := json.Unmarshal([]byte(js), &stop); err != nil {
		t.Fatal(err)
	}
	checkByDataset(t, ctx, graph.NewReader(driver, "").Tags(), &stop)
	var diff []string
	for _, l := range truthLines(&stop, p) {
		if !slices.Contains(got, l) {
			diff = append(diff, l)
		}
	}
	if strings.Join(diff, "; ") != "q18#agg6 aggregated <- customer#c_birth_year" {
		t.Errorf("aggregation stop: lines not in the pass report: %v, want only q18#agg6 aggregated", diff)
	}

	// the tags of every column of the corpus, at once (as the explorer's badges), are the walk's:
	// the graph answers the columns no tag can reach without walking them (tags.Upstreamer), here
	// with the file's exact rules and a pattern rule as well
	patSource := "file:" + p + "pattern"
	t.Cleanup(func() { graph.NewWriter(driver, "").RemoveTags(ctx, []string{patSource}) })
	if err := graph.NewWriter(driver, "").WriteTags(ctx, []graph.TagSet{{Key: patSource, Source: patSource, Rules: []tags.Rule{{
		Tag: tags.Tag{Key: p + "zip", Value: "zip", Source: patSource}, Dataset: tags.Glob("spark_catalog/" + p + "tpcds.customer_addr*"), Column: "ca_?ip"}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (c:Column) WHERE c.key STARTS WITH $p RETURN c.key AS key ORDER BY key`,
		map[string]any{"p": "spark_catalog/" + p}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, rec := range res.Records {
		k, _ := rec.Get("key")
		all = append(all, k.(string))
	}
	reader := graph.NewReader(driver, "").Tags()
	type walkOnly struct{ tags.Graph } // neither an Upstreamer nor a Coner: steps only
	pruned, err := tags.Of(ctx, reader, all, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	walked, err := tags.Of(ctx, walkOnly{reader}, all, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ups, err := reader.Upstream(ctx, all, 1000)
	if err != nil {
		t.Fatal(err)
	}
	untagged, zips := 0, 0
	for _, u := range ups {
		if !u.Tagged && !u.Structs {
			untagged++
		}
	}
	for _, ct := range walked {
		for _, c := range ct.Tags {
			if c.Tag.Key == p+"zip" {
				zips++
			}
		}
	}
	if fmt.Sprint(pruned) != fmt.Sprint(walked) || untagged == 0 || zips == 0 {
		t.Errorf("tags of %d columns: %d answered without a walk, %d zip arrivals; the answers equal: %v", len(all), untagged, zips, fmt.Sprint(pruned) == fmt.Sprint(walked))
	}
}

// checkByDataset holds the reach per dataset (what the explorer's panel asks first), counted in
// the server, equal to the full report's grouping, full (every dataset of its columns and of its
// indirect uses, each count); and each dataset's columns (the panel's second request) equal to
// the full report's columns of that dataset: status, whether allowed, and each arrival's source,
// status and number of hops.
func checkByDataset(t *testing.T, ctx context.Context, g *graph.TagGraph, full *tags.ReachAnswer) {
	t.Helper()
	var sources []string
	for _, s := range full.Sources {
		sources = append(sources, s.Column)
	}
	counted, err := g.CountReach(ctx, sources, full.Policy.Aggregation == tags.AggregationStop, tags.DefaultMaxColumns)
	if err != nil {
		t.Fatal(err)
	}
	if !counted.Exact {
		t.Fatalf("aggregation %s: the server did not count the reach (Exact false): the test would compare the walk with itself", full.Policy.Aggregation)
	}
	per, err := tags.ReachByDataset(ctx, g, full.Tag, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := tags.Group(full)
	if len(want.Datasets) == 0 || want.Indirect == 0 || want.Columns == len(full.Sources) {
		t.Fatalf("the full report is too small to compare with: %+v", want)
	}
	if got, w := fmt.Sprintf("%+v", per), fmt.Sprintf("%+v", want); got != w {
		t.Errorf("aggregation %s: the reach per dataset\n%s\nis not the full report's grouping\n%s", full.Policy.Aggregation, got, w)
	}
	arrivals := func(cs []tags.Reached) []string {
		var out []string
		for _, c := range cs {
			for _, a := range c.Arrivals {
				out = append(out, fmt.Sprintf("%s %s allowed=%v <- %s %s in %d", c.Column, c.Status, c.Allowed, a.From, a.Status, a.Hops))
			}
		}
		return out
	}
	for _, d := range want.Datasets {
		if d.Unmasked+d.Aggregated+d.Masked == 0 {
			continue
		}
		cols, err := g.DatasetColumns(ctx, d.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		in, err := tags.ReachIn(ctx, g, full.Tag, d.Dataset, cols, tags.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var mine []tags.Reached
		for _, c := range full.Columns {
			if c.Dataset == d.Dataset {
				mine = append(mine, c)
			}
		}
		if got, w := arrivals(in.Columns), arrivals(mine); !slices.Equal(got, w) || len(in.Datasets) != 1 || in.Datasets[0] != d.DatasetReach {
			t.Errorf("aggregation %s, the columns of %s:\n%s\n%+v\nwant\n%s\n%+v", full.Policy.Aggregation, d.Dataset, strings.Join(got, "\n"), in.Datasets, strings.Join(w, "\n"), d.DatasetReach)
		}
	}
}

// truthLines renders a reach answer over the renamed corpus as the truth file's lines, sorted:
// arrivals in tpcds_out, and the rows that tagged columns decide there.
func truthLines(ans *tags.ReachAnswer, p string) []string {
	short := func(k string) string {
		return strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(k, "spark_catalog/"+p+"tpcds_out."), "spark_catalog/"+p+"tpcds."), "spark_catalog/")
	}
	var out []string
	for _, c := range ans.Columns {
		if !strings.HasPrefix(c.Dataset, "spark_catalog/"+p+"tpcds_out.") {
			continue
		}
		for _, a := range c.Arrivals {
			out = append(out, fmt.Sprintf("%s %s <- %s", short(c.Column), a.Status, short(a.From)))
		}
	}
	for _, u := range ans.Indirect {
		var roles []string
		for _, r := range u.Roles {
			if !slices.Contains(roles, r.Subtype) {
				roles = append(roles, r.Subtype)
			}
		}
		slices.Sort(roles)
		if u.Kind == tags.UseRows {
			out = append(out, fmt.Sprintf("%s rows <- %s %s", short(u.Target), short(u.Via), strings.Join(roles, ",")))
		} else {
			out = append(out, fmt.Sprintf("%s value <- %s %s", short(u.Target), short(u.Via), strings.Join(roles, ",")))
		}
	}
	slices.Sort(out)
	return out
}

// TestExplainTags: explain --tags on the captured skeleton run, offline: orders.amount and
// orders.order_id are tagged; the amount reaches country_revenue.revenue through sum() and,
// in the next event, top_countries.revenue (2 hops from the tagged column); the id reaches
// country_revenue.orders through count(), masked, and stops there.
func TestExplainTags(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tags.yaml")
	os.WriteFile(f, []byte("version: 1\nsource: t\ncolumns:\n  - dataset: spark_catalog/shop.orders\n    columns: [amount, order_id]\n    tags: {pii: x}\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), "test", []string{"explain", "--tags", f, skeleton}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	_, report, ok := strings.Cut(out.String(), "# tags:")
	if !ok {
		t.Fatalf("no tag report:\n%s", out.String())
	}
	var lines []string
	for _, l := range strings.Split(report, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	report = strings.Join(lines, "\n")
	for _, want := range []string{
		"spark_catalog/shop.country_revenue#orders pii=x (file:t) masked yes spark_catalog/shop.orders#order_id 1",
		"spark_catalog/shop.country_revenue#revenue pii=x (file:t) unmasked yes spark_catalog/shop.orders#amount 1",
		"spark_catalog/shop.top_countries#revenue pii=x (file:t) unmasked yes spark_catalog/shop.orders#amount 2",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "top_countries#country") {
		t.Errorf("country is not tagged:\n%s", report)
	}
	if code := Main(context.Background(), "test", []string{"explain", "--tags", f, "--format", "json", skeleton}, &out, &errOut); code != 2 {
		t.Errorf("--tags with json: exit %d, want 2 (usage)", code)
	}
}

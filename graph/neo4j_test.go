package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Integration tests against a real Neo4j (dev/services start neo4j). Every test writes under its
// own key prefix and only looks at keys with that prefix, so tests can share the database with
// each other and with other packages' tests.

func testDriver(t *testing.T) neo4j.DriverWithContext {
	t.Helper()
	uri := os.Getenv("COLLINE_TEST_NEO4J_URI")
	if uri == "" {
		t.Skip("COLLINE_TEST_NEO4J_URI is not set; run `dev/services start neo4j` and set it to bolt://127.0.0.1:17687")
	}
	d, err := NewDriver(uri, os.Getenv("COLLINE_TEST_NEO4J_USER"), os.Getenv("COLLINE_TEST_NEO4J_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := NewWriter(d, "").Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func testPrefix(t *testing.T) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "test-" + hex.EncodeToString(b) + "/"
}

// snapshot renders every node and relationship under prefix with all its properties, one sorted
// line each.
func snapshot(t *testing.T, d neo4j.DriverWithContext, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	for _, q := range []string{
		// a column's lastSeen as readers take it (ColumnLastSeen), not as stored
		`MATCH (n) WHERE n.key STARTS WITH $p
		 OPTIONAL MATCH (d:Dataset {key: n.datasetKey}) WHERE n:Column
		 RETURN labels(n)[0] + ' ' + n.key AS id, CASE WHEN n:Column THEN n {.*, lastSeen: ` + ColumnLastSeen("n", "d") + `} ELSE properties(n) END AS props`,
		`MATCH (a)-[r]->(b) WHERE a.key STARTS WITH $p OR b.key STARTS WITH $p
		 RETURN a.key + ' -' + type(r) + '-> ' + b.key AS id, properties(r) AS props`,
	} {
		res, err := neo4j.ExecuteQuery(ctx, d, q, map[string]any{"p": prefix}, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range res.Records {
			id, _ := rec.Get("id")
			props, _ := rec.Get("props")
			m := props.(map[string]any)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var b strings.Builder
			fmt.Fprint(&b, id)
			for _, k := range keys {
				v := m[k]
				if tm, ok := v.(time.Time); ok {
					v = tm.UTC().Format(time.RFC3339Nano)
				}
				fmt.Fprintf(&b, " %s=%v", k, v)
			}
			lines = append(lines, b.String())
		}
	}
	slices.Sort(lines)
	return lines
}

func edgesUnder(t *testing.T, r *Reader, prefix string) []EdgeRow {
	t.Helper()
	all, err := r.Edges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []EdgeRow
	for _, e := range all {
		if strings.HasPrefix(e.Source, prefix) {
			out = append(out, e)
		}
	}
	return out
}

func TestBootstrapIdempotent(t *testing.T) {
	d := testDriver(t) // bootstraps once
	w := NewWriter(d, "")
	ctx := context.Background()
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatalf("second bootstrap: %v", err)
	}
	res, err := neo4j.ExecuteQuery(ctx, d, `SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names`, nil, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := res.Records[0].Get("names")
	for _, want := range []string{"dataset_key", "column_key", "job_key", "run_key"} {
		if !slices.Contains(names.([]any), any(want)) {
			t.Errorf("constraint %s missing; have %v", want, names)
		}
	}
}

// Writers bootstrapping a graph at the same time (consumers, or test packages run in parallel)
// all succeed: a schema rule created meanwhile by another one is not an error. The index is
// dropped first so that the race is on its creation.
func TestBootstrapConcurrent(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		if _, err := neo4j.ExecuteQuery(ctx, d, `DROP INDEX column_name IF EXISTS`, nil, neo4j.EagerResultTransformer); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 4)
		for range 4 {
			go func() { errs <- NewWriter(d, "").Bootstrap(ctx) }()
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: concurrent bootstrap: %v", round, err)
			}
		}
	}
}

func TestCreatedMeanwhile(t *testing.T) {
	for code, want := range map[string]bool{
		"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists": true,
		"Neo.ClientError.Schema.ConstraintWithNameAlreadyExists":   false,
		"Neo.ClientError.Schema.IndexWithNameAlreadyExists":        false,
	} {
		err := fmt.Errorf("wrapped: %w", &neo4j.Neo4jError{Code: code})
		if got := createdMeanwhile(err); got != want {
			t.Errorf("createdMeanwhile(%s) = %v, want %v", code, got, want)
		}
	}
	if createdMeanwhile(errors.New("other")) {
		t.Error("createdMeanwhile(a plain error) = true")
	}
}

func TestWriteIdempotent(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	batch := fixture(p, t0, "")

	if err := w.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	wantEdges := []EdgeRow{
		{Kind: DecidesRows, Source: p + "a#amount", Target: p + "b", Job: p + "etl/load", Roles: []string{"INDIRECT/FILTER"}, Type: "INDIRECT", Subtype: "FILTER"},
		{Kind: Feeds, Source: p + "a#amount", Target: p + "b#amount", Job: p + "etl/load", Roles: []string{"DIRECT/TRANSFORMATION", "INDIRECT/CONDITIONAL"}, Type: "DIRECT", Subtype: "TRANSFORMATION"},
		{Kind: Feeds, Source: p + "a#id", Target: p + "b#id", Job: p + "etl/load", Roles: []string{"DIRECT/IDENTITY"}, Type: "DIRECT", Subtype: "IDENTITY"},
		{Kind: Feeds, Source: p + "b#amount", Target: p + "c#total", Job: p + "etl/report", Roles: []string{"DIRECT/AGGREGATION"}, Type: "DIRECT", Subtype: "AGGREGATION"},
		{Kind: DecidesRows, Source: p + "b#id", Target: p + "c", Job: p + "etl/report", Roles: []string{"INDIRECT/GROUP_BY"}, Type: "INDIRECT", Subtype: "GROUP_BY"},
	}
	if got := edgesUnder(t, r, p); !reflect.DeepEqual(got, wantEdges) {
		t.Errorf("edges:\n got %v\nwant %v", got, wantEdges)
	}
	first := snapshot(t, d, p)
	countLines := func(lines []string, pred func(string) bool) int {
		n := 0
		for _, l := range lines {
			if pred(l) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		what string
		want int
	}{{"Dataset ", 3}, {"Column ", 5}, {"Job ", 2}, {"Run ", 2}, {"-HAS_COLUMN->", 5}, {"-FEEDS->", 3}, {"-DECIDES_ROWS->", 2}, {"-HAS_RUN->", 2}, {"-READ->", 2}, {"-WROTE->", 2}} {
		if got := countLines(first, func(l string) bool { return strings.Contains(l, c.what) }); got != c.want {
			t.Errorf("%q: %d, want %d\n%s", c.what, got, c.want, strings.Join(first, "\n"))
		}
	}

	// The cross-job path a -> b -> c is one graph, through both kinds: b#id reaches c#total only
	// by deciding its rows (GROUP BY), a#amount reaches b#id only by filtering b.
	up, err := r.Upstream(ctx, p+"c#total", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{p + "a#amount", p + "a#id", p + "b#amount", p + "b#id"}; !reflect.DeepEqual(up, want) {
		t.Errorf("upstream of c#total = %v, want %v", up, want)
	}
	down, err := r.Downstream(ctx, p+"a#id", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{p + "b#id", p + "c#total"}; !reflect.DeepEqual(down, want) {
		t.Errorf("downstream of a#id = %v, want %v", down, want)
	}

	// A redelivered batch changes nothing, not even lastSeen.
	if err := w.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(t, d, p); !reflect.DeepEqual(again, first) {
		t.Errorf("replay changed the graph:\n%s", diff(first, again))
	}

	// A later run of both jobs: new Run nodes; on everything else only lastSeen (and FEEDS.lastRun) move.
	later := t0.Add(time.Hour)
	if err := w.Write(ctx, fixture(p, later, "-2")); err != nil {
		t.Fatal(err)
	}
	second := snapshot(t, d, p)
	replacer := strings.NewReplacer(
		"lastSeen="+later.Format(time.RFC3339Nano), "lastSeen="+t0.Format(time.RFC3339Nano),
		"schemaSeen="+later.Format(time.RFC3339Nano), "schemaSeen="+t0.Format(time.RFC3339Nano),
		"lastRun="+p+"run-load-2", "lastRun="+p+"run-load",
		"lastRun="+p+"run-report-2", "lastRun="+p+"run-report",
	)
	var rewound []string
	for _, l := range second {
		newRun := strings.HasPrefix(l, "Run ") || strings.Contains(l, "-HAS_RUN->") || strings.Contains(l, "-READ->") || strings.Contains(l, "-WROTE->")
		if newRun && runOf(l, p) {
			continue // the new runs
		}
		if seen := strings.Contains(l, "lastSeen="); seen && !strings.Contains(l, "lastSeen="+later.Format(time.RFC3339Nano)) {
			t.Errorf("lastSeen did not move forward: %s", l)
		}
		rewound = append(rewound, replacer.Replace(l))
	}
	slices.Sort(rewound)
	if !reflect.DeepEqual(rewound, first) {
		t.Errorf("a later run changed more than lastSeen/lastRun:\n%s", diff(first, rewound))
	}
	if n := countLines(second, func(l string) bool { return strings.HasPrefix(l, "Run ") }); n != 4 {
		t.Errorf("runs after a second run of both jobs: %d, want 4", n)
	}
	if n := countLines(second, func(l string) bool { return strings.Contains(l, "-FEEDS->") || strings.Contains(l, "-DECIDES_ROWS->") }); n != 5 {
		t.Errorf("FEEDS and DECIDES_ROWS after a second run of both jobs: %d, want still 5 (one per source, target, job)", n)
	}

	// The old batch arriving late moves nothing back.
	if err := w.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if late := snapshot(t, d, p); !reflect.DeepEqual(late, second) {
		t.Errorf("a late replay of older events changed the graph:\n%s", diff(second, late))
	}
}

// runOf reports whether a snapshot line is (or starts or ends at) one of the second runs.
func runOf(line, prefix string) bool {
	for _, id := range []string{"run-load-2", "run-report-2"} {
		if strings.Contains(line, prefix+id) {
			return true
		}
	}
	return false
}

func TestWriteStoresNamesVerbatim(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	nasty := "we'ird \"na`me\" {x} $rows\\n}) MATCH (n) DETACH DELETE n //"
	batch := fixture(p, t0, "")
	src := &batch[0].Lineage.Reads[0]
	src.Name = nasty
	src.Columns[0].Name = nasty
	src.Columns[0].Key = src.Key + "#" + nasty
	batch[0].Lineage.Edges[0].Source = src.Columns[0].Key
	batch[0].Lineage.Edges[0].Transformations = tf(plan.Direct, plan.Identity, nasty)
	batch[0].Event.App.Name = nasty

	if err := w.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	res, err := neo4j.ExecuteQuery(ctx, d,
		`MATCH (d:Dataset {key: $d})-[:HAS_COLUMN]->(c:Column {key: $c})-[f:FEEDS]->() RETURN d.name AS d, c.name AS c, f.exprs[0] AS e, f.job AS j`,
		map[string]any{"d": src.Key, "c": src.Columns[0].Key}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("got %d rows, want 1", len(res.Records))
	}
	for k, want := range map[string]string{"d": nasty, "c": nasty, "e": nasty, "j": p + "etl/" + nasty} {
		if got, _ := res.Records[0].Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if len(edgesUnder(t, r, p)) != 5 {
		t.Errorf("the graph outside the test prefix is untouched by construction; the prefix has %d edges, want 5", len(edgesUnder(t, r, p)))
	}
}

func TestWriteChanges(t *testing.T) {
	d := testDriver(t)
	w := NewWriter(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	if err := w.Write(ctx, []record.Item{ddl(p, later, "")}); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, d, p)
	at := later.Format(time.RFC3339Nano)
	for _, want := range []string{
		"Dataset " + p + "a droppedAt=" + at,
		p + "c -RENAMED_TO-> " + p + "c2 firstSeen=" + at + " lastRun=" + p + "run-admin lastSeen=" + at,
		p + "run-admin -CHANGED-> " + p + "a action=drop",
		p + "run-admin -CHANGED-> " + p + "b action=truncate",
		p + "run-admin -CHANGED-> " + p + "c action=rename",
		p + "run-admin -CHANGED-> " + p + "b action=alter",
		"Column " + p + "b#gone datasetKey=" + p + "b droppedAt=" + at,
	} {
		found := false
		for _, l := range first {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no line starting %q in:\n%s", want, strings.Join(first, "\n"))
		}
	}
	for _, l := range first {
		if strings.HasPrefix(l, "Dataset "+p+"b ") && !strings.Contains(l, "truncatedAt="+at) {
			t.Errorf("b is not marked truncated: %s", l)
		}
	}
	// The lineage of the dropped and renamed datasets is kept; replays change nothing.
	if got := len(edgesUnder(t, NewReader(d, ""), p)); got != 5 {
		t.Errorf("edges after DDL = %d, want the 5 written before", got)
	}
	if err := w.Write(ctx, append(fixture(p, t0, ""), ddl(p, later, ""))); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(t, d, p); !reflect.DeepEqual(again, first) {
		t.Errorf("replay changed the graph:\n%s", diff(first, again))
	}
}

func TestWriteChunksLargeBatches(t *testing.T) {
	d := testDriver(t)
	defer func(n int) { maxRows = n }(maxRows)
	maxRows = 2
	p := testPrefix(t)
	if err := NewWriter(d, "").Write(context.Background(), fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	if got := len(edgesUnder(t, NewReader(d, ""), p)); got != 5 {
		t.Errorf("edges = %d, want 5", got)
	}
}

func TestWriteRejectsInvalidItemsBeforeWriting(t *testing.T) {
	d := testDriver(t)
	p := testPrefix(t)
	batch := fixture(p, t0, "")
	batch[1].Lineage.Edges[0].Source = p + "nowhere#x"
	err := NewWriter(d, "").Write(context.Background(), batch)
	if !IsRejected(err) || IsTransient(err) {
		t.Fatalf("Write = %v, want a rejected, non-transient error", err)
	}
	if got := snapshot(t, d, p); len(got) != 0 {
		t.Errorf("an invalid batch wrote %d elements", len(got))
	}
}

// TestNoEager guards the statement layout: no write statement may plan an Eager operator. The
// statements run with PROFILE in a transaction that is rolled back: EXPLAIN outside a transaction
// may plan differently from the execution (TestNoEagerTPCDS does the same on real batches).
func TestNoEager(t *testing.T) {
	d := testDriver(t)
	p := testPrefix(t)
	ctx := context.Background()
	r, err := buildRows(append(fixture(p, t0, ""), ddl(p, t0, "")))
	if err != nil {
		t.Fatal(err)
	}
	type query struct {
		name, text string
		params     map[string]any
	}
	var separate []query
	for _, st := range r.statements() {
		if len(st.rows) > 0 {
			separate = append(separate, query{st.name, st.query, map[string]any{"rows": st.rows}})
		}
	}
	{
		qs := separate
		s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			res, err := tx.Run(ctx, "PROFILE "+q.text, q.params)
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			sum, err := res.Consume(ctx)
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			var ops []string
			var walk func(neo4j.ProfiledPlan)
			walk = func(pl neo4j.ProfiledPlan) {
				op, _, _ := strings.Cut(pl.Operator(), "@")
				ops = append(ops, op)
				if op == "Eager" {
					t.Errorf("statement %s plans an Eager operator over %d rows (%v)", q.name, pl.Records(), pl.Arguments()["Details"])
				}
				for _, c := range pl.Children() {
					walk(c)
				}
			}
			walk(sum.Profile())
			for _, op := range ops {
				if strings.Contains(op, "Scan") {
					t.Errorf("statement %s plans a scan (%s) instead of index seeks and Expand(Into): %v", q.name, op, ops)
				}
			}
		}
		tx.Rollback(ctx)
		s.Close(ctx)
	}
}

func TestIsTransientWhenNeo4jIsDown(t *testing.T) {
	d, err := NewDriver("bolt://127.0.0.1:1", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = NewWriter(d, "").Write(ctx, fixture("x/", t0, ""))
	if err == nil || !IsTransient(err) || IsRejected(err) {
		t.Errorf("Write to a closed port = %v; transient %v, want true", err, IsTransient(err))
	}
	if err := NewWriter(d, "").Ping(ctx); err == nil || !IsTransient(err) {
		t.Errorf("Ping = %v, want a transient error", err)
	}
}

func diff(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// A model-1 graph (FEEDS without roles, no stamp) stops a model-2 writer at Bootstrap with an
// error that names the way out; Upgrade removes the model-1 FEEDS, and after the re-derivation
// FinishUpgrade stamps the graph so that Bootstrap passes. The test uses its own stamp key: the
// shared stamp must stay in place for the tests running next to it.
func TestModelStampAndUpgrade(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	w := NewWriter(d, "")
	w.ModelKey = p + "model"
	t.Cleanup(func() {
		neo4j.ExecuteQuery(context.Background(), d, `MATCH (m:GraphModel {key: $k}) DELETE m`, map[string]any{"k": w.ModelKey}, neo4j.EagerResultTransformer)
	})
	// a model-1 FEEDS, as the model-1 writer stored it
	if _, err := neo4j.ExecuteQuery(ctx, d, `CREATE (:Column {key: $a})-[:FEEDS {job: $job, type: 'DIRECT', subtype: 'IDENTITY'}]->(:Column {key: $b})`,
		map[string]any{"a": p + "a#x", "b": p + "b#x", "job": p + "etl/old"}, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	err := w.Bootstrap(ctx)
	if !errors.Is(err, ErrModelVersion) || !strings.Contains(err.Error(), "colline upgrade") {
		t.Fatalf("Bootstrap on a model-1 graph = %v, want ErrModelVersion naming colline upgrade", err)
	}
	n, err := w.Upgrade(ctx)
	if err != nil || n < 1 {
		t.Fatalf("Upgrade = %d, %v; want at least the model-1 FEEDS of this test deleted", n, err)
	}
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil { // the re-derivation
		t.Fatal(err)
	}
	if err := w.FinishUpgrade(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatalf("Bootstrap after the upgrade: %v", err)
	}
	// a stamp of another version is refused too: model 2's, whose writer must not run beside this one
	if _, err := neo4j.ExecuteQuery(ctx, d, `MATCH (m:GraphModel {key: $k}) SET m.version = 2`, map[string]any{"k": w.ModelKey}, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	if err := w.Bootstrap(ctx); !errors.Is(err, ErrModelVersion) || !strings.Contains(err.Error(), "model 2") || !strings.Contains(err.Error(), "colline upgrade") {
		t.Fatalf("Bootstrap on a model-2 graph = %v, want ErrModelVersion naming model 2 and colline upgrade", err)
	}
	// a model-3 graph is a model-4 graph whose datasets have no schema yet: stamped in place
	if _, err := neo4j.ExecuteQuery(ctx, d, `MATCH (m:GraphModel {key: $k}) SET m.version = 3`, map[string]any{"k": w.ModelKey}, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatalf("Bootstrap on a model-3 graph = %v, want it stamped %d", err, ModelVersion)
	}
	res, err := neo4j.ExecuteQuery(ctx, d, `MATCH (m:GraphModel {key: $k}) RETURN m.version AS v`, map[string]any{"k": w.ModelKey}, neo4j.EagerResultTransformer)
	if v, _ := res.Records[0].Get("v"); err != nil || v != int64(ModelVersion) {
		t.Errorf("the model-3 graph's stamp after Bootstrap = %v, %v; want %d", v, err, ModelVersion)
	}
	if got := len(edgesUnder(t, NewReader(d, ""), p)); got != 5 {
		t.Errorf("lineage relationships after the upgrade: %d, want the fixture's 5", got)
	}
}

// TestWriteDegraded: a run whose event was degraded (plan.Lineage.Degraded) is stored with
// degraded = true and columnLineage = "missing" on its WROTE, beside its reads, writes and written
// columns; a later whole run of the same job is not marked, and leaves the degraded run marked;
// writing the same items again changes nothing. A run over an extraction budget
// (plan.Lineage.OverBudget) is marked the same way, with overBudget naming the budget; written
// again within the budget (a replay after raising it), it is not marked any more.
func TestWriteDegraded(t *testing.T) {
	d := testDriver(t)
	w := NewWriter(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	degraded := fixture(p, t0, "")[:1]
	degraded[0].Lineage.Degraded = true
	degraded[0].Lineage.Edges, degraded[0].Lineage.RowDeps = nil, nil
	whole := fixture(p, t0.Add(time.Hour), "-2")[:1]
	over := fixture(p, t0.Add(2*time.Hour), "-3")[:1]
	over[0].Lineage.OverBudget = &plan.TooComplexError{Budget: plan.BudgetEdges, Figure: 20000, Limit: 10000}
	over[0].Lineage.Edges, over[0].Lineage.RowDeps = nil, nil
	for _, batch := range [][]record.Item{degraded, whole, over} {
		if err := w.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	marks := func() []string {
		res, err := neo4j.ExecuteQuery(ctx, d,
			`MATCH (r:Run)-[w:WROTE]->(ds:Dataset) WHERE r.key STARTS WITH $p
			 OPTIONAL MATCH (ds)-[:HAS_COLUMN]->(c:Column)
			 RETURN r.key AS run, r.degraded AS degraded, r.overBudget AS ob, w.columnLineage AS cl, count(c) AS columns ORDER BY run`,
			map[string]any{"p": p}, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rec := range res.Records {
			m := rec.AsMap()
			out = append(out, fmt.Sprintf("%s degraded=%v overBudget=%v columnLineage=%v columns=%v", strings.TrimPrefix(m["run"].(string), p), m["degraded"], m["ob"], m["cl"], m["columns"]))
		}
		return out
	}
	want := []string{"run-load degraded=true overBudget=<nil> columnLineage=missing columns=2", "run-load-2 degraded=false overBudget=<nil> columnLineage=<nil> columns=2",
		"run-load-3 degraded=false overBudget=edges columnLineage=missing columns=2"}
	if got := marks(); !reflect.DeepEqual(got, want) {
		t.Errorf("runs and writes:\n got %q\nwant %q", got, want)
	}
	before := snapshot(t, d, p)
	if err := w.Write(ctx, degraded); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, d, p); !reflect.DeepEqual(after, before) {
		t.Errorf("replaying the degraded event changed the graph:\n%s", diff(before, after))
	}
	within := fixture(p, t0.Add(2*time.Hour), "-3")[:1]
	if err := w.Write(ctx, within); err != nil {
		t.Fatal(err)
	}
	want[2] = "run-load-3 degraded=false overBudget=<nil> columnLineage=<nil> columns=2"
	if got := marks(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a replay within the budget:\n got %q\nwant %q", got, want)
	}
}

// A write blocked behind a lock held by another transaction ends after Writer.Timeout with a
// transient error (the consumer retries it with backoff) and leaves nothing behind; once the lock
// is released the same write goes through.
func TestWriteTimesOutBehindALock(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	batch := fixture(p, t0, "")
	// Another transaction creates, uncommitted, the job the batch merges: the batch waits on its lock.
	sess := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(ctx)
	tx, err := sess.BeginTransaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Run(ctx, `MERGE (:Job {key: $k})`, map[string]any{"k": p + "etl/load"}); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(d, "")
	w.Timeout = 2 * time.Second
	start := time.Now()
	err = w.Write(ctx, batch)
	took := time.Since(start)
	if err == nil {
		t.Fatal("Write behind a held lock = nil error")
	}
	if !IsTransient(err) || IsRejected(err) {
		t.Errorf("Write behind a held lock = %v; want a transient error, not a rejection", err)
	}
	t.Logf("blocked write returned after %v: %v", took.Round(time.Millisecond), err)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, d, p); len(got) != 0 {
		t.Errorf("the timed-out write left %d elements: %q", len(got), got)
	}
	w.Timeout = time.Minute
	if err := w.Write(ctx, batch); err != nil {
		t.Fatalf("Write after the lock is released: %v", err)
	}
}

// The events of an OpenLineage run, delivered in any order, in one batch or one by one, and
// again, leave the same graph: one Run (status from the terminal event, startedAt from START),
// its job, its parent run and job, and the lineage.
func TestWriteOpenLineageRuns(t *testing.T) {
	d := testDriver(t)
	w := NewWriter(d, "")
	ctx := context.Background()
	var want []string
	for i, order := range [][]string{{"START", "RUNNING", "COMPLETE"}, {"COMPLETE", "START", "RUNNING"}} {
		p := testPrefix(t)
		var items []record.Item
		for k, typ := range order {
			at := map[string]time.Time{"START": t0, "RUNNING": t0.Add(time.Second), "COMPLETE": t0.Add(2 * time.Second)}[typ]
			items = append(items, olRun(p, at, typ))
			if i == 1 { // one by one, the first event twice
				if err := w.Write(ctx, items[k:k+1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i == 0 {
			if err := w.Write(ctx, items); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(ctx, items[:1]); err != nil { // a redelivery
			t.Fatal(err)
		}
		// the fingerprint is of the keys, which have this iteration's prefix
		got := strings.Split(fingerprints.ReplaceAllString(strings.ReplaceAll(strings.Join(snapshot(t, d, p), "\n"), p, ""), "$1=…"), "\n")
		if i == 0 {
			want = got
			var runs []string
			for _, l := range got {
				if strings.HasPrefix(l, "Run ") || strings.Contains(l, "-CHILD_OF->") {
					runs = append(runs, l)
				}
			}
			wantRuns := []string{
				"Run parent key=parent",
				"Run run-ol endedAt=2026-11-30T10:15:04.1Z key=run-ol producer=https://example/dbt startedAt=2026-11-30T10:15:02.1Z status=success",
				"run-ol -CHILD_OF-> parent",
			}
			if !reflect.DeepEqual(runs, wantRuns) {
				t.Errorf("runs:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(wantRuns, "\n"))
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("order %v gave another graph:\n%s\nwant\n%s", order, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

var fingerprints = regexp.MustCompile(`(fingerprint|schema)=[0-9a-f]{64}`)

// Struct fields are Column nodes under their parent column (HAS_FIELD), and lineage walks reach
// what a column's fields feed: a change of b#amount reaches c#total.eur through b#amount.eur.
func TestWriteFields(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	if err := w.Write(ctx, []record.Item{nested(p, t0)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range snapshot(t, d, p) {
		if strings.Contains(l, "-HAS_FIELD->") || strings.Contains(l, "-HAS_COLUMN->") {
			got = append(got, strings.SplitN(strings.ReplaceAll(l, p, ""), " map[", 2)[0])
		}
	}
	want := []string{"b -HAS_COLUMN-> b#amount", "b -HAS_COLUMN-> b#id", "b#amount -HAS_FIELD-> b#amount.eur",
		"c -HAS_COLUMN-> c#total", "c#total -HAS_FIELD-> c#total.eur"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("structure:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	down, err := r.Downstream(ctx, p+"b#amount", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(down, []string{p + "b#amount.eur", p + "c#total.eur"}) {
		t.Errorf("downstream of b#amount = %v", down)
	}
}

// TestReadDeadlineEndsTheQuery: a read whose context has a deadline (the explorer's
// COLLINE_UI_QUERY_TIMEOUT) ends with it in Neo4j too (the driver ends the transaction when the
// context ends, and the transaction has the deadline as its timeout besides): the query runs in
// Neo4j (SHOW TRANSACTIONS sees it), the caller has its error right after the deadline, and then
// it no longer runs: the work ends with the request, not when Neo4j would be done, minutes later
// (issue 29). A read given a context without its deadline would fail this.
func TestReadDeadlineEndsTheQuery(t *testing.T) {
	d := testDriver(t)
	r := NewReader(d, "")
	slow := `UNWIND range(1, 2000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n`
	running := func() int {
		res, err := neo4j.ExecuteQuery(context.Background(), d, `SHOW TRANSACTIONS YIELD currentQuery
WHERE currentQuery CONTAINS 'range(1, 2000000000)' AND NOT currentQuery STARTS WITH 'SHOW' RETURN count(*) AS n`, nil, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.Records[0].Get("n")
		return int(n.(int64))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := r.query(ctx, slow, nil)
		done <- err
	}()
	seen := false
	for !seen && time.Since(start) < time.Second {
		seen = running() > 0
		time.Sleep(50 * time.Millisecond)
	}
	if !seen {
		t.Fatal("SHOW TRANSACTIONS never saw the query run")
	}
	err := <-done
	took := time.Since(start)
	if err == nil || took > 4*time.Second {
		t.Fatalf("a query of minutes with a 1.5s deadline: %v after %v, want an error right after the deadline", err, took)
	}
	for running() > 0 {
		if time.Since(start) > took+3*time.Second {
			t.Fatalf("the query still runs in Neo4j %v after it began (its deadline was 1.5s)", time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("ended after %v: %v; then no longer running in Neo4j", took.Round(time.Millisecond), err)
}

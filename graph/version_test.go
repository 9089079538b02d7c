package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// versioned is a hand-built run (a unit-test input) of job <prefix>etl/<job> reading a (x, y, z)
// and writing b (p, q), and c (r) for version 5, with the lineage of version v:
//
//	1: x -> p IDENTITY, y -> q "y + 1", z decides b (FILTER)
//	2: x -> p IDENTITY, y -> q "y + 2" and z -> q CONDITIONAL (the same pairs, other roles)
//	3: no column lineage (a write of inline values)
//	4: x -> q AGGREGATION, x decides b (GROUP BY)
//	5: x -> p IDENTITY, and x -> c.r into a second table
func versioned(prefix, job, run, app string, v int, at time.Time) record.Item {
	ds := func(name string, cols ...string) plan.Dataset {
		d := plan.Dataset{Key: prefix + name, Namespace: prefix + "ns", Name: name, Kind: "table"}
		for _, c := range cols {
			d.Columns = append(d.Columns, plan.Column{Key: d.Key + "#" + c, Name: c, Type: "int"})
		}
		return d
	}
	a, b, c := ds("a", "x", "y", "z"), ds("b", "p", "q"), ds("c", "r")
	x, y, z, p, q := a.Columns[0].Key, a.Columns[1].Key, a.Columns[2].Key, b.Columns[0].Key, b.Columns[1].Key
	lin := &plan.Lineage{Reads: []plan.Dataset{a}, Writes: []plan.Write{{Dataset: b, Mode: "append"}}}
	edge := func(s, t string, ts ...[]plan.Transformation) plan.Edge {
		e := plan.Edge{Source: s, Target: t}
		for _, x := range ts {
			e.Transformations = append(e.Transformations, x...)
		}
		return e
	}
	switch v {
	case 1:
		lin.Edges = []plan.Edge{edge(x, p, tf(plan.Direct, plan.Identity, "")), edge(y, q, tf(plan.Direct, plan.TransformationSub, "y + 1"))}
		lin.RowDeps = []plan.Edge{edge(z, b.Key, tf(plan.Indirect, plan.FilterSub, "z > ?"))}
	case 2:
		lin.Edges = []plan.Edge{edge(x, p, tf(plan.Direct, plan.Identity, "")), edge(y, q, tf(plan.Direct, plan.TransformationSub, "y + 2")),
			edge(z, q, tf(plan.Indirect, plan.Conditional, "z > ?"))}
	case 4:
		lin.Edges = []plan.Edge{edge(x, q, tf(plan.Direct, plan.Aggregation, "sum(x)"))}
		lin.RowDeps = []plan.Edge{edge(x, b.Key, tf(plan.Indirect, plan.GroupBy, "x"))}
	case 5:
		lin.Writes = append(lin.Writes, plan.Write{Dataset: c, Mode: "append"})
		lin.Edges = []plan.Edge{edge(x, p, tf(plan.Direct, plan.Identity, "")), edge(x, c.Columns[0].Key, tf(plan.Direct, plan.Identity, ""))}
	}
	return record.Item{
		Event: &events.Envelope{SchemaVersion: "1.1", EventID: prefix + run, EmittedAt: at.Add(time.Second).Format(time.RFC3339Nano),
			Producer: events.Producer{Spark: "3.5.9"}, App: events.App{ID: app, Name: job, Namespace: prefix + "etl"},
			Query: events.Query{ExecutionID: 1, FuncName: "command", Status: "success", EndedAt: at.Format(time.RFC3339Nano)}},
		Lineage: lin,
	}
}

// decided builds the rows of items and decides them against states.
func decided(t *testing.T, states map[[2]string]versionState, items ...record.Item) *rows {
	t.Helper()
	r, err := buildRows(items)
	if err != nil {
		t.Fatal(err)
	}
	r.decide(states)
	return r
}

// TestDecide: what a batch writes of its lineage, given the LINEAGE as stored.
func TestDecide(t *testing.T) {
	job, b := "etl/j", [2]string{"etl/j", "b"}
	v1 := func(run string, at time.Time) record.Item { return versioned("", "j", run, "app-"+run, 1, at) }
	fp1 := decided(t, nil, v1("r0", t0)).lineages[0].fingerprint
	fp2 := decided(t, nil, versioned("", "j", "r0", "a", 2, t0)).lineages[0].fingerprint
	stored := func(fp string, since, last time.Time, stale bool) map[[2]string]versionState {
		return map[[2]string]versionState{b: {exists: true, fingerprint: fp, since: since, firstSeen: since, lastSeen: last, lastRun: "old", stale: stale}}
	}
	h := time.Hour
	type want struct {
		feeds, decides, current, supersede int
		lineage                            *lineageUpdate // nil: no LINEAGE written
	}
	for _, tc := range []struct {
		name   string
		states map[[2]string]versionState
		items  []record.Item
		want   want
	}{
		{"a new job: its edges, current, and its LINEAGE", nil, []record.Item{v1("r1", t0)},
			want{2, 1, 3, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "r1", since: t0, firstSeen: t0, lastSeen: t0}}},
		{"a re-run: one confirmation, no edge", stored(fp1, t0, t0, false), []record.Item{v1("r2", t0.Add(h))},
			want{0, 0, 0, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "r2", since: t0, firstSeen: t0, lastSeen: t0.Add(h)}}},
		{"re-runs in one batch: one confirmation by the newest", stored(fp1, t0, t0, false), []record.Item{v1("r3", t0.Add(3*h)), v1("r2", t0.Add(h))},
			want{0, 0, 0, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "r3", since: t0, firstSeen: t0, lastSeen: t0.Add(3 * h)}}},
		{"a re-run clears the stale mark", stored(fp1, t0, t0, true), []record.Item{v1("r2", t0.Add(h))},
			want{0, 0, 0, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "r2", since: t0, firstSeen: t0, lastSeen: t0.Add(h)}}},
		{"the same run again (a redelivery) leaves the stale mark", stored(fp1, t0, t0.Add(h), true), []record.Item{v1("old", t0.Add(h))},
			want{0, 0, 0, 0, nil}},
		{"an older run of the version, after since: nothing", stored(fp1, t0, t0.Add(2*h), false), []record.Item{v1("r1", t0.Add(h))},
			want{0, 0, 0, 0, nil}},
		{"an older run of the version, before since: its edges (firstSeen), not current", stored(fp1, t0, t0.Add(2*h), false), []record.Item{v1("r1", t0.Add(-h))},
			want{2, 1, 0, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "old", since: t0.Add(-h), firstSeen: t0.Add(-h), lastSeen: t0.Add(2 * h)}}},
		{"a newer run with other lineage: the old version superseded, the new one current", stored(fp1, t0, t0, true), []record.Item{versioned("", "j", "r2", "a2", 2, t0.Add(h))},
			want{3, 0, 3, 1, &lineageUpdate{job: job, dataset: "b", fingerprint: fp2, lastRun: "r2", since: t0.Add(h), firstSeen: t0, lastSeen: t0.Add(h)}}},
		{"an older run with other lineage: its edges, nothing current", stored(fp1, t0, t0.Add(2*h), false), []record.Item{versioned("", "j", "r1", "a1", 2, t0.Add(h))},
			want{3, 0, 0, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "old", since: t0, firstSeen: t0, lastSeen: t0.Add(2 * h)}}},
		{"back to an earlier version: written again", stored(fp2, t0, t0, false), []record.Item{v1("r2", t0.Add(h))},
			want{2, 1, 3, 1, &lineageUpdate{job: job, dataset: "b", fingerprint: fp1, lastRun: "r2", since: t0.Add(h), firstSeen: t0, lastSeen: t0.Add(h)}}},
		{"two versions in one batch: the newest is current, the other's edges are its own", nil,
			[]record.Item{versioned("", "j", "r2", "a2", 2, t0.Add(h)), v1("r1", t0)},
			want{3, 1, 3, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp2, lastRun: "r2", since: t0.Add(h), firstSeen: t0, lastSeen: t0.Add(h)}}},
		{"two versions at the same time in one batch: the later item's is current", nil,
			[]record.Item{v1("r1", t0), versioned("", "j", "r2", "a2", 2, t0)},
			want{3, 1, 3, 0, &lineageUpdate{job: job, dataset: "b", fingerprint: fp2, lastRun: "r2", since: t0, firstSeen: t0, lastSeen: t0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decided(t, tc.states, tc.items...)
			current := 0
			for _, x := range append(slices.Clone(r.feeds), r.decides...) {
				if x.current {
					current++
				}
			}
			got := want{len(r.feeds), len(r.decides), current, len(r.supersede), nil}
			if len(r.lineages) > 1 {
				t.Fatalf("%d LINEAGEs written, want at most 1", len(r.lineages))
			}
			if len(r.lineages) == 1 {
				got.lineage = &r.lineages[0]
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v %+v\nwant %+v %+v", got, got.lineage, tc.want, tc.want.lineage)
			}
		})
	}

	// A degraded run observes nothing; a write without column edges is a version of no edges.
	deg := v1("r1", t0)
	deg.Lineage.Degraded, deg.Lineage.Edges, deg.Lineage.RowDeps = true, nil, nil
	if r := decided(t, nil, deg); len(r.lineages) != 0 {
		t.Errorf("a degraded run wrote LINEAGEs %+v", r.lineages)
	}
	// Nor does a run over a budget (table-level, its column lineage missing), even as the newest
	// run after a current version: that stays current, neither confirmed nor superseded.
	over := v1("r2", t0.Add(h))
	over.Lineage.OverBudget, over.Lineage.Edges, over.Lineage.RowDeps = &plan.TooComplexError{Budget: plan.BudgetEdges, Figure: 20000, Limit: 10000}, nil, nil
	if r := decided(t, stored(fp1, t0, t0, false), over); len(r.lineages)+len(r.supersede)+len(r.feeds)+len(r.decides) != 0 {
		t.Errorf("a run over budget wrote LINEAGEs %+v, superseded %+v, edges %d", r.lineages, r.supersede, len(r.feeds)+len(r.decides))
	}
	if r := decided(t, nil, versioned("", "j", "r1", "a", 3, t0)); len(r.lineages) != 1 || r.lineages[0].fingerprint == fp1 || len(r.feeds)+len(r.decides) != 0 {
		t.Errorf("a write of no column lineage: %+v", r.lineages)
	}
	// The fingerprint is of the lineage only: run, app and time do not change it; a role does.
	if a, b := fingerprint(v1("r1", t0).Lineage.Edges, nil), fingerprint(v1("r9", t0.Add(h)).Lineage.Edges, nil); a != b {
		t.Error("the fingerprint depends on the run")
	}
	e := v1("r1", t0).Lineage.Edges
	m := slices.Clone(e)
	m[1].Transformations = []plan.Transformation{{Type: plan.Direct, Subtype: plan.TransformationSub, Expr: "y + 1", Masking: true}}
	if fingerprint(e, nil) == fingerprint(m, nil) || fingerprint(e, nil) == fingerprint(nil, e) {
		t.Error("the fingerprint misses a masking flag or the kind of edge")
	}
	// a row-level dependency that comes to decide the rows of one UNION branch only is a new version
	rd := []plan.Edge{{Source: "a#x", Target: "b", Transformations: []plan.Transformation{{Type: plan.Indirect, Subtype: plan.FilterSub}}}}
	branch := slices.Clone(rd)
	branch[0].Transformations = []plan.Transformation{{Type: plan.Indirect, Subtype: plan.FilterSub, Rows: "a"}}
	if fingerprint(nil, rd) == fingerprint(nil, branch) {
		t.Error("the fingerprint misses the rows a row-level dependency decides")
	}
}

// edgeState is a lineage relationship as read, with its lastSeen and lastRun as docs/graph-model.md
// defines them (its own, or for a current edge its LINEAGE's).
type edgeState struct {
	roles               string
	firstSeen, lastSeen time.Time
	lastRun             string
}

// TestVersionsReadAsModel2: for random sequences of runs of two jobs (five versions, times that
// go back and forth and tie, redeliveries), written in random batches, every FEEDS and
// DECIDES_ROWS reads exactly as model 2 stored it (newest run wins, ties to the later write): its
// roles, firstSeen, lastSeen and lastRun, by the documented Cypher and by Reader.Walk.
func TestVersionsReadAsModel2(t *testing.T) {
	d := testDriver(t)
	w, rd := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	for seed := range uint64(6) {
		p := testPrefix(t)
		t.Cleanup(func() { wipe(t, d, p) })
		rng := rand.New(rand.NewPCG(seed, 33))
		var seq []record.Item
		for i := range 60 {
			if i > 0 && rng.IntN(6) == 0 { // a redelivery of an earlier run
				seq = append(seq, seq[rng.IntN(len(seq))])
				continue
			}
			job := []string{"j", "k"}[rng.IntN(2)]
			v := []int{1, 1, 1, 2, 3, 4, 5}[rng.IntN(7)]
			at := t0.Add(time.Duration(rng.IntN(8)) * time.Minute) // few times: many ties
			it := versioned(p, job, fmt.Sprintf("r%02d", i), fmt.Sprintf("app-%d", rng.IntN(3)), v, at)
			if rng.IntN(10) == 0 { // over a budget: table-level, no column lineage
				it.Lineage.OverBudget, it.Lineage.Edges, it.Lineage.RowDeps = &plan.TooComplexError{Budget: plan.BudgetEdges, Figure: 20000, Limit: 10000}, nil, nil
			}
			seq = append(seq, it)
		}
		// model 2: every run's edges merged, the newest (ties: the later) wins
		want := map[string]edgeState{}
		for _, it := range seq {
			at, _ := it.Time()
			jk, _, _ := it.Job()
			for kind, list := range map[string][]plan.Edge{Feeds: it.Lineage.Edges, DecidesRows: it.Lineage.RowDeps} {
				for _, e := range list {
					k := kind + " " + e.Source + " " + e.Target + " " + jk
					s, ok := want[k]
					if !ok || at.Before(s.firstSeen) {
						s.firstSeen = at
					}
					if !ok || !at.Before(s.lastSeen) {
						s.lastSeen, s.lastRun = at, it.Run()
						s.roles = fmt.Sprint(newEdgeRow(kind, e.Source, e.Target, jk, e.Transformations).Roles)
					}
					want[k] = s
				}
			}
		}
		for i := 0; i < len(seq); {
			n := 1 + rng.IntN(6)
			if err := w.Write(ctx, seq[i:min(i+n, len(seq))]); err != nil {
				t.Fatal(err)
			}
			i += n
		}
		if got := effectiveEdges(t, p); !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: the documented reading differs from model 2:\n%s", seed, diffStates(got, want))
		}
		got := map[string]edgeState{}
		for _, col := range []string{"b#p", "b#q", "c#r"} {
			sg, err := rd.Walk(ctx, Walk{From: []string{p + col}, Direction: Upstream, Steps: 1, MaxColumns: 100, MaxEdges: 100})
			if err != nil {
				continue // c#r exists only when version 5 ran
			}
			for _, e := range sg.Edges {
				var roles []string
				for _, ro := range e.Roles {
					roles = append(roles, plan.Transformation{Type: ro.Type, Subtype: ro.Subtype, Masking: ro.Masked}.String())
				}
				if e.LastSeen == nil || e.FirstSeen == nil {
					t.Fatalf("seed %d: walk edge %+v without times", seed, e)
				}
				got[e.Kind+" "+e.Source+" "+e.Target+" "+e.Job] = edgeState{fmt.Sprint(roles), *e.FirstSeen, *e.LastSeen, e.LastRun}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: Reader.Walk differs from model 2:\n%s", seed, diffStates(got, want))
		}
	}
}

// effectiveEdges reads every lineage relationship under prefix as docs/graph-model.md says.
func effectiveEdges(t *testing.T, prefix string) map[string]edgeState {
	t.Helper()
	d := testDriver(t)
	res, err := NewReader(d, "").query(context.Background(), `MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS]->(t) WHERE s.key STARTS WITH $p
OPTIONAL MATCH (:Job {key: f.job})-[l:LINEAGE]->(ds:Dataset)
  WHERE f.lastSeen IS NULL AND ds.key = CASE WHEN t:Dataset THEN t.key ELSE t.datasetKey END
RETURN type(f) + ' ' + s.key + ' ' + t.key + ' ' + f.job AS k, f.roles AS roles, coalesce(f.masked, []) AS masked, f.firstSeen AS firstSeen,
       coalesce(f.lastSeen, l.lastSeen) AS lastSeen, CASE WHEN f.lastSeen IS NULL THEN l.lastRun ELSE f.lastRun END AS lastRun`,
		map[string]any{"p": prefix})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]edgeState{}
	for _, rec := range res.Records {
		k, _ := get[string](rec, "k")
		first, _ := get[time.Time](rec, "firstSeen")
		last, _ := get[time.Time](rec, "lastSeen")
		run, _ := get[string](rec, "lastRun")
		kind, _, _ := strings.Cut(k, " ")
		out[k] = edgeState{fmt.Sprint(newEdgeRow(kind, "", "", "", transformations(rec)).Roles), first.UTC(), last.UTC(), run}
	}
	return out
}

func diffStates(got, want map[string]edgeState) string {
	var b strings.Builder
	for k, g := range got {
		if w, ok := want[k]; !ok || g != w {
			fmt.Fprintf(&b, "  %s\n     got  %+v\n     want %+v\n", k, g, w)
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok {
			fmt.Fprintf(&b, "  %s missing (want %+v)\n", k, w)
		}
	}
	return b.String()
}

// TestReRunsConfirm: re-runs of a job with unchanged lineage leave every FEEDS and DECIDES_ROWS
// as it was (not one property written) and move the LINEAGE; the explorer still sees each edge
// last seen at the newest run.
func TestReRunsConfirm(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	if err := w.Write(ctx, []record.Item{versioned(p, "j", "r0", "app-0", 1, t0)}); err != nil {
		t.Fatal(err)
	}
	edges := func() []string {
		var out []string
		for _, l := range snapshot(t, d, p) {
			if strings.Contains(l, "-FEEDS->") || strings.Contains(l, "-DECIDES_ROWS->") {
				out = append(out, l)
			}
		}
		return out
	}
	before := edges()
	last := t0
	for i := 1; i <= 5; i++ {
		last = t0.Add(time.Duration(i) * time.Hour)
		if err := w.Write(ctx, []record.Item{versioned(p, "j", fmt.Sprintf("r%d", i), fmt.Sprintf("app-%d", i), 1, last)}); err != nil {
			t.Fatal(err)
		}
	}
	if after := edges(); !reflect.DeepEqual(after, before) {
		t.Errorf("re-runs changed the edges:\n%s", diff(before, after))
	}
	sg, err := r.Walk(ctx, Walk{From: []string{p + "b#q"}, Direction: Upstream, Steps: 1, MaxColumns: 10, MaxEdges: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(sg.Edges) != 2 {
		t.Fatalf("edges into b#q: %+v", sg.Edges)
	}
	for _, e := range sg.Edges {
		if e.LastSeen == nil || !e.LastSeen.Equal(last) || e.LastRun != p+"r5" || !e.FirstSeen.Equal(t0) || e.Stale {
			t.Errorf("%s %s -> %s: first %v, last %v by %q, stale %v; want first %v, last %v by r5, not stale", e.Kind, e.Source, e.Target, e.FirstSeen, e.LastSeen, e.LastRun, e.Stale, t0, last)
		}
	}
}

// TestUpgradeFromModel2: a model-2 graph (every edge with its own lastSeen and lastRun, no
// LINEAGE) is refused, Upgrade deletes none of its edges, and replaying its events leaves
// exactly the graph model 3 writes. The model-2 graph is the fixture written by this writer and
// turned back into model 2's shape; the test has its own model stamp.
func TestUpgradeFromModel2(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	w := NewWriter(d, "")
	w.ModelKey = p + "model"
	t.Cleanup(func() {
		neo4jExec(t, d, `MATCH (m:GraphModel {key: $k}) DELETE m`, map[string]any{"k": w.ModelKey})
	})
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	model3 := snapshot(t, d, p)
	neo4jExec(t, d, `MATCH (s:Column)-[f:FEEDS|DECIDES_ROWS]->(x) WHERE s.key STARTS WITH $p AND f.lastSeen IS NULL
MATCH (:Job {key: f.job})-[l:LINEAGE]->(ds:Dataset) WHERE ds.key = CASE WHEN x:Dataset THEN x.key ELSE x.datasetKey END
SET f.lastSeen = l.lastSeen, f.lastRun = l.lastRun`, map[string]any{"p": p})
	neo4jExec(t, d, `MATCH (j:Job)-[l:LINEAGE]->() WHERE j.key STARTS WITH $p DELETE l`, map[string]any{"p": p})
	neo4jExec(t, d, `MERGE (m:GraphModel {key: $k}) SET m.version = 2`, map[string]any{"k": w.ModelKey})
	if err := w.Bootstrap(ctx); !errors.Is(err, ErrModelVersion) || !strings.Contains(err.Error(), "colline upgrade") {
		t.Fatalf("Bootstrap on a model-2 graph = %v, want ErrModelVersion naming colline upgrade", err)
	}
	model2 := len(edgesUnder(t, NewReader(d, ""), p))
	if _, err := w.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(edgesUnder(t, NewReader(d, ""), p)); n != model2 || n != 5 {
		t.Errorf("Upgrade left %d of the %d model-2 edges, want all 5", n, model2)
	}
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil { // the replay
		t.Fatal(err)
	}
	if err := w.FinishUpgrade(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Bootstrap(ctx); err != nil {
		t.Fatalf("Bootstrap after the upgrade: %v", err)
	}
	got := slices.DeleteFunc(snapshot(t, d, p), func(l string) bool { return strings.HasPrefix(l, "GraphModel ") })
	if !reflect.DeepEqual(got, model3) {
		t.Errorf("the upgraded graph differs from model 3's:\n%s", diff(model3, got))
	}
}

func neo4jExec(t *testing.T, d neo4j.DriverWithContext, q string, params map[string]any) {
	t.Helper()
	if _, err := neo4j.ExecuteQuery(context.Background(), d, q, params, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
}

// TestVersionsConcurrentWriters: four writers write runs of the same two jobs at once (random
// versions, distinct times, so that the order of the commits does not matter); every edge still
// reads as model 2 stored it. The writer reads each LINEAGE under its dataset's lock, so no two
// transactions act on one version at once.
func TestVersionsConcurrentWriters(t *testing.T) {
	d := testDriver(t)
	w := NewWriter(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	rng := rand.New(rand.NewPCG(7, 33))
	var seq []record.Item
	for i, at := range rng.Perm(80) {
		job := []string{"j", "k"}[rng.IntN(2)]
		seq = append(seq, versioned(p, job, fmt.Sprintf("r%02d", i), "app", []int{1, 2, 3, 4, 5}[rng.IntN(5)], t0.Add(time.Duration(at)*time.Second)))
	}
	want := map[string]edgeState{}
	for _, it := range seq {
		at, _ := it.Time()
		jk, _, _ := it.Job()
		for kind, list := range map[string][]plan.Edge{Feeds: it.Lineage.Edges, DecidesRows: it.Lineage.RowDeps} {
			for _, e := range list {
				k := kind + " " + e.Source + " " + e.Target + " " + jk
				s, ok := want[k]
				if !ok || at.Before(s.firstSeen) {
					s.firstSeen = at
				}
				if !ok || at.After(s.lastSeen) {
					s.lastSeen, s.lastRun = at, it.Run()
					s.roles = fmt.Sprint(newEdgeRow(kind, e.Source, e.Target, jk, e.Transformations).Roles)
				}
				want[k] = s
			}
		}
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := g * 2; i < len(seq); i += 8 { // batches of two, the writers' interleaved
				if err := w.Write(ctx, seq[i:min(i+2, len(seq))]); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := effectiveEdges(t, p); !reflect.DeepEqual(got, want) {
		t.Errorf("concurrent writers: the graph differs from model 2:\n%s", diffStates(got, want))
	}
}

package graph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// TestEventTags: the tags an event carries (plan.Lineage.Tags, here set on a captured skeleton
// event) are stored with its write, as a set per source and dataset that a newer event replaces
// whole and an older one (a redelivery) leaves alone; a tag file's set replaces itself, and a
// tag's settings belong to one set.
func TestEventTags(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	w := NewWriter(d, "")
	g := func() *TagGraph { return NewReader(d, "").Tags() } // a new one each time: no settings kept from before a write
	data, err := os.ReadFile("../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	item := func(at time.Time, ts ...plan.ColumnTag) record.Item {
		it, err := process.Step{}.Item(data)
		if err != nil {
			t.Fatal(err)
		}
		it.Event.EventID = p + at.Format(time.RFC3339Nano)
		it.Event.Query.EndedAt = at.Format(time.RFC3339Nano)
		ds := p + "ds"
		for i := range ts {
			ts[i].Column = ds + "#" + ts[i].Column
		}
		it.Lineage.Tags = []plan.DatasetTags{{Dataset: ds, Source: "spark", Tags: ts}}
		return it
	}
	t.Cleanup(func() {
		wipe(t, d, p)
		w.RemoveTags(ctx, []string{"spark|" + p + "ds", "file:" + p + "a", "file:" + p + "b"})
	})
	rules := func() []string {
		t.Helper()
		rs, err := g().Rules(ctx, []string{p + "ds#email", p + "ds#name"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			if strings.HasPrefix(string(r.Dataset), p) {
				out = append(out, strings.TrimPrefix(string(r.Dataset), p)+"#"+string(r.Column)+" "+r.Tag.String())
			}
		}
		slices.Sort(out)
		return out
	}
	t1 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	if err := w.Write(ctx, []record.Item{item(t1, plan.ColumnTag{Column: "email", Key: "pii", Value: "email", Source: "spark:comment"})}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); strings.Join(got, ";") != "ds#email pii=email (spark:comment)" {
		t.Fatalf("after the first event: %v", got)
	}
	// newer: the comment moved to name
	if err := w.Write(ctx, []record.Item{item(t1.Add(time.Hour), plan.ColumnTag{Column: "name", Key: "pii", Value: "name", Source: "spark:property"})}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); strings.Join(got, ";") != "ds#name pii=name (spark:property)" {
		t.Fatalf("after a newer event: %v", got)
	}
	// the first event again (redelivered): nothing changes
	if err := w.Write(ctx, []record.Item{item(t1, plan.ColumnTag{Column: "email", Key: "pii", Value: "email", Source: "spark:comment"})}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); strings.Join(got, ";") != "ds#name pii=name (spark:property)" {
		t.Fatalf("after a redelivered older event: %v", got)
	}
	// newer, no tags: removed
	if err := w.Write(ctx, []record.Item{item(t1.Add(2 * time.Hour))}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); len(got) != 0 {
		t.Fatalf("after a newer event without tags: %v", got)
	}

	// files: a set replaces itself; settings of one tag in two files is an error
	key := "k-" + strings.Trim(p, "/")
	fileSet := func(name string, rules []tags.Rule, pols ...tags.Policy) TagSet {
		return TagSet{Key: "file:" + p + name, Source: "file:" + p + name, Rules: rules, Policies: pols}
	}
	r := tags.Rule{Tag: tags.Tag{Key: key, Value: "x", Source: "file:" + p + "a"}, Dataset: tags.Glob(p + "d*"), Column: "e*"}
	if err := w.WriteTags(ctx, []TagSet{fileSet("a", []tags.Rule{r, r}, tags.Policy{Key: key, Aggregation: tags.AggregationStop, Allowed: []tags.Glob{"x/*"}})}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); strings.Join(got, ";") != "d*#e* "+key+"=x (file:"+p+"a)" {
		t.Fatalf("a pattern rule: %v", got)
	}
	ps, err := g().Policies(ctx)
	if err != nil || ps[key].Aggregation != tags.AggregationStop || len(ps[key].Allowed) != 1 {
		t.Fatalf("settings %+v %v", ps[key], err)
	}
	err = w.WriteTags(ctx, []TagSet{fileSet("b", nil, tags.Policy{Key: key, Aggregation: tags.AggregationPass})})
	if !errors.Is(err, ErrTagSettings) || !strings.Contains(err.Error(), "file:"+p+"a") {
		t.Fatalf("settings from a second file: %v", err)
	}
	if err := w.WriteTags(ctx, []TagSet{fileSet("a", nil)}); err != nil {
		t.Fatal(err)
	}
	if got := rules(); len(got) != 0 {
		t.Fatalf("the file loaded again without rules: %v", got)
	}
	if ps, _ := g().Policies(ctx); ps[key].Key != "" {
		t.Fatalf("the file loaded again without settings: %+v", ps[key])
	}
}

// TestCountReach holds the reach per dataset counted in the server (CountReach, through
// tags.ReachByDataset) equal to the walk's grouping (tags.Group of tags.Reach on the same graph)
// with either aggregation setting, on a graph made for its edges: a masking FEEDS, an aggregation,
// a FEEDS with only INDIRECT roles to a column the tag reaches through another (the second query,
// over the FEEDS that carry), a column reached only through such a FEEDS (not reached), a
// DECIDES_ROWS; and says it cannot count exactly (the walk answers) with a struct among the
// reached columns, or a column 100 hops from a source.
func TestCountReach(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	// the keys of the columns of datasets a, b, c, e (a#x is tagged): a#x -> b#x (identity),
	// b#x -> c#sum (an aggregation), b#x -> c#hash (masked), b#x -> c#y (a filter only: a use),
	// b#x decides the rows of c, a#x -> b#x2 (a join key only) and b#x -> b#x2 (identity),
	// a#x -> e#z (a filter only) -> e#w (identity): e is not reached
	_, err := neo4j.ExecuteQuery(ctx, d, `UNWIND $cols AS c
MERGE (ds:Dataset {key: $p + c[0]})
CREATE (ds)-[:HAS_COLUMN]->(:Column {key: $p + c[0] + '#' + c[1], datasetKey: $p + c[0], name: c[1]})
WITH count(*) AS n
UNWIND $feeds AS f
MATCH (s:Column {key: $p + f[0]}), (t:Column {key: $p + f[1]})
CREATE (s)-[:FEEDS {job: $p + 'job', roles: f[2], masked: f[3], exprs: [r IN f[2] | '']}]->(t)
WITH count(*) AS n
MATCH (s:Column {key: $p + 'b#x'}), (ds:Dataset {key: $p + 'c'})
CREATE (s)-[:DECIDES_ROWS {job: $p + 'job', roles: ['INDIRECT/FILTER'], exprs: [''], rows: ['']}]->(ds)`,
		map[string]any{"p": p, "cols": [][]string{{"a", "x"}, {"b", "x"}, {"b", "x2"}, {"c", "sum"}, {"c", "hash"}, {"c", "y"}, {"e", "z"}, {"e", "w"}},
			"feeds": [][]any{
				{"a#x", "b#x", []string{"DIRECT/IDENTITY"}, []bool{false}},
				{"b#x", "c#sum", []string{"DIRECT/AGGREGATION"}, []bool{false}},
				{"b#x", "c#hash", []string{"DIRECT/TRANSFORMATION", "INDIRECT/FILTER"}, []bool{true, false}},
				{"b#x", "c#y", []string{"INDIRECT/FILTER"}, []bool{false}},
				{"a#x", "b#x2", []string{"INDIRECT/JOIN"}, []bool{false}},
				{"b#x", "b#x2", []string{"DIRECT/IDENTITY"}, []bool{false}},
				{"a#x", "e#z", []string{"INDIRECT/FILTER"}, []bool{false}},
				{"e#z", "e#w", []string{"DIRECT/IDENTITY"}, []bool{false}},
			}}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	mem := func(stop bool) *tags.Memory { // the rule and the setting, in memory; the hops from Neo4j
		agg := tags.AggregationPass
		if stop {
			agg = tags.AggregationStop
		}
		return tags.NewMemory([]tags.Rule{{Tag: tags.Tag{Key: "pii", Value: "x", Source: "file:t"}, Dataset: tags.Glob(p + "a"), Column: "x"}},
			[]tags.Policy{{Key: "pii", Aggregation: agg}})
	}
	g := NewReader(d, "").Tags()
	for _, stop := range []bool{false, true} {
		m := mem(stop)
		m.AddColumn(p+"a#x", p+"a")
		full, err := tags.Reach(ctx, mixed{g, m}, "pii", tags.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		per, err := tags.ReachByDataset(ctx, mixed{g, m}, "pii", tags.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.CountReach(ctx, []string{p + "a#x"}, stop, tags.DefaultMaxColumns)
		if err != nil || !c.Exact {
			t.Fatalf("stop %v: counted %+v, %v; want exact", stop, c, err)
		}
		if got, want := fmt.Sprintf("%+v", per), fmt.Sprintf("%+v", tags.Group(full)); got != want {
			t.Errorf("stop %v: per dataset\n%s\nwant the walk's\n%s", stop, got, want)
		}
		// what the walk finds, by hand: a (the source), b (x, x2 unmasked), c (sum unmasked or
		// aggregated, hash masked); uses: y's value, c's rows, x2's value (the join key), e#z's
		want := fmt.Sprintf("%sa:1/0/0 %sb:2/0/0 %sc:1/0/1 uses 4", p, p, p)
		if stop {
			want = fmt.Sprintf("%sa:1/0/0 %sb:2/0/0 %sc:0/1/1 uses 4", p, p, p)
		}
		var got []string
		uses := 0
		for _, x := range per.Datasets {
			if x.Unmasked+x.Aggregated+x.Masked > 0 {
				got = append(got, fmt.Sprintf("%s:%d/%d/%d", x.Dataset, x.Unmasked, x.Aggregated, x.Masked))
			}
			uses += x.Uses
		}
		if s := fmt.Sprintf("%s uses %d", strings.Join(got, " "), uses); s != want {
			t.Errorf("stop %v: %s, want %s", stop, s, want)
		}
	}

	// a struct among the reached columns, a column 100 hops away: the walk answers
	_, err = neo4j.ExecuteQuery(ctx, d, `MATCH (b:Column {key: $p + 'b#x2'})
CREATE (b)-[:HAS_FIELD]->(:Column {key: $p + 'b#x2.f', datasetKey: $p + 'b', name: 'x2.f'})
WITH count(*) AS n
UNWIND range(0, 100) AS i
CREATE (:Column {key: $p + 'chain#c' + i, datasetKey: $p + 'chain', name: 'c' + i})
WITH count(*) AS n
UNWIND range(0, 99) AS i
MATCH (s:Column {key: $p + 'chain#c' + i}), (t:Column {key: $p + 'chain#c' + (i + 1)})
CREATE (s)-[:FEEDS {job: $p + 'job', roles: ['DIRECT/IDENTITY'], masked: [false], exprs: ['']}]->(t)`, map[string]any{"p": p}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{p + "a#x", p + "chain#c0", p + "chain#c1"} {
		c, err := g.CountReach(ctx, []string{src}, false, tags.DefaultMaxColumns)
		if err != nil {
			t.Fatal(err)
		}
		if exact := src == p+"chain#c1"; c.Exact != exact { // c1 is 99 hops from the chain's end
			t.Errorf("from %s: exact %v, want %v", src, c.Exact, exact)
		}
	}
	if c, err := g.CountReach(ctx, []string{p + "chain#c50"}, false, 20); err != nil || c.Exact { // 51 columns, limit 20
		t.Errorf("over the limit: %+v %v, want not exact", c, err)
	}
}

// mixed reads hops from Neo4j and rules and settings from memory.
type mixed struct {
	*TagGraph
	m *tags.Memory
}

func (x mixed) Rules(ctx context.Context, keys []string) ([]tags.Rule, error) {
	return x.m.Rules(ctx, keys)
}
func (x mixed) Tagged(ctx context.Context, key string) ([]tags.Tagged, error) {
	return x.m.Tagged(ctx, key)
}
func (x mixed) Policies(ctx context.Context) (map[string]tags.Policy, error) {
	return x.m.Policies(ctx)
}

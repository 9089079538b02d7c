package graph

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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

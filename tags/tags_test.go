package tags_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/tags"
)

func TestParseFile(t *testing.T) {
	good := `version: 1
tags:
  pii:
    description: personal data
    allowed: [spark_catalog/crm.*]
  finance:
    aggregation: stop
columns:
  - dataset: spark_catalog/crm.customer
    columns: [first_name, Last_Name]
    tags: {pii: name}
  - dataset: spark_catalog/*.payroll
    column: salary
    tags: {finance: true, pii: salary}
`
	f, err := tags.ParseFile("tags/crm.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Policies {
		got = append(got, p.Key+" "+p.Aggregation+" "+strings.Join(globs(p.Allowed), ",")+" "+p.Source)
	}
	for _, r := range f.Rules {
		got = append(got, string(r.Dataset)+"#"+string(r.Column)+" "+r.Tag.String())
	}
	want := []string{
		"pii pass spark_catalog/crm.* file:tags/crm.yaml",
		"finance stop  file:tags/crm.yaml",
		"spark_catalog/crm.customer#first_name pii=name (file:tags/crm.yaml)",
		"spark_catalog/crm.customer#last_name pii=name (file:tags/crm.yaml)",
		"spark_catalog/*.payroll#salary finance=true (file:tags/crm.yaml)",
		"spark_catalog/*.payroll#salary pii=salary (file:tags/crm.yaml)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f, err = tags.ParseFile("x.yaml", []byte("version: 1\nsource: crm-pii\n"))
	if err != nil || f.Source != "file:crm-pii" {
		t.Errorf("source: %v %v", f, err)
	}

	for _, tc := range []struct{ name, doc, err string }{
		{"empty", "", "x.yaml: empty; a tag file starts with version: 1"},
		{"version", "version: 2\n", "x.yaml:1: version 2; this colline reads version 1"},
		{"no version", "tags: {}\n", "x.yaml:1: version 0; this colline reads version 1"},
		{"unknown field", "version: 1\ncolumn: []\n", "x.yaml: yaml: unmarshal errors:\n  line 2: field column not found in type tags.fileYAML"},
		{"bad aggregation", "version: 1\ntags:\n  pii: {aggregation: maybe}\n", `x.yaml:3: tags: pii: aggregation "maybe": use pass or stop`},
		{"bad key", "version: 1\ntags:\n  'p i i': {}\n", `x.yaml:3: tags: bad tag key "p i i": use 1 to 100 letters, digits, _ . : or -`},
		{"no dataset", "version: 1\ncolumns:\n  - {column: a, tags: {pii: x}}\n", "x.yaml:3: columns[0]: no dataset"},
		{"no column", "version: 1\ncolumns:\n  - dataset: d/x\n    tags: {pii: x}\n", "x.yaml:3: columns[0]: no column or columns"},
		{"no tags", "version: 1\ncolumns:\n  - {dataset: d/x, column: a}\n", "x.yaml:3: columns[0]: no tags"},
		{"not yaml", "version: [\n", "x.yaml: yaml: line 1: did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tags.ParseFile("x.yaml", []byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("error %v, want one starting %q", err, tc.err)
			}
		})
	}
}

func globs(gs []tags.Glob) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = string(g)
	}
	return out
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, s string
		want    bool
	}{
		{"spark_catalog/crm.*", "spark_catalog/crm.customer", true},
		{"spark_catalog/crm.*", "spark_catalog/crmx.customer", false},
		{"*.customer", "spark_catalog/crm.customer", true},
		{"c_birth_*", "c_birth_day", true},
		{"c_?_name", "c_x_name", true},
		{"c_?_name", "c_xy_name", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"", "", true},
		{"x.y", "xzy", false}, // a dot is a dot
		{"*", "", true},
		{"é*", "éa", true},
	} {
		g := tags.Glob(tc.glob)
		if got := g.Match(tc.s); got != tc.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tc.glob, tc.s, got, tc.want)
		}
	}
	if p := tags.Glob("spark_catalog/crm.c*st?").Prefix(); p != "spark_catalog/crm.c" {
		t.Errorf("prefix %q", p)
	}
	if r := tags.Glob("a.b*c?").Regexp(); r != `^a\.b(?s:.*)c(?s:.)$` {
		t.Errorf("regexp %q", r)
	}
}

// A made-up lineage (a unit test's input, not Spark's): crm.customer's email is tagged, and
//
//	email → stage.contacts.email          IDENTITY           (job a)
//	stage.contacts.email → mart.x.email   TRANSFORMATION     (job b)  unmasked, two hops
//	email → mart.x.hash                   TRANSFORMATION masked (sha2)
//	email → mart.x.n                      AGGREGATION masked (count)
//	email → mart.x.longest                AGGREGATION (max)
//	mart.x.longest → mart.y.longest       IDENTITY           only if aggregations pass
//	mart.x.hash → mart.y.hash             IDENTITY           not tagged: the hash stopped it
//	email ⇒ mart.x                        INDIRECT/FILTER    rows: an indirect use
//	email → mart.x.flag                   INDIRECT/CONDITIONAL  a value's condition: an indirect use
//	stage.contacts.email → stage.contacts.profile.mail   (a struct's field, by FEEDS) …
//	stage.contacts.profile (struct) → mart.z.profile     IDENTITY   holds the tagged field
func lineage(agg string) *tags.Memory {
	m := tags.NewMemory([]tags.Rule{
		{Tag: tags.Tag{Key: "pii", Value: "email", Source: "file:t.yaml"}, Dataset: "spark_catalog/crm.customer", Column: "email"},
		{Tag: tags.Tag{Key: "pii", Value: "name", Source: "file:t.yaml"}, Dataset: "spark_catalog/crm.*", Column: "*_name"},
	}, []tags.Policy{{Key: "pii", Aggregation: agg, Allowed: []tags.Glob{"spark_catalog/stage.*"}}})
	cust, contacts, x, y, z := "spark_catalog/crm.customer", "spark_catalog/stage.contacts", "spark_catalog/mart.x", "spark_catalog/mart.y", "spark_catalog/mart.z"
	m.AddColumn(cust+"#first_name", cust)
	hop := func(from, fds, to, tds, job string, roles ...tags.Role) {
		m.AddHop(tags.Hop{Kind: tags.Feeds, From: from, FromDataset: fds, To: to, ToDataset: tds, Job: job, Roles: roles})
	}
	id := tags.Role{Type: plan.Direct, Subtype: plan.Identity}
	tr := tags.Role{Type: plan.Direct, Subtype: plan.TransformationSub}
	hop(cust+"#email", cust, contacts+"#email", contacts, "a", id)
	hop(contacts+"#email", contacts, x+"#email", x, "b", tr)
	hop(cust+"#email", cust, x+"#hash", x, "b", tags.Role{Type: plan.Direct, Subtype: plan.TransformationSub, Masked: true, Expr: "sha2(email, 256)"})
	hop(cust+"#email", cust, x+"#n", x, "b", tags.Role{Type: plan.Direct, Subtype: plan.Aggregation, Masked: true, Expr: "count(email)"})
	hop(cust+"#email", cust, x+"#longest", x, "b", tags.Role{Type: plan.Direct, Subtype: plan.Aggregation, Expr: "max(email)"})
	hop(x+"#longest", x, y+"#longest", y, "c", id)
	hop(x+"#hash", x, y+"#hash", y, "c", id)
	hop(cust+"#email", cust, x+"#flag", x, "b", tags.Role{Type: plan.Indirect, Subtype: plan.Conditional})
	m.AddHop(tags.Hop{Kind: tags.DecidesRows, From: cust + "#email", FromDataset: cust, To: x, ToDataset: x, Job: "b", Roles: []tags.Role{{Type: plan.Indirect, Subtype: plan.FilterSub}}})
	hop(contacts+"#email", contacts, contacts+"#profile.mail", contacts, "a", id)
	m.AddHop(tags.Hop{Kind: tags.Parent, From: contacts + "#profile.mail", FromDataset: contacts, To: contacts + "#profile", ToDataset: contacts})
	m.AddHop(tags.Hop{Kind: tags.Field, From: contacts + "#profile", FromDataset: contacts, To: contacts + "#profile.mail", ToDataset: contacts})
	m.AddHop(tags.Hop{Kind: tags.Field, From: contacts + "#profile", FromDataset: contacts, To: contacts + "#profile.phone", ToDataset: contacts})
	hop(contacts+"#profile", contacts, z+"#profile", z, "d", id)
	m.AddHop(tags.Hop{Kind: tags.Field, From: z + "#profile", FromDataset: z, To: z + "#profile.mail", ToDataset: z})
	return m
}

func reachLines(ans *tags.ReachAnswer) []string {
	var out []string
	for _, c := range ans.Columns {
		for _, a := range c.Arrivals {
			allowed := ""
			if !c.Allowed {
				allowed = " NOT ALLOWED"
			}
			out = append(out, strings.TrimPrefix(c.Column, "spark_catalog/")+" "+string(a.Status)+allowed+" from "+strings.TrimPrefix(a.From, "spark_catalog/")+" "+jobs(a.Path))
		}
	}
	for _, u := range ans.Indirect {
		out = append(out, "use "+u.Kind+" "+strings.TrimPrefix(u.Target, "spark_catalog/")+" via "+strings.TrimPrefix(u.Via, "spark_catalog/"))
	}
	return out
}

func jobs(path []tags.Hop) string {
	var js []string
	for _, h := range path {
		js = append(js, h.Kind+":"+h.Job)
	}
	return "[" + strings.Join(js, " ") + "]"
}

func TestReach(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		agg  string
		want []string
	}{
		{tags.AggregationPass, []string{
			"crm.customer#email unmasked from crm.customer#email []",
			"mart.x#email unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:b]",
			"mart.x#hash masked from crm.customer#email [FEEDS:b]",
			"mart.x#longest unmasked NOT ALLOWED from crm.customer#email [FEEDS:b]",
			"mart.x#n masked from crm.customer#email [FEEDS:b]",
			"mart.y#longest unmasked NOT ALLOWED from crm.customer#email [FEEDS:b FEEDS:c]",
			// the struct holding the tagged field carries it, and so do its copy and the copy's
			// mail field, but not its other field phone
			"mart.z#profile unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:a PARENT: FEEDS:d]",
			"mart.z#profile.mail unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:a PARENT: FEEDS:d FIELD:]",
			"stage.contacts#email unmasked from crm.customer#email [FEEDS:a]",
			"stage.contacts#profile unmasked from crm.customer#email [FEEDS:a FEEDS:a PARENT:]",
			"stage.contacts#profile.mail unmasked from crm.customer#email [FEEDS:a FEEDS:a]",
			"use rows mart.x via crm.customer#email",
			"use value mart.x#flag via crm.customer#email",
		}},
		{tags.AggregationStop, []string{
			"crm.customer#email unmasked from crm.customer#email []",
			"mart.x#email unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:b]",
			"mart.x#hash masked from crm.customer#email [FEEDS:b]",
			"mart.x#longest aggregated from crm.customer#email [FEEDS:b]",
			"mart.x#n masked from crm.customer#email [FEEDS:b]",
			"mart.z#profile unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:a PARENT: FEEDS:d]",
			"mart.z#profile.mail unmasked NOT ALLOWED from crm.customer#email [FEEDS:a FEEDS:a PARENT: FEEDS:d FIELD:]",
			"stage.contacts#email unmasked from crm.customer#email [FEEDS:a]",
			"stage.contacts#profile unmasked from crm.customer#email [FEEDS:a FEEDS:a PARENT:]",
			"stage.contacts#profile.mail unmasked from crm.customer#email [FEEDS:a FEEDS:a]",
			"use rows mart.x via crm.customer#email",
			"use value mart.x#flag via crm.customer#email",
		}},
	} {
		t.Run("aggregation "+tc.agg, func(t *testing.T) {
			ans, err := tags.Reach(ctx, lineage(tc.agg), "pii", tags.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			// first_name is tagged by the pattern and flows nowhere
			if len(ans.Sources) != 2 || ans.Sources[0].Column != "spark_catalog/crm.customer#email" || ans.Sources[1].Column != "spark_catalog/crm.customer#first_name" {
				t.Errorf("sources %+v", ans.Sources)
			}
			got := reachLines(ans)
			if len(got) > 0 && got[0] == "crm.customer#email unmasked from crm.customer#email []" {
				got = append(got[:1], got[2:]...) // first_name, the other source, in the middle
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("reach:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if v := ans.Violations(); len(v) == 0 || v[0].Column != "spark_catalog/mart.x#email" {
				t.Errorf("violations %+v", v)
			}
		})
	}
}

func TestOf(t *testing.T) {
	ctx := context.Background()
	m := lineage(tags.AggregationStop)
	cts, err := tags.Of(ctx, m, []string{"spark_catalog/mart.x#email", "spark_catalog/mart.x#hash", "spark_catalog/mart.y#hash",
		"spark_catalog/mart.x#longest", "spark_catalog/mart.y#longest", "spark_catalog/mart.x#flag", "spark_catalog/crm.customer#email",
		"spark_catalog/mart.z#profile", "spark_catalog/mart.z#profile.mail", "spark_catalog/stage.contacts#profile.phone"}, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range cts {
		line := strings.TrimPrefix(ct.Column, "spark_catalog/") + ":"
		for _, c := range ct.Tags {
			line += " " + c.Tag.Key + "=" + c.Tag.Value + " " + string(c.Status) + " " + jobs(c.Path)
		}
		got = append(got, line)
	}
	want := []string{
		"crm.customer#email: pii=email unmasked []",
		"mart.x#email: pii=email unmasked [FEEDS:a FEEDS:b]",
		"mart.x#flag:", // a condition: no tag
		"mart.x#hash: pii=email masked [FEEDS:b]",
		"mart.x#longest: pii=email aggregated [FEEDS:b]",
		"mart.y#hash:",    // the hash stopped it one hop before
		"mart.y#longest:", // the aggregation stopped it one hop before (aggregation: stop)
		"mart.z#profile: pii=email unmasked [FEEDS:a FEEDS:a PARENT: FEEDS:d]",
		"mart.z#profile.mail: pii=email unmasked [FEEDS:a FEEDS:a PARENT: FEEDS:d FIELD:]",
		"stage.contacts#profile.phone:", // a sibling of the tagged field
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("of:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cts, _ = tags.Of(ctx, lineage(tags.AggregationPass), []string{"spark_catalog/mart.y#longest"}, tags.Limits{})
	if len(cts[0].Tags) != 1 || cts[0].Tags[0].Status != tags.Unmasked {
		t.Errorf("aggregation pass: mart.y#longest %+v, want pii unmasked", cts[0].Tags)
	}
	if _, err := tags.Of(ctx, m, []string{"nope#x"}, tags.Limits{}); err == nil || !strings.Contains(err.Error(), "no such column") {
		t.Errorf("unknown column: %v", err)
	}
}

// TestCarry: a change (made-up lineage) that reads stage.contacts.email, which carries pii from
// crm.customer, and writes it to mart.w unmasked and hashed; mart.w is not allowed.
func TestCarry(t *testing.T) {
	ctx := context.Background()
	g := lineage(tags.AggregationPass)
	change := tags.NewMemory(nil, nil)
	contacts, w := "spark_catalog/stage.contacts", "spark_catalog/mart.w"
	change.AddHop(tags.Hop{Kind: tags.Feeds, From: contacts + "#email", FromDataset: contacts, To: w + "#email", ToDataset: w, Job: "pr",
		Roles: []tags.Role{{Type: plan.Direct, Subtype: plan.Identity}}})
	change.AddHop(tags.Hop{Kind: tags.Feeds, From: contacts + "#email", FromDataset: contacts, To: w + "#hash", ToDataset: w, Job: "pr",
		Roles: []tags.Role{{Type: plan.Direct, Subtype: plan.TransformationSub, Masked: true}}})
	answers, err := tags.Carry(ctx, g, change, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 1 || answers[0].Tag != "pii" {
		t.Fatalf("answers %+v", answers)
	}
	v := answers[0].Violations()
	if len(v) != 1 || v[0].Column != w+"#email" || jobs(v[0].Path) != "[FEEDS:a FEEDS:pr]" {
		t.Fatalf("violations %+v", v)
	}
	// the same change into an allowed dataset passes
	change = tags.NewMemory(nil, nil)
	change.AddHop(tags.Hop{Kind: tags.Feeds, From: contacts + "#email", FromDataset: contacts, To: "spark_catalog/stage.w#email", ToDataset: "spark_catalog/stage.w", Job: "pr",
		Roles: []tags.Role{{Type: plan.Direct, Subtype: plan.Identity}}})
	answers, _ = tags.Carry(ctx, g, change, tags.Limits{})
	if len(answers) != 1 || len(answers[0].Violations()) != 0 {
		t.Errorf("allowed change: %+v", answers)
	}
}

func TestWriteFormats(t *testing.T) {
	ctx := context.Background()
	ans, _ := tags.Reach(ctx, lineage(tags.AggregationPass), "pii", tags.Limits{})
	for _, f := range tags.Formats {
		var b bytes.Buffer
		if err := tags.WriteReach(&b, f, ans); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "spark_catalog/mart.x#email") {
			t.Errorf("%s lacks mart.x#email:\n%s", f, b.String())
		}
	}
	var b bytes.Buffer
	tags.WriteReach(&b, "csv", ans)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "tag,dataset,column,status,allowed,from,tags,hops,path" {
		t.Errorf("csv header %q", first)
	}
	if !strings.Contains(b.String(), "pii,spark_catalog/mart.x,spark_catalog/mart.x#email,unmasked,false,spark_catalog/crm.customer#email,pii=email (file:t.yaml),2,") {
		t.Errorf("csv:\n%s", b.String())
	}
}

// TestReadManifest reads a real manifest, written by `dbt parse` of dev/dbt/shop (dbt-core 1.11,
// dev/dbt/setup), whose source lake.customers has name tagged pii with meta sensitivity, and
// whose model customer_orders has customer_name with meta pii: name.
func TestReadManifest(t *testing.T) {
	raw, err := os.ReadFile("testdata/shop-manifest.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	f, notes, err := tags.ReadManifest(zr, func(name string) string { return "duckdb:///tmp/shop.duckdb/" + name })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.Rules {
		k, _ := r.ColumnKey()
		got = append(got, k+" "+r.Tag.String())
	}
	want := []string{
		"duckdb:///tmp/shop.duckdb/shop.main.customer_orders#customer_name pii=name (dbt:shop)",
		"duckdb:///tmp/shop.duckdb/shop.lake.customers#name pii=true (dbt:shop)",
		"duckdb:///tmp/shop.duckdb/shop.lake.customers#name sensitivity=personal (dbt:shop)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(notes) != 0 {
		t.Errorf("rules:\n%s\nnotes %v\nwant:\n%s", strings.Join(got, "\n"), notes, strings.Join(want, "\n"))
	}
	if _, _, err := tags.ReadManifest(strings.NewReader(`{"nodes": {}}`), nil); err == nil || !strings.Contains(err.Error(), "no metadata.project_name") {
		t.Errorf("not a manifest: %v", err)
	}
}

// coned is a Memory that also gives cones (tags.Coner), as graph.TagGraph does: the FEEDS cone
// of keys, limited per start column, and every hop of each column in it.
type coned struct {
	*tags.Memory
	calls int
	cut   int // a smaller limit than asked, when not 0
}

func (c *coned) Cone(ctx context.Context, dir tags.Direction, keys []string, limit int) (*tags.Cone, error) {
	c.calls++
	if c.cut > 0 {
		limit = c.cut
	}
	seen := map[string]bool{}
	var cone []string
	for _, k := range keys {
		n := 0
		front := []string{k}
		local := map[string]bool{k: true}
		for len(front) > 0 {
			hops, _ := c.Memory.Step(ctx, dir, front)
			front = nil
			for _, h := range hops {
				next := h.To
				if dir == tags.Up {
					next = h.From
				}
				if h.Kind != tags.Feeds || local[next] || n >= limit {
					continue
				}
				local[next] = true
				n++
				front = append(front, next)
			}
		}
		for x := range local {
			if !seen[x] {
				seen[x] = true
				cone = append(cone, x)
			}
		}
	}
	hops, _ := c.Memory.Step(ctx, dir, cone)
	cols, _ := c.Memory.Columns(ctx, cone)
	all, _ := c.Memory.Rules(ctx, nil)
	var exact []tags.Rule
	for _, r := range all {
		if k, ok := r.ColumnKey(); ok && cols[k] != "" {
			exact = append(exact, r)
		}
	}
	return &tags.Cone{Hops: hops, Columns: cols, Rules: exact}, nil
}

// TestConeSameAnswers: walking with cones (the graph's way) or one step at a time gives the same
// answers, also when the cone is cut short (the walk steps on from where it ends).
func TestConeSameAnswers(t *testing.T) {
	ctx := context.Background()
	for _, cut := range []int{0, 1} {
		for _, agg := range []string{tags.AggregationPass, tags.AggregationStop} {
			plain, c := lineage(agg), &coned{Memory: lineage(agg), cut: cut}
			a, err := tags.Reach(ctx, plain, "pii", tags.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := tags.Reach(ctx, c, "pii", tags.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if c.calls != 1 {
				t.Errorf("cones asked: %d, want 1", c.calls)
			}
			if x, y := fmt.Sprint(reachLines(a)), fmt.Sprint(reachLines(b)); x != y {
				t.Errorf("reach, aggregation %s, cut %d: steps\n%s\ncone\n%s", agg, cut, x, y)
			}
			keys := []string{"spark_catalog/mart.x#email", "spark_catalog/mart.y#longest", "spark_catalog/mart.z#profile.mail"}
			oa, _ := tags.Of(ctx, plain, keys, tags.Limits{})
			ob, err := tags.Of(ctx, &coned{Memory: lineage(agg), cut: cut}, keys, tags.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(oa) != fmt.Sprint(ob) {
				t.Errorf("of, aggregation %s, cut %d: steps\n%v\ncone\n%v", agg, cut, oa, ob)
			}
		}
	}
}

// stepped is a Graph that records the columns it is asked for hops of, and is no Upstreamer.
type stepped struct {
	tags.Graph
	keys map[string]bool
}

func (s *stepped) Step(ctx context.Context, dir tags.Direction, keys []string) ([]tags.Hop, error) {
	for _, k := range keys {
		s.keys[k] = true
	}
	return s.Graph.Step(ctx, dir, keys)
}

// TestUntaggedUpstream: Of answers the columns that no tag can reach without walking them (an
// Upstreamer says that no column upstream through FEEDS is tagged and none is a struct), and its
// answers are the walk's, for every column, with either aggregation setting.
func TestUntaggedUpstream(t *testing.T) {
	ctx := context.Background()
	orders, x, s := "spark_catalog/crm.orders", "spark_catalog/mart.x", "spark_catalog/stage.s"
	keys := []string{"spark_catalog/mart.x#email", "spark_catalog/mart.x#hash", "spark_catalog/mart.y#hash",
		"spark_catalog/mart.x#longest", "spark_catalog/mart.y#longest", "spark_catalog/mart.x#flag", "spark_catalog/crm.customer#email",
		"spark_catalog/mart.z#profile", "spark_catalog/mart.z#profile.mail", "spark_catalog/stage.contacts#profile.phone",
		x + "#total", orders + "#amount", s + "#st", s + "#st.a"}
	for _, agg := range []string{tags.AggregationPass, tags.AggregationStop} {
		g := func() *tags.Memory {
			m := lineage(agg)
			m.AddColumn(orders+"#amount", orders)
			m.AddColumn(s+"#st", s)
			m.AddColumn(s+"#st.a", s)
			m.AddHop(tags.Hop{Kind: tags.Feeds, From: orders + "#amount", FromDataset: orders, To: x + "#total", ToDataset: x, Job: "b",
				Roles: []tags.Role{{Type: plan.Direct, Subtype: plan.Aggregation}}})
			m.AddHop(tags.Hop{Kind: tags.Field, From: s + "#st", FromDataset: s, To: s + "#st.a", ToDataset: s})
			m.AddHop(tags.Hop{Kind: tags.Parent, From: s + "#st.a", FromDataset: s, To: s + "#st", ToDataset: s})
			m.AddHop(tags.Hop{Kind: tags.Feeds, From: orders + "#amount", FromDataset: orders, To: s + "#st.a", ToDataset: s, Job: "e",
				Roles: []tags.Role{{Type: plan.Direct, Subtype: plan.Identity}}})
			return m
		}
		walked := &stepped{Graph: g(), keys: map[string]bool{}}
		want, err := tags.Of(ctx, walked, keys, tags.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		pruned := g()
		got, err := tags.Of(ctx, pruned, keys, tags.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("aggregation %s: of with Upstream\n%v\nwalked\n%v", agg, got, want)
		}
		for _, ct := range got {
			if (ct.Column == x+"#total" || ct.Column == orders+"#amount") && len(ct.Tags) != 0 {
				t.Errorf("%s: tags %v, want none", ct.Column, ct.Tags)
			}
		}
		ups, _ := pruned.Upstream(ctx, keys, 100)
		answered := 0
		for _, u := range ups {
			if !u.Tagged && !u.Structs {
				answered++
			}
			if u.Column == s+"#st" && !u.Structs || u.Column == x+"#total" && (u.Tagged || u.Structs || u.Columns != 2) {
				t.Errorf("upstream of %s: %+v", u.Column, u)
			}
		}
		if answered != 2 { // mart.x#total and crm.orders#amount; the struct s.st and its field are walked
			t.Errorf("%d columns answered without a walk, want 2", answered)
		}
	}
}

package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/tags"
)

// fakeTags is a TagReader in memory.
type fakeTags struct{ *tags.Memory }

func (f fakeTags) TagList(context.Context) ([]graph.TagSummary, error) {
	return []graph.TagSummary{{Key: "pii", Policy: tags.DefaultPolicy("pii"), Sources: map[string]int{"file:t": 1}, Rules: 1}}, nil
}

// tsFields reads the interfaces of web/src/api.ts: each one's fields, true for an optional one
// (name?: type), with the fields of the interface it extends.
func tsFields(t *testing.T) map[string]map[string]bool {
	t.Helper()
	src, err := os.ReadFile("web/src/api.ts")
	if err != nil {
		t.Fatal(err)
	}
	field := regexp.MustCompile(`(?m)^\s*(\w+)(\??):`)
	out := map[string]map[string]bool{}
	for _, m := range regexp.MustCompile(`(?ms)^export interface (\w+)(?: extends (\w+))? \{\n(.*?)^\}`).FindAllStringSubmatch(string(src), -1) {
		fields := map[string]bool{}
		if m[2] != "" {
			base, ok := out[m[2]]
			if !ok {
				t.Fatalf("api.ts: %s extends %s, which is not declared before it", m[1], m[2])
			}
			for k, v := range base {
				fields[k] = v
			}
		}
		for _, f := range field.FindAllStringSubmatch(m[3], -1) {
			fields[f[1]] = f[2] == "?"
		}
		out[m[1]] = fields
	}
	return out
}

// goFields is the JSON object encoding/json writes for a struct type: each field, true for one
// it leaves out when empty (omitempty); embedded structs without a name are flattened.
func goFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for k, v := range goFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = strings.Contains(","+opts+",", ",omitempty,")
	}
	return out
}

// TestAPITypes holds the explorer's TypeScript types (web/src/api.ts, written by hand) against
// the JSON of the Go API, so that they cannot drift apart: an answer that is a Go struct has
// exactly the interface's fields, optional (name?) where Go leaves them out when empty
// (omitempty); an answer the handlers build as a map has only fields the interface declares, and
// every field it requires. Every interface is checked. Change both sides together.
func TestAPITypes(t *testing.T) {
	ts := tsFields(t)
	checked := map[string]bool{}
	structs := map[string]reflect.Type{
		"Dataset": reflect.TypeFor[graph.DatasetInfo](), "Column": reflect.TypeFor[graph.ColumnInfo](),
		"Role": reflect.TypeFor[graph.Role](), "Edge": reflect.TypeFor[graph.Edge](), "Hit": reflect.TypeFor[graph.Hit](),
		"ColumnDetail": reflect.TypeFor[graph.ColumnDetail](), "DatasetDetail": reflect.TypeFor[graph.DatasetDetail](),
		"Run": reflect.TypeFor[graph.RunInfo](), "Access": reflect.TypeFor[graph.Access](), "JobDetail": reflect.TypeFor[graph.JobDetail](),
		"Impacted": reflect.TypeFor[graph.Impacted](), "PreviewEvent": reflect.TypeFor[previewEvent](),
		"SQLStatement": reflect.TypeFor[SQLStatement](), "SQLTable": reflect.TypeFor[SQLTable](), "SQLColumn": reflect.TypeFor[SQLColumn](),
		"RunRef": reflect.TypeFor[graph.RunRef](), "RunConnect": reflect.TypeFor[graph.RunConnect](), "RunSet": reflect.TypeFor[graph.RunSet](),
		"Tag": reflect.TypeFor[tags.Tag](), "TagPolicy": reflect.TypeFor[tags.Policy](), "Tagged": reflect.TypeFor[tags.Tagged](),
		"Hop": reflect.TypeFor[tags.Hop](), "Arrival": reflect.TypeFor[tags.Arrival](), "Reached": reflect.TypeFor[tags.Reached](),
		"DatasetReach": reflect.TypeFor[tags.DatasetReach](), "DatasetCount": reflect.TypeFor[tags.DatasetCount](), "DatasetsAnswer": reflect.TypeFor[tags.DatasetsAnswer](), "TagUse": reflect.TypeFor[tags.Use](), "ReachAnswer": reflect.TypeFor[tags.ReachAnswer](),
		"Carried": reflect.TypeFor[tags.Carried](), "ColumnTags": reflect.TypeFor[tags.ColumnTags](), "TagSummary": reflect.TypeFor[graph.TagSummary](),
	}
	if want, got := goFields(reflect.TypeFor[tags.Role]()), ts["Role"]; !reflect.DeepEqual(got, want) {
		t.Errorf("api.ts Role = %v; tags.Role (a Hop's roles) writes %v", got, want)
	}
	for name, typ := range structs {
		checked[name] = true
		if want, got := goFields(typ), ts[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("api.ts %s = %v; %s writes %v (true: optional)", name, got, typ, want)
		}
	}

	// The answers built as maps, as a fake reader makes the handlers write them.
	mem := tags.NewMemory([]tags.Rule{{Tag: tags.Tag{Key: "pii", Value: "x", Source: "file:t"}, Dataset: "a", Column: "x"}}, nil)
	mem.AddColumn("a#x", "a")
	h := New(&fakeReader{walk: func(graph.Walk) (*graph.Subgraph, error) {
		return &graph.Subgraph{Columns: []graph.ColumnInfo{{Key: "a#x", Dataset: "a", Name: "x"}, {Key: "b#y", Dataset: "b", Name: "y", Distance: 1}},
			Edges: []graph.Edge{{Kind: graph.Feeds, Source: "a#x", Target: "b#y", Job: "j"}}, Complete: true}, nil
	}}, Params{Tags: fakeTags{mem}})
	answer := func(method, path, body string) map[string]any {
		t.Helper()
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if method == http.MethodPost {
			r.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(w, r)
		var out map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &out); w.Code != http.StatusOK || err != nil {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		return out
	}
	event, err := os.ReadFile("../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	preview := answer(http.MethodPost, "/api/preview", string(event))
	for _, a := range []struct {
		name   string
		answer map[string]any
	}{
		{"Config", answer(http.MethodGet, "/api/config", "")},
		{"SearchAnswer", answer(http.MethodGet, "/api/search?q=x", "")},
		{"Subgraph", answer(http.MethodGet, "/api/lineage?column=a%23x&asOf=2026-12-01", "")},
		{"ImpactAnswer", answer(http.MethodGet, "/api/impact?column=a%23x", "")},
		{"Preview", preview},
		{"TagListAnswer", answer(http.MethodGet, "/api/tags", "")},
		{"ColumnTagsAnswer", answer(http.MethodGet, "/api/tags/columns?column=a%23x", "")},
		{"Subgraph", preview["lineage"].(map[string]any)},
	} {
		checked[a.name] = true
		fields, ok := ts[a.name]
		if !ok {
			t.Errorf("api.ts declares no %s", a.name)
			continue
		}
		for k := range a.answer {
			if _, ok := fields[k]; !ok {
				t.Errorf("the %s answer has %q, which api.ts does not declare", a.name, k)
			}
		}
		for k, optional := range fields {
			if _, ok := a.answer[k]; !ok && !optional {
				t.Errorf("api.ts %s requires %q, which the answer lacks", a.name, k)
			}
		}
	}
	for name := range ts {
		if !checked[name] {
			t.Errorf("api.ts %s is checked against no Go answer: add it to TestAPITypes", name)
		}
	}
}

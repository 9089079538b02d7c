package openlineage

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A minimal valid RunEvent; the cases below change one thing each. Hand-written unit-test input,
// not what any producer emits (those are the captured fixtures).
const baseEvent = `{
  "eventTime": "2026-12-01T10:00:00.000Z",
  "producer": "https://github.com/colline/colline",
  "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
  "eventType": "COMPLETE",
  "run": {"runId": "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},
  "job": {"namespace": "ns", "name": "job"},
  "inputs": [{"namespace": "file", "name": "/in"}],
  "outputs": [{"namespace": "file", "name": "/out", "facets": {
    "columnLineage": {
      "_producer": "https://github.com/colline/colline",
      "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
      "fields": {"a": {"inputFields": [{"namespace": "file", "name": "/in", "field": "a",
        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}}
    }
  }}]
}`

// edit applies f to a decoded copy of baseEvent and encodes it again.
func edit(t *testing.T, f func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseEvent), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func obj(m map[string]any, path ...any) map[string]any {
	var cur any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur.(map[string]any)
}

func TestValidate(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		event     string
		err       string   // exact error text; "" for a valid event
		kind      Kind     // of the report, when valid
		checked   []string // Report.Checked, when valid
		unchecked []string // Report.Unchecked locations, when valid
	}{
		{name: "valid run event", event: baseEvent, kind: RunEvent, checked: []string{"/outputs/0/facets/columnLineage"}},
		{name: "not JSON", event: `{"eventTime": `, err: "openlineage: not JSON: unexpected EOF"},
		{name: "trailing garbage", event: `{} x`, err: "openlineage: not JSON: invalid character after top-level value"},
		{name: "array", event: `[1]`, err: "openlineage: invalid event: /: want an event object, got an array"},
		{name: "no kind", event: `{"eventTime": "2026-12-01T10:00:00Z", "producer": "p", "schemaURL": "u"}`,
			err: "openlineage: invalid event: /: not an OpenLineage event: no run, job or dataset, and no event kind in schemaURL"},
		{name: "missing eventTime", event: edit(t, func(m map[string]any) { delete(m, "eventTime") }),
			err: "openlineage: invalid RunEvent: /: missing property 'eventTime'"},
		{name: "eventTime not a date-time", event: edit(t, func(m map[string]any) { m["eventTime"] = "yesterday" }),
			err: "openlineage: invalid RunEvent: /eventTime: 'yesterday' is not valid date-time: less than 20 characters long"},
		{name: "runId not a UUID", event: edit(t, func(m map[string]any) { obj(m, "run")["runId"] = "run-1" }),
			err: "openlineage: invalid RunEvent: /run/runId: 'run-1' is not valid uuid: must have 5 elements"},
		{name: "unknown eventType", event: edit(t, func(m map[string]any) { m["eventType"] = "DONE" }),
			err: "openlineage: invalid RunEvent: /eventType: value must be one of 'START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER'"},
		{name: "job without name", event: edit(t, func(m map[string]any) { delete(obj(m, "job"), "name") }),
			err: "openlineage: invalid RunEvent: /job: missing property 'name'"},
		{name: "producer not a URI", event: edit(t, func(m map[string]any) { m["producer"] = "colline" }),
			err: "openlineage: invalid RunEvent: /producer: 'colline' is not valid uri: relative url"},
		{name: "facet without _producer", event: edit(t, func(m map[string]any) {
			delete(obj(m, "outputs", 0, "facets", "columnLineage"), "_producer")
		}), err: "openlineage: invalid RunEvent: /outputs/0/facets/columnLineage: missing property '_producer'"},
		{name: "column lineage without inputFields", event: edit(t, func(m map[string]any) {
			obj(m, "outputs", 0, "facets", "columnLineage")["fields"] = map[string]any{"a": map[string]any{}}
		}), err: "openlineage: invalid RunEvent: /outputs/0/facets/columnLineage/fields/a: missing property 'inputFields'"},
		{name: "column lineage input field without field", event: edit(t, func(m map[string]any) {
			delete(obj(m, "outputs", 0, "facets", "columnLineage", "fields", "a", "inputFields", 0), "field")
		}), err: "openlineage: invalid RunEvent: /outputs/0/facets/columnLineage/fields/a/inputFields/0: missing property 'field'"},
		{name: "two problems, both named", event: edit(t, func(m map[string]any) {
			obj(m, "run")["runId"] = "x"
			obj(m, "outputs", 0, "facets", "columnLineage")["fields"] = map[string]any{"a": map[string]any{}}
		}), err: "openlineage: invalid RunEvent: /run/runId: 'x' is not valid uuid: must have 5 elements; " +
			"/outputs/0/facets/columnLineage/fields/a: missing property 'inputFields'"},
		{name: "producer's own facet: shape only, listed as unchecked", event: edit(t, func(m map[string]any) {
			obj(m, "run")["facets"] = map[string]any{"spark_properties": map[string]any{
				"_producer": "https://example.com/p", "_schemaURL": "https://example.com/spark-properties.json", "properties": map[string]any{}}}
		}), kind: RunEvent, checked: []string{"/outputs/0/facets/columnLineage"}, unchecked: []string{"/run/facets/spark_properties"}},
		{name: "standard facet of another major version: unchecked", event: edit(t, func(m map[string]any) {
			obj(m, "outputs", 0, "facets", "columnLineage")["_schemaURL"] = "https://openlineage.io/spec/facets/2-0-0/ColumnLineageDatasetFacet.json"
		}), kind: RunEvent, unchecked: []string{"/outputs/0/facets/columnLineage"}},
		{name: "deleted facet: core shape only", event: edit(t, func(m map[string]any) {
			obj(m, "outputs", 0)["facets"] = map[string]any{"columnLineage": map[string]any{"_deleted": true,
				"_producer": "https://p.example", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"}}
		}), kind: RunEvent},
		{name: "deleted facet still needs the core facet fields", event: edit(t, func(m map[string]any) {
			obj(m, "outputs", 0)["facets"] = map[string]any{"columnLineage": map[string]any{"_deleted": true}}
		}), err: "openlineage: invalid RunEvent: /outputs/0/facets/columnLineage: missing properties '_producer', '_schemaURL'"},
		{name: "dataset event", event: `{"eventTime": "2026-12-01T10:00:00Z", "producer": "https://p.example",
			"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
			"dataset": {"namespace": "file", "name": "/x"}}`, kind: DatasetEvent},
		{name: "dataset event without name", event: `{"eventTime": "2026-12-01T10:00:00Z", "producer": "https://p.example",
			"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
			"dataset": {"namespace": "file"}}`, err: "openlineage: invalid DatasetEvent: /dataset: missing property 'name'"},
		{name: "job event told by its fields", event: `{"eventTime": "2026-12-01T10:00:00Z", "producer": "https://p.example",
			"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
			"job": {"namespace": "ns", "name": "j"}, "inputs": [], "outputs": []}`, kind: JobEvent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := v.Validate([]byte(c.event))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.err {
				t.Fatalf("error\n got: %s\nwant: %s", got, c.err)
			}
			if c.err != "" {
				return
			}
			if rep.Kind != c.kind {
				t.Errorf("kind %s, want %s", rep.Kind, c.kind)
			}
			if !reflect.DeepEqual(rep.Checked, c.checked) {
				t.Errorf("checked %v, want %v", rep.Checked, c.checked)
			}
			var un []string
			for _, u := range rep.Unchecked {
				un = append(un, u.Location)
			}
			if !reflect.DeepEqual(un, c.unchecked) {
				t.Errorf("unchecked %v, want %v", un, c.unchecked)
			}
		})
	}
}

// Decode gives the typed view of a valid event: kind, run, datasets and the column lineage facet.
func TestDecode(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := v.Decode([]byte(baseEvent))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != RunEvent || e.EventType != Complete || e.Run.RunID != "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b" ||
		e.Job.Name != "job" || len(e.Inputs) != 1 || len(e.Outputs) != 1 || e.EventTime.IsZero() {
		t.Fatalf("decoded %+v", e)
	}
	cl, err := e.Outputs[0].ColumnLineage()
	if err != nil {
		t.Fatal(err)
	}
	want := &ColumnLineage{Fields: map[string]FieldLineage{"a": {InputFields: []InputField{{
		Namespace: "file", Name: "/in", Field: "a", Transformations: []Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}}}}}}
	if !reflect.DeepEqual(cl, want) {
		t.Errorf("column lineage %+v, want %+v", cl, want)
	}
	if cl, _ := e.Inputs[0].ColumnLineage(); cl != nil {
		t.Errorf("input has column lineage %+v, want none", cl)
	}
	if _, _, err := v.Decode([]byte(`{"run": {"runId": "x"}}`)); err == nil || !strings.Contains(err.Error(), "invalid RunEvent") {
		t.Errorf("invalid event decoded: %v", err)
	}
}

// The spec's own example documents for the facets colline maps validate against their schemas.
func TestSpecExamplesValidate(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ColumnLineageDatasetFacet", "SymlinksDatasetFacet", "SchemaDatasetFacet", "SQLJobFacet", "ParentRunFacet", "JobTypeJobFacet"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "data", "openlineage", "spec", "tests", name, "*.json"))
		if len(files) == 0 {
			t.Skipf("no ../shared/data/openlineage/spec/tests/%s (../shared is beside the repository in development and CI)", name)
		}
		fs := v.facets[name+".json"]
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			// each example is a facets object, {"<facetName>": {...}}, as the file's own schema describes
			if err := fs.doc.Validate(doc); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

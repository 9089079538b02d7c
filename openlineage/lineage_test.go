package openlineage

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/plan"
)

// exampleAliases join dbt-ol's DuckDB names of the lake to the tables Spark wrote
// (dev/dbt/shop reads them through views in the schema lake).
const exampleAliases = "duckdb:///tmp/colline-ol-dbt/shop.duckdb/shop.lake.=spark_catalog/lake."

// updating is the -update flag of the package's tests (declared in sidebyside_test.go).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// How OpenLineage identities become colline keys: these cases pin the rules of Names.
func TestNamesDataset(t *testing.T) {
	aliases, err := alias.Parse("duckdb:///tmp/shop.duckdb/shop.lake.=spark_catalog/lake. trino://t:8080/hive.=spark_catalog/,trino://t:8080/hive.sales.=spark_catalog/sales_v2.")
	if err != nil {
		t.Fatal(err)
	}
	n := Names{Aliases: aliases}
	warehouse := []Symlink{{Namespace: "file:/tmp/warehouse", Name: "Lake.Raw_Orders", Type: "TABLE"}}
	for _, tc := range []struct {
		name      string
		namespace string
		dsName    string
		links     []Symlink
		key, kind string
		location  string
	}{
		{"path", "file", "/tmp/in/orders/", nil, "file/tmp/in/orders", "path", "file:/tmp/in/orders"},
		{"path without leading slash (object store)", "s3://bucket", "raw/orders", nil, "s3://bucket/raw/orders", "path", "s3://bucket/raw/orders"},
		{"hdfs", "hdfs://nn:8020", "/data/x", nil, "hdfs://nn:8020/data/x", "path", "hdfs://nn:8020/data/x"},
		{"kafka topic", "kafka://k1:9092", "orders", nil, "kafka://k1:9092/orders", "kafka", ""},
		{"table of a warehouse symlink", "file", "/tmp/warehouse/lake.db/raw_orders", warehouse, "spark_catalog/lake.raw_orders", "table", "file:/tmp/warehouse/lake.db/raw_orders"},
		{"table of a metastore symlink", "s3a://b", "/w/db.db/t", []Symlink{{Namespace: "hive://ms:9083", Name: "db.t", Type: "TABLE"}}, "spark_catalog/db.t", "table", "s3a://b/w/db.db/t"},
		{"hive dataset", "hive://ms:9083", "db.T", nil, "spark_catalog/db.t", "table", ""},
		{"glue symlink keeps its namespace", "s3://b", "w/t", []Symlink{{Namespace: "arn:aws:glue:eu-west-1:1", Name: "table/db/t", Type: "TABLE"}}, "arn:aws:glue:eu-west-1:1/table/db/t", "table", "s3://b/w/t"},
		{"a symlink of another type is not the table", "file", "/x", []Symlink{{Namespace: "hive://ms", Name: "db.x", Type: "LOCATION"}}, "file/x", "path", "file:/x"},
		{"postgres table", "postgres://db:5432", "shop.public.Orders", nil, "postgres://db:5432/shop.public.Orders", "table", ""},
		{"alias", "duckdb:///tmp/shop.duckdb", "shop.lake.orders", nil, "spark_catalog/lake.orders", "table", ""},
		{"longest alias first", "trino://t:8080", "hive.sales.orders", nil, "spark_catalog/sales_v2.orders", "table", ""},
		{"shorter alias", "trino://t:8080", "hive.hr.staff", nil, "spark_catalog/hr.staff", "table", ""},
		{"no alias matches", "duckdb:///tmp/shop.duckdb", "shop.main.stg_orders", nil, "duckdb:///tmp/shop.duckdb/shop.main.stg_orders", "table", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := n.Dataset(tc.namespace, tc.dsName, tc.links)
			if d.Key != tc.key || d.Kind != tc.kind || d.Location != tc.location {
				t.Errorf("Dataset(%q, %q) = key %q kind %q location %q, want %q %q %q", tc.namespace, tc.dsName, d.Key, d.Kind, d.Location, tc.key, tc.kind, tc.location)
			}
			if d.Namespace+"/"+strings.TrimPrefix(d.Name, "/") != d.Key {
				t.Errorf("namespace %q and name %q do not make the key %q", d.Namespace, d.Name, d.Key)
			}
		})
	}
	for _, bad := range []struct{ in, err string }{
		{"a", `alias "a": want from=to, two dataset key prefixes`},
		{"a=", `alias "a=": want from=to, two dataset key prefixes`},
		{"a=lake.", `alias "a=lake.": "lake." has no namespace: want namespace/name-prefix, such as spark_catalog/lake.`},
	} {
		if _, err := alias.Parse(bad.in); err == nil || err.Error() != bad.err {
			t.Errorf("alias.Parse(%q) = %v, want %s", bad.in, err, bad.err)
		}
	}
}

func TestFacetOf(t *testing.T) {
	for loc, want := range map[string]string{
		"/inputs/0/facets/dataSource/uri":            "dataSource",
		"/outputs/12/outputFacets/stats/x":           "stats",
		"/run/facets/parent/run/runId":               "parent",
		"/job/facets/sql":                            "sql",
		"/dataset/facets/a~1b":                       "a/b",
		"/eventTime":                                 "",
		"/outputs/0/facets":                          "",
		"/outputs/0/facets/columnLineage/x/facets/y": "columnLineage",
	} {
		if got := FacetOf(loc); got != want {
			t.Errorf("FacetOf(%q) = %q, want %q", loc, got, want)
		}
	}
}

// Lineage over hand-built events (unit-test inputs): the deprecated field-level transformation,
// a DROP, a RENAME, an output dataset dependency, an input field naming a dataset not among the
// inputs, a DatasetEvent and a JobEvent.
func TestLineageShapes(t *testing.T) {
	for _, tc := range []struct {
		name, event string
		want        []string
	}{
		{"deprecated transformation type", `{"eventTime":"2026-12-01T10:00:00Z","producer":"p","schemaURL":"u#/$defs/RunEvent","eventType":"COMPLETE",
			"run":{"runId":"r"},"job":{"namespace":"ns","name":"j"},
			"inputs":[{"namespace":"file","name":"/in","facets":{"schema":{"fields":[{"name":"a","type":"int"},{"name":"b"}]}}}],
			"outputs":[{"namespace":"file","name":"/out","facets":{"columnLineage":{"fields":{
				"a":{"inputFields":[{"namespace":"file","name":"/in","field":"a"}],"transformationType":"IDENTITY"},
				"h":{"inputFields":[{"namespace":"file","name":"/in","field":"b"}],"transformationType":"MASKED","transformationDescription":"sha2(b)"},
				"x":{"inputFields":[{"namespace":"file","name":"/other","field":"z","transformations":[{"type":"DIRECT"},{"type":"INDIRECT","subtype":"CONDITIONAL","description":"z > 0"}]}]}},
				"dataset":[{"namespace":"file","name":"/in","field":"b","transformations":[{"type":"INDIRECT","subtype":"FILTER","description":"b = ?"}]}]}}}]}`,
			[]string{
				"read file/in path file:/in [a int, b]", "read file/other path file:/other [z]", "write file/out path file:/out  [a, h, x]",
				"edge file/in#a -> file/out#a [DIRECT/IDENTITY]", "edge file/in#b -> file/out#h [DIRECT/TRANSFORMATION masked]",
				"edge file/other#z -> file/out#x [DIRECT/TRANSFORMATION INDIRECT/CONDITIONAL]", "rows file/in#b => file/out [INDIRECT/FILTER]",
			}},
		{"drop, rename, overwrite", `{"eventTime":"2026-12-01T10:00:00Z","producer":"p","schemaURL":"u#/$defs/RunEvent","eventType":"COMPLETE",
			"run":{"runId":"r"},"job":{"namespace":"ns","name":"j"},
			"outputs":[{"namespace":"hive://m:9083","name":"db.gone","facets":{"lifecycleStateChange":{"lifecycleStateChange":"DROP"}}},
			           {"namespace":"hive://m:9083","name":"db.new","facets":{"lifecycleStateChange":{"lifecycleStateChange":"RENAME","previousIdentifier":{"namespace":"hive://m:9083","name":"db.old"}}}},
			           {"namespace":"hive://m:9083","name":"db.full","facets":{"lifecycleStateChange":{"lifecycleStateChange":"OVERWRITE"}}}]}`,
			[]string{
				"write spark_catalog/db.new table   []", "write spark_catalog/db.full table  overwrite []",
				"change drop table spark_catalog/db.gone", "change rename table spark_catalog/db.old -> spark_catalog/db.new",
			}},
		{"dataset event", `{"eventTime":"2026-12-01T10:00:00Z","producer":"p","schemaURL":"u#/$defs/DatasetEvent",
			"dataset":{"namespace":"postgres://db:5432","name":"shop.public.v","facets":{"columnLineage":{"fields":{"a":{"inputFields":[{"namespace":"postgres://db:5432","name":"shop.public.t","field":"a"}]}}}}}}`,
			[]string{
				"read postgres://db:5432/shop.public.t table  [a]", "write postgres://db:5432/shop.public.v table   [a]",
				"edge postgres://db:5432/shop.public.t#a -> postgres://db:5432/shop.public.v#a [DIRECT/TRANSFORMATION]",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Decode([]byte(tc.event))
			if err != nil {
				t.Fatal(err)
			}
			lin, err := e.Lineage(Names{})
			if err != nil {
				t.Fatal(err)
			}
			got := renderLineage(lin)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lineage:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// a facet that cannot be read names where
	e, _ := Decode([]byte(`{"eventTime":"2026-12-01T10:00:00Z","producer":"p","schemaURL":"u#/$defs/RunEvent","run":{"runId":"r"},"job":{"namespace":"ns","name":"j"},
		"outputs":[{"namespace":"file","name":"/o","facets":{"columnLineage":{"fields":[]}}}]}`))
	var inv *InvalidError
	if _, err := e.Lineage(Names{}); !errors.As(err, &inv) || !strings.HasPrefix(err.Error(), "openlineage: invalid event: /outputs/0/facets/columnLineage: openlineage: facet columnLineage: json: cannot unmarshal array") {
		t.Errorf("unreadable facet: %v", err)
	}
}

func renderLineage(l *plan.Lineage) []string {
	var out []string
	cols := func(cs []plan.Column) string {
		var s []string
		for _, c := range cs {
			s = append(s, strings.TrimSpace(c.Name+" "+c.Type))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	for _, d := range l.Reads {
		out = append(out, fmt.Sprintf("read %s %s %s %s", d.Key, d.Kind, d.Location, cols(d.Columns)))
	}
	for _, w := range l.Writes {
		out = append(out, fmt.Sprintf("write %s %s %s %s %s", w.Key, w.Kind, w.Location, w.Mode, cols(w.Columns)))
	}
	for _, e := range l.Edges {
		out = append(out, fmt.Sprintf("edge %s -> %s %v", e.Source, e.Target, e.Transformations))
	}
	for _, e := range l.RowDeps {
		out = append(out, fmt.Sprintf("rows %s => %s %v", e.Source, e.Target, e.Transformations))
	}
	for _, c := range l.Changes {
		out = append(out, "change "+c.String())
	}
	return out
}

// The lineage of the captured Spark → dbt example (dev/dbt/capture), as the consumer takes it:
// openlineage-spark's tables meet colline's keys through their symlinks, dbt-ol's DuckDB tables
// through an alias of the lake schema. testdata/lineage-dbt.txt holds it (-update rewrites it).
func TestLineageOfCapturedExample(t *testing.T) {
	aliases, err := alias.Parse(exampleAliases)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, f := range loadFixtures(t) {
		if filepath.Dir(f.file) != filepath.Join("testdata", "dbt") {
			continue
		}
		e, err := Decode(f.data)
		if err != nil {
			t.Fatal(err)
		}
		lin, err := e.Lineage(Names{Aliases: aliases})
		if err != nil {
			t.Fatalf("%s:%d: %v", f.file, f.line, err)
		}
		fmt.Fprintf(&got, "== %s:%d %s %s/%s\n", filepath.Base(f.file), f.line, e.EventType, e.Job.Namespace, e.Job.Name)
		for _, l := range renderLineage(lin) {
			got.WriteString(l + "\n")
		}
	}
	golden := filepath.Join("testdata", "lineage-dbt.txt")
	if updating() {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("lineage differs from %s (go test ./openlineage -run TestLineageOfCapturedExample -update, then review)", golden)
	}
}

// TestTagsFacet: a TagsDatasetFacet (a unit test's input, written for it: no producer captured
// here emits field-level tags yet) becomes the dataset's column tags, each with its source; a tag
// without a field (the dataset's) is left out; a facet with no field tags still says that the
// dataset has none now.
func TestTagsFacet(t *testing.T) {
	const ev = `{"eventType": "COMPLETE", "eventTime": "2026-12-05T10:00:00Z", "producer": "https://example.com/p",
 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
 "run": {"runId": "0192c8d0-2c56-7b34-9b6e-2c1f0e6b3a11"}, "job": {"namespace": "ns", "name": "j"},
 "inputs": [{"namespace": "postgres://db:5432", "name": "crm.public.customer", "facets": {
   "tags": {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json#/$defs/TagsDatasetFacet",
     "tags": [{"key": "pii", "value": "email", "source": "USER", "field": "email"}, {"key": "classification", "value": "confidential"},
              {"key": "gdpr", "value": "", "field": "Name"}]}}}],
 "outputs": [{"namespace": "postgres://db:5432", "name": "crm.public.copy", "facets": {
   "tags": {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json#/$defs/TagsDatasetFacet",
     "tags": []}}}]}`
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Validate([]byte(ev)); err != nil {
		t.Fatalf("the event does not validate: %v", err)
	}
	e, err := Decode([]byte(ev))
	if err != nil {
		t.Fatal(err)
	}
	lin, err := e.Lineage(Names{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(lin.Tags)
	want := "[{postgres://db:5432/crm.public.customer openlineage [{postgres://db:5432/crm.public.customer#email pii email openlineage:USER} {postgres://db:5432/crm.public.customer#name gdpr true openlineage}]} {postgres://db:5432/crm.public.copy openlineage []}]"
	if got != want {
		t.Errorf("tags\n got %s\nwant %s", got, want)
	}
	bad := strings.Replace(ev, `"tags": []`, `"tags": "none"`, 1)
	if e, err := Decode([]byte(bad)); err == nil {
		if _, err := e.Lineage(Names{}); err == nil || !strings.Contains(err.Error(), "/outputs/0/facets/tags") {
			t.Errorf("a bad tags facet: %v", err)
		}
	}
}

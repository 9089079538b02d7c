package intake

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/process"
)

// Every event captured from a real producer (openlineage-spark, dbt-ol) becomes an item (record.Item);
// the only problems ignored are in facets colline does not read.
func TestOpenLineageCaptured(t *testing.T) {
	s := step(t)
	ignored := map[string]int{}
	s.Ignored = func(schema string, p openlineage.Problem) { ignored[schema+" "+openlineage.FacetOf(p.Location)]++ }
	files, _ := filepath.Glob("../testdata/*/*/openlineage.jsonl")
	more, _ := filepath.Glob("../testdata/dbt/*.jsonl")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no captured OpenLineage events")
	}
	events, edges := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			it, err := s.Item(sc.Bytes())
			if err != nil {
				t.Errorf("%s:%d: %v (reason %s)", f, n, err, process.Reason(err))
				continue
			}
			events++
			edges += len(it.Lineage.Edges) + len(it.Lineage.RowDeps)
		}
	}
	t.Logf("%d events from %d files: %d column edges and row-level dependencies; ignored facet problems %v", events, len(files), edges, ignored)
	if edges == 0 {
		t.Error("no lineage from the captured events")
	}
	for k := range ignored {
		if k != "DatasourceDatasetFacet dataSource" {
			t.Errorf("ignored a problem of %s: only openlineage-spark's dataSource uri is known", k)
		}
	}
}

// A minimal valid event (hand-written unit-test input); the cases change one thing each.
const olEvent = `{"eventTime":"2026-12-01T10:00:00Z","producer":"https://example/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
"eventType":"COMPLETE","run":{"runId":"0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},"job":{"namespace":"ns","name":"job"},
"inputs":[{"namespace":"file","name":"/in"}],
"outputs":[{"namespace":"file","name":"/out","facets":{"columnLineage":{"_producer":"https://example/p",
"_schemaURL":"https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
"fields":{"a":{"inputFields":[{"namespace":"file","name":"/in","field":"a","transformations":[{"type":"DIRECT","subtype":"IDENTITY"}]}]}}}%s}}]}`

const badDataSource = `,"dataSource":{"_producer":"https://example/p","_schemaURL":"https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet","uri":"file"}`

func TestOpenLineageReasons(t *testing.T) {
	s := step(t)
	s.MaxBytes = 3 * process.MaxNesting
	s.Edges = 3
	ok := strings.Replace(olEvent, "%s", "", 1)
	for _, tc := range []struct {
		name, value, reason, err string
	}{
		{"valid", ok, "", ""},
		{"a problem in a facet colline does not read", strings.Replace(olEvent, "%s", badDataSource, 1), "", ""},
		{"not JSON", `{"eventTime":`, process.ReasonInvalidJSON, "openlineage: not JSON: unexpected EOF"},
		{"too large", ok + strings.Repeat(" ", 3*process.MaxNesting), process.ReasonTooLarge, "message too large"},
		{"too deep", strings.Repeat("[", process.MaxNesting+1), process.ReasonTooDeep, "message nested too deeply"},
		{"no eventTime", strings.Replace(ok, `"eventTime":"2026-12-01T10:00:00Z",`, "", 1), process.ReasonInvalidOpenLineage,
			"openlineage: invalid RunEvent: /: missing property 'eventTime'"},
		{"a run id that is not a UUID", strings.Replace(ok, "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b", "run-1", 1), process.ReasonInvalidOpenLineage,
			"openlineage: invalid RunEvent: /run/runId: 'run-1' is not valid uuid"},
		{"a column lineage facet against its schema", strings.Replace(ok, `"inputFields":[`, `"inputFields":[{"namespace":"file"},`, 1), process.ReasonInvalidOpenLineage,
			"openlineage: invalid RunEvent: /outputs/0/facets/columnLineage/fields/a/inputFields/0: missing properties 'name', 'field'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, err := s.Item([]byte(tc.value))
			if tc.reason == "" {
				if err != nil || len(it.Lineage.Edges) != 1 || it.OpenLineage.RunID == "" {
					t.Fatalf("Item = %+v, %v; want one edge", it, err)
				}
				return
			}
			if process.Reason(err) != tc.reason || err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("Item = %v (reason %s), want %s: %s", err, process.Reason(err), tc.reason, tc.err)
			}
		})
	}
	// over the edge budget: the run, its input and output, without column lineage, marked
	it, err := s.Item([]byte(strings.Replace(ok, `"fields":{`, `"fields":{"b":{"inputFields":[{"namespace":"file","name":"/in","field":"b"}]},`, 1)))
	if err != nil || it.OpenLineage.RunID == "" || len(it.Lineage.Reads) != 1 || len(it.Lineage.Writes) != 1 || len(it.Lineage.Edges)+len(it.Lineage.RowDeps) != 0 ||
		it.Lineage.OverBudget == nil || it.Lineage.OverBudget.Error() != "plan too complex: lineage edges and roles is 4, the edges budget is 3 (raise COLLINE_MAX_PLAN_EDGES if such plans are legitimate)" {
		t.Errorf("over the edge budget: %+v, %v; want the run, /in and /out, no edge, marked", it.Lineage, err)
	}
}

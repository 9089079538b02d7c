package plan

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// decodeFile decodes a captured event.
func decodeFile(t *testing.T, path string) *events.Envelope {
	t.Helper()
	data, err := readEvent(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	env, err := events.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestMissingCTEDefinition MUTATES a captured Spark 4.1 event (WITH ... AS in a CTAS) so that its
// CTE reference names a definition the event does not hold: Extract refuses the plan, naming the
// node and the CTE, rather than returning lineage without the reference's columns.
func TestMissingCTEDefinition(t *testing.T) {
	env := decodeFile(t, "spark-4.1/cte_in_ctas/0001-InsertIntoHadoopFsRelationCommand.json")
	if _, err := Extract(env); err != nil {
		t.Fatalf("the captured event: %v", err)
	}
	ref := -1
	for i := range env.Nodes {
		if shortClass(env.Nodes[i].Class) == "CTERelationRef" {
			ref = i
			env.Nodes[i].Args["cteId"] = float64(987654)
			break
		}
	}
	if ref < 0 {
		t.Fatal("no CTERelationRef in the captured event")
	}
	_, err := Extract(env)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "node "+strconv.Itoa(ref)+" (CTERelationRef) reads CTE 987654") {
		t.Errorf("got %v, want ErrUnsupported naming node %d and CTE 987654", err, ref)
	}
}

// TestUpdateDeltaUnchangedColumns: in the captured merge-on-read UPDATE (table columns id, name,
// kind, amount; SET amount = ..., name = ...: not in table order), the WHERE column is CONDITIONAL
// for the SET columns only. It was also CONDITIONAL for every unchanged column after the first SET
// column, when the loop over columns changed its own loop variable (fixed by model v2's rewrite
// of feed; this pins it).
func TestUpdateDeltaUnchangedColumns(t *testing.T) {
	for _, line := range []string{"spark-3.5", "spark-4.1"} {
		lin, err := Extract(decodeFile(t, line+"/update_where/0002-WriteDelta.json"))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, e := range lin.Edges {
			for _, tr := range e.Transformations {
				if tr.Subtype == Conditional {
					got[e.Source[strings.IndexByte(e.Source, '#')+1:]+"->"+e.Target[strings.IndexByte(e.Target, '#')+1:]] = true
				}
			}
		}
		want := map[string]bool{"kind->amount": true, "kind->name": true}
		if len(got) != len(want) || !got["kind->amount"] || !got["kind->name"] {
			t.Errorf("%s: CONDITIONAL edges %v, want %v", line, got, want)
		}
	}
}

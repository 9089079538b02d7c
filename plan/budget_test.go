package plan

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/colline/colline/events"
)

// TestBudgetHeadroom extracts every captured event (goldens and TPC-DS) and checks that the
// default budget leaves at least 20 times the largest figure of a real plan on each budget.
func TestBudgetHeadroom(t *testing.T) {
	files := capturedEvents(t)
	gz, _ := filepath.Glob("testdata/tpcds/spark-*/q*.json.gz")
	files = append(files, gz...)
	var peak Budget
	worst := map[string]string{}
	for _, f := range files {
		data, err := readEvent(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			continue // the decoder's tests cover the events it rejects
		}
		_, cost := extractCost(env, DefaultBudget)
		for _, c := range []struct {
			name      string
			got, peak *int
		}{{BudgetDepth, &cost.Depth, &peak.Depth}, {BudgetNodes, &cost.Nodes, &peak.Nodes}, {BudgetEdges, &cost.Edges, &peak.Edges}, {BudgetWork, &cost.Work, &peak.Work}} {
			if *c.got > *c.peak {
				*c.peak, worst[c.name] = *c.got, f
			}
		}
	}
	t.Logf("peak over %d events: %+v (%v)", len(files), peak, worst)
	d := DefaultBudget
	for name, pair := range map[string][2]int{BudgetDepth: {peak.Depth, d.Depth}, BudgetNodes: {peak.Nodes, d.Nodes}, BudgetEdges: {peak.Edges, d.Edges}, BudgetWork: {peak.Work, d.Work}} {
		if pair[0] == 0 || pair[0]*20 > pair[1] {
			t.Errorf("%s: a real plan (%s) reaches %d, the default budget %d leaves less than 20 times that", name, worst[name], pair[0], pair[1])
		}
	}
}

// TestTooComplexError checks the error's text and its match with ErrTooComplex.
func TestTooComplexError(t *testing.T) {
	err := error(&TooComplexError{Budget: BudgetNodes, Figure: 300000, Limit: 200000, Exact: true})
	if !errors.Is(err, ErrTooComplex) || errors.Is(err, ErrUnsupported) {
		t.Fatalf("errors.Is: %v", err)
	}
	want := "plan too complex: plan nodes is 300000, the nodes budget is 200000 (raise COLLINE_MAX_PLAN_NODES if such plans are legitimate)"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

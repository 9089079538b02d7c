package plan

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan/hostile"
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
		lin, cost := extractCost(env, DefaultBudget)
		if lin.Size() != cost.Edges {
			t.Errorf("%s: Lineage.Size() = %d, the edges budget counted %d", f, lin.Size(), cost.Edges)
		}
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

// TestHostileShapes extracts the hostile shapes (MUTATIONS of a captured event, see plan/hostile)
// within and over each budget. A chain of Filters deeper than the depth budget used to overflow
// the stack (a fatal error, not a panic: the consumer died on it, at 800,000 Filters); it is now
// refused before resolution starts.
func TestHostileShapes(t *testing.T) {
	base, err := readEvent(filepath.Join("testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape  string
		n      int
		budget Budget
		over   string // the budget exceeded, "" none
	}{
		{hostile.DeepFilters, 3000, DefaultBudget, ""},
		{hostile.DeepFilters, DefaultBudget.Depth + 10, DefaultBudget, BudgetDepth},
		{hostile.WideFilter, 500, DefaultBudget, ""},
		{hostile.WideFilter, 500, Budget{Edges: 1000}, BudgetEdges},
		{hostile.Fanout, 500, DefaultBudget, ""},
		{hostile.Fanout, 500, Budget{Work: 200}, BudgetWork},
		{hostile.Fanout, 500, Budget{Nodes: 4}, BudgetNodes},
		// an attribute reading 1,000 columns referenced 1,000 times: its sources are merged once
		// (about 10,000 entries of work), not once per reference (1,000,000)
		{hostile.HotAttr, 1000, Budget{Work: 50_000}, ""},
		{hostile.HotAttr, 1000, Budget{Work: 2_000}, BudgetWork},
		// x recomputed by 300 chained Projects from 300 columns: each Project's x holds the 300
		// sources again (n² entries of work, all kept until extraction ends)
		{hostile.AliasChain, 300, DefaultBudget, ""},
		{hostile.AliasChain, 300, Budget{Work: 50_000}, BudgetWork},
		// n paths × n columns × n paths: 40 makes 136,000 edges and roles from 24 KB
		{hostile.Paths, 10, DefaultBudget, ""},
		{hostile.Paths, 40, DefaultBudget, BudgetEdges},
	} {
		data, err := hostile.Make(base, tc.shape, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			t.Fatalf("%s %d: %v", tc.shape, tc.n, err)
		}
		lin, err := ExtractWithin(env, tc.budget)
		var tce *TooComplexError
		switch {
		case tc.over == "" && (err != nil || len(lin.Edges) < 2):
			t.Errorf("%s %d: %v, want lineage", tc.shape, tc.n, err)
		case tc.over != "" && (!errors.As(err, &tce) || tce.Budget != tc.over):
			t.Errorf("%s %d: %v, want the %s budget exceeded", tc.shape, tc.n, err, tc.over)
		}
	}
}

// TestDepthGuard checks the guard of resolution's own recursion, which backs the plan depth
// check up where a lookup outside the children nests deeper.
func TestDepthGuard(t *testing.T) {
	r := newResolver(&events.Envelope{}, Budget{Depth: 3})
	defer func() {
		tce, ok := recover().(*TooComplexError)
		if !ok || tce.Budget != BudgetDepth || tce.Figure != 4 {
			t.Errorf("recovered %v, want the depth budget at 4", tce)
		}
	}()
	for k := 0; k < 4; k++ {
		r.enter()
	}
}

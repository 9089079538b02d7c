package plan

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
		lin, cost := extractCost(env, DefaultBudget, false)
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
// stopped before resolution starts. A plan over a budget keeps its table-level lineage, marked
// with the budget: exactly what the same event yields when the listener degraded it (reads,
// writes and their columns, no column edge), and it is not lost whole (issue 29).
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
		if err != nil {
			t.Errorf("%s %d: %v, want lineage", tc.shape, tc.n, err)
			continue
		}
		if tc.over == "" {
			if lin.OverBudget != nil || lin.TableLevel() || len(lin.Edges) < 2 {
				t.Errorf("%s %d: over budget %v, %d edges; want column lineage", tc.shape, tc.n, lin.OverBudget, len(lin.Edges))
			}
			continue
		}
		if lin.OverBudget == nil || lin.OverBudget.Budget != tc.over || !lin.TableLevel() || lin.Degraded {
			t.Errorf("%s %d: over budget %v (degraded %v), want the %s budget named", tc.shape, tc.n, lin.OverBudget, lin.Degraded, tc.over)
			continue
		}
		if !strings.Contains(lin.OverBudget.Error(), "the "+tc.over+" budget is") {
			t.Errorf("%s %d: %q does not name the budget", tc.shape, tc.n, lin.OverBudget)
		}
		// the same event as the listener degrades it (within any budget): the same table-level lineage
		degraded, _ := events.Decode(data)
		degraded.Markers.Truncated = true
		want, err := ExtractWithin(degraded, Budget{Depth: 1 << 30, Nodes: 1 << 30, Edges: 1 << 30, Work: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		got := *lin
		got.OverBudget, want.Degraded = nil, false
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("%s %d: over budget: %+v\nwant the degraded event's %+v", tc.shape, tc.n, got, *want)
		}
		if len(lin.Edges)+len(lin.RowDeps) != 0 || len(lin.Writes) == 0 || len(lin.Reads) == 0 || len(lin.Writes[0].Columns) == 0 {
			t.Errorf("%s %d: %d reads, %d writes, %d edges, %d row deps; want the reads, the writes with their columns and no edge",
				tc.shape, tc.n, len(lin.Reads), len(lin.Writes), len(lin.Edges), len(lin.RowDeps))
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

// planDepth reuses its stacks from call to call: on random plans (references forward, as Validate
// requires, through children, named plans, a write's query and nested subquery expressions, plus
// references outside the node list, which do not count), big and small in turn, it gives the
// longest chain a direct computation gives; on a cycle it stops.
func TestPlanDepth(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for round := range 200 {
		n := 1 + rng.IntN(60)
		if round%2 == 1 {
			n = 1 + rng.IntN(4)
		}
		nodes := make([]events.Node, n)
		ref := func(i int) int {
			if rng.IntN(10) == 0 {
				return []int{-1, n, n + 5}[rng.IntN(3)]
			}
			if i+1 >= n {
				return n
			}
			return i + 1 + rng.IntN(n-i-1)
		}
		for i := range nodes {
			nd := &nodes[i]
			for range rng.IntN(3) {
				nd.Children = append(nd.Children, ref(i))
			}
			if rng.IntN(4) == 0 {
				nd.Plans = map[string]int{"a": ref(i), "b": ref(i)}
			}
			if rng.IntN(6) == 0 {
				q := ref(i)
				nd.Write = &events.Write{Query: &q}
			}
			if rng.IntN(3) == 0 {
				p := ref(i)
				inner := events.Expr{Class: "ScalarSubquery", Plan: &p}
				nd.Exprs = map[string][]events.Expr{"condition": {{Class: "Not", Children: []events.Expr{{Class: "And", Children: []events.Expr{{}, inner}}}}}}
			}
		}
		want := make([]int, n)
		deepest := 0
		for i := n - 1; i >= 0; i-- {
			want[i] = 1
			for _, c := range refsOf(nodes, i) {
				want[i] = max(want[i], want[c]+1)
			}
			deepest = max(deepest, want[i])
		}
		if got := planDepth(nodes); got != deepest {
			t.Fatalf("round %d: planDepth = %d, want %d", round, got, deepest)
		}
	}
	cycle := []events.Node{{Children: []int{1}}, {Children: []int{2}}, {Children: []int{0, 1}}}
	if got := planDepth(cycle); got != 3 {
		t.Errorf("cycle: planDepth = %d, want 3 (cut where it closes)", got)
	}
}

// refsOf lists the references of nodes[i] inside nodes, recursively through expressions.
func refsOf(nodes []events.Node, i int) []int {
	var out []int
	in := func(c int) {
		if c >= 0 && c < len(nodes) {
			out = append(out, c)
		}
	}
	nd := nodes[i]
	for _, c := range nd.Children {
		in(c)
	}
	for _, c := range nd.Plans {
		in(c)
	}
	if nd.Write != nil && nd.Write.Query != nil {
		in(*nd.Write.Query)
	}
	var walk func(x events.Expr)
	walk = func(x events.Expr) {
		if x.Plan != nil {
			in(*x.Plan)
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	for _, list := range nd.Exprs {
		for _, x := range list {
			walk(x)
		}
	}
	return out
}

// Decode shares equal string slices within an event (read only): extracting must leave the
// event as decoded, on every captured event and a sample of TPC-DS.
func TestExtractLeavesEventUnchanged(t *testing.T) {
	files := capturedEvents(t)
	gz, _ := filepath.Glob("testdata/tpcds/spark-*/q1*.json.gz")
	for _, f := range append(files, gz...) {
		data, err := readEvent(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			continue
		}
		fresh, _ := events.Decode(data)
		if _, err := extractOrBudget(env); err != nil {
			continue
		}
		if !reflect.DeepEqual(env, fresh) {
			t.Errorf("%s: extracting changed the decoded event", f)
		}
	}
}

// A Hive event over a budget keeps what Hive said it read and wrote, with the columns, and no
// edge: the same reads and writes as its whole lineage, marked with the budget.
func TestHiveOverBudget(t *testing.T) {
	files, _ := filepath.Glob("testdata/hive-4.0/*/*.json")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil || env.Hive == nil {
			continue
		}
		whole, err := Extract(env)
		if err != nil || whole.Size() < 2 {
			continue
		}
		lin, err := ExtractWithin(env, Budget{Edges: 1})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if lin.OverBudget == nil || lin.OverBudget.Budget != BudgetEdges || len(lin.Edges)+len(lin.RowDeps) != 0 {
			t.Errorf("%s: over budget %v, %d edges, %d row deps; want the edges budget named and no edge", f, lin.OverBudget, len(lin.Edges), len(lin.RowDeps))
		}
		if !reflect.DeepEqual(lin.Reads, whole.Reads) || !reflect.DeepEqual(lin.Writes, whole.Writes) || !reflect.DeepEqual(lin.Changes, whole.Changes) {
			t.Errorf("%s: table-level reads %v writes %v\nwant %v %v", f, lin.Reads, lin.Writes, whole.Reads, whole.Writes)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("%d Hive events with lineage checked, want the corpus's", checked)
	}
}

package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/plan/hostile"
	"github.com/colline/colline/record"
)

// captured is an event Spark 3.5 emitted through the listener (plan/testdata).
const captured = "../plan/testdata/spark-3.5/skeleton/0004-8-InsertIntoHadoopFsRelationCommand.json"

func read(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(captured)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestItem(t *testing.T) {
	stages := map[string]int{}
	it, err := Step{Observe: func(s string, d time.Duration) { stages[s]++ }}.Item(read(t))
	if err != nil {
		t.Fatalf("Item = %v", err)
	}
	fresh := record.Item{Event: it.Event, Lineage: it.Lineage} // checked anew, not by the mark Step left
	if err := record.Check(&fresh); err != nil || len(it.Lineage.Edges) == 0 {
		t.Errorf("item: check %v, %d edges; want a checked item with edges", err, len(it.Lineage.Edges))
	}
	if stages[StageDecode] != 1 || stages[StageExtract] != 1 {
		t.Errorf("stages observed = %v, want decode and extract once", stages)
	}
}

// Step scans the nesting only of a value that failed to decode: that is sound because the
// decoders themselves refuse a value nested deeper than MaxNesting, whether they read it token by
// token (args), skip it (an unknown key) or read a LineageLogger record, and take one exactly
// MaxNesting deep. Such a value gives ReasonTooDeep; it can neither decode nor reach plan.
func TestDecodersRefuseTooDeep(t *testing.T) {
	wrap := func(prefix, suffix string, levels int) func(int) []byte {
		return func(n int) []byte {
			k := n - levels
			return []byte(prefix + strings.Repeat("[", k) + strings.Repeat("]", k) + suffix)
		}
	}
	const event = `{"schemaVersion":"1.0","eventId":"e","nodes":[{"id":0,"class":"x",`
	const record = `{"version":"1.0","user":"etl","timestamp":1796200810,"duration":1500,"jobIds":["job_1"],"engine":"mr",` +
		`"database":"default","hash":"h","queryText":"insert into table d1 select x from s",` +
		`"edges":[{"sources":[1],"targets":[0],"expression":"UDFToInteger(x)","edgeType":"PROJECTION"}],` +
		`"vertices":[{"id":0,"vertexType":"COLUMN","vertexId":"default.d1.a"},{"id":1,"vertexType":"COLUMN","vertexId":"default.s.x"}],"x":`
	decodeLog := func(b []byte) (*events.Envelope, error) {
		return events.DecodeLineageLog(b, events.LineageLogOptions{})
	}
	for _, tc := range []struct {
		name   string
		value  func(n int) []byte
		decode func([]byte) (*events.Envelope, error)
	}{
		{"args", wrap(event+`"args":{"a":`, `}}]}`, 4), events.Decode},
		{"expression children", func(n int) []byte {
			k := (n - 5) / 2 // 5 levels to the role's list, then an object and its children per level
			leaf := ""
			if (n-5)%2 == 1 {
				leaf = `{"class":"Literal"}`
			}
			x := strings.Repeat(`{"class":"Not","children":[`, k) + leaf + strings.Repeat(`]}`, k)
			return []byte(event + `"exprs":{"condition":[` + x + `]}}]}`)
		}, events.Decode},
		{"unknown key", wrap(event+`"zzz":`, `}]}`, 3), events.Decode},
		{"lineage log", wrap(record, `}`, 1), decodeLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, over := tc.value(MaxNesting), tc.value(MaxNesting+1)
			if n := nesting(at, 1<<30); n != MaxNesting {
				t.Fatalf("nesting of the input = %d, want %d", n, MaxNesting)
			}
			if _, err := tc.decode(at); err != nil {
				t.Errorf("%d levels: %v, want it decoded", MaxNesting, err)
			}
			if _, err := tc.decode(over); err == nil {
				t.Errorf("%d levels decoded, want an error", MaxNesting+1)
			}
			if _, err := (Step{}).Item(at); Reason(err) == ReasonTooDeep {
				t.Errorf("%d levels: Item = %v, want not %s", MaxNesting, err, ReasonTooDeep)
			}
			if _, err := (Step{}).Item(over); Reason(err) != ReasonTooDeep || !errors.Is(err, ErrTooDeep) {
				t.Errorf("%d levels: Item = %v, want %s", MaxNesting+1, err, ReasonTooDeep)
			}
		})
	}
}

func TestLimitsAndReasons(t *testing.T) {
	ev := read(t)
	s := Step{MaxBytes: 3 * MaxNesting}
	exact := Step{MaxBytes: len(ev)}
	if _, err := exact.Item(ev); err != nil {
		t.Errorf("a value of exactly MaxBytes: %v", err)
	}
	if _, err := exact.Item(append(ev, ' ')); Reason(err) != ReasonTooLarge {
		t.Errorf("a value of MaxBytes+1: %v, want %s", err, ReasonTooLarge)
	}
	for _, tc := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"too large", make([]byte, 3*MaxNesting+1), ReasonTooLarge},
		{"an event", ev, ""},
		{"too deep", []byte(`{"a":` + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting) + `}`), ReasonTooDeep},
		{"deep but allowed", []byte(strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting)), ReasonInvalidEvent},
		{"brackets in strings do not count", []byte(`{"a":"` + strings.Repeat("[", MaxNesting+1) + `"}`), ReasonInvalidEvent},
		{"empty", nil, ReasonInvalidJSON},
		{"not json", []byte("{nope"), ReasonInvalidJSON},
		{"future major", []byte(`{"schemaVersion":"2.0","eventId":"x"}`), ReasonUnsupportedVersion},
		{"no event id", []byte(`{"schemaVersion":"1.0"}`), ReasonInvalidEvent},
		{"wrong type", []byte(`{"schemaVersion":"1.0","eventId":7}`), ReasonInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Item(tc.value)
			got := ""
			if err != nil {
				got = Reason(err)
			}
			if got != tc.want {
				t.Errorf("reason = %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	if got := nesting([]byte(`{"a":[1,{"b":"]]]"}],"c":"\"["}`), 10); got != 3 {
		t.Errorf("nesting = %d, want 3", got)
	}
}

// TestHostilePlans runs the hostile shapes (a MUTATED captured event, see plan/hostile) through
// the step with small budgets: over a budget, the item holds the table-level lineage (the reads,
// the writes and their columns, no edge) marked with that budget, and no error (issue 29: it used
// to be a dead letter too_complex, the run lost whole); within it, the lineage.
func TestHostilePlans(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "plan", "testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	budget := plan.Budget{Depth: 50, Nodes: 100, Edges: 1000, Work: 100000}
	for _, tc := range []struct {
		shape  string
		n      int
		budget string // "" within budget
	}{
		{hostile.DeepFilters, 40, ""},
		{hostile.DeepFilters, 60, plan.BudgetDepth},
		{hostile.DeepFilters, 150, plan.BudgetNodes},
		{hostile.WideFilter, 100, ""},
		{hostile.WideFilter, 300, plan.BudgetEdges},
		{hostile.Fanout, 300, ""},
		{hostile.Fanout, 600, plan.BudgetEdges},
		{hostile.HotAttr, 200, ""},
		{hostile.AliasChain, 40, ""},
		{hostile.AliasChain, 50, plan.BudgetDepth},
		{hostile.Paths, 6, ""},
		{hostile.Paths, 8, plan.BudgetEdges},
	} {
		data, err := hostile.Make(base, tc.shape, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		item, err := Step{Budget: budget}.Item(data)
		if err != nil || item.Lineage == nil || item.Event == nil {
			t.Errorf("%s %d: %v, want an item", tc.shape, tc.n, err)
			continue
		}
		lin := item.Lineage
		if tc.budget == "" {
			if lin.OverBudget != nil || len(lin.Edges) == 0 {
				t.Errorf("%s %d: over budget %v, %d edges; want column lineage", tc.shape, tc.n, lin.OverBudget, len(lin.Edges))
			}
			continue
		}
		if lin.OverBudget == nil || lin.OverBudget.Budget != tc.budget || len(lin.Edges)+len(lin.RowDeps) != 0 ||
			len(lin.Reads) == 0 || len(lin.Writes) == 0 || len(lin.Writes[0].Columns) == 0 {
			t.Errorf("%s %d: over budget %v, %d reads, %d writes, %d edges; want table-level lineage marked with the %s budget",
				tc.shape, tc.n, lin.OverBudget, len(lin.Reads), len(lin.Writes), len(lin.Edges), tc.budget)
		}
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", ErrTooLarge), ReasonTooLarge},
		{fmt.Errorf("x: %w", ErrTooDeep), ReasonTooDeep},
		{fmt.Errorf("x: %w", events.ErrInvalidJSON), ReasonInvalidJSON},
		{fmt.Errorf("x: %w", events.ErrUnsupportedVersion), ReasonUnsupportedVersion},
		{fmt.Errorf("x: %w", events.ErrInvalid), ReasonInvalidEvent},
		{fmt.Errorf("x: %w", openlineage.ErrInvalidJSON), ReasonInvalidJSON},
		{fmt.Errorf("x: %w", &openlineage.InvalidError{}), ReasonInvalidOpenLineage},
		{fmt.Errorf("x: %w", plan.ErrUnsupported), ReasonUnsupportedPlan},
		{fmt.Errorf("x: %w", &plan.TooComplexError{Budget: plan.BudgetDepth, Figure: 9, Limit: 8}), ReasonTooComplex},
		{fmt.Errorf("x: %w", record.ErrInvalidItem), ReasonInvalidLineage},
		{errors.New("x"), ReasonOther},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

//go:build e2e

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go/compress"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/plan/hostile"
	"github.com/colline/colline/process"
)

// hostileBudgets are the budgets of the hostile scenario (COLLINE_FAULTS_HOSTILE): "small" (CI)
// scales the defaults down (the edges budget fivefold), so that the events just under the edges
// budget write in a second or two;
// "default" runs the consumer with its default budgets (plan.DefaultBudget), the worst case a
// consumer meets within them (events of up to 29 MB, lineage of 10,000 edges and roles each).
var hostileBudgets = map[string]plan.Budget{
	"small":   {Depth: 500, Nodes: 10_000, Edges: 2_000, Work: 20_000},
	"default": plan.DefaultBudget,
}

// hostileSizes are, per budget set, each shape of plan/hostile at the largest size within the
// budgets and at the next size, over the budget named; deep-filters also at the nodes budget
// (found by bisection; the scenario checks each against process.Step before sending it).
var hostileSizes = map[string][]hostileCase{
	"small": {
		{hostile.DeepFilters, 496, ""}, {hostile.DeepFilters, 497, plan.BudgetDepth}, {hostile.DeepFilters, 10_000, plan.BudgetNodes},
		{hostile.WideFilter, 494, ""}, {hostile.WideFilter, 495, plan.BudgetEdges},
		{hostile.Fanout, 996, ""}, {hostile.Fanout, 997, plan.BudgetEdges},
		{hostile.HotAttr, 493, ""}, {hostile.HotAttr, 494, plan.BudgetEdges},
		{hostile.AliasChain, 95, ""}, {hostile.AliasChain, 96, plan.BudgetWork},
		{hostile.Paths, 8, ""}, {hostile.Paths, 9, plan.BudgetEdges},
	},
	"default": {
		{hostile.DeepFilters, 4996, ""}, {hostile.DeepFilters, 4997, plan.BudgetDepth}, {hostile.DeepFilters, 100_000, plan.BudgetNodes},
		{hostile.WideFilter, 2494, ""}, {hostile.WideFilter, 2495, plan.BudgetEdges},
		{hostile.Fanout, 4996, ""}, {hostile.Fanout, 4997, plan.BudgetEdges},
		{hostile.HotAttr, 2493, ""}, {hostile.HotAttr, 2494, plan.BudgetEdges},
		{hostile.AliasChain, 702, ""}, {hostile.AliasChain, 703, plan.BudgetWork},
		{hostile.Paths, 15, ""}, {hostile.Paths, 16, plan.BudgetEdges},
	},
}

type hostileCase struct {
	shape string
	n     int
	over  string // the budget the event exceeds, "" within every budget
}

// The memory limit of the Helm chart's example (deploy/helm/colline/ci/all-on-values.yaml:
// limits.memory 1Gi), with GOMEMLIMIT at 90% of it, as one sets it for a Go process in a container.
const (
	hostileLimitMiB = 1024
	hostileGoMemLim = "920MiB"
)

// testHostile: each hostile shape (plan/hostile), just within the budgets and just over one, and
// the events the real listener degraded (plan/testdata/degraded), at random positions among valid
// events, to one consumer process with GOMEMLIMIT and the chart's memory limit. Every valid event
// lands; every hostile one over a budget lands with its table-level lineage (its run, reads and
// writes), its run marked with the budget (overBudget) and its writes columnLineage 'missing'
// (issue 29: until then it was a dead letter too_complex, lost whole), every one within them lands
// whole; every degraded one lands with its table-level lineage and its markers; no dead letter;
// the process never restarts and its peak RSS stays under the limit.
func testHostile(t *testing.T) {
	variant := stack.Getenv("COLLINE_FAULTS_HOSTILE", "small")
	budget, ok := hostileBudgets[variant]
	if !ok {
		t.Fatalf("COLLINE_FAULTS_HOSTILE=%q: use small or default", variant)
	}
	d := driver(t)
	wipe(t, d)
	n := scaled(300, 100)
	msgs, _ := stream(t, "h", n)
	step := process.Step{Budget: budget}

	base, err := os.ReadFile(filepath.Join(env.root, "plan", "testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	var special []message
	wantReasons := map[string]int{}
	wantOver := map[string]int{} // budget -> runs over it
	overWrites := 0
	var within, over []string
	var hostileBytes int
	for k, hc := range hostileSizes[variant] {
		raw, err := hostile.Make(base, hc.shape, hc.n)
		if err != nil {
			t.Fatal(err)
		}
		appID := fmt.Sprintf("app-hostile-%s-%d", hc.shape, hc.n)
		b, err := rekey(raw, fmt.Sprintf("hx%02d_", k), appID, "faults-"+appID, newID())
		if err != nil {
			t.Fatal(err)
		}
		hostileBytes += len(b)
		it, err := step.Item(b)
		m := message{key: []byte(appID), value: b}
		label := fmt.Sprintf("%s %d (%.1f MB)", hc.shape, hc.n, float64(len(b))/1e6)
		if err != nil {
			t.Fatalf("%s: %v, want an item", label, err)
		}
		switch {
		case hc.over == "" && it.Lineage.OverBudget != nil:
			t.Fatalf("%s: %v, want it within the %s budgets", label, it.Lineage.OverBudget, variant)
		case hc.over == "":
			m.item = &it
			within = append(within, fmt.Sprintf("%s: %d edges and roles", label, it.Lineage.Size()))
		case it.Lineage.OverBudget == nil || it.Lineage.OverBudget.Budget != hc.over || len(it.Lineage.Writes) == 0:
			t.Fatalf("%s: over budget %v, want table-level lineage over the %s budget", label, it.Lineage.OverBudget, hc.over)
		default:
			m.item = &it
			wantOver[hc.over]++
			overWrites += len(it.Lineage.Writes)
			over = append(over, fmt.Sprintf("%s: %s, %d writes", label, hc.over, len(it.Lineage.Writes)))
		}
		special = append(special, m)
	}
	degraded, degradedWrites := degradedStream(t, step)
	special = append(special, degraded...)

	all := append([]message(nil), msgs...)
	for _, p := range special {
		i := env.rand.IntN(len(all) + 1)
		all = append(all[:i], append([]message{p}, all[i:]...)...)
	}
	wantCounts, wantEdges := expected(t, all)

	topic, dlq, group := topics(t, "hostile", 3, 32<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	vars := []string{"GOMEMLIMIT=" + hostileGoMemLim,
		fmt.Sprintf("COLLINE_MAX_PLAN_DEPTH=%d", budget.Depth), fmt.Sprintf("COLLINE_MAX_PLAN_NODES=%d", budget.Nodes),
		fmt.Sprintf("COLLINE_MAX_PLAN_EDGES=%d", budget.Edges), fmt.Sprintf("COLLINE_MAX_PLAN_WORK=%d", budget.Work)}
	c := start(t, "consumer", topic, dlq, group, append(vars, "COLLINE_LOG_LEVEL=debug")...)
	pid := c.Pid()
	idle := c.metricRSS()
	if err := produce(ctx, topic, all, compress.Zstd); err != nil {
		t.Fatal(err)
	}
	took := waitCommitted(t, topic, group, int64(len(all)), 25*time.Minute)
	if !c.Running() {
		t.Fatalf("the consumer exited or restarted; log %s", c.LogFile)
	}
	overCounted := map[string]float64{}
	for _, b := range []string{plan.BudgetDepth, plan.BudgetNodes, plan.BudgetEdges, plan.BudgetWork} {
		overCounted[b] = c.metric(t, `colline_plan_over_budget_total{budget="`+b+`"}`)
	}
	stages := map[string]string{}
	for _, st := range []string{"decode", "extract", "write"} {
		stages[st] = fmt.Sprintf("%s %.1fs in all, each at most %s", st,
			c.metric(t, `colline_ingest_stage_duration_seconds_sum{stage="`+st+`"}`), c.bound(t, "colline_ingest_stage_duration_seconds", st))
	}
	if code := c.stop(t, time.Minute); code != 0 {
		t.Errorf("exit code after SIGTERM %d, want 0", code)
	}
	longest := longestWrite(t, c.Logs())
	if logs := c.Logs(); strings.Contains(logs, "panic") || strings.Contains(logs, "goroutine ") || strings.Contains(logs, "fatal error") {
		t.Errorf("the consumer log mentions a panic or a fatal error; see %s", c.LogFile)
	}

	reasons, dead := deadLetters(t, dlq)
	if sorted(reasons) != sorted(wantReasons) {
		t.Errorf("dead letters by reason %v, want %v", sorted(reasons), sorted(wantReasons))
	}
	for _, m := range dead {
		t.Errorf("unexpected dead letter %s: %s", m.Key, header(m, ingest.HeaderError))
	}
	if mib(c.peak) > hostileLimitMiB {
		t.Errorf("consumer peak RSS %.0f MiB, above the limit of %d MiB", mib(c.peak), hostileLimitMiB)
	}
	account := compare(t, d, wantCounts, wantEdges)
	marks := degradedMarks(t, d)
	if want := fmt.Sprintf("%d degraded runs, %d writes with column lineage missing", len(degraded), degradedWrites); marks != want {
		t.Errorf("graph: %s, want %s", marks, want)
	}
	overMarks := overBudgetMarks(t, d)
	if want := fmt.Sprintf("runs over budget %v, %d writes with column lineage missing", sorted(wantOver), overWrites); overMarks != want {
		t.Errorf("graph: %s, want %s", overMarks, want)
	}
	for _, b := range []string{plan.BudgetDepth, plan.BudgetNodes, plan.BudgetEdges, plan.BudgetWork} {
		if int(overCounted[b]) != wantOver[b] {
			t.Errorf("colline_plan_over_budget_total{budget=%q} = %v, want %d", b, overCounted[b], wantOver[b])
		}
	}
	marks += "; " + overMarks
	summarize(t, "budgets %s %+v; sent %d valid events, %d hostile (%.1f MB) and %d degraded by the real listener, mixed at random; within the budgets, written whole: %s; over, written with table-level lineage: %s; all %d committed in %.1fs (%s; %s; %s per batch; longest write %s), one process (pid %d) throughout, no panic, SIGTERM exit 0; dead letters by reason %v (expected %v); graph: %s; consumer RSS %.0f MiB at start, peak %.0f MiB (GOMEMLIMIT %s, limit %d MiB); %s",
		variant, budget, n, len(special)-len(degraded), float64(hostileBytes)/1e6, len(degraded), strings.Join(within, ", "), strings.Join(over, ", "),
		len(all), took.Seconds(), stages["decode"], stages["extract"], stages["write"], longest, pid, sorted(reasons), sorted(wantReasons), marks, mib(idle), mib(c.peak), hostileGoMemLim, hostileLimitMiB, account)
}

// longestWrite returns the longest graph write of a batch the consumer logged (at debug level:
// "batch written" with its seconds), and the messages of that batch.
func longestWrite(t *testing.T, logs string) string {
	t.Helper()
	var longest struct {
		Seconds  float64
		Messages int
	}
	n := 0
	for _, l := range strings.Split(logs, "\n") {
		var line struct {
			Msg      string
			Seconds  float64
			Messages int
		}
		if json.Unmarshal([]byte(l), &line) != nil || line.Msg != "batch written" {
			continue
		}
		n++
		if line.Seconds > longest.Seconds {
			longest.Seconds, longest.Messages = line.Seconds, line.Messages
		}
	}
	if n == 0 {
		t.Errorf("the consumer logged no \"batch written\" (COLLINE_LOG_LEVEL=debug)")
	}
	return fmt.Sprintf("%.1fs, a batch of %d messages", longest.Seconds, longest.Messages)
}

// bound returns the smallest bucket bound of histogram name (label stage) that holds every
// observation: each one took at most that long.
func (c *consumer) bound(t *testing.T, name, stage string) string {
	t.Helper()
	_, body, err := c.Get("/metrics")
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	total := c.metric(t, name+`_count{stage="`+stage+`"}`)
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, name+"_bucket{") || !strings.Contains(l, `stage="`+stage+`"`) {
			continue
		}
		f := strings.Fields(l)
		var n float64
		fmt.Sscan(f[len(f)-1], &n)
		if n >= total {
			_, le, _ := strings.Cut(l, `le="`)
			le, _, _ = strings.Cut(le, `"`)
			if le == "+Inf" {
				return "more than the largest bucket (33s)"
			}
			return le + "s"
		}
	}
	return "?"
}

// degradedStream returns a re-keyed copy of every event of plan/testdata/degraded/spark-3.5 that
// the listener degraded and that writes something, and how many writes they hold.
func degradedStream(t *testing.T, step process.Step) ([]message, int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(env.root, "plan", "testdata", "degraded", "spark-3.5", "*", "*.json"))
	var out []message
	writes := 0
	for k, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if it, err := step.Item(raw); err != nil || !it.Lineage.Degraded || len(it.Lineage.Writes) == 0 {
			continue
		}
		appID := fmt.Sprintf("app-degraded-%03d", k)
		b, err := rekey(raw, fmt.Sprintf("hd%03d_", k), appID, "faults-"+appID+"-"+filepath.Base(filepath.Dir(f)), newID())
		if err != nil {
			t.Fatal(err)
		}
		it, err := step.Item(b)
		if err != nil || !it.Lineage.Degraded {
			t.Fatalf("re-keyed %s: %v", f, err)
		}
		writes += len(it.Lineage.Writes)
		out = append(out, message{key: []byte(appID), value: b, item: &it})
	}
	if len(out) == 0 {
		t.Fatal("no degraded events under plan/testdata/degraded/spark-3.5 (dev/capture --degraded)")
	}
	return out, writes
}

// overBudgetMarks counts the runs marked overBudget, by budget, and their writes marked
// columnLineage 'missing'.
func overBudgetMarks(t *testing.T, d neo4j.DriverWithContext) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), d, `
MATCH (r:Run) WHERE r.overBudget IS NOT NULL
OPTIONAL MATCH (r)-[w:WROTE {columnLineage: $missing}]->()
RETURN r.overBudget AS budget, count(DISTINCT r) AS runs, count(w) AS writes`, map[string]any{"missing": graph.ColumnLineageMissing}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	runs, writes := map[string]int{}, 0
	for _, rec := range res.Records {
		m := rec.AsMap()
		runs[m["budget"].(string)] = int(m["runs"].(int64))
		writes += int(m["writes"].(int64))
	}
	return fmt.Sprintf("runs over budget %v, %d writes with column lineage missing", sorted(runs), writes)
}

// degradedMarks counts the runs marked degraded and the writes marked columnLineage 'missing'.
func degradedMarks(t *testing.T, d neo4j.DriverWithContext) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), d, `
MATCH (r:Run {degraded: true})
OPTIONAL MATCH (r)-[w:WROTE {columnLineage: $missing}]->()
RETURN count(DISTINCT r) AS runs, count(w) AS writes`, map[string]any{"missing": graph.ColumnLineageMissing}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Records[0].AsMap()
	return fmt.Sprintf("%d degraded runs, %d writes with column lineage missing", m["runs"], m["writes"])
}

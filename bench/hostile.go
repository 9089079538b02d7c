package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/plan/hostile"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// hostileSizes are the two sizes of each hostile shape (plan/hostile): twice as large, a linear
// extractor takes about twice the time and memory. deep-filters stays within the depth budget;
// its third size is over it, refused before resolution.
var hostileSizes = map[string][]int{
	hostile.DeepFilters: {2000, 4000, 150000},
	hostile.WideFilter:  {1200, 2400}, // the larger sizes of wide-filter, fanout, hot-attr and paths are within the edges budget
	hostile.Fanout:      {2400, 4800},
	hostile.HotAttr:     {1200, 2400},
	hostile.AliasChain:  {350, 700}, // work grows with n²: ×4 per doubling; 700 is just within the work budget
	hostile.Paths:       {7, 14},    // edges grow with n³: ×8 per doubling; 14 is within the edges budget
}

// benchHostile extracts each hostile shape at its sizes, each in a child process (this binary
// with -hostile-child) so that its peak RSS (VmHWM, read by the child: rusage would count the
// parent's RSS at fork) is its own, and reports time (the best of 3 runs: other work on the
// machine only adds), peak RSS and the ratios between the first two sizes.
func benchHostile(ctx context.Context, r *report) error {
	for _, shape := range hostile.Shapes {
		var secs, rss []float64
		for _, n := range hostileSizes[shape] {
			var bytes, maxKB int
			var result string
			took := -1.0
			for k := 0; k < 3; k++ {
				cmd := exec.CommandContext(ctx, os.Args[0], "-hostile-child", shape+","+strconv.Itoa(n))
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					return fmt.Errorf("%s %d: %w", shape, n, err)
				}
				var t float64
				var kb int
				if _, err := fmt.Sscanf(string(out), "%d %g %d", &bytes, &t, &kb); err != nil {
					return fmt.Errorf("%s %d: %q: %w", shape, n, out, err)
				}
				_, result, _ = strings.Cut(strings.TrimSpace(string(out)), " | ")
				if took < 0 || t < took {
					took = t
				}
				maxKB = max(maxKB, kb)
			}
			secs, rss = append(secs, took), append(rss, float64(maxKB)/1024)
			r.notef("hostile %s n=%d: %.1f MB event, extract %.3fs, peak RSS %.0f MiB (decode included): %s", shape, n, float64(bytes)/1e6, took, float64(maxKB)/1024, result)
			r.add(row{part: "h", metric: fmt.Sprintf("%s n=%d (%.1f MB)", shape, n, float64(bytes)/1e6),
				value: fmt.Sprintf("%.3fs, %.0f MiB peak RSS", took, float64(maxKB)/1024), baseline: "-", target: "-", result: result})
		}
		r.notef("hostile %s: size ×%d: time ×%.2f, peak RSS ×%.2f", shape, hostileSizes[shape][1]/hostileSizes[shape][0], secs[1]/secs[0], rss[1]/rss[0])
	}
	return nil
}

// hostileChild makes one hostile event ("shape,n"), decodes and extracts it with the default
// budget, and prints "<bytes> <extract seconds> <peak RSS KiB> | <result>".
func hostileChild(arg string) error {
	data, err := makeHostile(arg)
	if err != nil {
		return err
	}
	env, err := events.Decode(data)
	if err != nil {
		return err
	}
	start := time.Now()
	lin, err := plan.Extract(env)
	took := time.Since(start).Seconds()
	result := ""
	switch {
	case err != nil:
		result = "refused: " + err.Error()
	case lin.OverBudget != nil:
		result = fmt.Sprintf("table-level lineage (%d reads, %d writes): %v", len(lin.Reads), len(lin.Writes), lin.OverBudget)
	default:
		result = fmt.Sprintf("%d edges, %d row-level", len(lin.Edges), len(lin.RowDeps))
	}
	fmt.Printf("%d %.4f %d | %s\n", len(data), took, peakKB(), result)
	return nil
}

// writeShapes are the shapes whose lineage the edges budget bounds: the ones that take longest to
// write.
var writeShapes = []string{hostile.Paths, hostile.WideFilter, hostile.Fanout, hostile.HotAttr}

// benchHostileWrite writes each shape of writeShapes at the largest size within an edges budget of
// edges (found by bisection: the lineage grows with n) through process.Step and graph.Writer into
// Neo4j, each in a child process (this binary with -hostile-write-child) for its own peak RSS.
// The event alone is also the largest batch the consumer forms (ingest's BatchMaxEdges defaults to
// the edges budget), so its write is what holds a partition longest. It reports the first write
// and the same write again (what a retry or a replay costs: MERGE finds everything).
func benchHostileWrite(ctx context.Context, r *report, env *benchEnv, edges, neo4jPID int) error {
	if err := env.writer.Bootstrap(ctx); err != nil {
		return err
	}
	base, err := os.ReadFile(filepath.Join("plan", "testdata", hostile.Base))
	if err != nil {
		return err
	}
	step := process.Step{Budget: plan.Budget{Edges: edges}}
	for _, shape := range writeShapes {
		n, err := largestWithin(base, shape, step)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-hostile-write-child", shape+","+strconv.Itoa(n),
			"-hostile-edges", strconv.Itoa(edges), "-hostile-neo4j-pid", strconv.Itoa(neo4jPID), "-neo4j", env.neo4jURI)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s %d: %w", shape, n, err)
		}
		var bytes, size, kb int
		var write, again, cpu, cpuAgain float64
		if _, err := fmt.Sscanf(string(out), "%d %d %g %g %d %g %g", &bytes, &size, &write, &again, &kb, &cpu, &cpuAgain); err != nil {
			return fmt.Errorf("%s %d: %q: %w", shape, n, out, err)
		}
		r.notef("hostile write %s n=%d (edges budget %d): %.2f MB event, %d edges and roles, write %.2fs (Neo4j CPU %.2fs), again %.2fs (%.2fs), peak RSS %.0f MiB (load average %s)",
			shape, n, edges, float64(bytes)/1e6, size, write, cpu, again, cpuAgain, float64(kb)/1024, loadAvg())
		r.add(row{part: "hw", metric: fmt.Sprintf("%s n=%d, %d edges and roles (budget %d)", shape, n, size, edges),
			value: fmt.Sprintf("write %.2fs, Neo4j CPU %.2fs (again %.2fs, %.2fs), %.0f MiB peak RSS", write, cpu, again, cpuAgain, float64(kb)/1024), baseline: "-", target: "-"})
	}
	return nil
}

// largestWithin returns the largest size of shape whose event step turns into an item (within
// its budgets and the event size limit), by doubling and then bisection.
func largestWithin(base []byte, shape string, step process.Step) (int, error) {
	within := func(n int) (bool, error) {
		data, err := hostile.Make(base, shape, n)
		if err != nil {
			return false, err
		}
		it, err := step.Item(data)
		if errors.Is(err, process.ErrTooLarge) || err == nil && it.Lineage.OverBudget != nil {
			return false, nil // over budget: table-level lineage only
		}
		return err == nil, err
	}
	lo, hi := 1, 2 // within(lo), and hi not yet known to be over
	for {
		ok, err := within(hi)
		if err != nil {
			return 0, fmt.Errorf("%s %d: %w", shape, hi, err)
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := within(mid)
		if err != nil {
			return 0, fmt.Errorf("%s %d: %w", shape, mid, err)
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// hostileWriteChild makes one hostile event ("shape,n"), turns it into an item within an edges
// budget of edges, writes it to Neo4j at uri twice and prints "<bytes> <edges and roles> <first
// write seconds> <second write seconds> <peak RSS KiB> <Neo4j CPU seconds of each write>" (the
// CPU of process neo4jPID, 0 when not given).
func hostileWriteChild(arg, uri string, edges, neo4jPID int) error {
	data, err := makeHostile(arg)
	if err != nil {
		return err
	}
	it, err := process.Step{Budget: plan.Budget{Edges: edges}}.Item(data)
	if err != nil {
		return err
	}
	d, err := graph.NewDriver(uri, "", "")
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	w := graph.NewWriter(d, "")
	var took, cpu [2]float64
	for k := range took {
		start, cpu0 := time.Now(), cpuSeconds(neo4jPID)
		if err := w.Write(context.Background(), []record.Item{it}); err != nil {
			return err
		}
		took[k], cpu[k] = time.Since(start).Seconds(), cpuSeconds(neo4jPID)-cpu0
	}
	fmt.Printf("%d %d %.3f %.3f %d %.2f %.2f\n", len(data), it.Lineage.Size(), took[0], took[1], peakKB(), cpu[0], cpu[1])
	return nil
}

// cpuSeconds is the CPU time (user and system) process pid has used so far; 0 if pid is 0 or
// unknown. On a loaded machine it says what a write costs where wall time says mostly how long
// it waited for a core.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if pid <= 0 || err != nil {
		return 0
	}
	_, rest, _ := strings.Cut(string(b), ") ") // the command name may hold spaces
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (user + sys) / 100 // clock ticks: USER_HZ is 100 on Linux
}

// makeHostile makes the hostile event arg names ("shape,n") from plan/hostile's base event.
func makeHostile(arg string) ([]byte, error) {
	shape, size, _ := strings.Cut(arg, ",")
	n, err := strconv.Atoi(size)
	if err != nil {
		return nil, err
	}
	base, err := os.ReadFile(filepath.Join("plan", "testdata", hostile.Base))
	if err != nil {
		return nil, err
	}
	return hostile.Make(base, shape, n)
}

// peakKB is this process's peak RSS (VmHWM), in KiB; 0 if unknown.
func peakKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}

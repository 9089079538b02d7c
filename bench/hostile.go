package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/plan/hostile"
)

// hostileSizes are the two sizes of each hostile shape (plan/hostile): twice as large, a linear
// extractor takes about twice the time and memory. deep-filters stays within the depth budget;
// its third size is over it, refused before resolution.
var hostileSizes = map[string][]int{
	hostile.DeepFilters: {2000, 4000, 150000},
	hostile.WideFilter:  {10000, 20000},
	hostile.Fanout:      {20000, 40000},
	hostile.HotAttr:     {4000, 8000},
	hostile.AliasChain:  {350, 700}, // work grows with n²: ×4 per doubling; 700 is just within the work budget
	hostile.Paths:       {16, 32},   // edges grow with n³: ×8 per doubling; 32 is within the edges budget
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
	shape, size, _ := strings.Cut(arg, ",")
	n, err := strconv.Atoi(size)
	if err != nil {
		return err
	}
	base, err := os.ReadFile(filepath.Join("plan", "testdata", hostile.Base))
	if err != nil {
		return err
	}
	data, err := hostile.Make(base, shape, n)
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
	if err != nil {
		_, msg, _ := strings.Cut(err.Error(), ": plan too complex")
		result = "refused: plan too complex" + msg
	} else {
		result = fmt.Sprintf("%d edges, %d row-level", len(lin.Edges), len(lin.RowDeps))
	}
	fmt.Printf("%d %.4f %d | %s\n", len(data), took, peakKB(), result)
	return nil
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

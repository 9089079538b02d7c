package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// DefaultListenerQueries is the listener part's default subset of TPC-DS queries: every tenth
// query of the 99 (a spread of plan sizes, not the largest), so that `make bench` stays short.
const DefaultListenerQueries = "q1 q10 q20 q30 q40 q50 q60 q70 q80 q90"

// overheadRow is one `tpcds-row` line of bench/overhead/Overhead.java: a mode's TPC-DS CTAS.
type overheadRow struct {
	mode                     string
	queries                  int
	wallP50, wallP99         float64
	listenerP50, listenerP99 float64
	listenerSum              float64
}

// benchListener runs bench/overhead/run.sh (one Spark 3.5 driver: no listener, colline, no
// listener again, OpenLineage 1.53, on TPC-DS CTAS) on a subset of queries and reports the
// driver time the listener adds per CTAS against the same run's baseline and OpenLineage
// (row 7 of issue 17: at most 1 ms at the median, at least 50x less than OpenLineage).
func benchListener(ctx context.Context, r *report, env *benchEnv, queries string, rounds int, jar string) error {
	if queries == "all" {
		queries = ""
	}
	cmd := exec.CommandContext(ctx, "bench/overhead/run.sh", strconv.Itoa(rounds))
	cmd.Env = append(os.Environ(), "BENCH_KAFKA="+env.brokers[0], "BENCH_QUERIES="+queries)
	if jar != "" {
		cmd.Env = append(cmd.Env, "BENCH_LISTENER_JAR="+jar)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	desc := queries
	if desc == "" {
		desc = "all"
	}
	r.notef("listener: bench/overhead/run.sh %d (BENCH_QUERIES=%q, Kafka %s)", rounds, desc, env.brokers[0])
	if err := cmd.Start(); err != nil {
		return err
	}
	rows, stats, perr := parseOverhead(out, func(line string) { r.notef("listener: %s", line) })
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("bench/overhead/run.sh: %w", err)
	}
	if perr != nil {
		return perr
	}
	none, col, ol := rows["none"], rows["colline"], rows["openlineage"]
	if none == nil || col == nil || ol == nil || col.queries == 0 || ol.queries == 0 {
		return fmt.Errorf("bench/overhead/run.sh printed no tpcds-row for every mode (none, colline, openlineage): %v", rows)
	}
	ratio := ol.listenerP50 / max(col.listenerP50, 1e-9)
	base := fmt.Sprintf("none: 0 ms (wall p50 %.1f ms); OpenLineage 1.53: %.1f ms", none.wallP50, ol.listenerP50)
	r.add(row{part: "listener", metric: fmt.Sprintf("driver time per TPC-DS CTAS, p50 (%d CTAS, %s)", col.queries, stats),
		value: fmt.Sprintf("%.2f ms", col.listenerP50), baseline: base, target: "≤ 1 ms",
		result: fmt.Sprintf("p99 %.2f ms (OpenLineage %.1f ms)", col.listenerP99, ol.listenerP99), met: col.listenerP50 <= 1})
	r.add(row{part: "listener", metric: "OpenLineage / colline driver time per CTAS, p50",
		value: fmt.Sprintf("%.1f×", ratio), baseline: fmt.Sprintf("totals %.0f ms vs %.0f ms (%.1f×)", col.listenerSum, ol.listenerSum, ol.listenerSum/max(col.listenerSum, 1e-9)),
		target: "≥ 50×", result: fmt.Sprintf("wall p50 colline %+.1f ms, OpenLineage %+.1f ms vs none", col.wallP50-none.wallP50, ol.wallP50-none.wallP50), met: ratio >= 50})
	return nil
}

// parseOverhead reads Overhead.java's output: the `tpcds-row` lines by mode and the
// `colline-stats` line; every line also goes to echo.
func parseOverhead(rd io.Reader, echo func(string)) (map[string]*overheadRow, string, error) {
	rows := map[string]*overheadRow{}
	stats := ""
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		echo(line)
		f := strings.Fields(line)
		switch {
		case len(f) == 8 && f[0] == "tpcds-row":
			x := &overheadRow{mode: f[1]}
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, "", fmt.Errorf("tpcds-row %q: %w", line, err)
			}
			x.queries = n
			for i, p := range []*float64{&x.wallP50, &x.wallP99, &x.listenerP50, &x.listenerP99, &x.listenerSum} {
				if *p, err = strconv.ParseFloat(f[3+i], 64); err != nil {
					return nil, "", fmt.Errorf("tpcds-row %q: %w", line, err)
				}
			}
			rows[x.mode] = x
		case len(f) > 1 && f[0] == "colline-stats":
			stats = strings.Join(f[1:], " ")
		}
	}
	return rows, stats, sc.Err()
}

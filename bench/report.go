package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// row is one figure of the final table.
type row struct {
	part     string
	metric   string
	value    string
	baseline string
	target   string
	result   string // e.g. "ratio 0.8", "72× naive"
	met      bool   // the target is met (ignored when target is "-")
}

// report collects rows and notes, and echoes notes as they come.
type report struct {
	mu    sync.Mutex
	rows  []row
	notes []string
	out   io.Writer
	start time.Time
}

func newReport() *report { return &report{out: os.Stderr, start: time.Now()} }

func (r *report) add(x row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, x)
}

func (r *report) notef(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, s)
	fmt.Fprintf(r.out, "[%6.1fs] %s\n", time.Since(r.start).Seconds(), s)
}

// print writes the table as Markdown, ready for docs/benchmarks.md.
func (r *report) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(w, "| part | metric | colline | baseline (same run) | target | result |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, x := range r.rows {
		res := x.result
		if x.target != "-" && x.target != "" {
			verdict := "NOT MET"
			if x.met {
				verdict = "met"
			}
			res = strings.TrimSpace(res + " " + verdict)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", x.part, x.metric, x.value, x.baseline, x.target, res)
	}
}

package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/impact"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/tags"
)

// impactCmd analyzes the new version of a job's SQL (and the old one, or takes the job's lineage
// from the graph), diffs the two and looks downstream of every change in the graph. It returns
// the report's exit code (impact.ExitOK, ExitBreaking, ExitAlters).
func impactCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("colline impact", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ao := analyzerFlags(fs, stderr)
	old := &listFlag{}
	fs.Var(old, "old", "the old version of the SQL (repeatable); default: the job's lineage in the graph")
	job := fs.String("job", "", "the job's key in the graph, NAMESPACE/APP (spark.colline.namespace / spark.app.name); default: every job writing the datasets")
	depth := fs.Int("depth", 10, "how far downstream to look, in graph relationships (1 to 20; a row-level step counts two)")
	format := fs.String("format", "text", "output format: "+strings.Join(ImpactFormats, ", "))
	failOn := fs.String("fail-on", impact.FailOnBreaking, "exit non-zero on: breaking (3), alter (also 4 when values or rows downstream change), never")
	files, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	switch {
	case len(files) == 0:
		return 0, usageError("impact: no SQL files (the new version of the job's SQL)")
	case !slices.Contains(ImpactFormats, *format):
		return 0, usageError(fmt.Sprintf("unknown format %q: use one of %s", *format, strings.Join(ImpactFormats, ", ")))
	case !slices.Contains([]string{impact.FailOnBreaking, impact.FailOnAlter, impact.FailOnNever}, *failOn):
		return 0, usageError(fmt.Sprintf("--fail-on %q: use breaking, alter or never", *failOn))
	case *depth < 1 || *depth > 20:
		return 0, usageError(fmt.Sprintf("--depth %d: use 1 to 20", *depth))
	}
	req := analyze.Request{}
	if *job != "" {
		ns, app, ok := strings.Cut(*job, "/")
		if !ok || ns == "" || app == "" {
			return 0, usageError(fmt.Sprintf("--job %q: want NAMESPACE/APP, e.g. default/nightly-orders", *job))
		}
		req.Namespace, req.App = ns, app
	}
	conf, err := ao.confMap()
	if err != nil {
		return 0, err
	}
	req.Conf = conf
	s, err := ao.schema(ctx)
	if err != nil {
		return 0, err
	}
	defer s.close()
	a, err := ao.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer a.close()

	lineages := func(files []string) ([]*plan.Lineage, error) {
		res, err := analyzeFiles(ctx, a, s, files, req)
		if err != nil {
			return nil, err
		}
		for _, p := range append(append(res.Notes, res.Warnings...), res.Problems...) {
			fmt.Fprintln(stderr, p)
		}
		if n := len(res.Problems) + len(res.Refused) + len(res.Partial); n > 0 {
			return nil, fmt.Errorf("%s: %d statement(s) could not be analyzed (were refused, or have table-level lineage only): the impact of a change needs all of them", strings.Join(files, " "), n)
		}
		out := make([]*plan.Lineage, len(res.Events))
		for i, ev := range res.Events {
			out[i] = ev.Lineage
		}
		return out, nil
	}
	newLin, err := lineages(files)
	if err != nil {
		return 0, err
	}

	driver, err := ao.neo4j.driver()
	if err != nil {
		return 0, err
	}
	defer driver.Close(context.WithoutCancel(ctx))
	reader := graph.NewReader(driver, *ao.neo4j.database)

	var oldLin []*plan.Lineage
	oldFrom := "the graph"
	if len(*old) > 0 {
		if oldLin, err = lineages(*old); err != nil {
			return 0, err
		}
		oldFrom = strings.Join(*old, " ")
	} else {
		var written []string
		for _, l := range newLin {
			for _, w := range l.Writes {
				if !slices.Contains(written, w.Key) {
					written = append(written, w.Key)
				}
			}
		}
		g, err := reader.Written(ctx, written, *job)
		if err != nil {
			return 0, err
		}
		oldLin = []*plan.Lineage{g}
		oldFrom = "the graph at " + *ao.neo4j.uri
	}

	changes := impact.Diff(oldLin, newLin)
	var affected []string
	for _, c := range changes {
		for _, k := range c.Affected {
			if !slices.Contains(affected, k) {
				affected = append(affected, k)
			}
		}
	}
	reached, err := reader.Reach(ctx, affected, *depth)
	if err != nil {
		return 0, err
	}
	reach := map[string][]impact.Downstream{}
	for _, r := range reached {
		reach[r.From] = append(reach[r.From], impact.Downstream{Column: r.Column, Dataset: r.Dataset, Hops: r.Hops, Jobs: r.Jobs})
	}
	report := impact.NewReport(changes, reach, *failOn)
	report.Job, report.Old, report.New, report.Depth = *job, oldFrom, files, *depth
	// the policy before the run: the tags the change's sources carry, followed through its lineage
	change := tags.NewMemory(nil, nil)
	for _, l := range newLin {
		change.AddLineage(l, cmp.Or(*job, "(the change)"))
	}
	answers, err := tags.Carry(ctx, reader.Tags(), change, tags.Limits{})
	if err != nil {
		return 0, err
	}
	var arrivals []impact.TagArrival
	for _, a := range answers {
		arrivals = append(arrivals, a.Violations()...)
	}
	report.WithTags(arrivals)
	if err := WriteImpact(stdout, *format, report); err != nil {
		return 0, err
	}
	return report.Exit, nil
}

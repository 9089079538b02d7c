package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/colline/colline/graph"
)

// lineageCmd answers a scheduler's question from the graph: the runs of a Spark application
// (--app, its spark.app.id) or under one of the scheduler's runs (--parent, the run the listener
// read from spark.openlineage.parentRunId or spark.colline.parent.runId), with the datasets they
// read and wrote and the column lineage into what they wrote (graph.RunSet).
func lineageCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("colline lineage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := neo4jFlags(fs)
	app := fs.String("app", "", "a Spark application id (spark.app.id)")
	parent := fs.String("parent", "", "a scheduler's run: its run id, or namespace/job/runId")
	limit := fs.Int("limit", 100, "most runs to list")
	format := fs.String("format", "text", "output format: text or json")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usageError(fmt.Sprintf("lineage: unexpected argument %q", rest[0]))
	case (*app == "") == (*parent == ""):
		return usageError("lineage: give one of --app and --parent")
	case *limit < 1:
		return usageError(fmt.Sprintf("--limit %d: must be at least 1", *limit))
	case *format != "text" && *format != "json":
		return usageError(fmt.Sprintf("unknown format %q: use text or json", *format))
	}
	q := graph.RunQuery{App: *app, Limit: *limit}
	if *parent != "" {
		if q.Parent, q.ParentJob = graph.ParseParent(*parent); q.Parent == "" {
			return usageError(fmt.Sprintf("--parent %q: no run id after its last slash", *parent))
		}
	}
	driver, err := db.driver()
	if err != nil {
		return err
	}
	defer driver.Close(context.WithoutCancel(ctx))
	set, err := graph.NewReader(driver, *db.database).Runs(ctx, q)
	if errors.Is(err, graph.ErrNotFound) {
		return fmt.Errorf("%w in the graph at %s, database %s", err, *db.uri, *db.database)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(set)
	}
	writeRunSet(stdout, set)
	return nil
}

// writeRunSet prints a RunSet for people: the runs, then what they read and wrote, then one
// line per lineage relationship (-> FEEDS, => DECIDES_ROWS) with its roles and job.
func writeRunSet(w io.Writer, set *graph.RunSet) {
	if set.Parent != nil {
		fmt.Fprintf(w, "runs under %s (job %s): %d", visible(set.Parent.Key), visible(set.Parent.Job), len(set.Runs))
	} else {
		fmt.Fprintf(w, "runs of application %s: %d", visible(set.App), len(set.Runs))
	}
	if set.Truncated {
		fmt.Fprint(w, " (more not listed: raise --limit)")
	}
	fmt.Fprintln(w)
	for _, r := range set.Runs {
		when := ""
		if t := r.EndedAt; t != nil {
			when = " " + t.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  run %s  job %s  %s%s", visible(r.Key), visible(r.Job), r.Status, when)
		if r.FuncName != "" {
			fmt.Fprintf(w, "  %s", visible(r.FuncName))
		}
		if r.AppID != "" && set.App == "" {
			fmt.Fprintf(w, "  app %s", visible(r.AppID))
		}
		if c := r.Connect; c != nil {
			fmt.Fprintf(w, "  connect user %s session %s", visible(c.UserID), visible(c.SessionID))
			if c.ClientType != "" {
				fmt.Fprintf(w, " client %s", visible(c.ClientType))
			}
		}
		if p := r.Parent; p != nil && set.Parent != nil && p.Key != set.Parent.Key {
			fmt.Fprintf(w, "  under %s", visible(p.Key))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "read (%d): %s\n", len(set.Reads), visible(strings.Join(set.Reads, " ")))
	fmt.Fprintf(w, "wrote (%d): %s\n", len(set.Writes), visible(strings.Join(set.Writes, " ")))
	fmt.Fprintf(w, "lineage (%d):\n", len(set.Edges))
	for _, e := range set.Edges {
		arrow := "->"
		if e.Kind == graph.DecidesRows {
			arrow = "=>"
		}
		roles := make([]string, len(e.Roles))
		for i, r := range e.Roles {
			roles[i] = r.Type + "/" + r.Subtype
			if r.Masked {
				roles[i] += " masked"
			}
		}
		fmt.Fprintf(w, "  %s %s %s %s  (%s)\n", visible(e.Source), arrow, visible(e.Target), strings.Join(roles, ", "), visible(e.Job))
	}
}

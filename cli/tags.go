package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/impact"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/tags"
)

// ExitTagPolicy is the exit status of `colline tags check` (and `colline impact`) when a tag
// arrives unmasked in a dataset its settings do not allow.
const ExitTagPolicy = impact.ExitTagPolicy

const tagsUsage = `usage:
  colline tags load   [NEO4J] [--dbt MANIFEST --dbt-namespace NS [--aliases A]] [FILE.yaml...]
  colline tags remove [NEO4J] SOURCE...
  colline tags list   [NEO4J] [--format table|json]
  colline tags reach  [NEO4J] [--format table|csv|json] [--max-columns N] TAG
  colline tags column [NEO4J] [--format table|csv|json] COLUMN...
  colline tags check  [NEO4J] [--format table|csv|json]

NEO4J: [--neo4j URI] [--user NAME] [--password-file F] [--ca-file F] [--database NAME]

load stores tag files (docs/tags.md: patterns over dataset and column keys, tag keys and values,
each tag's settings) and the column tags and meta of a dbt manifest (target/manifest.json; its
datasets are named as dbt-ol names them in --dbt-namespace, then renamed by --aliases, default
COLLINE_OPENLINEAGE_ALIASES), each replacing what the graph held from the same source. remove
deletes sources (as list shows them). reach prints every column a tag reaches, unmasked,
aggregated or masked, with the path from the tagged column, and its indirect uses; column prints
the tags of columns with their paths; check prints every tag that arrives unmasked where its
settings do not allow it, and exits 5 if one does.
`

// tagsCmd runs `colline tags SUBCOMMAND`; it returns the exit code of check.
func tagsCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	if len(args) == 0 {
		return 0, usageError("tags: no subcommand (load, remove, list, reach, column, check)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("colline tags "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := neo4jFlags(fs)
	format := fs.String("format", "table", "output format: "+strings.Join(tags.Formats, ", "))
	var dbt, dbtNS, aliases *string
	var maxCols *int
	switch sub {
	case "load":
		dbt = fs.String("dbt", "", "a dbt manifest.json whose column tags and meta to load")
		dbtNS = fs.String("dbt-namespace", "", "the OpenLineage namespace dbt-ol gives the project's datasets (e.g. duckdb:///data/shop.duckdb, postgres://db:5432)")
		aliases = fs.String("aliases", os.Getenv("COLLINE_OPENLINEAGE_ALIASES"), "dataset key aliases from=to,… (env COLLINE_OPENLINEAGE_ALIASES)")
	case "reach":
		maxCols = fs.Int("max-columns", tags.DefaultMaxColumns, "most columns in the answer")
	case "remove", "list", "column", "check":
	case "help", "-h", "--help":
		fmt.Fprint(stdout, tagsUsage)
		return 0, nil
	default:
		return 0, usageError(fmt.Sprintf("tags: unknown subcommand %q (load, remove, list, reach, column, check)", sub))
	}
	rest, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, tagsUsage)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !slices.Contains(tags.Formats, *format) {
		return 0, usageError(fmt.Sprintf("unknown format %q: use one of %s", *format, strings.Join(tags.Formats, ", ")))
	}
	driver, err := db.driver()
	if err != nil {
		return 0, err
	}
	defer driver.Close(context.WithoutCancel(ctx))
	g := graph.NewReader(driver, *db.database).Tags()
	switch sub {
	case "load":
		return 0, tagsLoad(ctx, graph.NewWriter(driver, *db.database), rest, *dbt, *dbtNS, *aliases, stdout)
	case "remove":
		if len(rest) == 0 {
			return 0, usageError("tags remove: no source (colline tags list shows them)")
		}
		n, err := graph.NewWriter(driver, *db.database).RemoveTags(ctx, rest)
		if err == nil {
			fmt.Fprintf(stdout, "removed %d of %d source(s)\n", n, len(rest))
		}
		return 0, err
	case "list":
		list, err := g.TagList(ctx)
		if err != nil {
			return 0, err
		}
		if *format == "json" {
			return 0, writeIndented(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TAG\tRULES\tSOURCES\tAGGREGATION\tALLOWED")
		for _, t := range list {
			var srcs []string
			for _, s := range slices.Sorted(maps.Keys(t.Sources)) {
				srcs = append(srcs, fmt.Sprintf("%s (%d)", s, t.Sources[s]))
			}
			allowed := "anywhere"
			if len(t.Policy.Allowed) > 0 {
				allowed = fmt.Sprint(t.Policy.Allowed)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", t.Key, t.Rules, strings.Join(srcs, ", "), t.Policy.Aggregation, allowed)
		}
		return 0, tw.Flush()
	case "reach":
		if len(rest) != 1 {
			return 0, usageError("tags reach: name one tag key")
		}
		ans, err := tags.Reach(ctx, g, rest[0], tags.Limits{MaxColumns: *maxCols})
		if err != nil {
			return 0, err
		}
		return 0, tags.WriteReach(stdout, *format, ans)
	case "column":
		if len(rest) == 0 {
			return 0, usageError("tags column: no column key")
		}
		cts, err := tags.Of(ctx, g, rest, tags.Limits{})
		if err != nil {
			return 0, err
		}
		return 0, tags.WriteColumns(stdout, *format, cts)
	case "check":
		vs, err := Check(ctx, g)
		if err != nil {
			return 0, err
		}
		if err := WriteViolations(stdout, *format, vs); err != nil {
			return 0, err
		}
		if len(vs) > 0 {
			return ExitTagPolicy, nil
		}
	}
	return 0, nil
}

// tagsLoad reads tag files and a dbt manifest, then stores each as one set.
func tagsLoad(ctx context.Context, w *graph.Writer, files []string, dbt, dbtNS, aliases string, stdout io.Writer) error {
	if len(files) == 0 && dbt == "" {
		return usageError("tags load: no tag file and no --dbt manifest")
	}
	var sets []graph.TagSet
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		tf, err := tags.ReadFile(name, f)
		f.Close()
		if err != nil {
			return err
		}
		sets = append(sets, graph.TagSet{Key: tf.Source, Source: tf.Source, Rules: tf.Rules, Policies: tf.Policies})
	}
	if dbt != "" {
		if dbtNS == "" {
			return usageError("tags load: --dbt needs --dbt-namespace, the namespace dbt-ol gives the project's datasets")
		}
		rules, err := alias.Parse(aliases)
		if err != nil {
			return fmt.Errorf("--aliases: %w", err)
		}
		names := openlineage.Names{Aliases: rules}
		f, err := os.Open(dbt)
		if err != nil {
			return err
		}
		tf, notes, err := tags.ReadManifest(f, func(name string) string { return names.Dataset(dbtNS, name, nil).Key })
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", dbt, err)
		}
		for _, n := range notes {
			fmt.Fprintf(stdout, "%s: %s\n", dbt, n)
		}
		sets = append(sets, graph.TagSet{Key: tf.Source, Source: tf.Source, Rules: tf.Rules})
	}
	if err := w.WriteTags(ctx, sets); err != nil {
		return err
	}
	for _, s := range sets {
		fmt.Fprintf(stdout, "loaded %s: %d rule(s), %d tag setting(s)\n", s.Source, len(s.Rules), len(s.Policies))
	}
	return nil
}

// Check returns every unmasked arrival of a tag with allowed destinations in a dataset they do
// not name: the reach of each such tag, over the graph as it is.
func Check(ctx context.Context, g tags.Graph) ([]tags.Violation, error) {
	ps, err := g.Policies(ctx)
	if err != nil {
		return nil, err
	}
	var out []tags.Violation
	for _, k := range slices.Sorted(maps.Keys(ps)) {
		if !ps[k].Restricted() {
			continue
		}
		ans, err := tags.Reach(ctx, g, k, tags.Limits{})
		if err != nil {
			return nil, err
		}
		out = append(out, ans.Violations()...)
	}
	return out, nil
}

// WriteViolations writes policy violations as a table, CSV or JSON.
func WriteViolations(w io.Writer, format string, vs []tags.Violation) error {
	switch format {
	case "json":
		if vs == nil {
			vs = []tags.Violation{}
		}
		return writeIndented(w, vs)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"tag", "dataset", "column", "from", "path"})
		for _, v := range vs {
			cw.Write([]string{v.Tag, v.Dataset, v.Column, v.From, tags.PathString(v.Path)})
		}
		cw.Flush()
		return cw.Error()
	}
	if len(vs) == 0 {
		fmt.Fprintln(w, "no tag arrives unmasked where its settings do not allow it")
		return nil
	}
	fmt.Fprintf(w, "%d column(s) hold a tag unmasked where its settings do not allow it:\n", len(vs))
	for _, v := range vs {
		fmt.Fprintf(w, "  %s: %s, allowed only in %v\n    from %s: %s\n", v.Column, v.Tag, v.Allowed, v.From, tags.PathString(v.Path))
	}
	return nil
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

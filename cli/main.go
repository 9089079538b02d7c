package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/colline/colline/config"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/tags"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

const usage = `colline: column-level lineage of Spark and Hive events, offline, and of SQL before it runs.

usage:
  colline explain [--format table|dot|mermaid|json|openlineage] [--tags FILE.yaml]... [--tags-from-graph [--neo4j URI ...]] FILE|DIR...
  colline replay  [--neo4j URI] [--user NAME] [--password-file F] [--ca-file F] [--database NAME]
                  [--batch N] FILE|DIR...
  colline upgrade [--brokers HOST:PORT,...] [--topic NAME] [--neo4j URI] [--user NAME]
                  [--password-file F] [--ca-file F] [--database NAME] [--batch N]
  colline analyze [ANALYZER] [--app NAME] [--namespace NS] [--reads] [--out DIR]
                  [--format table|dot|mermaid|json|events] FILE.sql...
  colline impact  [ANALYZER] [--old OLD.sql]... [--job NS/APP] [--depth N]
                  [--format text|json|markdown] [--fail-on breaking|alter|never] NEW.sql...
  colline tags    load|remove|list|reach|column|check [--neo4j URI ...] (colline tags help)
  colline lineage (--app ID | --parent RUN) [--limit N] [--format text|json] [--neo4j URI] [--user NAME]
                  [--password-file F] [--ca-file F] [--database NAME]
  colline ui      [--addr HOST:PORT]
  colline version

ANALYZER: [--server URL] [--token-file F] [--analyzer CMD] [--spark-line LINE] [--catalog memory|hive]
          [--metastore DIR|jdbc:...|thrift://...] [--warehouse DIR] [--ddl FILE]... [--conf K=V]...
          [--schema-from-graph=false] [--infer=false] [--neo4j URI ...]

FILE is an event captured by the listener or the Hive hook (spark.colline.output.dir,
colline.output.dir) or a file of events, one JSON value after another (e.g. saved from the
colline.plans topic); a file may also hold records of Hive's LineageLogger, one a line (its log
with the layout %m%n; a record without a timestamp gets the file's modification time), so that
the history of a Hive deployment can be loaded. DIR means every *.json and *.jsonl file below it.
Flags may come before or after the files.

explain prints the column lineage the consumer would write: per event, its job, reads and writes
and one row per column edge (source -> target, type/subtype, masking, expression). dot and
mermaid draw the union of all events; json is for scripts; openlineage prints the OpenLineage
RunEvent the consumer emits for each event (COLLINE_OPENLINEAGE_EMIT_*), one per line. With --tags
(tag files) or --tags-from-graph, the table ends with the tags of each event's source columns (also
those the event carries itself: Spark column comments, docs/tags.md) and where they reach its
writes, unmasked, aggregated or masked. In every format, control and format
characters in names (newlines, ESC, bidirectional overrides) are shown escaped (\n, \x1b, \u202e).
Ctrl-C stops it, also in the middle of a large plan.

replay writes the events to Neo4j through the consumer's writer (no Kafka needed). The password (of replay and upgrade)
comes from --password-file (a file, one trailing newline ignored), else COLLINE_NEO4J_PASSWORD_FILE,
else COLLINE_NEO4J_PASSWORD, never from a flag; --ca-file (default COLLINE_NEO4J_TLS_CA_FILE) is the
PEM CA bundle that signs the server's certificate, for bolt+s:// and neo4j+s://. The other flags
default to COLLINE_NEO4J_URI, _USER and _DATABASE. Writes are idempotent: replaying twice changes
nothing.

upgrade moves a graph written by an older colline to the current graph model (a consumer refuses
an older graph and names this command): it removes what the older model stored differently,
re-reads the topic (default COLLINE_KAFKA_TOPIC or colline.plans; brokers COLLINE_KAFKA_BROKERS)
from the start, writes every event again, with progress, and stamps the graph. Stop the
consumers first; start the new ones afterwards. Running it twice is harmless. It connects to
Kafka as the consumer does, from the consumer's variables: COLLINE_KAFKA_TLS, _TLS_CA_FILE,
_TLS_CERT_FILE and _TLS_KEY_FILE (mutual TLS), COLLINE_KAFKA_SASL_MECHANISM, _SASL_USERNAME and
_SASL_PASSWORD_FILE or _SASL_PASSWORD (docs/operations.md); the user needs Read and Describe on
the topic.

lineage answers a scheduler's question from the graph: the runs of a Spark application (--app, its
spark.app.id) or every run under one of the scheduler's runs (--parent: a run id, or
namespace/job/runId as passed to Spark in spark.openlineage.parentJobNamespace, parentJobName and
parentRunId, or spark.colline.parent.*), oldest first, with the Spark Connect user of each run, the
datasets they read and wrote, and the column lineage into what they wrote. The same answer is
GET /api/runs?app=ID or ?parent=RUN of colline ui. Neo4j flags as for replay (read only).

ui serves the lineage explorer, a web page that draws a column's upstream and downstream as table
boxes with column edges, the impact list (CSV too), job views and the SQL panel, reading Neo4j
(read transactions only). It also serves Neo4j Browser's style and guide (/neo4j/colline.grass,
/neo4j/guide.html). Configuration: COLLINE_UI_* and the consumer's COLLINE_NEO4J_* variables
(docs/operations.md, docs/ui.md); --addr overrides COLLINE_UI_ADDR (default 127.0.0.1:7480).
Ctrl-C stops it.

analyze parses and analyzes SQL files with Spark (dev/spark-analyze starts a local Spark, or
--server names a running analyzer) and never runs them: each statement becomes the event the
listener would publish for it, marked analyzed, shown as explain shows events (--format events
prints the events, one JSON value a line; --out DIR writes one file each, for explain and
replay). Tables come, in this order, from --ddl files or a Hive metastore (--metastore, read
only), from the file's own CREATE statements (registered by colline in the analyzer's own
catalog, never run), from colline's graph (--neo4j or COLLINE_NEO4J_URI; only the tables the SQL
names, sent as data: a type that is not one Spark SQL type refuses its table, naming the column;
--schema-from-graph=false turns it off), and else are inferred from the statements that read
them (their columns, with the types Spark asks of them; --infer=false turns it off): a statement
whose tables cannot be inferred (a * over one, an unqualified column two of them could hold, ...)
keeps table-level lineage, with the name and the reason. Statements that would run code or
read files (ADD JAR, CREATE FUNCTION, temporary views USING a data source, reads of files by path,
...) are refused and reported with the reason. A statement Spark cannot parse or analyze is
reported as FILE:LINE:COLUMN: Spark's message, and the others are still analyzed. An analyzer
colline starts has a fresh token; --token-file is the token of --server.

impact analyzes the new version of a job's SQL (and --old, or else takes the job's lineage from
the graph), prints the lineage diff and, from the graph, every column, dataset and job downstream
of each change. Exit status 3: a change removes or retypes a column, or stops writing a dataset,
that something downstream reads; 4 (with --fail-on alter): a change alters what something
downstream reads; 5: the change carries a tag, unmasked, into a dataset the tag's settings do not
allow (the tags its sources carry in the graph, followed through its lineage: docs/tags.md).
docs/analyze.md has a CI recipe.

tags loads column tags (tag files, a dbt manifest) into the graph and reports where they go:
each tag follows DIRECT lineage downstream and stops where a transformation masks it (a hash, a
count); reach lists every column a tag reaches with the path, hop by hop, column the tags of a
column, check the tags that arrive where their settings do not allow them (docs/tags.md).

Exit status: 0 ok, 1 an input or the write failed (every bad input is reported; analyze: a
statement failed), 2 usage, 3 and 4 see impact, 5 a tag arrives unmasked where its settings
do not allow it (tags check, impact).
`

// Main runs the colline command with args (without the program name) and returns its exit code.
func Main(ctx context.Context, version string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "explain":
		err = explain(ctx, rest, stdout)
	case "replay":
		err = replay(ctx, rest, stdout)
	case "upgrade":
		err = upgrade(ctx, rest, stdout)
	case "ui":
		err = serveUI(ctx, version, rest, stdout, stderr)
	case "lineage":
		err = lineageCmd(ctx, rest, stdout)
	case "analyze":
		err = analyzeCmd(ctx, rest, stdout, stderr)
	case "impact":
		var code int
		code, err = impactCmd(ctx, rest, stdout, stderr)
		if err == nil && code != 0 {
			return code
		}
	case "tags":
		var code int
		code, err = tagsCmd(ctx, rest, stdout)
		if err == nil && code != 0 {
			return code
		}
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "colline", version)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = usageError(fmt.Sprintf("unknown command %q", cmd))
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errSilent):
		return 1
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "colline: %s\n\n%s", ue, usage)
		return 2
	default:
		fmt.Fprintln(stderr, "colline:", strings.ReplaceAll(err.Error(), "\n", "\ncolline: "))
		return 1
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

func explain(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("colline explain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "table", "output format: "+strings.Join(Formats, ", "))
	tagFiles := &listFlag{}
	fs.Var(tagFiles, "tags", "a tag file (docs/tags.md): show the tags of each event's sources and where they reach (repeatable; table format)")
	fromGraph := fs.Bool("tags-from-graph", false, "also the tags the graph says each source carries from upstream (--neo4j …; table format)")
	db := neo4jFlags(fs)
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(Formats, *format) {
		return usageError(fmt.Sprintf("unknown format %q: use one of %s", *format, strings.Join(Formats, ", ")))
	}
	if len(files) == 0 {
		return usageError("explain: no input files")
	}
	withTags := len(*tagFiles) > 0 || *fromGraph
	if withTags && *format != "table" {
		return usageError("explain: --tags and --tags-from-graph go with --format table")
	}
	rules, policies, err := readTagFiles(*tagFiles)
	if err != nil {
		return err
	}
	evs, loadErr := loadUntil(ctx, files)
	if len(evs) > 0 {
		if err := Write(stdout, *format, evs); err != nil {
			return err
		}
		if withTags {
			var g tags.Graph
			if *fromGraph {
				driver, err := db.driver()
				if err != nil {
					return err
				}
				defer driver.Close(context.WithoutCancel(ctx))
				g = graph.NewReader(driver, *db.database).Tags()
			}
			if err := writeEventTags(ctx, stdout, evs, rules, policies, g); err != nil {
				return err
			}
		}
	}
	return loadErr
}

func replay(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("colline replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := neo4jFlags(fs)
	batch := fs.Int("batch", 100, "events per write transaction")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError("replay: no input files")
	}
	if *batch < 1 {
		return usageError(fmt.Sprintf("--batch %d: must be at least 1", *batch))
	}
	evs, err := loadUntil(ctx, files)
	if err != nil {
		return fmt.Errorf("%w\nnothing written", err)
	}
	w, closeDriver, err := db.writer()
	if err != nil {
		return err
	}
	defer closeDriver(context.WithoutCancel(ctx))
	start := time.Now()
	if err := Replay(ctx, w, evs, *batch); err != nil {
		return err
	}
	edges, rows := 0, 0
	for _, ev := range evs {
		edges += len(ev.Lineage.Edges)
		rows += len(ev.Lineage.RowDeps)
	}
	fmt.Fprintf(stdout, "wrote %d events (%d column edges, %d row-level dependencies) to %s, database %s, in %s\n",
		len(evs), edges, rows, *db.uri, *db.database, time.Since(start).Round(time.Millisecond))
	return nil
}

// neo4jOpts are the flags of the commands that write to Neo4j (replay, upgrade).
type neo4jOpts struct{ uri, user, database, passwordFile, caFile *string }

func neo4jFlags(fs *flag.FlagSet) neo4jOpts {
	return neo4jOpts{
		uri:          fs.String("neo4j", envOr("COLLINE_NEO4J_URI", "bolt://127.0.0.1:17687"), "Neo4j URI (env COLLINE_NEO4J_URI)"),
		user:         fs.String("user", os.Getenv("COLLINE_NEO4J_USER"), "Neo4j user; empty: no authentication (env COLLINE_NEO4J_USER)"),
		database:     fs.String("database", envOr("COLLINE_NEO4J_DATABASE", "neo4j"), "Neo4j database (env COLLINE_NEO4J_DATABASE)"),
		passwordFile: fs.String("password-file", os.Getenv("COLLINE_NEO4J_PASSWORD_FILE"), "file holding the Neo4j password (env COLLINE_NEO4J_PASSWORD_FILE)"),
		caFile:       fs.String("ca-file", os.Getenv("COLLINE_NEO4J_TLS_CA_FILE"), "PEM CAs of Neo4j's certificate, for +s URIs (env COLLINE_NEO4J_TLS_CA_FILE)"),
	}
}

// writer connects to Neo4j (see driver) and returns a Writer on the database.
func (o neo4jOpts) writer() (*graph.Writer, func(context.Context) error, error) {
	driver, err := o.driver()
	if err != nil {
		return nil, nil, err
	}
	return graph.NewWriter(driver, *o.database), driver.Close, nil
}

// driver connects to Neo4j: the password from --password-file, else COLLINE_NEO4J_PASSWORD.
func (o neo4jOpts) driver() (neo4j.DriverWithContext, error) {
	password := config.Secret(os.Getenv("COLLINE_NEO4J_PASSWORD"))
	if *o.passwordFile != "" {
		var err error
		if password, err = config.ReadSecretFile(*o.passwordFile); err != nil {
			return nil, fmt.Errorf("--password-file: %w", err)
		}
	}
	var tlsConfig *tls.Config
	if *o.caFile != "" {
		var err error
		if tlsConfig, err = config.CAConfig(*o.caFile); err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
	}
	return graph.NewDriver(*o.uri, *o.user, password.Reveal(), tlsConfig)
}

// parse parses flags that may come before, between or after the positional arguments (flag
// stops at the first positional one); everything after "--" is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, pos = args[:i], append(pos, args[i+1:]...)
	}
	var files []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, err
		} else if err != nil {
			return nil, usageError(err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return append(files, pos...), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/config"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
)

// analyzerOpts are the flags that say which analyzer to use and what to analyze against.
type analyzerOpts struct {
	server, tokenFile, launcher, sparkLine, catalog, metastore, warehouse *string
	ddl, conf                                                             *listFlag
	graphSchema, infer                                                    *bool
	neo4j                                                                 neo4jOpts
	log                                                                   io.Writer
	fs                                                                    *flag.FlagSet
}

func analyzerFlags(fs *flag.FlagSet, stderr io.Writer) *analyzerOpts {
	o := &analyzerOpts{
		server:      fs.String("server", os.Getenv("COLLINE_ANALYZER_URL"), "a running analyzer (dev/spark-analyze) to use instead of starting one (env COLLINE_ANALYZER_URL)"),
		tokenFile:   fs.String("token-file", os.Getenv("COLLINE_ANALYZER_TOKEN_FILE"), "file holding the bearer token of --server (env COLLINE_ANALYZER_TOKEN_FILE); an analyzer colline starts gets a fresh token of its own"),
		launcher:    fs.String("analyzer", os.Getenv("COLLINE_ANALYZER"), "the analyzer's launcher (default: dev/spark-analyze of the checkout; env COLLINE_ANALYZER)"),
		sparkLine:   fs.String("spark-line", os.Getenv("SPARK_LINE"), "the Spark line to analyze with, a line of dev/spark/lines (default 3.5_2.12; env SPARK_LINE)"),
		catalog:     fs.String("catalog", "memory", "the analyzer's own catalog: memory or hive (Hive-format tables)"),
		metastore:   fs.String("metastore", "", "analyze against this Hive metastore, read only: a directory holding metastore_db, a JDBC URL or thrift://host:port"),
		warehouse:   fs.String("warehouse", "", "spark.sql.warehouse.dir of the analysis"),
		ddl:         &listFlag{},
		conf:        &listFlag{},
		graphSchema: fs.Bool("schema-from-graph", true, "take the tables the SQL names that neither --ddl, --metastore nor the SQL itself defines from colline's graph (--neo4j), when it can be reached"),
		infer:       fs.Bool("infer", true, "infer the schemas of the tables nothing describes from the statements that read them (docs/analyze.md)"),
		log:         stderr,
		fs:          fs,
	}
	fs.Var(o.ddl, "ddl", "a file of schema statements (CREATE DATABASE / TABLE / VIEW, analyzed and registered, never run) to analyze against (repeatable)")
	fs.Var(o.conf, "conf", "a Spark SQL setting KEY=VALUE for the analysis, e.g. spark.sql.ansi.enabled=false (repeatable)")
	o.neo4j = neo4jFlags(fs)
	return o
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// analyzer is a client of a running analyzer, and what to call when done with it.
type analyzer struct {
	client *analyze.Client
	close  func()
	spark  string
}

// connect uses --server, or starts an analyzer (a JVM: tens of seconds) and returns once it serves.
// An analyzer colline starts listens on loopback with a fresh token, in a file only its user reads.
func (o *analyzerOpts) connect(ctx context.Context) (*analyzer, error) {
	if *o.server != "" {
		token := ""
		if *o.tokenFile != "" {
			s, err := config.ReadSecretFile(*o.tokenFile)
			if err != nil {
				return nil, fmt.Errorf("--token-file: %w", err)
			}
			token = s.Reveal()
		}
		c := &analyze.Client{URL: *o.server, Token: token}
		h, err := c.Health(ctx)
		if err != nil {
			return nil, err
		}
		if *o.metastore != "" || *o.catalog != "memory" || *o.sparkLine != "" {
			fmt.Fprintf(o.log, "colline: --server %s: its Spark line and catalog are its own (Spark %s, %s catalog); --spark-line, --catalog and --metastore are ignored\n",
				*o.server, h.Spark, h.Catalog)
		}
		return &analyzer{client: c, close: func() {}, spark: h.Spark}, nil
	}
	if *o.catalog != "memory" && *o.catalog != "hive" {
		return nil, usageError(fmt.Sprintf("--catalog %q: use memory or hive", *o.catalog))
	}
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 10*time.Minute) // the first start fetches Spark's jars
	defer cancel()
	if *o.warehouse != "" && *o.metastore == "" {
		return nil, usageError("--warehouse goes with --metastore: the analyzer's own catalog keeps its warehouse in its work directory")
	}
	p, err := analyze.Start(startCtx, analyze.Options{
		Launcher: *o.launcher, SparkLine: *o.sparkLine, Catalog: *o.catalog, Metastore: *o.metastore,
		Warehouse: *o.warehouse,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.log, "colline: analyzer ready: Spark %s at %s in %s\n", p.Spark, p.URL, time.Since(start).Round(100*time.Millisecond))
	return &analyzer{client: p.Client(), close: func() { _ = p.Close() }, spark: p.Spark}, nil
}

// schema is what to analyze against: the --ddl files (statements, analyzed and registered), and
// with --schema-from-graph the graph, which gives the tables the SQL names that nothing else
// defines (as data: names, columns and types); what none of them describes is inferred (--infer).
type schema struct {
	parts []analyze.Part
	graph analyze.Schemas
	infer bool
	close func()
}

func (o *analyzerOpts) schema(ctx context.Context) (schema, error) {
	s := schema{infer: *o.infer, close: func() {}}
	for _, f := range *o.ddl {
		data, err := os.ReadFile(f)
		if err != nil {
			return s, fmt.Errorf("--ddl: %w", err)
		}
		s.parts = append(s.parts, analyze.Part{Name: f, SQL: string(data)})
	}
	if !*o.graphSchema {
		return s, nil
	}
	// the graph is used whenever one is configured; the default address only when it answers
	explicit := os.Getenv("COLLINE_NEO4J_URI") != ""
	o.fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "neo4j" })
	driver, err := o.neo4j.driver()
	if err == nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = driver.VerifyConnectivity(vctx)
		cancel()
		if err != nil {
			driver.Close(context.WithoutCancel(ctx))
		}
	}
	if err != nil {
		if explicit {
			return s, fmt.Errorf("--schema-from-graph: the graph at %s: %w (--schema-from-graph=false analyzes without it)", *o.neo4j.uri, err)
		}
		fmt.Fprintf(o.log, "colline: no graph at %s (%v): tables come from --ddl and inference only (set --neo4j or COLLINE_NEO4J_URI)\n",
			*o.neo4j.uri, firstLine(err.Error()))
		return s, nil
	}
	s.graph = &analyze.GraphSchemas{Reader: graph.NewReader(driver, *o.neo4j.database)}
	s.close = func() { driver.Close(context.WithoutCancel(ctx)) }
	return s, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Analyzed is the result of analyzing files: the events, as explain would read them, and one
// diagnostic per statement that failed (Spark's message with file, line and column).
type Analyzed struct {
	Events   []Event
	Raw      [][]byte // the events' JSON, as the analyzer produced them
	Problems []string
	Warnings []string       // tables and schema statements not registered, statements refused, and why
	Refused  []string       // statements the analyzer refused (not analyzed), with the reason
	Partial  []string       // statements with table-level lineage only: what could not be inferred, and why
	Notes    []string       // where the tables' schemas came from: the graph, inferred (with the columns)
	Counts   map[string]int // statements by outcome
}

// analyzeFiles analyzes files (in one session, in order) with the schema, and runs every event
// through process.Step as explain does.
func analyzeFiles(ctx context.Context, a *analyzer, s schema, files []string, req analyze.Request) (*Analyzed, error) {
	req.Schema, req.Infer = s.parts, s.infer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		req.Files = append(req.Files, analyze.Part{Name: f, SQL: string(data)})
	}
	_, skipped, err := a.client.Resolve(ctx, &req, s.graph)
	if err != nil {
		return nil, err
	}
	resp, err := a.client.Analyze(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &Analyzed{Counts: map[string]int{}}
	for _, sk := range skipped {
		out.Warnings = append(out.Warnings, "colline: the graph's "+visible(sk))
	}
	for _, t := range resp.Tables {
		if t.Outcome == analyze.OutcomeApplied && t.Source == analyze.SourceGraph {
			out.Notes = append(out.Notes, fmt.Sprintf("colline: table %s from the graph", visible(t.Name)))
		}
		if t.Outcome != analyze.OutcomeApplied {
			out.Warnings = append(out.Warnings, fmt.Sprintf("colline: table %s (from the %s) not defined: %s", visible(t.Name), visible(t.Source), visible(t.Reason)))
		}
	}
	for _, f := range resp.Schema {
		for _, st := range f.Statements {
			switch st.Outcome {
			case analyze.OutcomeError:
				out.Problems = append(out.Problems, problem(f.Name, st, "schema statement"))
			case analyze.OutcomeRefused:
				out.Warnings = append(out.Warnings, problem(f.Name, st, "schema statement refused"))
			case analyze.OutcomeApplied:
			default:
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s:%d:%d: schema statement not registered: %s", visible(f.Name), st.Line, st.Column, visible(st.Reason)))
			}
		}
	}
	for _, f := range resp.Files {
		for _, st := range f.Statements {
			out.Counts[st.Outcome]++
			switch st.Outcome {
			case analyze.OutcomeRefused:
				r := problem(f.Name, st, "refused")
				out.Refused = append(out.Refused, r)
				out.Warnings = append(out.Warnings, r)
			case analyze.OutcomeError:
				out.Problems = append(out.Problems, problem(f.Name, st, "error"))
			case analyze.OutcomeTableLevel:
				var reads, writes []string
				for _, n := range st.Reads {
					reads = append(reads, n.String())
				}
				for _, n := range st.Writes {
					writes = append(writes, n.String())
				}
				r := fmt.Sprintf("%s:%d:%d: table-level lineage only (reads %s; writes %s): %s", visible(f.Name), st.Line, st.Column,
					visible(orNone(reads)), visible(orNone(writes)), visible(strings.Join(st.CannotInfer, "; ")))
				out.Partial = append(out.Partial, r)
				out.Warnings = append(out.Warnings, r)
			}
			for _, t := range st.Inferred {
				cols := make([]string, len(t.Columns))
				for i, c := range t.Columns {
					cols[i] = c.Name + " " + c.Type
				}
				out.Notes = append(out.Notes, fmt.Sprintf("%s:%d:%d: inferred %s (%s)", visible(f.Name), st.Line, st.Column,
					visible(t.String()), visible(strings.Join(cols, ", "))))
			}
			switch st.Outcome {
			case analyze.OutcomeEvent:
				src := fmt.Sprintf("%s:%d", f.Name, st.Line)
				for _, raw := range st.Events {
					it, err := process.Step{}.Item(raw)
					if err != nil {
						out.Problems = append(out.Problems, fmt.Sprintf("%s: %v (the consumer would dead-letter it as %s)", src, err, process.Reason(err)))
						continue
					}
					out.Events = append(out.Events, Event{Source: src, Env: it.Event, Lineage: it.Lineage})
					out.Raw = append(out.Raw, raw)
				}
			}
		}
	}
	return out, nil
}

// problem is a diagnostic in the compilers' form: file:line:column: what: message.
func problem(file string, st analyze.Statement, what string) string {
	line, col, msg := st.Line, st.Column, st.Reason
	if st.Error != nil {
		line, col = st.Error.Line, st.Error.Column
		msg = st.Error.Message
		if st.Error.Stage != "" {
			what = st.Error.Stage + " " + what
		}
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", visible(file), line, col, what, strings.ReplaceAll(strings.TrimSpace(msg), "\n", "\n    "))
}

// AnalyzeFormats are analyze's output formats: explain's, and events (the events' JSON, one per
// line, which explain and replay read).
var AnalyzeFormats = append(append([]string(nil), Formats...), "events")

func analyzeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("colline analyze", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ao := analyzerFlags(fs, stderr)
	format := fs.String("format", "table", "output format: "+strings.Join(AnalyzeFormats, ", "))
	outDir := fs.String("out", "", "also write each event to a file in this directory (NNNN-<file>-<line>.json), for explain and replay")
	app := fs.String("app", "colline-analyze", "the Spark application name of the events (their job is NAMESPACE/APP)")
	namespace := fs.String("namespace", "default", "the job namespace of the events (spark.colline.namespace)")
	reads := fs.Bool("reads", false, "also make events of plain queries (the listener's publishReads)")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(AnalyzeFormats, *format) {
		return usageError(fmt.Sprintf("unknown format %q: use one of %s", *format, strings.Join(AnalyzeFormats, ", ")))
	}
	if len(files) == 0 {
		return usageError("analyze: no SQL files")
	}
	conf, err := ao.confMap()
	if err != nil {
		return err
	}
	s, err := ao.schema(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	a, err := ao.connect(ctx)
	if err != nil {
		return err
	}
	defer a.close()
	start := time.Now()
	res, err := analyzeFiles(ctx, a, s, files, analyze.Request{App: *app, Namespace: *namespace, Reads: *reads, Conf: conf})
	if err != nil {
		return err
	}
	if *outDir != "" {
		if err := writeEvents(*outDir, res); err != nil {
			return err
		}
	}
	if *format == "events" {
		for _, raw := range res.Raw {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return err
			}
			b.WriteByte('\n')
			if _, err := stdout.Write(b.Bytes()); err != nil {
				return err
			}
		}
	} else if len(res.Events) > 0 {
		if err := Write(stdout, *format, res.Events); err != nil {
			return err
		}
	}
	for _, p := range append(append(res.Notes, res.Warnings...), res.Problems...) {
		fmt.Fprintln(stderr, p)
	}
	fmt.Fprintf(stderr, "colline: analyzed %d statement(s) of %d file(s) with Spark %s in %s: %d event(s), %d skipped, %d table-level, %d refused, %d error(s)\n",
		res.Counts[analyze.OutcomeEvent]+res.Counts[analyze.OutcomeSkipped]+res.Counts[analyze.OutcomeError]+res.Counts[analyze.OutcomeTableLevel], len(files), a.spark,
		time.Since(start).Round(time.Millisecond), res.Counts[analyze.OutcomeEvent], res.Counts[analyze.OutcomeSkipped],
		res.Counts[analyze.OutcomeTableLevel], res.Counts[analyze.OutcomeRefused], len(res.Problems))
	if len(res.Problems) > 0 {
		return errSilent
	}
	return nil
}

// errSilent is a failure already reported (exit status 1, nothing more printed).
var errSilent = errors.New("failed (reported above)")

func (o *analyzerOpts) confMap() (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range *o.conf {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageError(fmt.Sprintf("--conf %q: want KEY=VALUE", kv))
		}
		m[strings.TrimSpace(k)] = v
	}
	return m, nil
}

// writeEvents writes each event to dir/NNNN-<file>-<line>.json.
func writeEvents(dir string, res *Analyzed) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k, ev := range res.Events {
		i := strings.LastIndex(ev.Source, ":")
		file, line := ev.Source[:i], ev.Source[i+1:]
		name := fmt.Sprintf("%04d-%s-%s.json", k+1, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), line)
		var b bytes.Buffer
		if err := json.Indent(&b, res.Raw[k], "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

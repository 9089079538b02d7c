package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
)

// benchEnv holds the services the Neo4j and Kafka parts use.
type benchEnv struct {
	brokers  []string
	neo4jURI string
	driver   neo4j.DriverWithContext
	writer   *graph.Writer
	kafka    *stack.Kafka
}

func main() {
	var (
		parts      = flag.String("parts", "decode,e2e,prod,fresh,prod-fresh,rss,reads,listener", "comma-separated parts to run (prod: the production-like corpus, re-runs of the same jobs; prod-fresh: freshness at -prod-fresh-rate of its re-runs; big: the 10M-relationship graph built by the writer, reads, the explorer and retention on it (make bench-10m); listener: the listener's driver time per TPC-DS CTAS against no listener and OpenLineage, bench/overhead/run.sh; decodelibs: the JSON libraries compared; hostile: plan/hostile's shapes at two sizes; hostile-write: the shapes at the edges budget written to Neo4j; ui: the explorer's API on the reads graph and its first draw in Chromium; ui-load: the explorer's API with 50 concurrent readers on the reads graph; intake: the OpenLineage endpoint under a stream of events, 1 in 10 invalid; tags: the tags of a column and the reach of a tag on the reads graph; analyze: colline's analyzer, warm; none of these in the default)")
		corpus     = flag.String("corpus", "plan/testdata/tpcds", "TPC-DS corpus directory (spark-*/q*.json[.gz])")
		kafkaAddr  = flag.String("kafka", envOr("COLLINE_TEST_KAFKA_BROKERS", "127.0.0.1:19092"), "Kafka brokers, comma-separated")
		neo4jURI   = flag.String("neo4j", envOr("COLLINE_TEST_NEO4J_URI", "bolt://127.0.0.1:17687"), "Neo4j URI (no auth)")
		rounds     = flag.Int("decode-rounds", 9, "decode: interleaved rounds per variant")
		roundTime  = flag.Duration("decode-round-time", 700*time.Millisecond, "decode: minimum time of a round")
		cpuProfile = flag.String("cpuprofile", "", "decode: write a CPU profile of Decode+Extract here; prod: of the whole part (the consumer's side: loop, writer, driver)")
		memProfile = flag.String("memprofile", "", "decode: write an allocation profile of Decode+Extract here")
		copies     = flag.Int("e2e-copies", 5, "e2e: replay the corpus this many times (each copy writes new target tables)")
		naiveEdges = flag.Int("naive-edges", 4000, "e2e: edges the naive baseline writes")
		freshRate  = flag.Float64("fresh-rate", 50, "fresh: events per second")
		freshDur   = flag.Duration("fresh-duration", 30*time.Second, "fresh: how long to produce")
		rssMB      = flag.Int("rss-mb", 20, "rss: size of each synthetic plan, MB")
		rssEvents  = flag.Int("rss-events", 5, "rss: number of synthetic plans")
		rssLog     = flag.String("rss-log", "", "rss: append the consumer's stderr to this file")
		rssCgroup  = flag.Int("rss-cgroup-mib", 0, "rss: run the consumer in a real memory cgroup of this many MiB (as a container's resources.limits.memory; needs root), so that it sets its own GOMEMLIMIT from it; 0: none")
		rssEnv     = flag.String("rss-env", "", "rss: extra environment of the consumer, comma-separated KEY=VALUE (e.g. GOMEMLIMIT=100MiB); default: none, all defaults")
		readEdges  = flag.Int("reads-edges", 1_000_000, "reads: FEEDS edges to generate")
		readN      = flag.Int("reads-samples", 100, "reads: queries timed per kind")
		readTO     = flag.Duration("reads-timeout", 10*time.Second, "reads: timeout of one query")
		readBudget = flag.Duration("reads-budget", 90*time.Second, "reads: most time spent sampling one query kind")
		keepGraph  = flag.Bool("keep-graph", false, "do not wipe the graph at the end")
		readReuse  = flag.Bool("reads-reuse", false, "reads: time the queries on the graph a previous -keep-graph run generated, if any, instead of generating one (part big: its retention then prunes the oldest day left)")
		anLines    = flag.String("analyze-lines", "3.5_2.12,4.1_2.13", "analyze: Spark lines, comma-separated")
		anTPCDS    = flag.String("tpcds", "dev/tpcds/data", "analyze: the TPC-DS schema and queries (ddl.sql, queries/)")
		anPasses   = flag.Int("analyze-passes", 3, "analyze: passes over the queries (the first warms up)")
		anSchemas  = flag.String("analyze-schemas", "ddl,graph,inferred", "analyze: where the tables' schemas come from, side by side: ddl (the baseline), graph (the captured TPC-DS runs written to Neo4j first), inferred")
		hostileArg = flag.String("hostile-child", "", "internal: extract one hostile plan \"shape,n\" (the hostile part runs itself with it)")
		hostileW   = flag.String("hostile-write-child", "", "internal: write one hostile plan \"shape,n\" to -neo4j (the hostile-write part runs itself with it)")
		hostileE   = flag.Int("hostile-edges", plan.DefaultBudget.Edges, "hostile-write: the edges budget the shapes are sized to")
		lisQueries = flag.String("listener-queries", DefaultListenerQueries, "listener: TPC-DS queries to run as CTAS (BENCH_QUERIES), space-separated; \"all\": the 103")
		lisRounds  = flag.Int("listener-rounds", 1, "listener: measured rounds (each runs every mode once, after a warm-up round)")
		lisJar     = flag.String("listener-jar", "", "listener: the listener jar to measure (BENCH_LISTENER_JAR); default: this tree's, built if missing")
		bigRels    = flag.Int("big-rels", 10_000_000, "big: relationships of the graph the writer builds (make bench-10m)")
		bigRuns    = flag.Int("big-runs", 3, "big: runs of each job, a day apart (the first writes its lineage)")
		prodJobs   = flag.Int("prod-jobs", 1000, "prod: jobs of the production-like corpus")
		prodRuns   = flag.Int("prod-runs", 6, "prod: runs of each job (the first writes new lineage, the others are timed)")
		prodRate   = flag.Float64("prod-fresh-rate", 500, "prod-fresh: events per second of production-like re-runs")
		prodChange = flag.Float64("prod-change", 0.05, "prod: share of runs that change their job's lineage")
		intakeN    = flag.Int("intake-events", 5000, "intake: OpenLineage events posted, one in ten invalid")
		intakeC    = flag.Int("intake-clients", 16, "intake: concurrent HTTP clients")
		uiReaders  = flag.Int("ui-load-readers", 50, "ui-load: concurrent readers of the explorer's API")
		uiLoadDur  = flag.Duration("ui-load-duration", 30*time.Second, "ui-load: how long they read")
		uiThink    = flag.Duration("ui-load-think", time.Second, "ui-load: a reader's mean pause between requests (exponential)")
		hostileP   = flag.Int("hostile-neo4j-pid", 0, "hostile-write: the pid of the local Neo4j, to report the CPU time of each write (e.g. $(cat $COLLINE_DEV_DIR/run/neo4j/pid)); 0: none")
	)
	flag.IntVar(&bigBatch, "big-batch", 500, "big: events per write while the graph is built")
	flag.IntVar(&e2eBatchSize, "e2e-batch", 0, "e2e, fresh: messages per batch (COLLINE_BATCH_SIZE); 0: the default")
	flag.IntVar(&e2eBatchBytes, "e2e-batch-bytes", 0, "e2e, fresh: bytes of message values per batch (COLLINE_BATCH_MAX_BYTES); 0: the default")
	flag.IntVar(&e2eConsumers, "e2e-consumers", 2, "e2e: also replay the corpus with this many consumers in one group, as replicas of the consumer share a topic (1: not)")
	flag.DurationVar(&e2eBatchWait, "e2e-batch-wait", 0, "e2e, fresh: how long a batch may wait for more messages (COLLINE_BATCH_WAIT); 0: the default")
	flag.Parse()
	if *hostileArg != "" {
		if err := hostileChild(*hostileArg); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *hostileW != "" {
		if err := hostileWriteChild(*hostileW, *neo4jURI, *hostileE, *hostileP); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	// The first interrupt stops the part running (the graph is still wiped at the end); a second
	// one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	context.AfterFunc(ctx, stop)
	noServices := map[string]bool{"decode": true, "decodelibs": true, "model": true, "hostile": true, "listener": true,
		"analyze": !strings.Contains(","+*anSchemas+",", ",graph,")}
	if err := run(ctx, *parts, *corpus, *kafkaAddr, *neo4jURI, noServices, func(r *report, env *benchEnv, evs []event, part string) error {
		switch part {
		case "decode":
			return benchDecode(r, evs, *rounds, *roundTime, *cpuProfile, *memProfile)
		case "decodelibs":
			return benchDecodeLibs(r, evs, *rounds, *roundTime)
		case "model":
			return benchModel(r, evs)
		case "e2e":
			return benchE2E(ctx, r, env, evs, *copies, *naiveEdges)
		case "prod":
			return profiled(r, *cpuProfile, func() error { return benchProd(ctx, r, env, evs, *prodJobs, *prodRuns, *prodChange) })
		case "prod-fresh":
			return benchProdFresh(ctx, r, env, evs, *prodJobs, *prodChange, *prodRate, *freshDur)
		case "fresh":
			return benchFresh(ctx, r, env, evs, *freshRate, *freshDur)
		case "rss":
			return benchRSS(ctx, r, env, evs, *rssMB, *rssEvents, *rssLog, *rssEnv, *rssCgroup)
		case "hostile":
			return benchHostile(ctx, r)
		case "hostile-write":
			return benchHostileWrite(ctx, r, env, *hostileE, *hostileP)
		case "analyze":
			return benchAnalyze(ctx, r, env, evs, *anLines, *anTPCDS, *anPasses, *anSchemas)
		case "reads":
			return benchReads(ctx, r, env, *readEdges, *readN, *readTO, *readBudget, *readReuse)
		case "listener":
			return benchListener(ctx, r, env, *lisQueries, *lisRounds, *lisJar)
		case "big":
			return benchBig(ctx, r, env, *bigRels, *bigRuns, *readN, *readTO, *readBudget, *readReuse)
		case "ui":
			return benchUI(ctx, r, env, *readEdges, *readN, *readBudget, *readReuse)
		case "tags":
			return benchTags(ctx, r, env, *readEdges, *readN, *readBudget, *readReuse)
		case "intake":
			return benchIntake(ctx, r, env, intakeLoad{Events: *intakeN, Clients: *intakeC})
		case "ui-load":
			return benchUILoad(ctx, r, env, *readEdges, *readReuse, uiLoad{Readers: *uiReaders, Duration: *uiLoadDur, Think: *uiThink})
		}
		return fmt.Errorf("unknown part %q", part)
	}, *keepGraph); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, parts, corpus, kafkaAddr, neo4jURI string, noServices map[string]bool, do func(*report, *benchEnv, []event, string) error, keepGraph bool) error {
	r := newReport()
	evs, err := loadCorpus(corpus)
	if err != nil {
		return err
	}
	r.notef("machine: %s/%s, %d CPUs (GOMAXPROCS %d), %s; load average %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal(), loadAvg())
	r.notef("corpus: %d events (%d CTAS, %d nested inserts), %.1f MB, from %s", len(evs), countCTAS(evs), len(evs)-countCTAS(evs), float64(totalBytes(evs))/1e6, corpus)

	env := &benchEnv{brokers: strings.Split(kafkaAddr, ","), neo4jURI: neo4jURI}
	needServices := false
	for _, p := range strings.Split(parts, ",") {
		needServices = needServices || !noServices[p]
	}
	if needServices {
		d, err := graph.NewDriver(neo4jURI, "", "")
		if err != nil {
			return err
		}
		defer d.Close(context.Background())
		if err := d.VerifyConnectivity(ctx); err != nil {
			return fmt.Errorf("neo4j at %s (dev/services start): %w", neo4jURI, err)
		}
		env.driver, env.writer = d, graph.NewWriter(d, "")
		env.kafka = stack.NewKafka(env.brokers...)
		defer env.kafka.Close()
		if !keepGraph {
			defer func() {
				if d, err := stack.WipeGraph(context.WithoutCancel(ctx), env.driver); err == nil {
					r.notef("graph wiped at the end in %.1fs", d.Seconds())
				}
			}()
		}
	}
	var failed []string
	for _, p := range strings.Split(parts, ",") {
		start := time.Now()
		r.notef("== %s (load average %s)", p, loadAvg())
		if err := do(r, env, evs, p); err != nil {
			r.notef("%s FAILED: %v", p, err)
			failed = append(failed, p)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		r.notef("== %s done in %.1fs", p, time.Since(start).Seconds())
	}
	r.notef("load average at the end %s", loadAvg())
	fmt.Println()
	r.print(os.Stdout)
	if len(failed) > 0 {
		return fmt.Errorf("parts failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

func countCTAS(evs []event) int {
	n := 0
	for _, e := range evs {
		if !e.nested {
			n++
		}
	}
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory ?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "MemTotal:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:")), "%d", &kb)
			return fmt.Sprintf("%.1f GiB memory", float64(kb)/(1<<20))
		}
	}
	return "memory ?"
}

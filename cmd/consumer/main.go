package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/colline/colline/admin"
	"github.com/colline/colline/config"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/guard"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/openlineage/emit"
	"github.com/colline/colline/openlineage/intake"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/retention"
	"github.com/colline/colline/tags/watch"
)

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "usage: %s (no arguments; configured from the environment)\n\n", os.Args[0])
		config.Usage(os.Stderr)
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "colline consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.Load[config.Config]()
	if err != nil {
		return err
	}
	log := cfg.NewLogger(os.Stderr)
	mem, err := config.SetMemoryLimit(cfg.MemoryLimitRatio)
	if err != nil {
		log.Warn("no memory limit", "err", err)
	}
	log.Info("starting", "version", version, "config", cfg, "memory_limit", mem)

	// The first SIGTERM or interrupt drains; a second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	admin.RegisterBuildInfo(reg, version)
	m := ingest.NewMetrics(reg)

	neo4jTLS, err := cfg.Neo4jTLSConfig()
	if err != nil {
		return err
	}
	driver, err := graph.NewDriver(cfg.Neo4jURI, cfg.Neo4jUser, cfg.Neo4jPassword.Reveal(), neo4jTLS)
	if err != nil {
		return err
	}
	defer driver.Close(context.Background())
	store := graph.NewWriter(driver, cfg.Neo4jDatabase)
	store.Timeout = cfg.Neo4jWriteTimeout
	ingest.CountWriteRetries(reg, store.Retries)

	sec, err := cfg.KafkaSecurity()
	if err != nil {
		return err
	}
	budget := plan.Budget{Depth: cfg.MaxPlanDepth, Nodes: cfg.MaxPlanNodes, Edges: cfg.MaxPlanEdges, Work: cfg.MaxPlanWork}
	topics := []string{cfg.KafkaTopic}
	clusters, _ := cfg.Clusters() // validated by Load
	var processor ingest.Processor = ingest.Extractor{Metrics: m, MaxBytes: cfg.MaxEventBytes, Budget: budget, Clusters: clusters, Reuse: ingest.NewReuse(cfg.PlanReuseMB)}
	var olStep intake.Step
	if cfg.OpenlineageTopic != "" {
		v, err := openlineage.NewValidator()
		if err != nil {
			return err
		}
		aliases, _ := cfg.Aliases() // validated by Load
		olStep = intake.Step{Validator: v, Names: openlineage.Names{Aliases: aliases, Clusters: clusters}, MaxBytes: cfg.MaxEventBytes, Edges: cfg.MaxPlanEdges}
		topics = append(topics, cfg.OpenlineageTopic)
		processor = ingest.Topics{cfg.KafkaTopic: processor, cfg.OpenlineageTopic: intake.Topic{Step: olStep, Metrics: m}}
	}
	reader := ingest.NewReader(ingest.ReaderOptions{
		Brokers: cfg.KafkaBrokers, Topics: topics, Group: cfg.KafkaGroup, MaxBytes: cfg.KafkaMaxBytes, Security: sec,
		SessionTimeout: cfg.KafkaSessionTimeout,
	}, log)
	defer reader.Close()
	deadLetters := ingest.NewProducer(cfg.KafkaBrokers, cfg.KafkaDLQTopic, cfg.KafkaMaxBytes, log, sec)
	defer deadLetters.Close()
	backlog := ingest.Backlog{Brokers: cfg.KafkaBrokers, Topics: topics, Group: cfg.KafkaGroup, Security: sec}

	var emitter *emit.Emitter
	switch {
	case cfg.OpenlineageEmitURL != "":
		emitter = &emit.Emitter{Sink: &emit.HTTP{URL: cfg.OpenlineageEmitURL, APIKey: cfg.OpenlineageEmitApiKey.Reveal(), Timeout: cfg.OpenlineageEmitTimeout},
			Metrics: emit.NewMetrics(reg), Logger: log}
	case cfg.OpenlineageEmitTopic != "":
		out := ingest.NewProducer(cfg.KafkaBrokers, cfg.OpenlineageEmitTopic, cfg.KafkaMaxBytes, log, sec)
		defer out.Close()
		emitter = &emit.Emitter{Sink: &emit.Kafka{Publisher: out}, Metrics: emit.NewMetrics(reg), Logger: log}
	}

	params := ingest.Params{
		Fetcher: reader, Committer: reader, Writer: store, DeadLetters: deadLetters, Processor: processor,
		Metrics: m, Logger: log, Version: version,
		BatchSize: cfg.BatchSize, BatchWait: cfg.BatchWait, BatchMaxBytes: cfg.BatchMaxBytes, ShutdownTimeout: cfg.ShutdownTimeout,
		SlowWrite:     cfg.Neo4jSlowWrite,
		MaxEventBytes: cfg.MaxEventBytes,
		Budget:        budget, // BatchMaxEdges follows its edges budget
		Setup:         store.Bootstrap,
		ExitWhenIdle:  cfg.ExitWhenIdle,
		Backlog:       backlog,
		NoPacing:      cfg.MemoryLimitRatio == 0, // COLLINE_MEMORY_LIMIT_RATIO=0: no soft limit at all
	}
	// after each write: the tag policy check (docs/tags.md), then the OpenLineage events, with the
	// tags the written columns carry
	tagGraph := graph.NewReader(driver, cfg.Neo4jDatabase).Tags()
	watcher := &watch.Watcher{Graph: tagGraph, Metrics: watch.NewMetrics(reg), Logger: log}
	if emitter != nil {
		emitter.Tags = tagGraph
		watcher.Next = emitter
	}
	params.Emitter = watcher
	loop, err := ingest.New(params)
	if err != nil {
		return err
	}

	srv := admin.NewServer(cfg.HTTPAddr, admin.Handler(reg, log,
		admin.Check{Name: "consumer", Fn: func(context.Context) error { return loop.Ready() }},
		admin.Check{Name: "neo4j", Fn: store.Ping},
		admin.Check{Name: "kafka", Fn: func(ctx context.Context) error { return ingest.Ping(ctx, cfg.KafkaBrokers, cfg.KafkaTopic, sec) }},
	), log)
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("COLLINE_HTTP_ADDR: %w", err)
	}
	go srv.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	log.Info("serving", "addr", ln.Addr().String())

	if cfg.OpenlineageHTTPAddr != "" {
		var keys intake.Keys
		if cfg.OpenlineageHTTPKeysFile != "" {
			if keys, err = intake.LoadKeys(cfg.OpenlineageHTTPKeysFile); err != nil {
				return fmt.Errorf("COLLINE_OPENLINEAGE_HTTP_KEYS_FILE: %w", err)
			}
		}
		pub := ingest.NewProducer(cfg.KafkaBrokers, cfg.OpenlineageTopic, cfg.KafkaMaxBytes, log, sec)
		defer pub.Close()
		h := &intake.Handler{Step: olStep, Publisher: pub, APIKey: cfg.OpenlineageHTTPApiKey.Reveal(), Keys: keys,
			MaxBytes: int64(cfg.OpenlineageHTTPMaxBytes), MaxConcurrent: cfg.OpenlineageHTTPMaxConcurrent, Metrics: intake.NewMetrics(reg), Logger: log}
		api := h.Server(cfg.OpenlineageHTTPAddr, guard.Timeouts{}, log)
		aln, err := net.Listen("tcp", cfg.OpenlineageHTTPAddr)
		if err != nil {
			return fmt.Errorf("COLLINE_OPENLINEAGE_HTTP_ADDR: %w", err)
		}
		if cfg.OpenlineageHTTPTlsCertFile != "" {
			go api.ServeTLS(aln, cfg.OpenlineageHTTPTlsCertFile, cfg.OpenlineageHTTPTlsKeyFile)
		} else {
			go api.Serve(aln)
		}
		if h.Open() {
			log.Warn("the OpenLineage endpoint takes events from anyone, who may then write or drop any job's and dataset's lineage; set COLLINE_OPENLINEAGE_HTTP_KEYS_FILE (a key per producer, bound to what it may write) or COLLINE_OPENLINEAGE_HTTP_API_KEY",
				"addr", aln.Addr().String())
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			api.Shutdown(sctx)
		}()
		log.Info("serving OpenLineage", "addr", aln.Addr().String(), "path", intake.Path, "topic", cfg.OpenlineageTopic, "keys", len(keys),
			"api_key", cfg.OpenlineageHTTPApiKey != "", "tls", cfg.OpenlineageHTTPTlsCertFile != "")
	}

	mctx, stopMonitor := context.WithCancel(context.Background())
	monitored := make(chan struct{})
	go func() {
		defer close(monitored)
		ingest.Monitor{Reader: reader, Lag: backlog, Metrics: m, Logger: log, Interval: cfg.MetricsInterval}.Run(mctx)
	}()
	defer func() { stopMonitor(); <-monitored }()

	// Retention prunes on its own goroutine and transactions; it stops with the monitor.
	pruner := &retention.Pruner{Graph: store, Metrics: retention.NewMetrics(reg), Logger: log, Policy: retention.Policy{
		RunDays: cfg.RetentionRunDays, EdgeDays: cfg.RetentionEdgeDays, EdgeAction: cfg.RetentionEdgeAction,
		Interval: cfg.RetentionInterval, BatchSize: cfg.RetentionBatchSize,
	}, Ready: loop.Ready}
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		pruner.Run(mctx)
	}()
	defer func() { stopMonitor(); <-pruned }()

	if err := loop.Run(ctx); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

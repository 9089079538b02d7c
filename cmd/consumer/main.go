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
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/plan"
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
	cfg, err := config.Load()
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

	var sec ingest.Security
	if sec.TLS, err = cfg.KafkaTLSConfig(); err != nil {
		return err
	}
	if sec.SASL, err = cfg.KafkaSASL(); err != nil {
		return err
	}
	reader := ingest.NewReader(ingest.ReaderOptions{
		Brokers: cfg.KafkaBrokers, Topic: cfg.KafkaTopic, Group: cfg.KafkaGroup, MaxBytes: cfg.KafkaMaxBytes, Security: sec,
	}, log)
	defer reader.Close()
	deadLetters := ingest.NewDeadLetterWriter(cfg.KafkaBrokers, cfg.KafkaDLQTopic, cfg.KafkaMaxBytes, log, sec)
	defer deadLetters.Close()
	backlog := ingest.Backlog{Brokers: cfg.KafkaBrokers, Topic: cfg.KafkaTopic, Group: cfg.KafkaGroup, Security: sec}

	loop, err := ingest.New(ingest.Params{
		Fetcher: reader, Committer: reader, Writer: store, DeadLetters: deadLetters,
		Metrics: m, Logger: log, Version: version,
		BatchSize: cfg.BatchSize, BatchWait: cfg.BatchWait, BatchMaxBytes: cfg.BatchMaxBytes, ShutdownTimeout: cfg.ShutdownTimeout,
		MaxEventBytes: cfg.MaxEventBytes,
		Budget:        plan.Budget{Depth: cfg.MaxPlanDepth, Nodes: cfg.MaxPlanNodes, Edges: cfg.MaxPlanEdges, Work: cfg.MaxPlanWork},
		Setup:         store.Bootstrap,
		ExitWhenIdle:  cfg.ExitWhenIdle,
		Backlog:       backlog,
	})
	if err != nil {
		return err
	}

	srv := admin.NewServer(cfg.HTTPAddr, admin.Handler(reg,
		admin.Check{Name: "consumer", Fn: func(context.Context) error { return loop.Ready() }},
		admin.Check{Name: "neo4j", Fn: store.Ping},
		admin.Check{Name: "kafka", Fn: func(ctx context.Context) error { return ingest.Ping(ctx, cfg.KafkaBrokers, cfg.KafkaTopic, sec) }},
	))
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

	mctx, stopMonitor := context.WithCancel(context.Background())
	monitored := make(chan struct{})
	go func() {
		defer close(monitored)
		ingest.Monitor{Reader: reader, Lag: backlog, Metrics: m, Logger: log, Interval: cfg.MetricsInterval}.Run(mctx)
	}()
	defer func() { stopMonitor(); <-monitored }()

	if err := loop.Run(ctx); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

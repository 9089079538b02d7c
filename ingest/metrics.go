package ingest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// Label values. All labels have small fixed value sets, except class, which is capped.
const (
	resultOK         = "ok"
	resultDeadLetter = "dead_letter"

	stageDecode     = process.StageDecode
	stageExtract    = process.StageExtract
	stageReuse      = process.StageReuse
	stagePrepare    = "prepare"
	stageWrite      = "write"
	stageCommit     = "commit"
	stageDeadLetter = "dead_letter"
	stageEmit       = "emit"

	opFetch      = "fetch"
	opWrite      = "write"
	opCommit     = "commit"
	opDeadLetter = "dead_letter"
	opBacklog    = "backlog"
	opSetup      = "setup"
	opEmit       = "emit"
)

// nodeLabels are the values of the label label of nodes_written_total.
var nodeLabels = []string{"Dataset", "Column", "Job", "Run"}

// maxClasses caps the distinct values of the class label of unknown plan nodes; further classes
// are counted as "other".
const maxClasses = 200

// Metrics are the loop's Prometheus metrics. Create them once per registry with NewMetrics.
type Metrics struct {
	messages    *prometheus.CounterVec
	stage       *prometheus.HistogramVec
	batch       prometheus.Histogram
	edges       prometheus.Counter
	deadLetters *prometheus.CounterVec
	unknown     *prometheus.CounterVec
	overBudget  *prometheus.CounterVec
	ignored     *prometheus.CounterVec
	retries     *prometheus.CounterVec
	lastEvent   prometheus.Gauge
	ready       prometheus.Gauge
	nodes       *prometheus.CounterVec
	eventAge    prometheus.Histogram
	lagRecords  *prometheus.GaugeVec
	lagSeconds  prometheus.Gauge
	reader      readerMetrics

	// The graph write in progress: its start (Unix nanoseconds, 0 when none) and its events.
	writeStart, writeEvents atomic.Int64

	mu       sync.Mutex
	classes  map[string]bool
	lagParts map[Partition]bool // partitions with a lag_records series
}

// NewMetrics creates the loop metrics and registers them on reg (nil: not registered). The fixed
// series are created at once, so that rates and alerts see zeros instead of absent series.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	d := define{reg}
	m := &Metrics{
		messages: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "messages_total",
			Help: "Messages handled and committed, by result: ok (in the graph) or dead_letter (sent to the dead-letter topic)."},
			"result", resultOK, resultDeadLetter),
		stage: d.histograms(prometheus.HistogramOpts{Namespace: "colline", Subsystem: "ingest", Name: "stage_duration_seconds",
			Help:    "Time spent per stage: decode and extract per message, or reuse for a message whose plan's lineage was reused (COLLINE_PLAN_REUSE_MB); prepare per batch (the part of the write that needs no graph, done while the batch before is written); write, emit (OpenLineage, when enabled), dead_letter and commit per batch (retries included).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 17)}, // 0.5ms .. 33s
			"stage", stageDecode, stageExtract, stageReuse, stagePrepare, stageWrite, stageEmit, stageCommit, stageDeadLetter),
		batch: d.histogram(prometheus.HistogramOpts{Namespace: "colline", Subsystem: "ingest", Name: "batch_messages",
			Help: "Messages per batch.", Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}}),
		edges: d.counter(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "edges_written_total",
			Help: "Lineage edges of the events written to the graph: column edges (FEEDS) and row-level dependencies (DECIDES_ROWS); an edge seen again in a later event counts again."}),
		deadLetters: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "dead_letters_total",
			Help: "Messages sent to the dead-letter topic, by reason."},
			"reason", process.Reasons...),
		unknown: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "plan", Name: "unknown_nodes_total",
			Help: "Plan nodes of a class no specific rule knows, handled by the generic rule, by class (capped; the rest is \"other\")."},
			"class"),
		overBudget: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "plan", Name: "over_budget_total",
			Help: "Events over an extraction budget (COLLINE_MAX_PLAN_*), by budget: written with their table-level lineage only (reads, writes and their columns; the run's overBudget names the budget, its writes have columnLineage 'missing')."},
			"budget", plan.BudgetDepth, plan.BudgetNodes, plan.BudgetEdges, plan.BudgetWork),
		ignored: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "openlineage", Name: "ignored_facet_problems_total",
			Help: "Problems of OpenLineage events taken all the same, because they lie in facets colline does not read, by the schema broken (a facet schema's name, or OpenLineage for the core schema)."},
			"schema"),
		retries: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "retries_total",
			Help: "Retries after transient failures, by operation: write (Neo4j), commit and fetch (Kafka), dead_letter (Kafka), backlog and setup (start-up)."},
			"operation", opFetch, opWrite, opEmit, opCommit, opDeadLetter, opBacklog, opSetup),
		lastEvent: d.gauge(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "ingest", Name: "last_event_timestamp_seconds",
			Help: "Event time (query end) of the newest event committed; time() minus this is the lineage delay."}),
		ready: d.gauge(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "ingest", Name: "ready",
			Help: "1 while the loop runs, its setup is done and no operation is being retried, else 0."}),
		nodes: d.counters(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "nodes_written_total",
			Help: "Graph nodes of the events written, by label: Dataset, Column, Job, Run (a node seen again in a later event counts again)."},
			"label", nodeLabels...),
		eventAge: d.histogram(prometheus.HistogramOpts{Namespace: "colline", Subsystem: "ingest", Name: "event_age_seconds",
			Help:    "Age of each event written, when its batch is committed: now minus the query end time (emittedAt when absent).",
			Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600}}),
		lagRecords: d.gauges(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "ingest", Name: "lag_records",
			Help: "Records of the source topics not yet committed by the consumer group, by topic and partition (end offset minus committed offset), polled from Kafka. Every consumer of the group reports the whole group: aggregate with max by (topic, partition)."},
			"topic", "partition"),
		lagSeconds: d.gauge(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "ingest", Name: "lag_seconds",
			Help: "Seconds between the Kafka timestamp of the oldest record of the last committed batch and its commit; 0 once the group has no lag."}),
		reader: readerMetrics{
			messages:   d.counter(readerOpts("messages_total", "Messages the Kafka reader fetched (kafka-go ReaderStats.Messages).")),
			bytes:      d.counter(readerOpts("message_bytes_total", "Bytes of the messages the Kafka reader fetched (kafka-go ReaderStats.Bytes).")),
			fetches:    d.counter(readerOpts("fetches_total", "Fetch requests of the Kafka reader (kafka-go ReaderStats.Fetches).")),
			errors:     d.counter(readerOpts("errors_total", "Errors of the Kafka reader (kafka-go ReaderStats.Errors).")),
			rebalances: d.counter(readerOpts("rebalances_total", "Consumer group rebalances the reader took part in (kafka-go ReaderStats.Rebalances).")),
			timeouts:   d.counter(readerOpts("timeouts_total", "Fetch timeouts of the Kafka reader (kafka-go ReaderStats.Timeouts).")),
			dials:      d.counter(readerOpts("dials_total", "Connections the Kafka reader opened (kafka-go ReaderStats.Dials).")),
			queue:      d.gauge(prometheus.GaugeOpts(readerOpts("queue_messages", "Messages fetched and waiting for the loop (kafka-go ReaderStats.QueueLength)."))),
		},
		classes: map[string]bool{},
	}
	d.gaugeFunc(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "ingest", Name: "write_in_progress_seconds",
		Help: "How long the Neo4j write in progress has been running (0 when none): a held lock or a long transaction in Neo4j shows here first."},
		func() float64 { d, _ := m.writeRunning(); return d.Seconds() })
	return m
}

// CountWriteRetries registers the count of write transactions run again after
// a transient failure (count: graph.Writer.Retries) on reg (nil: not registered).
func CountWriteRetries(reg prometheus.Registerer, count func() int64) {
	define{reg}.counterFunc(prometheus.CounterOpts{Namespace: "colline", Subsystem: "ingest", Name: "write_transaction_retries_total",
		Help: "Write transactions run again after a transient failure (a deadlock, at once; a lost connection, by the Neo4j driver), before the write succeeded or failed; a rise with retention passes or more replicas means lock contention."},
		func() float64 { return float64(count()) })
}

// writeRunning returns how long the graph write in progress has been running and its events
// (0, 0 when none).
func (m *Metrics) writeRunning() (time.Duration, int) {
	start := m.writeStart.Load()
	if start == 0 {
		return 0, 0
	}
	return time.Since(time.Unix(0, start)), int(m.writeEvents.Load())
}

// readerOpts are the options of kafka-go's reader statistics (series with no labels, always
// present on /metrics).
func readerOpts(name, help string) prometheus.CounterOpts {
	return prometheus.CounterOpts{Namespace: "colline", Subsystem: "kafka_reader", Name: name, Help: help}
}

// define makes and registers the metrics of this package on reg (when not nil): one place for
// registration, so no metric is defined and forgotten, and for the series of a vector's label
// that exist from the start. Each definition is a prometheus.*Opts literal, which
// deploy/metrics_test.go reads from the source.
type define struct{ reg prometheus.Registerer }

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func (d define) counter(o prometheus.CounterOpts) prometheus.Counter {
	return register(d.reg, prometheus.NewCounter(o))
}

func (d define) counters(o prometheus.CounterOpts, label string, values ...string) *prometheus.CounterVec {
	v := register(d.reg, prometheus.NewCounterVec(o, []string{label}))
	for _, x := range values {
		v.WithLabelValues(x)
	}
	return v
}

func (d define) counterFunc(o prometheus.CounterOpts, f func() float64) {
	register(d.reg, prometheus.NewCounterFunc(o, f))
}

func (d define) gauge(o prometheus.GaugeOpts) prometheus.Gauge {
	return register(d.reg, prometheus.NewGauge(o))
}

func (d define) gaugeFunc(o prometheus.GaugeOpts, f func() float64) {
	register(d.reg, prometheus.NewGaugeFunc(o, f))
}

func (d define) gauges(o prometheus.GaugeOpts, labels ...string) *prometheus.GaugeVec {
	return register(d.reg, prometheus.NewGaugeVec(o, labels))
}

func (d define) histogram(o prometheus.HistogramOpts) prometheus.Histogram {
	return register(d.reg, prometheus.NewHistogram(o))
}

func (d define) histograms(o prometheus.HistogramOpts, label string, values ...string) *prometheus.HistogramVec {
	v := register(d.reg, prometheus.NewHistogramVec(o, []string{label}))
	for _, x := range values {
		v.WithLabelValues(x)
	}
	return v
}

// ObserveStage records the time one stage of one message took (process.StageDecode,
// process.StageExtract or process.StageReuse): a processing step's Observe.
func (m *Metrics) ObserveStage(stage string, d time.Duration) {
	m.stage.WithLabelValues(stage).Observe(d.Seconds())
}

// CountIgnored counts one problem of an OpenLineage event taken all the same, in a facet colline
// does not read, by the schema it breaks (schema names come from the embedded spec: bounded).
func (m *Metrics) CountIgnored(schema string) { m.ignored.WithLabelValues(schema).Inc() }

// CountOverBudget counts an event whose lineage is table-level because it was over a budget.
func (m *Metrics) CountOverBudget(lin *plan.Lineage) {
	if lin != nil && lin.OverBudget != nil {
		m.overBudget.WithLabelValues(lin.OverBudget.Budget).Inc()
	}
}

// countUnknown adds the unknown node classes of one event.
func (m *Metrics) countUnknown(unknown map[string]int) {
	if len(unknown) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for class, n := range unknown {
		if !m.classes[class] {
			if len(m.classes) >= maxClasses {
				class = "other"
			} else {
				m.classes[class] = true
			}
		}
		m.unknown.WithLabelValues(class).Add(float64(n))
	}
}

// readerMetrics are kafka-go's reader statistics. Its counters are reset on every Reader.Stats
// call, so they are fed as deltas by one poller (Monitor).
type readerMetrics struct {
	messages, bytes, fetches, errors, rebalances, timeouts, dials prometheus.Counter
	queue                                                         prometheus.Gauge
}

// add feeds one kafka-go statistics snapshot: its counters are deltas since the previous one.
func (r readerMetrics) add(s kafka.ReaderStats) {
	r.messages.Add(float64(s.Messages))
	r.bytes.Add(float64(s.Bytes))
	r.fetches.Add(float64(s.Fetches))
	r.errors.Add(float64(s.Errors))
	r.rebalances.Add(float64(s.Rebalances))
	r.timeouts.Add(float64(s.Timeouts))
	r.dials.Add(float64(s.Dials))
	r.queue.Set(float64(s.QueueLength))
}

// setLag replaces the lag series with lag (per topic and partition).
func (m *Metrics) setLag(lag map[Partition]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	for p, n := range lag {
		m.lagRecords.WithLabelValues(p.Topic, strconv.Itoa(p.ID)).Set(float64(n))
		total += n
	}
	for p := range m.lagParts {
		if _, ok := lag[p]; !ok {
			m.lagRecords.DeleteLabelValues(p.Topic, strconv.Itoa(p.ID))
		}
	}
	m.lagParts = map[Partition]bool{}
	for p := range lag {
		m.lagParts[p] = true
	}
	if total == 0 {
		m.lagSeconds.Set(0)
	}
}

// countNodes adds the nodes one written event carries: its datasets and their columns, its job
// and its run.
func (m *Metrics) countNodes(it record.Item) {
	if it.Lineage == nil {
		return
	}
	var datasets, columns int
	for _, d := range it.Lineage.Reads {
		datasets, columns = datasets+1, columns+len(d.Columns)
	}
	for _, w := range it.Lineage.Writes {
		datasets, columns = datasets+1, columns+len(w.Columns)
	}
	m.nodes.WithLabelValues("Dataset").Add(float64(datasets))
	m.nodes.WithLabelValues("Column").Add(float64(columns))
	m.nodes.WithLabelValues("Job").Inc()
	if it.Run() != "" {
		m.nodes.WithLabelValues("Run").Inc()
	}
}

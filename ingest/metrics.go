package ingest

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/process"
)

// Label values. All labels have small fixed value sets, except class, which is capped.
const (
	resultOK         = "ok"
	resultDeadLetter = "dead_letter"

	stageDecode     = process.StageDecode
	stageExtract    = process.StageExtract
	stageWrite      = "write"
	stageCommit     = "commit"
	stageDeadLetter = "dead_letter"

	opFetch      = "fetch"
	opWrite      = "write"
	opCommit     = "commit"
	opDeadLetter = "dead_letter"
	opBacklog    = "backlog"
	opSetup      = "setup"
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
	retries     *prometheus.CounterVec
	lastEvent   prometheus.Gauge
	ready       prometheus.Gauge
	nodes       *prometheus.CounterVec
	eventAge    prometheus.Histogram
	lagRecords  *prometheus.GaugeVec
	lagSeconds  prometheus.Gauge
	reader      readerMetrics

	mu       sync.Mutex
	classes  map[string]bool
	lagParts map[int]bool // partitions with a lag_records series
}

// NewMetrics creates the loop metrics and registers them on reg (nil: not registered). The fixed
// series are created at once, so that rates and alerts see zeros instead of absent series.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	d := define{reg}
	return &Metrics{
		messages: d.counters("ingest", "messages_total",
			"Messages handled and committed, by result: ok (in the graph) or dead_letter (sent to the dead-letter topic).",
			"result", resultOK, resultDeadLetter),
		stage: d.histograms("ingest", "stage_duration_seconds",
			"Time spent per stage: decode and extract per message; write, dead_letter and commit per batch (retries included).",
			prometheus.ExponentialBuckets(0.0005, 2, 17), // 0.5ms .. 33s
			"stage", stageDecode, stageExtract, stageWrite, stageCommit, stageDeadLetter),
		batch: d.histogram("ingest", "batch_messages", "Messages per batch.",
			[]float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}),
		edges: d.counter("ingest", "edges_written_total",
			"Column edges of the events written to the graph (an edge seen again in a later event counts again)."),
		deadLetters: d.counters("ingest", "dead_letters_total", "Messages sent to the dead-letter topic, by reason.",
			"reason", process.Reasons...),
		unknown: d.counters("plan", "unknown_nodes_total",
			"Plan nodes of a class no specific rule knows, handled by the generic rule, by class (capped; the rest is \"other\").",
			"class"),
		retries: d.counters("ingest", "retries_total",
			"Retries after transient failures, by operation: write (Neo4j), commit and fetch (Kafka), dead_letter (Kafka), backlog and setup (start-up).",
			"operation", opFetch, opWrite, opCommit, opDeadLetter, opBacklog, opSetup),
		lastEvent: d.gauge("ingest", "last_event_timestamp_seconds",
			"Event time (query end) of the newest event committed; time() minus this is the lineage delay."),
		ready: d.gauge("ingest", "ready",
			"1 while the loop runs, its setup is done and no operation is being retried, else 0."),
		nodes: d.counters("ingest", "nodes_written_total",
			"Graph nodes of the events written, by label: Dataset, Column, Job, Run (a node seen again in a later event counts again).",
			"label", nodeLabels...),
		eventAge: d.histogram("ingest", "event_age_seconds",
			"Age of each event written, when its batch is committed: now minus the query end time (emittedAt when absent).",
			[]float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600}),
		lagRecords: d.gauges("ingest", "lag_records",
			"Records of the source topic not yet committed by the consumer group, by partition (end offset minus committed offset), polled from Kafka. Every consumer of the group reports the whole group: aggregate with max by (partition).",
			"partition"),
		lagSeconds: d.gauge("ingest", "lag_seconds",
			"Seconds between the Kafka timestamp of the oldest record of the last committed batch and its commit; 0 once the group has no lag."),
		reader: readerMetrics{
			messages:   d.counter("kafka_reader", "messages_total", "Messages the Kafka reader fetched (kafka-go ReaderStats.Messages)."),
			bytes:      d.counter("kafka_reader", "message_bytes_total", "Bytes of the messages the Kafka reader fetched (kafka-go ReaderStats.Bytes)."),
			fetches:    d.counter("kafka_reader", "fetches_total", "Fetch requests of the Kafka reader (kafka-go ReaderStats.Fetches)."),
			errors:     d.counter("kafka_reader", "errors_total", "Errors of the Kafka reader (kafka-go ReaderStats.Errors)."),
			rebalances: d.counter("kafka_reader", "rebalances_total", "Consumer group rebalances the reader took part in (kafka-go ReaderStats.Rebalances)."),
			timeouts:   d.counter("kafka_reader", "timeouts_total", "Fetch timeouts of the Kafka reader (kafka-go ReaderStats.Timeouts)."),
			dials:      d.counter("kafka_reader", "dials_total", "Connections the Kafka reader opened (kafka-go ReaderStats.Dials)."),
			queue:      d.gauge("kafka_reader", "queue_messages", "Messages fetched and waiting for the loop (kafka-go ReaderStats.QueueLength)."),
		},
		classes: map[string]bool{},
	}
}

// define makes the metrics of this package: colline_<subsystem>_<name>, registered on reg (when
// not nil); a vector with the given label, its listed values created at once.
type define struct{ reg prometheus.Registerer }

func (d define) opts(subsystem, name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "colline", Subsystem: subsystem, Name: name, Help: help}
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func (d define) counter(subsystem, name, help string) prometheus.Counter {
	return register(d.reg, prometheus.NewCounter(prometheus.CounterOpts(d.opts(subsystem, name, help))))
}

func (d define) counters(subsystem, name, help, label string, values ...string) *prometheus.CounterVec {
	v := register(d.reg, prometheus.NewCounterVec(prometheus.CounterOpts(d.opts(subsystem, name, help)), []string{label}))
	for _, x := range values {
		v.WithLabelValues(x)
	}
	return v
}

func (d define) gauge(subsystem, name, help string) prometheus.Gauge {
	return register(d.reg, prometheus.NewGauge(prometheus.GaugeOpts(d.opts(subsystem, name, help))))
}

func (d define) gauges(subsystem, name, help, label string) *prometheus.GaugeVec {
	return register(d.reg, prometheus.NewGaugeVec(prometheus.GaugeOpts(d.opts(subsystem, name, help)), []string{label}))
}

func (d define) histogramOpts(subsystem, name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{Namespace: "colline", Subsystem: subsystem, Name: name, Help: help, Buckets: buckets}
}

func (d define) histogram(subsystem, name, help string, buckets []float64) prometheus.Histogram {
	return register(d.reg, prometheus.NewHistogram(d.histogramOpts(subsystem, name, help, buckets)))
}

func (d define) histograms(subsystem, name, help string, buckets []float64, label string, values ...string) *prometheus.HistogramVec {
	v := register(d.reg, prometheus.NewHistogramVec(d.histogramOpts(subsystem, name, help, buckets), []string{label}))
	for _, x := range values {
		v.WithLabelValues(x)
	}
	return v
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

// setLag replaces the lag series with lag (per partition).
func (m *Metrics) setLag(lag map[int]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	for p, n := range lag {
		m.lagRecords.WithLabelValues(strconv.Itoa(p)).Set(float64(n))
		total += n
	}
	for p := range m.lagParts {
		if _, ok := lag[p]; !ok {
			m.lagRecords.DeleteLabelValues(strconv.Itoa(p))
		}
	}
	m.lagParts = map[int]bool{}
	for p := range lag {
		m.lagParts[p] = true
	}
	if total == 0 {
		m.lagSeconds.Set(0)
	}
}

// countNodes adds the nodes one written event carries: its datasets and their columns, its job
// and its run.
func (m *Metrics) countNodes(it graph.Item) {
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
	m.nodes.WithLabelValues("Run").Inc()
}

package ingest

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Label values. All labels have small fixed value sets, except class, which is capped.
const (
	resultOK         = "ok"
	resultDeadLetter = "dead_letter"

	stageDecode     = "decode"
	stageExtract    = "extract"
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

	mu      sync.Mutex
	classes map[string]bool
}

// NewMetrics creates the loop metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "messages_total",
			Help: "Messages handled and committed, by result: ok (in the graph) or dead_letter (sent to the dead-letter topic).",
		}, []string{"result"}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "stage_duration_seconds",
			Help:    "Time spent per stage: decode and extract per message; write, dead_letter and commit per batch (retries included).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 17), // 0.5ms .. 33s
		}, []string{"stage"}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "batch_messages",
			Help:    "Messages per batch.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}),
		edges: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "edges_written_total",
			Help: "Column edges of the events written to the graph (an edge seen again in a later event counts again).",
		}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "dead_letters_total",
			Help: "Messages sent to the dead-letter topic, by reason.",
		}, []string{"reason"}),
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "colline", Subsystem: "plan", Name: "unknown_nodes_total",
			Help: "Plan nodes of a class no specific rule knows, handled by the generic rule, by class (capped; the rest is \"other\").",
		}, []string{"class"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "retries_total",
			Help: "Retries after transient failures, by operation: write (Neo4j), commit and fetch (Kafka), dead_letter (Kafka), backlog and setup (start-up).",
		}, []string{"operation"}),
		lastEvent: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "last_event_timestamp_seconds",
			Help: "Event time (query end) of the newest event committed; time() minus this is the lineage delay.",
		}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "colline", Subsystem: "ingest", Name: "ready",
			Help: "1 while the loop runs, its setup is done and no operation is being retried, else 0.",
		}),
		classes: map[string]bool{},
	}
	// Pre-create the fixed series so that rates and alerts see zeros instead of absent series.
	for _, r := range []string{resultOK, resultDeadLetter} {
		m.messages.WithLabelValues(r)
	}
	for _, s := range []string{stageDecode, stageExtract, stageWrite, stageCommit, stageDeadLetter} {
		m.stage.WithLabelValues(s)
	}
	for _, r := range reasons {
		m.deadLetters.WithLabelValues(r)
	}
	for _, o := range []string{opFetch, opWrite, opCommit, opDeadLetter, opBacklog, opSetup} {
		m.retries.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.stage, m.batch, m.edges, m.deadLetters, m.unknown, m.retries, m.lastEvent, m.ready)
	}
	return m
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

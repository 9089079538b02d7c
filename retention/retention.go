package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colline/colline/graph"
)

// Edge actions: what a pass does with a relationship not seen for EdgeDays.
const (
	ActionStale  = "stale"  // set stale: true on it (the writer clears it when an event confirms it again)
	ActionDelete = "delete" // delete it
)

// Defaults of Policy.
const (
	DefaultInterval   = time.Hour
	DefaultBatchSize  = 1000
	DefaultEdgeAction = ActionStale
)

// pause is the wait between two batches of a pass: room for the consumer's writes.
const pause = 50 * time.Millisecond

// attempts of one batch before a pass gives up until the next interval.
const attempts = 5

// Policy is what to prune. A zero RunDays or EdgeDays keeps that kind for ever.
type Policy struct {
	RunDays    int           // delete runs whose query ended more than this many days ago
	EdgeDays   int           // mark stale or delete FEEDS and DECIDES_ROWS not seen for this many days
	EdgeAction string        // ActionStale or ActionDelete. Default: DefaultEdgeAction.
	Interval   time.Duration // time between passes. Default: DefaultInterval.
	BatchSize  int           // most elements per transaction. Default: DefaultBatchSize.
}

// Enabled tells whether the policy prunes anything.
func (p Policy) Enabled() bool { return p.RunDays > 0 || p.EdgeDays > 0 }

// store is satisfied by *graph.Writer.
type store interface {
	PruneRuns(ctx context.Context, before time.Time, limit int) (int64, error)
	PruneEdges(ctx context.Context, relType string, before time.Time, limit int, del bool) (int64, error)
	PruneLineages(ctx context.Context, before time.Time, limit int, del bool) (lineages, feeds, decides int64, err error)
}

// Pruner runs a Policy against the graph.
type Pruner struct {
	Graph   store            // Required: the *graph.Writer.
	Policy  Policy           // What to prune.
	Metrics *Metrics         // Default: NewMetrics(nil), not registered.
	Logger  *slog.Logger     // Default: discard.
	Now     func() time.Time // The clock the ages are measured against. Default: time.Now.
	// Ready, when set, gates every pass of Run: it waits until Ready returns nil (the consumer's
	// setup done, Neo4j and Kafka answering), so a pass never runs on a graph the consumer refused
	// or fights an outage. Once does not look at it.
	Ready func() error
}

// Result is what one pass pruned.
type Result struct {
	Runs        int64 // runs deleted
	Feeds       int64 // FEEDS marked stale or deleted
	DecidesRows int64 // DECIDES_ROWS marked stale or deleted
	Batches     int   // transactions
	Largest     int64 // most elements one transaction touched (at most BatchSize)
}

func (p *Pruner) defaults() {
	if p.Metrics == nil {
		p.Metrics = NewMetrics(nil)
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Policy.EdgeAction == "" {
		p.Policy.EdgeAction = DefaultEdgeAction
	}
	if p.Policy.Interval <= 0 {
		p.Policy.Interval = DefaultInterval
	}
	if p.Policy.BatchSize <= 0 {
		p.Policy.BatchSize = DefaultBatchSize
	}
}

// Run prunes once at once and then every Interval until ctx ends. It does nothing when the policy
// is not Enabled.
func (p *Pruner) Run(ctx context.Context) {
	p.defaults()
	if !p.Policy.Enabled() {
		return
	}
	t := time.NewTicker(p.Policy.Interval)
	defer t.Stop()
	for {
		for p.Ready != nil && p.Ready() != nil {
			if !sleep(ctx, time.Second) {
				return
			}
		}
		p.Once(ctx) // errors are logged and counted; the next pass starts over
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs one pass: runs first, then the current lineage of each job not confirmed for EdgeDays
// (its LINEAGE: marked stale with its current edges, or its current edges superseded for the
// next step to delete), then the superseded FEEDS, then DECIDES_ROWS, each in batches until a
// batch finds fewer than BatchSize elements (LINEAGEs, for the second step).
func (p *Pruner) Once(ctx context.Context) (Result, error) {
	p.defaults()
	var res Result
	start := p.Now()
	day := 24 * time.Hour
	del := p.Policy.EdgeAction == ActionDelete
	action := "marked_stale"
	if del {
		action = "deleted"
	}
	type step struct {
		element, action string
		days            int
		count           *int64
		prune           func(ctx context.Context, before time.Time, limit int) (int64, error)
	}
	steps := []step{
		{"Run", "deleted", p.Policy.RunDays, &res.Runs, p.Graph.PruneRuns},
		{graph.Lineage, action, p.Policy.EdgeDays, new(int64), func(ctx context.Context, before time.Time, limit int) (int64, error) {
			n, feeds, decides, err := p.Graph.PruneLineages(ctx, before, limit, del)
			if err == nil && !del { // deleting: the edges are counted when the next steps delete them
				res.Feeds += feeds
				res.DecidesRows += decides
				p.Metrics.pruned.WithLabelValues(graph.Feeds, action).Add(float64(feeds))
				p.Metrics.pruned.WithLabelValues(graph.DecidesRows, action).Add(float64(decides))
			}
			return n, err
		}},
		{graph.Feeds, action, p.Policy.EdgeDays, &res.Feeds, func(ctx context.Context, before time.Time, limit int) (int64, error) {
			return p.Graph.PruneEdges(ctx, graph.Feeds, before, limit, del)
		}},
		{graph.DecidesRows, action, p.Policy.EdgeDays, &res.DecidesRows, func(ctx context.Context, before time.Time, limit int) (int64, error) {
			return p.Graph.PruneEdges(ctx, graph.DecidesRows, before, limit, del)
		}},
	}
	var err error
	for _, s := range steps {
		if s.days <= 0 {
			continue
		}
		before := start.Add(-time.Duration(s.days) * day)
		for err == nil {
			var n int64
			n, err = p.batch(ctx, s.element, func(ctx context.Context) (int64, error) { return s.prune(ctx, before, p.Policy.BatchSize) })
			if err != nil {
				break
			}
			res.Batches++
			res.Largest = max(res.Largest, n)
			*s.count += n
			if s.element != graph.Lineage {
				p.Metrics.pruned.WithLabelValues(s.element, s.action).Add(float64(n))
			}
			if n < int64(p.Policy.BatchSize) {
				break
			}
			if !sleep(ctx, pause) {
				err = ctx.Err()
			}
		}
	}
	took := p.Now().Sub(start)
	p.Metrics.duration.Set(took.Seconds())
	if err != nil {
		p.Metrics.passes.WithLabelValues("error").Inc()
		if ctx.Err() == nil {
			p.Logger.Warn("retention pass stopped; the next one continues", "runs", res.Runs, "feeds", res.Feeds, "decides_rows", res.DecidesRows, "err", err)
		}
		return res, err
	}
	p.Metrics.passes.WithLabelValues("ok").Inc()
	p.Metrics.last.Set(float64(p.Now().UnixNano()) / 1e9)
	p.Logger.Info("retention pass", "runs_deleted", res.Runs, "feeds", res.Feeds, "decides_rows", res.DecidesRows,
		"edge_action", p.Policy.EdgeAction, "batches", res.Batches, "seconds", took.Seconds())
	return res, nil
}

// batch runs one prune transaction, retrying a failure with backoff up to attempts times.
func (p *Pruner) batch(ctx context.Context, element string, f func(context.Context) (int64, error)) (int64, error) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		n, err := f(ctx)
		if err == nil {
			return n, nil
		}
		p.Metrics.retries.Inc()
		if attempt == attempts || ctx.Err() != nil {
			return 0, fmt.Errorf("retention of %s after %d attempts: %w", element, attempt, err)
		}
		p.Logger.Warn("retention batch failed; retrying", "element", element, "attempt", attempt, "err", err)
		if !sleep(ctx, wait) {
			return 0, errors.Join(ctx.Err(), err)
		}
		wait *= 2
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Metrics are the retention metrics. Create them once per registry with NewMetrics.
type Metrics struct {
	pruned   *prometheus.CounterVec
	passes   *prometheus.CounterVec
	retries  prometheus.Counter
	last     prometheus.Gauge
	duration prometheus.Gauge
}

// NewMetrics creates the retention metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "retention", Name: "pruned_total",
			Help: "Graph elements retention removed or marked, by element (Run, FEEDS, DECIDES_ROWS) and action (deleted, marked_stale)."},
			[]string{"element", "action"}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "retention", Name: "passes_total",
			Help: "Retention passes, by result: ok, or error (a batch failed after its retries; the next pass continues)."},
			[]string{"result"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "colline", Subsystem: "retention", Name: "retries_total",
			Help: "Retention batches that failed and were retried (a deadlock with a consumer write, Neo4j away)."}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "retention", Name: "last_success_timestamp_seconds",
			Help: "When the last complete retention pass ended; 0 before the first."}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "colline", Subsystem: "retention", Name: "pass_duration_seconds",
			Help: "How long the last retention pass took."}),
	}
	for _, e := range []string{"Run", graph.Feeds, graph.DecidesRows} {
		for _, a := range []string{"deleted", "marked_stale"} {
			if e == "Run" && a == "marked_stale" {
				continue
			}
			m.pruned.WithLabelValues(e, a)
		}
	}
	m.passes.WithLabelValues("ok")
	m.passes.WithLabelValues("error")
	if reg != nil {
		reg.MustRegister(m.pruned, m.passes, m.retries, m.last, m.duration)
	}
	return m
}

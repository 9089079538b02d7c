package watch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// Next is the after-write step the watcher hands the batch on to (emit.Emitter).
type Next interface {
	Emit(ctx context.Context, items []record.Item) error
}

// Metrics are the watcher's Prometheus metrics.
type Metrics struct {
	arrivals *prometheus.CounterVec
	errors   prometheus.Counter
}

// NewMetrics creates the watcher's metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		arrivals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "tags", Name: "policy_arrivals_total",
			Help: "Columns that a written event's lineage gives a tag unmasked in a dataset the tag's settings do not allow (allowed destinations, docs/tags.md), by tag key."},
			[]string{"tag"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "colline", Subsystem: "tags", Name: "policy_check_errors_total",
			Help: "Batches whose tag policy check failed (the graph did not answer); the batch was written and committed all the same."}),
	}
	if reg != nil {
		reg.MustRegister(m.arrivals, m.errors)
	}
	return m
}

// Arrival counts one column where tag arrives unmasked against its settings.
func (m *Metrics) Arrival(tag string) { m.arrivals.WithLabelValues(tag).Inc() }

// Watcher checks each written batch against the tags' allowed destinations.
type Watcher struct {
	Graph   tags.Graph   // Required: the graph as written (graph.Reader.Tags()).
	Next    Next         // The step after; nil: none.
	Metrics *Metrics     // Default: NewMetrics(nil), not registered.
	Logger  *slog.Logger // Default: discard.
	// Refresh is how long the tags' settings are kept between reads: a batch without a tag that
	// has allowed destinations costs no walk. Default: DefaultRefresh.
	Refresh time.Duration

	mu       sync.Mutex
	policies map[string]tags.Policy
	readAt   time.Time
}

// DefaultRefresh is the default of Watcher.Refresh.
const DefaultRefresh = 30 * time.Second

// settings returns the tags' settings, read again after Refresh.
func (w *Watcher) settings(ctx context.Context) (map[string]tags.Policy, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	refresh := w.Refresh
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	if w.policies != nil && time.Since(w.readAt) < refresh {
		return w.policies, nil
	}
	ps, err := w.Graph.Policies(ctx)
	if err != nil {
		return nil, err
	}
	w.policies, w.readAt = ps, time.Now()
	return ps, nil
}

// Emit checks items, then hands them to Next.
func (w *Watcher) Emit(ctx context.Context, items []record.Item) error {
	w.check(ctx, items)
	if w.Next != nil {
		return w.Next.Emit(ctx, items)
	}
	return nil
}

// check counts the violations of items, one walk per item: the tags its sources carry, followed
// through its own lineage (tags.Carry). Only tags with allowed destinations are followed.
func (w *Watcher) check(ctx context.Context, items []record.Item) {
	m, log := w.Metrics, w.Logger
	if m == nil {
		w.mu.Lock()
		if w.Metrics == nil {
			w.Metrics = NewMetrics(nil)
		}
		m = w.Metrics
		w.mu.Unlock()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ps, err := w.settings(ctx)
	if err != nil {
		m.errors.Inc()
		log.Warn("tag policy check skipped: the tags' settings could not be read", "err", err)
		return
	}
	restricted := false
	for _, p := range ps {
		restricted = restricted || p.Restricted()
	}
	if !restricted {
		return
	}
	for _, it := range items {
		if it.Lineage == nil || len(it.Lineage.Edges) == 0 {
			continue
		}
		job, _, _ := it.Job()
		change := tags.NewMemory(nil, nil)
		change.AddLineage(it.Lineage, job)
		answers, err := tags.Carry(ctx, w.Graph, change, tags.Limits{})
		if err != nil {
			m.errors.Inc()
			log.Warn("tag policy check failed", "event", it.ID(), "err", err)
			return
		}
		for _, ans := range answers {
			if !ans.Policy.Restricted() {
				continue
			}
			for _, v := range ans.Violations() {
				m.Arrival(v.Tag)
				from := v.From
				if len(v.Path) > 0 {
					from = v.Path[0].From
				}
				log.Warn("a tag arrives unmasked where its settings do not allow it", "tag", v.Tag, "column", v.Column,
					"dataset", v.Dataset, "from", from, "job", job, "event", it.ID())
			}
		}
	}
}

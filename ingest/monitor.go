package ingest

import (
	"context"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
)

type (
	// statser is satisfied by *kafka.Reader. Its counters are reset on every call.
	statser interface {
		Stats() kafka.ReaderStats
	}
	// lagger is satisfied by Backlog: the group's uncommitted records per partition.
	lagger interface {
		Lag(ctx context.Context) (map[Partition]int64, error)
	}
)

// DefaultMonitorInterval is the default of Monitor.Interval.
const DefaultMonitorInterval = 15 * time.Second

// Monitor polls the reader's statistics and the group's lag into Metrics. It must be the only
// caller of the reader's Stats: kafka-go resets its counters on each call, and Monitor adds each
// snapshot as a delta.
type Monitor struct {
	Reader   statser       // Required: the *kafka.Reader of the loop.
	Lag      lagger        // Optional: a Backlog on the loop's topic and group; nil: no lag metrics.
	Metrics  *Metrics      // Required.
	Interval time.Duration // Default: DefaultMonitorInterval.
	Logger   *slog.Logger  // Default: discard.
}

// Run polls once at once and then every Interval until ctx ends.
func (mo Monitor) Run(ctx context.Context) {
	if mo.Interval <= 0 {
		mo.Interval = DefaultMonitorInterval
	}
	if mo.Logger == nil {
		mo.Logger = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(mo.Interval)
	defer t.Stop()
	for {
		mo.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (mo Monitor) poll(ctx context.Context) {
	mo.Metrics.reader.add(mo.Reader.Stats())
	if mo.Lag == nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, mo.Interval)
	defer cancel()
	lag, err := mo.Lag.Lag(pctx)
	if err != nil {
		if ctx.Err() == nil {
			mo.Logger.Warn("consumer lag unavailable", "err", err)
		}
		return
	}
	mo.Metrics.setLag(lag)
}

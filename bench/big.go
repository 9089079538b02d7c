package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
	"github.com/colline/colline/retention"
)

// Part big (make bench-10m; issue 33): a graph ten times larger than part e's, built by the
// writer itself from events (its time is a figure), then the reads of parts e and ui on it, and
// retention passes that prune a day's runs while a writer keeps writing (batches of 1,000 and 100
// in turn).
//
// The estate is part e's (reads.go): readLayers layers of tables of readCols columns, each table
// of layer l > 0 written by its own job joining two tables of layer l-1 (two FEEDS per column,
// four DECIDES_ROWS per table), with the same keys, so that parts e and ui run on it unchanged.
// Every job runs bigRuns times, a day apart: the first run writes its lineage, the others confirm
// it (the production case); each run has its HAS_RUN, two READ and a WROTE.

// bigBase is the day of the first runs (run r of a job ends on day r after it).
var bigBase = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// bigTables is the number of tables per layer for about rels relationships in all.
func bigTables(rels, runs int) int {
	// per table of layer > 0: 2 FEEDS per column, 4 DECIDES_ROWS, its HAS_COLUMNs, its LINEAGE,
	// and per run HAS_RUN, two READ, one WROTE; per table of layer 0: its HAS_COLUMNs.
	perTarget := 2*readCols + 4 + readCols + 1 + 4*runs
	per := (readLayers-1)*perTarget + readCols
	return rels/per + 1
}

// bigItem is run r of the job writing table t of layer l (l ≥ 1).
func bigItem(perLayer, l, t, r int) record.Item {
	rng := rand.New(rand.NewPCG(uint64(l), uint64(t)))
	a, b := rng.IntN(perLayer), rng.IntN(perLayer)
	table := func(layer, tab int) plan.Dataset {
		d := plan.Dataset{Key: dsKey(layer, tab), Namespace: "spark_catalog", Name: fmt.Sprintf("bench_l%d.t%05d", layer, tab), Kind: "table"}
		for c := range readCols {
			d.Columns = append(d.Columns, plan.Column{Key: colKey(layer, tab, c), Name: fmt.Sprintf("c%02d", c), Type: "string"})
		}
		return d
	}
	ins := []plan.Dataset{table(l-1, a)}
	if b != a {
		ins = append(ins, table(l-1, b))
	}
	out := table(l, t)
	lin := &plan.Lineage{Reads: ins, Writes: []plan.Write{{Dataset: out, Mode: "overwrite"}}}
	for c := range readCols {
		for _, in := range ins {
			lin.Edges = append(lin.Edges, plan.Edge{Source: in.Columns[c].Key, Target: out.Columns[c].Key,
				Transformations: []plan.Transformation{{Type: plan.Direct, Subtype: plan.Identity}}})
		}
	}
	for _, in := range ins {
		for k := range 2 {
			lin.RowDeps = append(lin.RowDeps, plan.Edge{Source: in.Columns[k].Key, Target: out.Key,
				Transformations: []plan.Transformation{{Type: plan.Indirect, Subtype: plan.JoinSub, Expr: "(a.c00 = b.c00) AND (a.c01 = b.c01)"}}})
		}
	}
	at := bigBase.Add(time.Duration(r)*24*time.Hour + time.Duration(l*perLayer+t)*time.Millisecond)
	job := fmt.Sprintf("job_l%d_t%05d", l, t)
	return record.Item{
		Event: &events.Envelope{SchemaVersion: "1.1", EventID: fmt.Sprintf("big-%s-%d", job, r), EmittedAt: at.Add(time.Second).Format(time.RFC3339Nano),
			Producer: events.Producer{Name: "colline-listener", Spark: "3.5.9"},
			App:      events.App{ID: fmt.Sprintf("app-%s-%d", job, r), Name: job, Namespace: "default"},
			Query:    events.Query{ExecutionID: 1, FuncName: "command", Status: "success", EndedAt: at.Format(time.RFC3339Nano)}},
		Lineage: lin,
	}
}

// bigBatch is the batch size of the graph's build (-big-batch): the consumer's
// COLLINE_BATCH_SIZE for a backlog of events.
var bigBatch = 500

// bigRound writes run r of every job, in batches of bigBatch by one writer, and returns the time.
func bigRound(ctx context.Context, env *benchEnv, perLayer, r int) (int, time.Duration, error) {
	start := time.Now()
	var batch []record.Item
	n := 0
	for l := 1; l < readLayers; l++ {
		for t := range perLayer {
			batch = append(batch, bigItem(perLayer, l, t, r))
			if len(batch) == bigBatch {
				if err := env.writer.Write(ctx, batch); err != nil {
					return n, 0, err
				}
				n += len(batch)
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 {
		if err := env.writer.Write(ctx, batch); err != nil {
			return n, 0, err
		}
		n += len(batch)
	}
	return n, time.Since(start), nil
}

func benchBig(ctx context.Context, r *report, env *benchEnv, rels, runs, samples int, timeout, budget time.Duration, reuse bool) error {
	perLayer := bigTables(rels, runs)
	// A graph the writer built holds every table of the last layer (each is a job's target), but
	// of layer 0 only those a job reads: reuse compares the last layer.
	have := 0
	if reuse {
		last, err := layerTables(ctx, env.driver, readLayers-1)
		if err == nil {
			have = len(last)
		}
	}
	if !reuse || have != perLayer {
		d, err := stack.WipeGraph(ctx, env.driver)
		if err != nil {
			return err
		}
		if err := env.writer.Bootstrap(ctx); err != nil {
			return err
		}
		r.notef("big: graph wiped in %.1fs; writing %d layers of %d tables of %d columns, %d runs of each of %d jobs, in batches of %d", d.Seconds(), readLayers, perLayer, readCols, runs, (readLayers-1)*perLayer, bigBatch)
		var total time.Duration
		for run := range runs {
			n, took, err := bigRound(ctx, env, perLayer, run)
			if err != nil {
				return fmt.Errorf("big: run %d: %w", run, err)
			}
			total += took
			lin, _ := countLineage(ctx, env.driver)
			r.notef("big: run %d of every job (%s): %d events written in %.1fs, %.0f events/s; %d lineage relationships in the graph (load average %s)",
				run, map[bool]string{true: "new lineage", false: "re-runs, confirmed"}[run == 0], n, took.Seconds(), float64(n)/took.Seconds(), lin, loadAvg())
		}
		c, err := graph.NewReader(env.driver, "").Counts(ctx)
		if err != nil {
			return err
		}
		var all int64
		for _, n := range c.Relationships {
			all += n
		}
		r.notef("big: the graph holds %d relationships %v and nodes %v, written by the writer in %.0fs", all, c.Relationships, c.Nodes, total.Seconds())
		r.add(row{part: "big", metric: "the 10M-relationship graph, built by the writer", value: fmt.Sprintf("%d relationships in %.0f s", all, total.Seconds()),
			baseline: "-", target: "-", result: fmt.Sprintf("%d events", runs*(readLayers-1)*perLayer)})
	} else {
		r.notef("big: reusing the graph of a previous -keep-graph run (%d tables per layer)", perLayer)
	}
	if err := benchReads(ctx, r, env, 0, samples, timeout, budget, true); err != nil {
		return err
	}
	if err := benchUI(ctx, r, env, 0, samples, budget, true); err != nil {
		return err
	}
	return bigRetention(ctx, r, env, perLayer)
}

// bigRetention prunes the oldest day's runs in the graph (the first day on a new graph; the next
// on a kept one, each run of -reads-reuse prunes a day) in four passes, each a quarter of the
// day's runs, while one writer writes the next days' runs of the same jobs in batches of 100 (the
// same jobs, datasets and columns: the two contend for them), and reports how long writes waited.
// The passes take turns (A B A B): A prunes through a Writer of its own, as another consumer's
// pruner would (its transactions run beside the writes), B through the writer's own Writer, as
// the consumer's pruner does (graph.Writer runs its prune steps apart from its writes). The
// batch is the consumer's default.
func bigRetention(ctx context.Context, r *report, env *benchEnv, perLayer int) error {
	res, err := neo4j.ExecuteQuery(ctx, env.driver, `MATCH (r:Run) RETURN min(r.endedAt) AS first, max(r.endedAt) AS last`,
		nil, neo4j.EagerResultTransformer)
	if err != nil {
		return fmt.Errorf("big: the runs' days: %w", err)
	}
	first, _ := res.Records[0].Get("first")
	last, _ := res.Records[0].Get("last")
	oldest, ok1 := first.(time.Time)
	newest, ok2 := last.(time.Time)
	day, next := int(oldest.Sub(bigBase)/(24*time.Hour)), int(newest.Sub(bigBase)/(24*time.Hour))+1
	if !ok1 || !ok2 || next-day < 2 {
		r.notef("big: retention not measured: the graph holds runs of one day or none (pruned by earlier runs)")
		return nil
	}
	dayStart := bigBase.Add(time.Duration(day) * 24 * time.Hour)
	stop := make(chan struct{})
	var mu sync.Mutex
	var writes []span // each write of 100 re-runs
	var werr error
	done := make(chan struct{})
	retries0 := env.writer.Retries()
	go func() {
		defer close(done)
		var batch []record.Item
		for run := next; ; run++ { // the next days' runs, until the passes are done
			for l := 1; l < readLayers; l++ {
				for t := range perLayer {
					batch = append(batch, bigItem(perLayer, l, t, run))
					if len(batch) < 100 {
						continue
					}
					select {
					case <-stop:
						return
					default:
					}
					w := span{start: time.Now()}
					err := env.writer.Write(ctx, batch)
					w.end = time.Now()
					mu.Lock()
					writes = append(writes, w)
					if err != nil && werr == nil {
						werr = err
					}
					mu.Unlock()
					batch = batch[:0]
				}
			}
		}
	}()
	time.Sleep(10 * time.Second) // the writer is under way: the writes before any pass are the baseline
	// The day's runs end at its start + (layer*perLayer + table) ms (bigItem, layers 1 to
	// readLayers-1); pass k prunes those before the end of its quarter.
	lo, hi := time.Duration(perLayer)*time.Millisecond, time.Duration(readLayers*perLayer)*time.Millisecond
	type pass struct {
		span
		apart   bool // B: through the writer's own Writer
		res     retention.Result
		retries int64 // the writer's retried transactions during the pass
	}
	other := graph.NewWriter(env.driver, "")
	var passes []pass
	for k := range 4 {
		cut := dayStart.Add(lo + (hi-lo)*time.Duration(k+1)/4)
		if k == 3 {
			cut = dayStart.Add(24*time.Hour - time.Minute) // the rest of the day
		}
		p := pass{apart: k%2 == 1}
		g := other
		if p.apart {
			g = env.writer
		}
		pr := &retention.Pruner{Graph: g, Policy: retention.Policy{RunDays: 1},
			Now: func() time.Time { return cut.Add(24 * time.Hour) }}
		before := env.writer.Retries()
		p.start = time.Now()
		var err error
		p.res, err = pr.Once(ctx)
		p.end = time.Now()
		p.retries = env.writer.Retries() - before
		if err != nil {
			close(stop)
			<-done
			return fmt.Errorf("big: retention pass %d: %w", k+1, err)
		}
		passes = append(passes, p)
		time.Sleep(2 * time.Second) // writes between passes: none waits for two
	}
	close(stop)
	<-done
	if werr != nil {
		return fmt.Errorf("big: a write during retention: %w", werr)
	}
	q := func(xs []time.Duration, f float64) time.Duration {
		xs = slices.Sorted(slices.Values(xs))
		return xs[min(len(xs)-1, int(f*float64(len(xs))))]
	}
	var before []time.Duration
	for _, w := range writes {
		if w.end.Before(passes[0].start) {
			before = append(before, w.end.Sub(w.start))
		}
	}
	if len(before) == 0 {
		return fmt.Errorf("big: no write finished in the 10 s before the retention passes")
	}
	base := q(before, .5)
	worst := map[bool]time.Duration{}
	runsBy, passBy, retriesBy := map[bool]int64{}, map[bool]time.Duration{}, map[bool]int64{}
	name := map[bool]string{false: "beside the writes (another consumer's pruner)", true: "apart from the writes (the consumer's own pruner)"}
	for k, p := range passes {
		var during []time.Duration // the writes that overlap the pass
		for _, w := range writes {
			if w.end.After(p.start) && w.start.Before(p.end) {
				during = append(during, w.end.Sub(w.start))
			}
		}
		if len(during) == 0 {
			return fmt.Errorf("big: no write overlaps retention pass %d", k+1)
		}
		w := q(during, 1)
		r.notef("big: retention of day %d, pass %d, %s: %d runs in %d transactions (largest %d) in %.1fs; the %d writes of 100 re-runs it overlapped: p50 %v, max %v; transactions run again (a deadlock, another transient error): %d",
			day, k+1, name[p.apart], p.res.Runs, p.res.Batches, p.res.Largest, p.end.Sub(p.start).Seconds(), len(during), q(during, .5).Round(time.Millisecond), w.Round(time.Millisecond), p.retries)
		worst[p.apart] = max(worst[p.apart], w)
		runsBy[p.apart] += p.res.Runs
		passBy[p.apart] += p.end.Sub(p.start)
		retriesBy[p.apart] += p.retries
	}
	r.notef("big: %d write transactions run again during retention in all (deadlocks, other transient errors)", env.writer.Retries()-retries0)
	for _, apart := range []bool{false, true} {
		r.add(row{part: "big", metric: "retention pruning a day's runs while a writer writes, " + name[apart] + ": the slowest write of 100 events",
			value: worst[apart].Round(time.Millisecond).String(), baseline: fmt.Sprintf("p50 %v before the passes (%d writes, max %v)", base.Round(time.Millisecond), len(before), q(before, 1).Round(time.Millisecond)),
			target: "writes held ≤ 1 s (issue 33)", result: fmt.Sprintf("%d runs in %.1fs (two passes, batches of %d), %d writes retried", runsBy[apart], passBy[apart].Seconds(), retention.DefaultBatchSize, retriesBy[apart]),
			met: worst[apart]-base <= time.Second})
	}
	return nil
}

// span is when something ran.
type span struct{ start, end time.Time }

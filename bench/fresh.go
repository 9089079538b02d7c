package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

const idHeader = "colline-bench-id"

// benchFresh produces corpus variants at a steady rate for a while into a consumer loop running
// with its default batching, and measures, per event, the time from just before the producer
// sent it to the commit of the graph transaction that holds its edges (from then on they are
// visible to every reader). The baseline is the transport alone: from the same start to the
// loop's fetch of the message.
func benchFresh(ctx context.Context, r *report, env *benchEnv, evs []event, rate float64, dur time.Duration) error {
	return fresh(ctx, r, env, evs, "corpus variants (new lineage)", rate, dur, nil, nil, func(n int) ([]byte, string) {
		return variant(evs[n%len(evs)].data, 2000+n/len(evs))
	})
}

// benchProdFresh is benchFresh on the production-like corpus (prod.go): the first runs of its
// jobs are written beforehand (untimed), then re-runs are produced at rate, 5% of them new
// versions.
func benchProdFresh(ctx context.Context, r *report, env *benchEnv, evs []event, jobs int, change, rate float64, dur time.Duration) error {
	c, err := newProdCorpus(evs, jobs, change)
	if err != nil {
		return err
	}
	// The consumer that wrote the first runs gets the re-runs: it kept their plans.
	reuse := process.NewReuse(0)
	first := func() error {
		for b := 0; b < jobs; b += 100 {
			var items []record.Item
			for j := b; j < min(b+100, jobs); j++ {
				it, err := process.Step{Reuse: reuse}.Item(c.run(j, 0).value)
				if err != nil {
					return err
				}
				items = append(items, it)
			}
			if err := env.writer.Write(ctx, items); err != nil {
				return err
			}
		}
		r.notef("fresh prod: the first runs of %d jobs written", jobs)
		return nil
	}
	return fresh(ctx, r, env, evs, fmt.Sprintf("production-like re-runs (%d jobs, %.0f%% new versions)", jobs, change*100), rate, dur, first, reuse, func(n int) ([]byte, string) {
		m := c.run(n%jobs, 1+n/jobs)
		return m.value, m.id
	})
}

// fresh produces next(0), next(1), … at rate for dur, after prepare (when set) has written what
// the graph holds first, and measures each event's freshness (see benchFresh).
func fresh(ctx context.Context, r *report, env *benchEnv, evs []event, what string, rate float64, dur time.Duration,
	prepare func() error, reuse *process.Reuse, next func(n int) ([]byte, string)) error {
	d, err := stack.WipeGraph(ctx, env.driver)
	if err != nil {
		return err
	}
	if err := env.writer.Bootstrap(ctx); err != nil {
		return err
	}
	if prepare != nil {
		if err := prepare(); err != nil {
			return err
		}
	}
	topic, dlqTopic := topicName("fresh"), topicName("fresh.dlq")
	if err := env.topics(ctx, topic, dlqTopic); err != nil {
		return err
	}
	defer env.kafka.DeleteTopics(context.WithoutCancel(ctx), topic, dlqTopic)

	var mu sync.Mutex
	sent, fetched, visible := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	edges := 0
	c, err := newConsumer(env, topic, dlqTopic, env.writer, 0, reuse)
	if err != nil {
		return err
	}
	defer c.close()
	c.tap.onFetch = func(m kafka.Message, t time.Time) {
		for _, h := range m.Headers {
			if h.Key == idHeader {
				mu.Lock()
				fetched[string(h.Value)] = t
				mu.Unlock()
			}
		}
	}
	c.tap.onWrite = func(items []record.Item, t time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, it := range items {
			visible[it.Event.EventID] = t
			edges += len(it.Lineage.Edges)
		}
	}
	lctx, stop := context.WithCancel(ctx)
	loopDone := make(chan error, 1)
	go func() { loopDone <- c.loop.Run(lctx) }()

	// The consumer joins its group and is assigned the partitions before the clock starts: wait
	// for a warm-up message to be written.
	w := newProducer(env.brokers, topic, 20*time.Millisecond)
	defer w.Close()
	warm, warmID := variant(evs[0].data, 1000)
	if err := w.WriteMessages(ctx, kafka.Message{Value: warm, Headers: []kafka.Header{{Key: idHeader, Value: []byte(warmID)}}}); err != nil {
		stop()
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		_, ok := visible[warmID]
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("fresh: the warm-up event was not written within 60s")
		}
	}
	mu.Lock()
	delete(visible, warmID)
	delete(fetched, warmID)
	edges = 0
	mu.Unlock()
	c.tap.mu.Lock()
	c.tap.batches = nil
	c.tap.mu.Unlock()

	r.notef("fresh: graph wiped in %.1fs; producing %s, %.0f events/s for %v", d.Seconds(), what, rate, dur)
	interval := time.Duration(float64(time.Second) / rate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var wg sync.WaitGroup
	var sendErr error
	start := time.Now()
	n := 0
	for time.Since(start) < dur {
		<-tick.C
		v, id := next(n)
		n++
		mu.Lock()
		sent[id] = time.Now()
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := w.WriteMessages(ctx, kafka.Message{Key: []byte(id), Value: v, Headers: []kafka.Header{{Key: idHeader, Value: []byte(id)}}})
			if err != nil {
				mu.Lock()
				sendErr = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	produced := time.Since(start)
	if sendErr != nil {
		stop()
		return fmt.Errorf("fresh: produce: %w", sendErr)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		done := len(visible) >= len(sent)
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
	}
	stop()
	<-loopDone

	mu.Lock()
	defer mu.Unlock()
	var lat, transport []float64
	for id, t0 := range sent {
		if t, ok := visible[id]; ok {
			lat = append(lat, t.Sub(t0).Seconds())
		}
		if t, ok := fetched[id]; ok {
			transport = append(transport, t.Sub(t0).Seconds())
		}
	}
	if len(lat) < len(sent) {
		return fmt.Errorf("fresh: only %d of %d events became visible within 60s of the end", len(lat), len(sent))
	}
	p := func(xs []float64, q float64) float64 {
		slices.Sort(xs)
		return xs[min(len(xs)-1, int(q*float64(len(xs))))]
	}
	r.notef("fresh: %d events in %.1fs (%.1f/s achieved), %d edges; to visible: p50 %.0f ms, p99 %.0f ms, max %.0f ms; to fetch: p50 %.0f ms, p99 %.0f ms",
		len(sent), produced.Seconds(), float64(len(sent))/produced.Seconds(), edges,
		p(lat, .5)*1000, p(lat, .99)*1000, lat[len(lat)-1]*1000, p(transport, .5)*1000, p(transport, .99)*1000)
	var took, items []float64
	slowest := written{}
	for _, b := range c.tap.batches {
		took = append(took, b.took.Seconds())
		items = append(items, float64(b.items))
		if b.took > slowest.took {
			slowest = b
		}
	}
	r.notef("fresh: %d writes of p50 %.0f, max %.0f events; write time p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d events, %d edges and row-level dependencies)",
		len(took), p(items, .5), items[len(items)-1], p(took, .5)*1000, p(took, .99)*1000, slowest.took.Seconds()*1000, slowest.items, slowest.edges)
	p99 := p(lat, .99)
	r.add(row{part: "c", metric: fmt.Sprintf("freshness at %.0f events/s of %s, produce → edges committed in Neo4j", rate, what),
		value:    fmt.Sprintf("p50 %.0f ms, p99 %.0f ms", p(lat, .5)*1000, p99*1000),
		baseline: fmt.Sprintf("produce → fetched: p50 %.0f ms, p99 %.0f ms", p(transport, .5)*1000, p(transport, .99)*1000),
		target:   "p99 ≤ 1 s (issue 17)", met: p99 <= 1})
	return nil
}

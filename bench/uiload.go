package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/ui"
)

// Part ui-load: the explorer's API with many readers at once, on the 1M-relationship graph of
// part e (generated, or reused with -reads-reuse), served by the explorer in this process with
// the defaults of COLLINE_UI_* (8 requests at once, the others wait). A reader is a person using
// the page: it sends a request drawn from the mix of part ui (searches, upstream and downstream
// walks of 3 steps, the impact list, a column's detail), reads the answer for a while (exponential,
// Think on average), and sends the next, for the duration. It reports p50 and p99 over all
// requests and per kind, and every answer that is not a 200. The same-run baseline is one reader.
// It also reports the explorer saturated: the same readers without pauses (no target: what the
// machine serves at most, and the 503s with Retry-After beyond).
type uiLoad struct {
	Readers  int
	Duration time.Duration
	Think    time.Duration // a reader's mean pause between requests
}

// uiCall is one kind of request of the mix.
type uiCall struct {
	name string
	url  func(rng *rand.Rand) string
}

// uiMix returns the requests of part ui over the generated graph of perLayer tables per layer.
func uiMix(base string, perLayer int) []uiCall {
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return base + path + "?" + v.Encode()
	}
	last := func(rng *rand.Rand) string { return colKey(readLayers-1, rng.IntN(perLayer), rng.IntN(readCols)) }
	first := func(rng *rand.Rand) string { return colKey(0, rng.IntN(perLayer), rng.IntN(readCols)) }
	return []uiCall{
		{"column", func(rng *rand.Rand) string { return q("/api/column", "key", last(rng)) }},
		{"search prefix", func(rng *rand.Rand) string { return q("/api/search", "q", fmt.Sprintf("c%d", rng.IntN(4))) }},
		{"search substring", func(rng *rand.Rand) string { return q("/api/search", "q", fmt.Sprintf("t%05d", rng.IntN(perLayer))) }},
		{"search table.column", func(rng *rand.Rand) string {
			return q("/api/search", "q", fmt.Sprintf("t%05d.c%d", rng.IntN(perLayer), rng.IntN(4)))
		}},
		{"upstream 3", func(rng *rand.Rand) string { return q("/api/lineage", "column", last(rng), "dir", "up", "steps", "3") }},
		{"downstream 3", func(rng *rand.Rand) string {
			return q("/api/lineage", "column", first(rng), "dir", "down", "steps", "3")
		}},
		{"impact", func(rng *rand.Rand) string { return q("/api/impact", "column", first(rng)) }},
	}
}

// loadStats is what readers saw.
type loadStats struct {
	requests int
	p50, p99 time.Duration
	perKind  map[string][2]time.Duration // p50, p99
	status   map[int]int
	firstErr string
}

// readAtOnce runs readers, each sending the mix's requests one after the other for dur, with a
// pause of think on average (exponential) after each answer.
func readAtOnce(ctx context.Context, mix []uiCall, readers int, dur, think time.Duration) loadStats {
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: readers}}
	defer client.CloseIdleConnections()
	type sample struct {
		kind string
		d    time.Duration
	}
	var mu sync.Mutex
	var all []sample
	st := loadStats{status: map[int]int{}, perKind: map[string][2]time.Duration{}}
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for k := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(k), 29))
			if think > 0 { // readers do not all start at the same instant
				time.Sleep(time.Duration(rng.Float64() * float64(think)))
			}
			for time.Now().Before(end) && ctx.Err() == nil {
				c := mix[rng.IntN(len(mix))]
				t0 := time.Now()
				_, err := fetch(ctx, client, c.url(rng))
				d := time.Since(t0)
				mu.Lock()
				all = append(all, sample{c.name, d})
				code := 200
				if err != nil {
					code = -1
					if strings.Contains(err.Error(), ": 503 ") {
						code = 503
					} else if strings.Contains(err.Error(), ": 504 ") {
						code = 504
					}
					if st.firstErr == "" {
						st.firstErr = err.Error()
					}
				}
				st.status[code]++
				mu.Unlock()
				if think > 0 {
					time.Sleep(time.Duration(rng.ExpFloat64() * float64(think)))
				}
			}
		}()
	}
	wg.Wait()
	pct := func(ds []time.Duration) (time.Duration, time.Duration) {
		if len(ds) == 0 {
			return 0, 0
		}
		slices.Sort(ds)
		return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
	}
	byKind := map[string][]time.Duration{}
	var ds []time.Duration
	for _, s := range all {
		ds = append(ds, s.d)
		byKind[s.kind] = append(byKind[s.kind], s.d)
	}
	st.requests = len(all)
	st.p50, st.p99 = pct(ds)
	for k, v := range byKind {
		a, b := pct(v)
		st.perKind[k] = [2]time.Duration{a, b}
	}
	return st
}

// serveExplorer serves the explorer (default Params) over HTTP on a free port of 127.0.0.1.
func serveExplorer(env *benchEnv) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	p := ui.Params{Version: "bench"}
	srv := p.Server(ln.Addr().String(), ui.New(graph.NewReader(env.driver, ""), p))
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func benchUILoad(ctx context.Context, r *report, env *benchEnv, edges int, reuse bool, load uiLoad) error {
	perLayer, err := readsGraph(ctx, r, env, edges, reuse)
	if err != nil {
		return err
	}
	base, stop, err := serveExplorer(env)
	if err != nil {
		return err
	}
	defer stop()
	mix := uiMix(base, perLayer)
	readAtOnce(ctx, mix, 4, 3*time.Second, 0) // warm-up: plan cache, page cache
	one := readAtOnce(ctx, mix, 1, load.Duration/2, 0)
	many := readAtOnce(ctx, mix, load.Readers, load.Duration, load.Think)
	saturated := readAtOnce(ctx, mix, load.Readers, load.Duration/2, 0)
	for _, x := range []struct {
		name string
		st   loadStats
	}{{"1 reader", one}, {fmt.Sprintf("%d readers, a pause of %v on average", load.Readers, load.Think), many}, {fmt.Sprintf("%d readers without pauses", load.Readers), saturated}} {
		var kinds []string
		for _, c := range mix {
			v := x.st.perKind[c.name]
			kinds = append(kinds, fmt.Sprintf("%s %.0f/%.0f", c.name, ms(v[0]), ms(v[1])))
		}
		r.notef("ui-load: %s: %d requests, p50 %.1f ms, p99 %.1f ms, answers %v%s; per kind p50/p99 ms: %s", x.name, x.st.requests,
			ms(x.st.p50), ms(x.st.p99), x.st.status, map[bool]string{true: " (first error: " + x.st.firstErr + ")", false: ""}[x.st.firstErr != ""], strings.Join(kinds, ", "))
	}
	r.add(row{part: "ui-load", metric: fmt.Sprintf("explorer API p99, %d concurrent readers (a pause of %v on average between requests) for %v, 1M-relationship graph (mix of part ui)", load.Readers, load.Think, load.Duration),
		value:    fmt.Sprintf("%.0f ms (p50 %.0f ms, %d requests, %.0f/s; answers %v)", ms(many.p99), ms(many.p50), many.requests, float64(many.requests)/load.Duration.Seconds(), many.status),
		baseline: fmt.Sprintf("%.0f ms, 1 reader (p50 %.0f ms)", ms(one.p99), ms(one.p50)), target: "≤ 200 ms",
		met:    ms(many.p99) <= 200 && many.status[200] == many.requests,
		result: fmt.Sprintf("%.1f× one reader", float64(many.p99)/float64(max(one.p99, 1)))})
	r.add(row{part: "ui-load", metric: fmt.Sprintf("the same %d readers without pauses (saturated)", load.Readers),
		value:    fmt.Sprintf("%.0f requests/s, p50 %.0f ms, p99 %.0f ms; answers %v", float64(saturated.requests)/(load.Duration/2).Seconds(), ms(saturated.p50), ms(saturated.p99), saturated.status),
		baseline: fmt.Sprintf("1 reader: %.0f requests/s", float64(one.requests)/(load.Duration/2).Seconds()), target: "-",
		result: "beyond COLLINE_UI_MAX_CONCURRENT requests wait up to 2 s, then 503 with Retry-After"})
	return nil
}

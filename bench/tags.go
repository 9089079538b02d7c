package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/tags"
	"github.com/colline/colline/ui"
)

// benchTags times the tag answers (docs/tags.md) on the 1M-relationship reads graph, over HTTP
// from the explorer served in this process, as `bench -parts ui` times the other answers:
//   - the tags of a column (GET /api/tags/columns): one column of the last layer, walked up
//     through 5 layers of jobs (each column fed by the same column of two tables of the layer
//     before: up to 62 columns upstream);
//   - the reach of a tag (GET /api/tags/reach, its default answer: per dataset, counted in the
//     server): a tag on 3 columns of one first-layer table (a table's personal columns),
//     followed down through the 5 layers; and a broad one, set by a pattern on 10 columns of 10
//     tables of the first layer and by exact rules on 10 random columns of it (110 tagged columns,
//     about 5,000 reached); for the broad one also the columns of one dataset it reaches (the
//     panel's second request) and the full report (report=full: every column, each arrival with
//     its last hop), which is not held to the target;
//
// against a same-run baseline, the one-column lookup (/api/column). The generated graph's FEEDS
// are all DIRECT/IDENTITY: every hop carries the tag, the most a walk can have to follow.
func benchTags(ctx context.Context, r *report, env *benchEnv, edges, samples int, budget time.Duration, reuse bool) error {
	perLayer, err := readsGraph(ctx, r, env, edges, reuse)
	if err != nil {
		return err
	}
	if perLayer < 10 {
		return errors.New("tags: the reads graph has fewer than 10 tables per layer")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const narrow, broad, source = "bench-pii", "bench-broad", "file:bench"
	// narrow: the personal columns of one source table (c00…c02 of a first-layer table);
	// broad: c00…c09 of t00000…t00009 (a pattern) and 10 random first-layer columns (exact rules)
	var rules []tags.Rule
	for c := 0; c < 3; c++ {
		rules = append(rules, tags.Rule{Tag: tags.Tag{Key: narrow, Value: "x", Source: source}, Dataset: tags.Glob(dsKey(0, 7)), Column: tags.Glob(fmt.Sprintf("c%02d", c))})
	}
	rules = append(rules, tags.Rule{Tag: tags.Tag{Key: broad, Value: "pattern", Source: source}, Dataset: "spark_catalog/bench_l0.t0000?", Column: "c0?"})
	for i := 0; i < 10; i++ {
		rules = append(rules, tags.Rule{Tag: tags.Tag{Key: broad, Value: "exact", Source: source}, Dataset: tags.Glob(dsKey(0, rng.IntN(perLayer))), Column: tags.Glob(fmt.Sprintf("c%02d", rng.IntN(readCols)))})
	}
	allowed := []tags.Glob{"spark_catalog/bench_l0.*"}
	if err := env.writer.WriteTags(ctx, []graph.TagSet{{Key: source, Source: source, Rules: rules,
		Policies: []tags.Policy{{Key: narrow, Aggregation: tags.AggregationPass, Allowed: allowed}, {Key: broad, Aggregation: tags.AggregationPass, Allowed: allowed}}}}); err != nil {
		return err
	}
	defer env.writer.RemoveTags(context.WithoutCancel(ctx), []string{source})

	reader := graph.NewReader(env.driver, "")
	var broadDataset string // a dataset of the last layer that the broad tag reaches
	for _, key := range []string{narrow, broad} {
		ans, err := tags.Reach(ctx, reader.Tags(), key, tags.Limits{})
		if err != nil {
			return err
		}
		un, _, _, datasets, uses := ans.Counts()
		r.notef("tags: %s set on %d columns; it reaches %d columns in %d datasets, %d indirect uses", key, len(ans.Sources), un, datasets, uses)
		// the answer per dataset, counted in the server, is the full report's grouping
		per, err := tags.ReachByDataset(ctx, reader.Tags(), key, tags.Limits{})
		if err != nil {
			return err
		}
		if got, want := fmt.Sprintf("%+v", per), fmt.Sprintf("%+v", tags.Group(ans)); got != want {
			return fmt.Errorf("tags: %s: the reach per dataset is not the full report's grouping:\n%.2000s\nwant\n%.2000s", key, got, want)
		}
		for _, d := range ans.Datasets {
			if key == broad && d.Unmasked > 0 && d.Dataset > broadDataset {
				broadDataset = d.Dataset
			}
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p := ui.Params{Version: "bench", Tags: reader.Tags()}
	srv := p.Server(ln.Addr().String(), ui.New(reader, p))
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	last := func() string { return colKey(readLayers-1, rng.IntN(perLayer), rng.IntN(readCols)) }
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return base + path + "?" + v.Encode()
	}
	calls := []struct {
		name string
		url  func() string
	}{
		{"one column (/api/column, baseline)", func() string { return q("/api/column", "key", last()) }},
		{"tags of a column (/api/tags/columns)", func() string { return q("/api/tags/columns", "column", last()) }},
		{"tags of 50 columns (the drawing's badges)", func() string {
			kv := []string{}
			for range 50 {
				kv = append(kv, "column", last())
			}
			return q("/api/tags/columns", kv...)
		}},
		{"reach of a tag on 3 columns (/api/tags/reach)", func() string { return q("/api/tags/reach", "tag", narrow) }},
		{"reach of a tag on 110 columns, 5,000 reached, per dataset", func() string { return q("/api/tags/reach", "tag", broad) }},
		{"reach of a tag on 110 columns in one dataset (its columns)", func() string { return q("/api/tags/reach", "tag", broad, "dataset", broadDataset) }},
		{"reach of a tag on 110 columns, full report (report=full)", func() string { return q("/api/tags/reach", "tag", broad, "report", "full") }},
	}
	client := &http.Client{Timeout: time.Minute}
	p99s := map[string]float64{}
	for _, c := range calls {
		for i := 0; i < 3; i++ {
			fetch(ctx, client, c.url())
		}
		var lat []float64
		var failed int
		var firstErr error
		maxBytes := 0
		began := time.Now()
		for i := 0; i < samples && time.Since(began) < budget; i++ {
			t0 := time.Now()
			n, err := fetch(ctx, client, c.url())
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
			}
			lat = append(lat, time.Since(t0).Seconds())
			maxBytes = max(maxBytes, n)
		}
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, int(.99*float64(len(lat))))]
		p99s[c.name] = p99
		msg := ""
		if failed > 0 {
			msg = fmt.Sprintf("; %d failed (%v)", failed, firstErr)
		}
		r.notef("tags: %-42s p50 %6.1f ms  p99 %7.1f ms  (%d samples, answers up to %d kB)%s", c.name, p50*1000, p99*1000, len(lat), maxBytes/1000, msg)
		if failed > 0 {
			return fmt.Errorf("tags: %s failed: %w", c.name, firstErr)
		}
	}
	baseline := p99s[calls[0].name]
	for _, c := range calls[1:] {
		target, met := "≤ 200 ms", p99s[c.name] <= 0.2
		if strings.Contains(c.name, "full report") {
			target, met = "none (the full report; docs/tags.md)", true
		}
		r.add(row{part: "tags", metric: "API p99, " + c.name, value: fmt.Sprintf("%.0f ms", p99s[c.name]*1000),
			baseline: fmt.Sprintf("%.0f ms one-column lookup", baseline*1000), target: target, met: met,
			result: fmt.Sprintf("%.1f× baseline", p99s[c.name]/baseline)})
	}
	return nil
}

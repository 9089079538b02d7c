package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ui"
)

// Part ui: the explorer, measured two ways.
//
//  1. Its API's latency on the 1M-edge graph of part e (generated, or reused with -reads-reuse),
//     over HTTP from the explorer served in this process (ui.New on graph.Reader, the defaults of
//     COLLINE_UI_*): search by prefix, by substring and as table.column, upstream and downstream
//     walks of 3 steps, the impact list; the same-run baseline is the one-column lookup
//     (/api/column).
//  2. Time to first draw in headless Chromium (dev/chromium, bench/draw.cjs) of an upstream of
//     500 columns over 2,000 column edges (a generated graph of its own: 4 layers of 5 tables of
//     20 columns feeding one table of 100, every column fed by 5 random columns of the layer
//     before), against a same-run baseline of a 6-column upstream.
func benchUI(ctx context.Context, r *report, env *benchEnv, edges, samples int, budget time.Duration, reuse bool) error {
	if !ui.Built() {
		return errors.New("ui: the page bundle is not built: make ui-bundle")
	}
	perLayer, err := readsGraph(ctx, r, env, edges, reuse)
	if err != nil {
		return err
	}
	if err := drawGraph(ctx, env); err != nil {
		return err
	}
	reader := graph.NewReader(env.driver, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p := ui.Params{Version: "bench"}
	srv := p.Server(ln.Addr().String(), ui.New(reader, p))
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	firstTables, lastTables, err := startTables(ctx, env.driver)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(5, 6))
	last := func() string { return colKey(readLayers-1, lastTables[rng.IntN(len(lastTables))], rng.IntN(readCols)) }
	first := func() string { return colKey(0, firstTables[rng.IntN(len(firstTables))], rng.IntN(readCols)) }
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return base + path + "?" + v.Encode()
	}
	type call struct {
		name string
		url  func() string
	}
	calls := []call{
		{"one column (/api/column, baseline)", func() string { return q("/api/column", "key", last()) }},
		{"search by prefix (c1…)", func() string { return q("/api/search", "q", fmt.Sprintf("c%d", rng.IntN(4))) }},
		{"search by substring (t00123)", func() string { return q("/api/search", "q", fmt.Sprintf("t%05d", rng.IntN(perLayer))) }},
		{"search table.column (t00123.c0)", func() string { return q("/api/search", "q", fmt.Sprintf("t%05d.c%d", rng.IntN(perLayer), rng.IntN(4))) }},
		{"upstream, 3 steps", func() string { return q("/api/lineage", "column", last(), "dir", "up", "steps", "3") }},
		{"downstream, 3 steps", func() string { return q("/api/lineage", "column", first(), "dir", "down", "steps", "3") }},
		{"impact list, 10 steps", func() string { return q("/api/impact", "column", first()) }},
	}
	client := &http.Client{Timeout: time.Minute}
	p99s := map[string]float64{}
	for _, c := range calls {
		for i := 0; i < 3; i++ { // warm-up: plan cache, page cache
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
		r.notef("ui: %-36s p50 %6.1f ms  p99 %7.1f ms  (%d samples, answers up to %d kB)%s", c.name, p50*1000, p99*1000, len(lat), maxBytes/1000, msg)
		if failed > 0 && c.name == calls[0].name {
			return fmt.Errorf("ui: the baseline failed: %w", firstErr)
		}
	}
	baseline := p99s[calls[0].name]
	for _, c := range calls[1:] {
		r.add(row{part: "ui", metric: "API p99, " + c.name, value: fmt.Sprintf("%.0f ms", p99s[c.name]*1000),
			baseline: fmt.Sprintf("%.0f ms one-column lookup", baseline*1000), target: "≤ 200 ms", met: p99s[c.name] <= 0.2,
			result: fmt.Sprintf("%.1f× baseline", p99s[c.name]/baseline)})
	}
	return benchDraw(ctx, r, base)
}

// fetch GETs u and returns the size of a 200 answer, or an error naming the status.
func fetch(ctx context.Context, c *http.Client, u string) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return int(n), fmt.Errorf("%s: %s", u, resp.Status)
	}
	return int(n), nil
}

// The draw graph: layers 0..3 of 5 tables of 20 columns, layer 4 one table of 100; each column
// of layers 1..4 fed by 5 distinct random columns of the layer before: 500 columns, 2,000 FEEDS.
const (
	drawTables  = 5
	drawCols    = 20
	drawLayers  = 5
	drawFanIn   = 5
	drawPrefix  = "spark_catalog/bench_draw"
	drawSmallOf = 1 // the baseline view: one column of layer 1 (5 sources)
)

func drawKey(layer, table, col int) string {
	return fmt.Sprintf("%s_l%d.t%d#c%03d", drawPrefix, layer, table, col)
}

func drawColumns(layer int) [][2]int {
	var out [][2]int
	if layer == drawLayers-1 {
		for c := 0; c < drawTables*drawCols; c++ {
			out = append(out, [2]int{0, c})
		}
		return out
	}
	for t := 0; t < drawTables; t++ {
		for c := 0; c < drawCols; c++ {
			out = append(out, [2]int{t, c})
		}
	}
	return out
}

func drawGraph(ctx context.Context, env *benchEnv) error {
	now := time.Now().UTC()
	var tables []map[string]any
	for l := 0; l < drawLayers; l++ {
		byTable := map[int][]map[string]any{}
		for _, tc := range drawColumns(l) {
			byTable[tc[0]] = append(byTable[tc[0]], map[string]any{"key": drawKey(l, tc[0], tc[1]), "name": fmt.Sprintf("c%03d", tc[1])})
		}
		for t, cols := range byTable {
			key := fmt.Sprintf("%s_l%d.t%d", drawPrefix, l, t)
			tables = append(tables, map[string]any{"key": key, "name": strings.TrimPrefix(key, "spark_catalog/"), "cols": cols})
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var feeds []map[string]any
	for l := 1; l < drawLayers; l++ {
		prev := drawColumns(l - 1)
		for _, tc := range drawColumns(l) {
			for _, i := range rng.Perm(len(prev))[:drawFanIn] {
				feeds = append(feeds, map[string]any{"s": drawKey(l-1, prev[i][0], prev[i][1]), "t": drawKey(l, tc[0], tc[1]),
					"job": fmt.Sprintf("default/draw_l%d", l)})
			}
		}
	}
	if err := stack.WipeKeys(ctx, env.driver, drawPrefix); err != nil {
		return fmt.Errorf("ui: the draw graph: %w", err)
	}
	for _, q := range []struct {
		cypher string
		rows   []map[string]any
	}{
		{`UNWIND $rows AS row
CREATE (d:Dataset {key: row.key, namespace: 'spark_catalog', name: row.name, kind: 'table', firstSeen: $now, lastSeen: $now})
WITH d, row UNWIND row.cols AS c
CREATE (d)-[:HAS_COLUMN]->(:Column {key: c.key, name: c.name, table: row.name, datasetKey: row.key, dataType: 'decimal(20,2)', firstSeen: $now, lastSeen: $now})`, tables},
		{`UNWIND $rows AS row
MATCH (s:Column {key: row.s}) MATCH (t:Column {key: row.t})
CREATE (s)-[:FEEDS {job: row.job, roles: ['DIRECT/TRANSFORMATION'], exprs: ['s * 2'], masked: [false], type: 'DIRECT', subtype: 'TRANSFORMATION', firstSeen: $now, lastSeen: $now}]->(t)`, feeds},
	} {
		if _, err := neo4j.ExecuteQuery(ctx, env.driver, q.cypher, map[string]any{"rows": q.rows, "now": now}, neo4j.EagerResultTransformer); err != nil {
			return fmt.Errorf("ui: the draw graph: %w", err)
		}
	}
	return nil
}

// drawRun is one line of bench/draw.cjs: times in ms since the navigation (drawn: the page's
// DOM built; painted: the next frame after it), since the lineage request, and the page's
// measures of its parts (answer: request to answer; layout: ELK; svg: the SVG built and fitted).
type drawRun struct {
	URL                   string  `json:"url"`
	NavigationToDrawnMs   float64 `json:"navigationToDrawnMs"`
	NavigationToPaintedMs float64 `json:"navigationToPaintedMs"`
	RequestToDrawnMs      float64 `json:"requestToDrawnMs"`
	AnswerMs              float64 `json:"answerMs"`
	LayoutMs              float64 `json:"layoutMs"`
	SVGMs                 float64 `json:"svgMs"`
	Boxes, Columns        int
	Links                 int
}

func benchDraw(ctx context.Context, r *report, base string) error {
	chromium, err := exec.CommandContext(ctx, "dev/chromium").Output()
	if err != nil {
		return fmt.Errorf("ui: dev/chromium: %w", err)
	}
	view := func(cols []string) string {
		v := url.Values{"column": cols, "dir": {"up"}, "steps": {"5"}}
		return base + "/#/lineage?" + v.Encode()
	}
	var top []string
	for _, tc := range drawColumns(drawLayers - 1) {
		top = append(top, drawKey(drawLayers-1, tc[0], tc[1]))
	}
	big, small := view(top), view([]string{drawKey(drawSmallOf, 0, 0)})
	const runs = 5
	cmd := exec.CommandContext(ctx, "node", "bench/draw.cjs", fmt.Sprint(runs), small, big)
	cmd.Env = append(os.Environ(), "COLLINE_CHROMIUM="+strings.TrimSpace(string(chromium)))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	byURL := map[string][]drawRun{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var d drawRun
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("ui: bench/draw.cjs said %q: %w", sc.Text(), err)
		}
		byURL[d.URL] = append(byURL[d.URL], d)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("ui: bench/draw.cjs: %w", err)
	}
	median := func(runs []drawRun, f func(drawRun) float64) float64 {
		xs := make([]float64, len(runs))
		for i, d := range runs {
			xs[i] = f(d)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	for _, u := range []string{small, big} {
		rs := byURL[u]
		if len(rs) == 0 {
			return fmt.Errorf("ui: no drawing of %s", u)
		}
		d := rs[0]
		var each []string
		for _, d := range rs {
			each = append(each, fmt.Sprintf("%.0f/%.0f/%.0f=%.0f+%.0f+%.0f", d.NavigationToDrawnMs, d.NavigationToPaintedMs, d.RequestToDrawnMs, d.AnswerMs, d.LayoutMs, d.SVGMs))
		}
		r.notef("ui: draw %d tables, %d columns, %d links, medians: navigation→drawn %.0f ms, →painted %.0f ms; request→drawn %.0f ms = answer %.0f + layout %.0f + svg %.0f (runs, drawn/painted/request=answer+layout+svg: %s)",
			d.Boxes, d.Columns, d.Links, median(rs, func(d drawRun) float64 { return d.NavigationToDrawnMs }),
			median(rs, func(d drawRun) float64 { return d.NavigationToPaintedMs }),
			median(rs, func(d drawRun) float64 { return d.RequestToDrawnMs }), median(rs, func(d drawRun) float64 { return d.AnswerMs }),
			median(rs, func(d drawRun) float64 { return d.LayoutMs }), median(rs, func(d drawRun) float64 { return d.SVGMs }), strings.Join(each, " "))
	}
	b, s := byURL[big], byURL[small]
	nav := median(b, func(d drawRun) float64 { return d.NavigationToDrawnMs })
	req := median(b, func(d drawRun) float64 { return d.RequestToDrawnMs })
	painted := median(b, func(d drawRun) float64 { return d.NavigationToPaintedMs })
	baseNav := median(s, func(d drawRun) float64 { return d.NavigationToDrawnMs })
	r.add(row{part: "ui", metric: fmt.Sprintf("first draw of an upstream of %d columns over %d edges (navigation → drawn, median of %d)", b[0].Columns, b[0].Links, runs),
		value: fmt.Sprintf("%.0f ms", nav), baseline: fmt.Sprintf("%.0f ms for %d columns", baseNav, s[0].Columns), target: "< 1 s", met: nav < 1000,
		result: fmt.Sprintf("%.1f× baseline; request → drawn %.0f ms; navigation → painted %.0f ms", nav/baseNav, req, painted)})
	return nil
}

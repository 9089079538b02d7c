package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	promql "github.com/prometheus/prometheus/promql/parser"
)

// Colline's metrics are read from the running consumer's /metrics and from its Go source (vectors
// with no series yet, such as colline_plan_unknown_nodes_total, are absent from /metrics), so the
// dashboard and the alert rules are checked against what the code exports, not a list kept by hand.

// metric is one metric family the consumer exposes: its label names.
type metric struct {
	labels []string
}

// targetLabels are attached by Prometheus and the ServiceMonitor, not by the consumer.
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "endpoint", "container"}

// external are metrics the rules and the dashboard use that colline does not export.
var external = map[string]metric{
	"up": {},
	// kafka_exporter (prometheus-community/prometheus-kafka-exporter): consumer group lag and topic offsets.
	"kafka_consumergroup_lag_sum":          {labels: []string{"consumergroup", "topic"}},
	"kafka_topic_partition_current_offset": {labels: []string{"topic", "partition"}},
}

var (
	metricsOnce sync.Once
	metricsSet  map[string]metric
	metricsErr  error
)

// exported returns every metric name the consumer registers (histograms with their _bucket, _sum
// and _count series), with label names.
func exported(t *testing.T) map[string]metric {
	t.Helper()
	metricsOnce.Do(func() {
		metricsSet, metricsErr = scanMetrics(repo)
		if metricsErr != nil {
			return
		}
		var scraped map[string]metric
		scraped, metricsErr = scrape(t)
		for name, m := range scraped {
			if old, ok := metricsSet[name]; ok {
				m.labels = append(m.labels, old.labels...)
			}
			metricsSet[name] = m
		}
	})
	if metricsErr != nil {
		t.Fatal(metricsErr)
	}
	if len(metricsSet) < 5 {
		t.Fatalf("found only %d colline metrics in the Go source: is the scan broken?", len(metricsSet))
	}
	return metricsSet
}

func scanMetrics(root string) (map[string]metric, error) {
	out := map[string]metric{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "deploy", "listener", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			// A metric is a call whose first argument is a prometheus.<Kind>Opts literal: a
			// prometheus.New* constructor, or a helper such as ingest's define.
			if len(call.Args) == 0 {
				return true
			}
			opts, ok := call.Args[0].(*ast.CompositeLit)
			if !ok {
				return true
			}
			typ, ok := opts.Type.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := typ.X.(*ast.Ident); !ok || x.Name != "prometheus" || !strings.HasSuffix(typ.Sel.Name, "Opts") {
				return true
			}
			kind := strings.TrimSuffix(typ.Sel.Name, "Opts") // Counter, Gauge, Histogram, Summary
			parts := map[string]string{}
			var labels []string
			for _, e := range opts.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key := kv.Key.(*ast.Ident).Name
				if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					parts[key], _ = strconv.Unquote(lit.Value)
				}
				if key == "ConstLabels" {
					if cl, ok := kv.Value.(*ast.CompositeLit); ok {
						for _, e := range cl.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								if lit, ok := kv.Key.(*ast.BasicLit); ok {
									s, _ := strconv.Unquote(lit.Value)
									labels = append(labels, s)
								}
							}
						}
					}
				}
			}
			if parts["Name"] == "" {
				return true
			}
			if len(call.Args) > 1 { // the label names: []string{...}, or one string
				switch a := call.Args[1].(type) {
				case *ast.CompositeLit:
					for _, e := range a.Elts {
						if lit, ok := e.(*ast.BasicLit); ok {
							s, _ := strconv.Unquote(lit.Value)
							labels = append(labels, s)
						}
					}
				case *ast.BasicLit:
					if a.Kind == token.STRING {
						s, _ := strconv.Unquote(a.Value)
						labels = append(labels, s)
					}
				}
			}
			var name []string
			for _, k := range []string{"Namespace", "Subsystem", "Name"} {
				if parts[k] != "" {
					name = append(name, parts[k])
				}
			}
			full := strings.Join(name, "_")
			m := metric{labels: labels}
			out[full] = m
			if kind == "Histogram" {
				out[full+"_bucket"] = metric{labels: append(slices.Clone(labels), "le")}
				out[full+"_sum"], out[full+"_count"] = m, m
			}
			if kind == "Summary" {
				out[full+"_sum"], out[full+"_count"] = m, m
			}
			return true
		})
		return nil
	})
	return out, err
}

// checkPromQL parses expr and checks that every metric it selects is exported by the consumer (or
// listed in external), and that every label it matches or groups by exists.
func checkPromQL(t *testing.T, where, expr string) {
	t.Helper()
	known := exported(t)
	e, err := promql.NewParser(promql.Options{}).ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, expr)
		return
	}
	allLabels := slices.Clone(targetLabels)
	for _, m := range known {
		allLabels = append(allLabels, m.labels...)
	}
	for _, m := range external {
		allLabels = append(allLabels, m.labels...)
	}
	promql.Inspect(e, func(n promql.Node, _ []promql.Node) error {
		switch x := n.(type) {
		case *promql.VectorSelector:
			m, ok := known[x.Name]
			if !ok {
				if m, ok = external[x.Name]; !ok {
					t.Errorf("%s: metric %q is not exported by the consumer", where, x.Name)
					return nil
				}
			}
			for _, lm := range x.LabelMatchers {
				if lm.Name != "__name__" && !slices.Contains(m.labels, lm.Name) && !slices.Contains(targetLabels, lm.Name) {
					t.Errorf("%s: %s has no label %q (it has %v)", where, x.Name, lm.Name, m.labels)
				}
			}
		case *promql.AggregateExpr:
			for _, l := range x.Grouping {
				if !slices.Contains(allLabels, l) {
					t.Errorf("%s: grouping by unknown label %q", where, l)
				}
			}
		}
		return nil
	})
}

// scrape starts the consumer (built as the Dockerfile builds it) with Kafka and Neo4j pointing at
// closed ports, reads its /metrics and stops it.
func scrape(t *testing.T) (map[string]metric, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(consumer(t))
	cmd.Env = append(os.Environ(), "COLLINE_HTTP_ADDR="+addr, "COLLINE_KAFKA_BROKERS=127.0.0.1:1",
		"COLLINE_NEO4J_URI=bolt://127.0.0.1:1", "COLLINE_LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	var body []byte
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == 200 {
			break
		}
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("no /metrics from the consumer on %s", addr)
	}
	out := map[string]metric{}
	series := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? `)
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for _, line := range strings.Split(string(body), "\n") {
		m := series.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		mt := out[m[1]]
		for _, l := range label.FindAllStringSubmatch(m[3], -1) {
			if !slices.Contains(mt.labels, l[1]) {
				mt.labels = append(mt.labels, l[1])
			}
		}
		out[m[1]] = mt
	}
	return out, nil
}

func TestMetricsScan(t *testing.T) {
	m := exported(t)
	for _, name := range []string{"colline_build_info", "colline_ingest_messages_total", "colline_ingest_stage_duration_seconds_bucket",
		"colline_plan_unknown_nodes_total", "colline_kafka_reader_messages_total", "go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := m[name]; !ok {
			t.Errorf("scan did not find %s", name)
		}
	}
	if !slices.Contains(m["colline_ingest_dead_letters_total"].labels, "reason") {
		t.Errorf("dead letters: labels %v", m["colline_ingest_dead_letters_total"].labels)
	}
}

package config

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/openlineage/emit"
	"github.com/colline/colline/openlineage/intake"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/retention"
)

// Each default has one home, a package constant used by the code that applies it. These are the
// variables whose default is such a constant: the config tag, the Helm value and the
// docs/operations.md row must all say the same.
var homes = map[string]any{
	"COLLINE_MAX_EVENT_BYTES":       process.DefaultMaxBytes,
	"COLLINE_KAFKA_MAX_BYTES":       ingest.DefaultKafkaMaxBytes,
	"COLLINE_BATCH_SIZE":            ingest.DefaultBatchSize,
	"COLLINE_BATCH_MAX_BYTES":       ingest.DefaultBatchMaxBytes,
	"COLLINE_BATCH_WAIT":            ingest.DefaultBatchWait,
	"COLLINE_SHUTDOWN_TIMEOUT":      ingest.DefaultShutdownTimeout,
	"COLLINE_METRICS_INTERVAL":      ingest.DefaultMonitorInterval,
	"COLLINE_KAFKA_SESSION_TIMEOUT": ingest.DefaultSessionTimeout,
	"COLLINE_NEO4J_WRITE_TIMEOUT":   graph.DefaultWriteTimeout,
	"COLLINE_NEO4J_SLOW_WRITE":      ingest.DefaultSlowWrite,
	"COLLINE_RETENTION_EDGE_ACTION": retention.DefaultEdgeAction,
	"COLLINE_RETENTION_INTERVAL":    retention.DefaultInterval,
	"COLLINE_RETENTION_BATCH_SIZE":  retention.DefaultBatchSize,
	"COLLINE_MEMORY_LIMIT_RATIO":    DefaultMemoryLimitRatio,
	"COLLINE_MAX_PLAN_DEPTH":        plan.DefaultBudget.Depth,
	"COLLINE_MAX_PLAN_NODES":        plan.DefaultBudget.Nodes,
	"COLLINE_MAX_PLAN_EDGES":        plan.DefaultBudget.Edges,
	"COLLINE_MAX_PLAN_WORK":         plan.DefaultBudget.Work,
	"COLLINE_PLAN_REUSE_MB":         process.DefaultReuseMB,

	"COLLINE_OPENLINEAGE_HTTP_MAX_BYTES":      intake.DefaultMaxBytes,
	"COLLINE_OPENLINEAGE_HTTP_MAX_CONCURRENT": intake.DefaultMaxConcurrent,
	"COLLINE_OPENLINEAGE_EMIT_TIMEOUT":        emit.DefaultTimeout,
}

// helmDiffers are the Helm values that deliberately differ from the consumer's (or the
// explorer's) default.
var helmDiffers = map[string]string{
	"COLLINE_KAFKA_BROKERS": "required in the chart: no local default in a cluster",
	"COLLINE_NEO4J_URI":     "required in the chart: no local default in a cluster",
	"COLLINE_NEO4J_USER":    "the chart authenticates as neo4j by default; the local services need no user",
}

// tagDefaults returns the default tag of every variable of Config and UI (TestUISharesVariables
// checks that the variables both read agree).
func tagDefaults(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, typ := range []reflect.Type{reflect.TypeFor[Config](), reflect.TypeFor[UI]()} {
		for name, f := range fields(typ) {
			out[Prefix+"_"+strings.ToUpper(splitWords(name))] = f.Tag.Get("default")
		}
	}
	return out
}

// splitWords is envconfig's split_words: Neo4jURI becomes Neo4j_URI.
func splitWords(name string) string {
	words := regexp.MustCompile(`([^A-Z]+|[A-Z]+[^A-Z]+|[A-Z]+)`).FindAllString(name, -1)
	re := regexp.MustCompile(`([A-Z]+)([A-Z][^A-Z]+)`)
	var parts []string
	for _, w := range words {
		if m := re.FindStringSubmatch(w); m != nil {
			parts = append(parts, m[1], m[2])
		} else {
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, "_")
}

// same reports whether text is the value v, parsed as v's type.
func same(text string, v any) bool {
	switch v := v.(type) {
	case time.Duration:
		d, err := time.ParseDuration(text)
		return err == nil && d == v
	default:
		return text == fmt.Sprint(v)
	}
}

func TestDefaultsHaveOneHome(t *testing.T) {
	tags := tagDefaults(t)
	docs := docsDefaults(t)
	helm := helmValues(t)
	all := maps.Clone(homes)
	maps.Copy(all, uiHomes)
	for name, home := range all {
		tag, ok := tags[name]
		if !ok {
			t.Errorf("%s: no such variable in Config", name)
			continue
		}
		if !same(tag, home) {
			t.Errorf("%s: the config tag says %q, the package constant %v; change the tag", name, tag, home)
		}
		if d, ok := docs[name]; !ok || !same(d, home) {
			t.Errorf("%s: docs/operations.md says %q, the package constant %v; run go test ./ingest -run TestOperationsDoc -update", name, d, home)
		}
	}
	for name, v := range helm {
		tag, ok := tags[name]
		if !ok {
			t.Errorf("values.yaml names %s, which Config does not have", name)
			continue
		}
		_, differs := helmDiffers[name]
		if matches := v == tag || sameDuration(v, tag); matches == differs {
			t.Errorf("%s: values.yaml %q, config default %q (listed as deliberately different: %v)", name, v, tag, differs)
		}
	}
	for _, name := range []string{"COLLINE_MAX_EVENT_BYTES", "COLLINE_KAFKA_MAX_BYTES", "COLLINE_BATCH_SIZE", "COLLINE_SHUTDOWN_TIMEOUT",
		"COLLINE_MAX_PLAN_DEPTH", "COLLINE_MAX_PLAN_NODES", "COLLINE_MAX_PLAN_EDGES", "COLLINE_MAX_PLAN_WORK", "COLLINE_PLAN_REUSE_MB"} {
		if _, ok := helm[name]; !ok {
			t.Errorf("values.yaml has no value naming (%s)", name)
		}
	}
}

func sameDuration(a, b string) bool {
	x, err1 := time.ParseDuration(a)
	y, err2 := time.ParseDuration(b)
	return err1 == nil && err2 == nil && x == y
}

// docsDefaults reads the Default column of the variables table of docs/operations.md.
func docsDefaults(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	row := regexp.MustCompile("^\\| `(COLLINE_[A-Z0-9_]+)` \\| [^|]+ \\| `?([^|`]*)`? \\|")
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = strings.TrimSpace(m[2])
		}
	}
	return out
}

// helmValues reads the scalar values of deploy/helm/colline/values.yaml whose comment names the
// variable they set, "(COLLINE_X)".
func helmValues(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "deploy", "helm", "colline", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	names := regexp.MustCompile(`\((COLLINE_[A-Z0-9_]+)[),]`)
	value := regexp.MustCompile(`^\s*[A-Za-z0-9]+:\s*(.*?)\s*$`)
	var pending string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			if m := names.FindStringSubmatch(line); m != nil {
				pending = m[1]
			}
			continue
		}
		if m := value.FindStringSubmatch(line); m != nil && pending != "" {
			out[pending] = strings.Trim(m[1], `"`)
			if out[pending] == "[]" {
				out[pending] = ""
			}
		}
		pending = ""
	}
	return out
}

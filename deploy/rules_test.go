package deploy

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	promql "github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"sigs.k8s.io/yaml"
)

// The alert rules are checked without a Prometheus and without promtool (building promtool from
// the module proxy takes over 12 minutes on a CI machine): Prometheus's own rule-file parser
// validates them as `promtool check rules` does, and its PromQL test engine evaluates each alert
// expression on synthetic series, as `promtool test rules` would (without the `for` delay).

// rules renders the chart's PrometheusRule with the rule set on, returning its groups as a rule file.
func rules(t *testing.T, args ...string) (*monitoringv1.PrometheusRule, []byte) {
	t.Helper()
	base := []string{"-f", filepath.Join(chart, "ci", "default-values.yaml"), "--set", "metrics.prometheusRule.enabled=true"}
	m, err := render(t, kubeVersions[0], append(base, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	o := find(split(t, m), "PrometheusRule")
	if o == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	var pr monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(o.Raw, &pr); err != nil {
		t.Fatal(err)
	}
	file, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	return &pr, file
}

func TestAlertRules(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chart, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, values := range []string{"default-values.yaml", "all-on-values.yaml"} {
		t.Run(values, func(t *testing.T) {
			pr, file := rules(t, "-f", filepath.Join(chart, "ci", values))
			if _, errs := rulefmt.Parse(file, false, model.UTF8Validation, promql.NewParser(promql.Options{}),
				slog.New(slog.NewTextHandler(io.Discard, nil))); len(errs) > 0 {
				t.Fatalf("rule file does not pass Prometheus's checks: %v\n%s", errs, file)
			}
			n := 0
			for _, g := range pr.Spec.Groups {
				for _, r := range g.Rules {
					if r.Alert == "" {
						continue
					}
					n++
					checkPromQL(t, r.Alert, r.Expr.String())
					if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
						t.Errorf("%s: severity %q", r.Alert, s)
					}
					if !strings.HasPrefix(r.Alert, "Colline") {
						continue // extraRules from the values file
					}
					for _, a := range []string{"summary", "description", "runbook_url"} {
						if r.Annotations[a] == "" {
							t.Errorf("%s: no %s annotation", r.Alert, a)
						}
					}
					// The runbook_url anchor is a heading of the chart's README.
					anchor := r.Annotations["runbook_url"][strings.LastIndex(r.Annotations["runbook_url"], "#")+1:]
					if !regexp.MustCompile(`(?mi)^#+ ` + anchor + `$`).Match(readme) {
						t.Errorf("%s: README.md has no heading for the runbook anchor #%s", r.Alert, anchor)
					}
				}
			}
			if n < 7 {
				t.Errorf("only %d alerts", n)
			}
		})
	}
}

// TestAlertDisable: alerts can be left out by name.
func TestAlertDisable(t *testing.T) {
	_, file := rules(t, "--set", "metrics.prometheusRule.disabled={CollineNotReady}")
	if strings.Contains(string(file), "CollineNotReady") || !strings.Contains(string(file), "CollineConsumerDown") {
		t.Errorf("disabled alert still there, or others gone:\n%s", file)
	}
}

// TestAlertExpressions evaluates every default alert's expression on synthetic series, firing and
// not firing. Series carry the job and namespace labels the ServiceMonitor gives them.
func TestAlertExpressions(t *testing.T) {
	pr, _ := rules(t)
	expr := map[string]string{}
	for _, r := range pr.Spec.Groups[0].Rules {
		expr[r.Alert] = r.Expr.String()
	}
	const sel = `job="t-colline-metrics", namespace="colline"`
	tests := []struct {
		alert  string
		series string            // load 1m block
		at     map[string]string // evaluation time -> expected `count(expr) or vector(0)`... see below
	}{
		{"CollineConsumerDown", `up{` + sel + `, pod="a"} 1x10 0x30`,
			map[string]string{"5m": "0", "20m": "1"}},
		{"CollineConsumerDown", `up{job="other", namespace="colline"} 1x30`,
			map[string]string{"5m": "1"}}, // no target at all is down too
		{"CollinePlanParseFailures", `colline_ingest_dead_letters_total{` + sel + `, reason="unsupported_plan"} 0x20 1x40
colline_ingest_dead_letters_total{` + sel + `, reason="write_rejected"} 0+1x60`,
			map[string]string{"15m": "0", "25m": "1", "45m": "0"}},
		{"CollineDeadLettersGrowing", `colline_ingest_dead_letters_total{` + sel + `, reason="invalid_json"} 0x10 0+1x50`,
			map[string]string{"5m": "0", "30m": "1"}},
		{"CollineDeadLettersGrowing", `colline_ingest_dead_letters_total{` + sel + `, reason="invalid_json"} 5x60`,
			map[string]string{"30m": "0"}},
		{"CollineConsumerLagGrowing", `colline_ingest_lag_records{` + sel + `, pod="a", topic="colline.plans", partition="0"} 0+20x60
colline_ingest_lag_records{` + sel + `, pod="b", topic="colline.plans", partition="0"} 0+20x60
colline_ingest_lag_records{` + sel + `, pod="a", topic="colline.plans", partition="1"} 0+5x60`,
			map[string]string{"2m": "0", "30m": "1"}}, // below the threshold at first
		{"CollineConsumerLagGrowing", `colline_ingest_lag_records{` + sel + `, pod="a", topic="colline.plans", partition="0"} 5000x60`,
			map[string]string{"30m": "0"}}, // high but steady: nothing arrives
		{"CollineConsumerLagGrowing", `colline_ingest_lag_records{` + sel + `, pod="a", topic="colline.plans", partition="0"} 5000-50x60`,
			map[string]string{"30m": "0"}}, // catching up
		{"CollineNeo4jWriteRetries", `colline_ingest_retries_total{` + sel + `, operation="write"} 0x10 0+3x30
colline_ingest_retries_total{` + sel + `, operation="fetch"} 0+3x60`,
			map[string]string{"5m": "0", "25m": "1"}},
		{"CollineNeo4jWritesRejected", `colline_ingest_dead_letters_total{` + sel + `, reason="write_rejected"} 0x10 2x30
colline_ingest_dead_letters_total{` + sel + `, reason="invalid_json"} 0+1x60`,
			map[string]string{"5m": "0", "15m": "1"}},
		{"CollineNotReady", `colline_ingest_ready{` + sel + `, pod="a"} 0x20
colline_ingest_ready{` + sel + `, pod="b"} 1x20`,
			map[string]string{"10m": "1"}},
		{"CollineUnknownPlanNodes", `colline_plan_unknown_nodes_total{` + sel + `, class="Foo"} 0x10 5x100`,
			map[string]string{"5m": "0", "20m": "1", "100m": "0"}},
		{"CollineTagPolicyViolation", `colline_tags_policy_arrivals_total{` + sel + `, pod="a", tag="pii"} 0x10 2x60
colline_tags_policy_arrivals_total{job="other", namespace="colline", tag="pii"} 0+1x70`,
			map[string]string{"5m": "0", "15m": "1", "40m": "0"}},
	}
	covered := map[string]bool{}
	for i, tc := range tests {
		e, ok := expr[tc.alert]
		if !ok {
			t.Fatalf("no alert %s", tc.alert)
		}
		covered[tc.alert] = true
		t.Run(fmt.Sprintf("%s/%d", tc.alert, i), func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "load 1m\n")
			for _, l := range strings.Split(tc.series, "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
			for at, want := range tc.at {
				// count() turns "fires" into 1 series and "does not fire" into 0.
				fmt.Fprintf(&b, "\neval instant at %s count(%s) or vector(0)\n  {} %s\n", at, e, want)
			}
			promqltest.RunTest(t, b.String(), promqltest.NewTestEngine(t, false, 5*time.Minute, 50000))
		})
	}
	for a := range expr {
		if !covered[a] {
			t.Errorf("alert %s has no expression test", a)
		}
	}
}

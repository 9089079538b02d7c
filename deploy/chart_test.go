package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// kubeVersions are the oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the
// newest the vendored schemas know.
var kubeVersions = []string{"1.25.0", "1.37.0"}

func TestChartLint(t *testing.T) {
	helm := tool(t, "helm")
	for _, f := range ciValues(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, err := run(t, nil, helm, "lint", "--strict", chart, "-f", f, "--kube-version", kubeVersions[0])
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}

// TestChartRender renders every CI values file for every Kubernetes version, validates the core
// objects with kubeconform against the vendored schemas (strict: unknown fields fail), decodes
// the prometheus-operator objects strictly into their Go types, and checks the Deployment's
// security and wiring.
func TestChartRender(t *testing.T) {
	kubeconform := tool(t, "kubeconform")
	schemas := schemaDir(t)
	vars := consumerVariables(t)
	for _, f := range ciValues(t) {
		for _, kv := range kubeVersions {
			t.Run(filepath.Base(f)+"/"+kv, func(t *testing.T) {
				manifest, err := render(t, kv, "-f", f)
				if err != nil {
					t.Fatal(err)
				}
				out, err := run(t, []byte(manifest), kubeconform, "-strict", "-summary", "-output", "text",
					"-kubernetes-version", kv,
					"-schema-location", filepath.Join(schemas, "{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}", "{{ .ResourceKind }}{{ .KindSuffix }}.json"),
					"-skip", "ServiceMonitor,PrometheusRule")
				if err != nil {
					t.Fatalf("kubeconform: %v\n%s", err, out)
				}
				objs := split(t, manifest)
				for _, o := range objs {
					var err error
					switch o.Kind {
					case "ServiceMonitor":
						err = yaml.UnmarshalStrict(o.Raw, &monitoringv1.ServiceMonitor{})
					case "PrometheusRule":
						err = yaml.UnmarshalStrict(o.Raw, &monitoringv1.PrometheusRule{})
					}
					if err != nil {
						t.Errorf("%s %s: %v", o.Kind, o.Name, err)
					}
				}
				checkDeployment(t, objs, vars)
			})
		}
	}
}

func checkDeployment(t *testing.T, objs []object, vars []string) {
	t.Helper()
	d := find(objs, "Deployment")
	if d == nil {
		t.Fatal("no Deployment")
	}
	pod := get(d.Doc, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	want := map[string]any{
		"pod runAsNonRoot":                   get(pod, "securityContext", "runAsNonRoot"),
		"pod seccompProfile":                 get(pod, "securityContext", "seccompProfile", "type"),
		"automountServiceAccountToken":       get(pod, "automountServiceAccountToken"),
		"readOnlyRootFilesystem":             get(c, "securityContext", "readOnlyRootFilesystem"),
		"allowPrivilegeEscalation":           get(c, "securityContext", "allowPrivilegeEscalation"),
		"capabilities.drop":                  fmt.Sprint(get(c, "securityContext", "capabilities", "drop")),
		"liveness path":                      get(c, "livenessProbe", "httpGet", "path"),
		"readiness path":                     get(c, "readinessProbe", "httpGet", "path"),
		"probes on the metrics port":         fmt.Sprintln(get(c, "livenessProbe", "httpGet", "port"), get(c, "readinessProbe", "httpGet", "port"), get(c, "ports", 0, "name")),
		"checksum/config is a sha256":        len(fmt.Sprint(get(d.Doc, "spec", "template", "metadata", "annotations", "checksum/config"))),
		"envFrom ConfigMap is rendered":      get(c, "envFrom", 0, "configMapRef", "name") == find(objs, "ConfigMap").Name,
		"container port = COLLINE_HTTP_ADDR": fmt.Sprintf(":%v", get(c, "ports", 0, "containerPort")) == get(find(objs, "ConfigMap").Doc, "data", "COLLINE_HTTP_ADDR"),
	}
	expect := map[string]any{
		"pod runAsNonRoot": true, "pod seccompProfile": "RuntimeDefault", "automountServiceAccountToken": false,
		"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities.drop": "[ALL]",
		"liveness path": "/healthz", "readiness path": "/readyz", "probes on the metrics port": "metrics metrics metrics\n",
		"checksum/config is a sha256": 64, "envFrom ConfigMap is rendered": true, "container port = COLLINE_HTTP_ADDR": true,
	}
	for k, v := range expect {
		if fmt.Sprint(want[k]) != fmt.Sprint(v) {
			t.Errorf("Deployment %s: got %v, want %v", k, want[k], v)
		}
	}
	// The Secret in envFrom is the rendered one, or the existing one, or none.
	secretRef, _ := get(c, "envFrom", 1, "secretRef", "name").(string)
	if s := find(objs, "Secret"); s != nil && secretRef != s.Name {
		t.Errorf("envFrom secretRef %q, rendered Secret %q", secretRef, s.Name)
	}
	// Every variable the ConfigMap sets is one the consumer reads (extraEnv may add others: they
	// are marked in the CI values by names the consumer does not know, and skipped here).
	for k := range get(find(objs, "ConfigMap").Doc, "data").(map[string]any) {
		if !slices.Contains(vars, k) && !strings.HasPrefix(k, "COLLINE_EXAMPLE_") {
			t.Errorf("ConfigMap sets %s, which the consumer does not read (its variables: %v)", k, vars)
		}
	}
}

// TestChartRejects: contradictory or missing values fail with a message that says what to do.
func TestChartRejects(t *testing.T) {
	base := []string{"--set", "config.kafka.brokers={k:9092}", "--set", "config.neo4j.uri=bolt://n:7687", "--set", "secret.neo4jPassword=x"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no brokers", []string{"--set", "config.neo4j.uri=bolt://n:7687", "--set", "secret.neo4jPassword=x"}, "config.kafka.brokers is required"},
		{"no Neo4j URI", []string{"--set", "config.kafka.brokers={k:9092}", "--set", "secret.neo4jPassword=x"}, "config.neo4j.uri is required"},
		{"no password", []string{"--set", "config.kafka.brokers={k:9092}", "--set", "config.neo4j.uri=bolt://n:7687"}, "secret.neo4jPassword is required"},
		{"password and existing Secret", append(slices.Clone(base), "--set", "secret.existingSecret=s"), "only one of secret.existingSecret and secret.neo4jPassword"},
		{"password without user", append(slices.Clone(base), "--set", "config.neo4j.user="), "config.neo4j.user is empty"},
		{"password with create=false", append(slices.Clone(base), "--set", "secret.create=false"), "secret.create is false"},
		{"both PDB bounds", append(slices.Clone(base), "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1"), "only one of minAvailable and maxUnavailable"},
		{"schema: bad log level", append(slices.Clone(base), "--set", "config.logLevel=verbose"), "logLevel"},
		{"schema: misspelt key", append(slices.Clone(base), "--set", "topologySpreadContraints[0].maxSkew=1"), "topologySpreadContraints"},
		{"schema: credentials in the URI", []string{"--set", "config.kafka.brokers={k:9092}", "--set", "config.neo4j.uri=bolt://u:p@n:7687", "--set", "secret.neo4jPassword=x"}, "uri"},
		{"schema: unknown alert", append(slices.Clone(base), "--set", "metrics.prometheusRule.disabled={CollineTypo}"), "disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, kubeVersions[0], tc.args...)
			if err == nil {
				t.Fatal("rendered without error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not mention %q:\n%v", tc.want, err)
			}
		})
	}
}

// TestChartChecksum: a config change changes the pod template, so pods roll.
func TestChartChecksum(t *testing.T) {
	f := filepath.Join(chart, "ci", "default-values.yaml")
	annotation := func(args ...string) string {
		m, err := render(t, kubeVersions[0], append([]string{"-f", f}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(get(find(split(t, m), "Deployment").Doc, "spec", "template", "metadata", "annotations"))
	}
	a, b, c := annotation(), annotation("--set", "config.batchSize=7"), annotation("--set", "secret.neo4jPassword=other")
	if a == b || a == c || b == c {
		t.Errorf("checksum annotations do not follow the config:\n%s\n%s\n%s", a, b, c)
	}
}

// TestChartReadmeValues: every value of values.yaml is in the README's table.
func TestChartReadmeValues(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(chart, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	// Blocks documented as one row: passed to Kubernetes as they are.
	whole := []string{"podSecurityContext", "securityContext", "livenessProbe", "readinessProbe", "resources"}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 && !slices.Contains(whole, prefix) {
			for k, x := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, x)
			}
			return
		}
		if !strings.Contains(string(readme), "| `"+prefix+"` |") {
			t.Errorf("README.md's values table has no row for %s", prefix)
		}
	}
	walk("", values)
}

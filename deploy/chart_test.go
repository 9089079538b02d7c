package deploy

import (
	"fmt"
	"os"
	"path"
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
	// The Secret in envFrom is the rendered one, or the existing one, or none (with
	// secret.asFiles it is mounted instead: checkSecretFiles).
	secretRef, _ := get(c, "envFrom", 1, "secretRef", "name").(string)
	data := get(find(objs, "ConfigMap").Doc, "data").(map[string]any)
	_, asFiles := data["COLLINE_NEO4J_PASSWORD_FILE"]
	if _, kafka := data["COLLINE_KAFKA_SASL_PASSWORD_FILE"]; kafka {
		asFiles = true
	}
	if s := find(objs, "Secret"); s != nil && secretRef != s.Name && !asFiles {
		t.Errorf("envFrom secretRef %q, rendered Secret %q", secretRef, s.Name)
	}
	checkSecretFiles(t, objs)
	// Every variable the ConfigMap sets is one the consumer reads (extraEnv may add others: they
	// are marked in the CI values by names the consumer does not know, and skipped here).
	for k := range get(find(objs, "ConfigMap").Doc, "data").(map[string]any) {
		if !slices.Contains(vars, k) && !strings.HasPrefix(k, "COLLINE_EXAMPLE_") {
			t.Errorf("ConfigMap sets %s, which the consumer does not read (its variables: %v)", k, vars)
		}
	}
}

// checkSecretFiles: each *_PASSWORD_FILE the ConfigMap sets names a key of the Secret, mounted
// read-only from a secret volume; and then no Secret is in envFrom (no password in the environment).
func checkSecretFiles(t *testing.T, objs []object) {
	t.Helper()
	d := find(objs, "Deployment")
	pod := get(d.Doc, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	data := get(find(objs, "ConfigMap").Doc, "data").(map[string]any)
	for _, k := range []string{"COLLINE_NEO4J_PASSWORD_FILE", "COLLINE_KAFKA_SASL_PASSWORD_FILE"} {
		p, ok := data[k].(string)
		if !ok {
			continue
		}
		if ref := get(c, "envFrom", 1, "secretRef", "name"); ref != nil {
			t.Errorf("%s is set, yet the Secret %v is also passed as variables", k, ref)
		}
		dir, key := path.Dir(p), path.Base(p)
		var volume string
		for i := 0; get(c, "volumeMounts", i) != nil; i++ {
			if get(c, "volumeMounts", i, "mountPath") == dir && get(c, "volumeMounts", i, "readOnly") == true {
				volume, _ = get(c, "volumeMounts", i, "name").(string)
			}
		}
		var secretName any
		for i := 0; get(pod, "volumes", i) != nil; i++ {
			if get(pod, "volumes", i, "name") == volume {
				secretName = get(pod, "volumes", i, "secret", "secretName")
			}
		}
		if volume == "" || secretName == nil {
			t.Errorf("%s=%s: no read-only secret volume mounted at %s", k, p, dir)
			continue
		}
		if s := find(objs, "Secret"); s != nil {
			if s.Name != secretName {
				t.Errorf("%s: volume of Secret %v, rendered Secret %s", k, secretName, s.Name)
			}
			if get(s.Doc, "data", key) == nil {
				t.Errorf("%s=%s: the Secret has no key %s", k, p, key)
			}
		}
	}
}

// TestChartSecretFiles: with secret.asFiles (ci/secure-files-values.yaml) both passwords come from
// files and neither is in the environment; the CA and client certificate paths are set.
func TestChartSecretFiles(t *testing.T) {
	m, err := render(t, kubeVersions[0], "-f", filepath.Join(chart, "ci", "secure-files-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := split(t, m)
	data := get(find(objs, "ConfigMap").Doc, "data").(map[string]any)
	for k, want := range map[string]string{
		"COLLINE_NEO4J_PASSWORD_FILE":      "/etc/colline/secrets/COLLINE_NEO4J_PASSWORD",
		"COLLINE_KAFKA_SASL_PASSWORD_FILE": "/etc/colline/secrets/COLLINE_KAFKA_SASL_PASSWORD",
		"COLLINE_KAFKA_TLS_CA_FILE":        "/etc/colline/tls/ca.pem",
		"COLLINE_KAFKA_TLS_CERT_FILE":      "/etc/colline/tls/client.pem",
		"COLLINE_NEO4J_TLS_CA_FILE":        "/etc/colline/tls/ca.pem",
		"COLLINE_KAFKA_SASL_MECHANISM":     "SCRAM-SHA-512",
	} {
		if data[k] != want {
			t.Errorf("ConfigMap %s = %v, want %s", k, data[k], want)
		}
	}
	for _, k := range []string{"COLLINE_NEO4J_PASSWORD", "COLLINE_KAFKA_SASL_PASSWORD"} {
		if _, ok := data[k]; ok {
			t.Errorf("ConfigMap sets %s", k)
		}
	}
	if strings.Count(m, "secretRef:") != 0 {
		t.Errorf("a Secret is passed with envFrom:\n%s", m)
	}
	checkSecretFiles(t, objs)
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
		{"secret files with secret variables", append(slices.Clone(base), "--set", "secret.asFiles=true", "--set", "secret.extraEnv.COLLINE_X=y"), "secret.asFiles turns off"},
		{"both PDB bounds", append(slices.Clone(base), "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1"), "only one of minAvailable and maxUnavailable"},
		{"schema: bad log level", append(slices.Clone(base), "--set", "config.logLevel=verbose"), "logLevel"},
		{"schema: misspelt key", append(slices.Clone(base), "--set", "topologySpreadContraints[0].maxSkew=1"), "topologySpreadContraints"},
		{"schema: credentials in the URI", []string{"--set", "config.kafka.brokers={k:9092}", "--set", "config.neo4j.uri=bolt://u:p@n:7687", "--set", "secret.neo4jPassword=x"}, "uri"},
		{"schema: unknown alert", append(slices.Clone(base), "--set", "metrics.prometheusRule.disabled={CollineTypo}"), "disabled"},
		{"ui: basic user without password", append(slices.Clone(base), "--set", "ui.enabled=true", "--set", "ui.auth.basicUser=ops"), "ui.secret.basicPassword is required with ui.auth.basicUser"},
		{"ui: proxy header without networks", append(slices.Clone(base), "--set", "ui.enabled=true", "--set", "ui.auth.proxyUserHeader=X-User"), "ui.auth.proxyTrustedNets is required"},
		{"ui: short token", append(slices.Clone(base), "--set", "ui.enabled=true", "--set", "ui.secret.token=short"), "at least 16 characters"},
		{"ui: analyzer token without analyzer", append(slices.Clone(base), "--set", "ui.enabled=true", "--set", "ui.secret.analyzerToken=t"), "ui.analyzerURL is empty"},
		{"ui: schema: steps", append(slices.Clone(base), "--set", "ui.maxSteps=50"), "maxSteps"},
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

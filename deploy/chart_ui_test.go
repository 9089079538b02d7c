package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChartUI renders the explorer (ci/ui-values.yaml): its Deployment runs /colline ui with the
// chart's secure defaults and probes, gets the Neo4j password alone from the consumer's Secret and
// its own secrets from its Secret, sets only variables `colline ui` reads, and its Service selects
// its pods and the consumer's Service does not.
func TestChartUI(t *testing.T) {
	m, err := render(t, kubeVersions[0], "-f", filepath.Join(chart, "ci", "ui-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := split(t, m)
	d := findNamed(objs, "Deployment", "t-colline-ui")
	cm := findNamed(objs, "ConfigMap", "t-colline-ui")
	svc := findNamed(objs, "Service", "t-colline-ui")
	sec := findNamed(objs, "Secret", "t-colline-ui")
	if d == nil || cm == nil || svc == nil || sec == nil {
		t.Fatalf("the explorer's Deployment, ConfigMap, Service and Secret: %v %v %v %v", d != nil, cm != nil, svc != nil, sec != nil)
	}
	pod := get(d.Doc, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	got := map[string]any{
		"command":                fmt.Sprint(get(c, "command")),
		"readOnlyRootFilesystem": get(c, "securityContext", "readOnlyRootFilesystem"),
		"runAsNonRoot":           get(pod, "securityContext", "runAsNonRoot"),
		"liveness":               get(c, "livenessProbe", "httpGet", "path"),
		"readiness":              get(c, "readinessProbe", "httpGet", "path"),
		"port":                   fmt.Sprint(get(c, "ports", 0, "containerPort")),
		"addr":                   get(cm.Doc, "data", "COLLINE_UI_ADDR"),
		"password from":          fmt.Sprint(get(c, "env", 0, "name"), " ", get(c, "env", 0, "valueFrom", "secretKeyRef", "name"), " ", get(c, "env", 0, "valueFrom", "secretKeyRef", "key")),
		"envFrom":                fmt.Sprint(get(c, "envFrom", 0, "configMapRef", "name"), " ", get(c, "envFrom", 1, "secretRef", "name")),
		"replicas":               fmt.Sprint(get(d.Doc, "spec", "replicas")),
	}
	want := map[string]any{
		"command": "[/colline ui]", "readOnlyRootFilesystem": true, "runAsNonRoot": true, "liveness": "/healthz", "readiness": "/readyz",
		"port": "8080", "addr": ":8080", "password from": "COLLINE_NEO4J_PASSWORD t-colline COLLINE_NEO4J_PASSWORD",
		"envFrom": "t-colline-ui t-colline-ui", "replicas": "2",
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("explorer %s: %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"COLLINE_UI_BASIC_PASSWORD", "COLLINE_UI_TOKEN", "COLLINE_UI_ANALYZER_TOKEN"} {
		if get(sec.Doc, "data", k) == nil {
			t.Errorf("the explorer's Secret lacks %s", k)
		}
		if get(cm.Doc, "data", k) != nil {
			t.Errorf("the explorer's ConfigMap holds the secret %s", k)
		}
	}
	// every variable set is one `colline ui` reads (its -h lists them)
	vars := uiVariables(t)
	for _, obj := range []*object{cm, sec} {
		for k := range get(obj.Doc, "data").(map[string]any) {
			if !slices.Contains(vars, k) {
				t.Errorf("the explorer's %s sets %s, which colline ui does not read (%v)", obj.Kind, k, vars)
			}
		}
	}
	// selectors: the explorer's Service selects its pods only
	labels := get(d.Doc, "spec", "template", "metadata", "labels").(map[string]any)
	matches := func(sel any, labels map[string]any) bool {
		for k, v := range sel.(map[string]any) {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	consumerLabels := get(find(objs, "Deployment").Doc, "spec", "template", "metadata", "labels").(map[string]any)
	if !matches(get(svc.Doc, "spec", "selector"), labels) || matches(get(svc.Doc, "spec", "selector"), consumerLabels) {
		t.Errorf("the explorer's Service selector %v: its pods %v, the consumer's %v", get(svc.Doc, "spec", "selector"), labels, consumerLabels)
	}
	if matches(get(find(objs, "Service").Doc, "spec", "selector"), labels) {
		t.Error("the consumer's metrics Service selects the explorer's pods")
	}
	// without ui.enabled nothing of the explorer is rendered
	m, err = render(t, kubeVersions[0], "-f", filepath.Join(chart, "ci", "default-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m, "-ui") {
		t.Error("the explorer is rendered without ui.enabled")
	}
}

// uiVariables returns the COLLINE_* variables `colline ui -h` lists.
func uiVariables(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "colline")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/colline")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/colline: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "ui", "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("colline ui -h: %v\n%s", err, out)
	}
	vars := usageVariables(string(out))
	if len(vars) < 10 {
		t.Fatalf("colline ui -h lists only %v", vars)
	}
	return vars
}

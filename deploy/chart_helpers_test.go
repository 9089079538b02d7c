package deploy

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

const chart = "helm/colline"

// ciValues returns the values files of the chart's CI matrix.
func ciValues(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chart, "ci", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("expected at least 3 values files in %s/ci: %v %v", chart, files, err)
	}
	return files
}

// render runs helm template with release "t" in namespace "colline" and returns the manifest.
func render(t *testing.T, kube string, args ...string) (string, error) {
	t.Helper()
	helm := tool(t, "helm")
	base := []string{"template", "t", chart, "--namespace", "colline", "--kube-version", kube,
		"--api-versions", "monitoring.coreos.com/v1"}
	return run(t, nil, helm, append(base, args...)...)
}

// object is one rendered manifest.
type object struct {
	Kind string
	Name string
	Raw  []byte         // the YAML document
	Doc  map[string]any // decoded
}

// split decodes a multi-document manifest.
func split(t *testing.T, manifest string) []object {
	t.Helper()
	var out []object
	dec := yamlv2.NewDecoder(strings.NewReader(manifest))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered YAML does not parse: %v", err)
		}
		if v == nil {
			continue
		}
		raw, err := yamlv2.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		kind, _ := doc["kind"].(string)
		name, _ := get(doc, "metadata", "name").(string)
		out = append(out, object{Kind: kind, Name: name, Raw: raw, Doc: doc})
	}
	return out
}

func find(objs []object, kind string) *object {
	for i := range objs {
		if objs[i].Kind == kind && !strings.HasSuffix(objs[i].Name, "-ui") { // the consumer's, not the explorer's
			return &objs[i]
		}
	}
	return nil
}

// findNamed returns the object of kind and name, or nil.
func findNamed(objs []object, kind, name string) *object {
	for i := range objs {
		if objs[i].Kind == kind && objs[i].Name == name {
			return &objs[i]
		}
	}
	return nil
}

// get walks a decoded document: map keys and list indexes (ints).
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func joinDocs(objs []object) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		b.WriteString("---\n")
		b.Write(o.Raw)
	}
	return b.Bytes()
}

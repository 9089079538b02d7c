package openlineage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// spec/ is a verbatim copy of ../shared/data/openlineage/spec (dev/openlineage/sync-spec): the
// schemas the consumer embeds are the ones the project validates against.
func TestSpecCopyMatchesShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "data", "openlineage")
	if _, err := os.Stat(filepath.Join(shared, "spec", "OpenLineage.json")); err != nil {
		t.Skipf("no %s (../shared is beside the repository in development and CI)", shared)
	}
	want, _ := filepath.Glob(filepath.Join(shared, "spec", "facets", "*.json"))
	want = append(want, filepath.Join(shared, "spec", "OpenLineage.json"), filepath.Join(shared, "LICENSE"))
	for _, src := range want {
		rel, _ := filepath.Rel(filepath.Join(shared, "spec"), src)
		if filepath.Base(src) == "LICENSE" {
			rel = "LICENSE"
		}
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("spec", rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("spec/%s differs from %s (run dev/openlineage/sync-spec)", rel, src)
		}
	}
	got, _ := filepath.Glob(filepath.Join("spec", "facets", "*.json"))
	if len(got) != len(want)-2 {
		t.Errorf("spec/facets has %d schemas, ../shared %d (run dev/openlineage/sync-spec)", len(got), len(want)-2)
	}
}

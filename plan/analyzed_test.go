package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Analyzed events (testdata/analyzed, captured by dev/capture-analyzed: `colline analyze` on real
// Spark, SQL parsed and analyzed, never run) must give the lineage of the same SQL's run: the
// golden of the scenario, less the run's nested writes (the inner insert of a CTAS, which has no
// lineage and no analyzed twin) and the file names.
func TestAnalyzedGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/analyzed/spark-*/*")
	if len(dirs) == 0 {
		t.Fatal("no testdata/analyzed/spark-*/* (dev/capture-analyzed)")
	}
	for _, dir := range dirs {
		line, name := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		t.Run(line+"/"+name, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", line, name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			want := withoutNested(string(golden))
			got := withoutNested(renderDir(t, dir))
			if got != want {
				t.Errorf("analyzed %s differs from the run's golden:\n%s", dir, diff(want, got))
			}
			if !strings.Contains(renderDir(t, dir), "== ") {
				t.Error("no events")
			}
		})
	}
}

// withoutNested drops the "== file" lines of a rendering and the blocks of nested writes.
func withoutNested(s string) string {
	var out []string
	blocks := strings.Split(s, "== ")
	for _, b := range blocks {
		lines := strings.SplitN(b, "\n", 2)
		if len(lines) < 2 || strings.HasPrefix(lines[1], "nested write:") {
			continue
		}
		out = append(out, lines[1])
	}
	return strings.Join(out, "")
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/process"
)

// TestAnalyzeMetastore analyzes HiveQL against the Derby metastore of a real local Spark run
// (Spark 3.5 with Hive support), through `colline analyze --metastore`, which starts its own
// analyzer:
//   - the jobs that the run executed (hive_jobs.sql: INSERT OVERWRITE … PARTITION, LATERAL VIEW,
//     a Hive CTAS, a view, a dynamic-partition insert from the view) give the lineage of the
//     run's captured events;
//   - statements that would change the metastore or the warehouse if they ran
//     (hive_nothing_written.sql) change neither: the warehouse is the same file for file (path,
//     size, modification time), and later statements of the same session still see the table
//     that was "dropped" and "renamed" and do not see the one that was "created".
func TestAnalyzeMetastore(t *testing.T) {
	const line = "3.5_2.12"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	work, capture := t.TempDir(), t.TempDir()
	start := time.Now()
	if err := s.Spark(ctx, work, "colline.analyze.unused", []string{"SPARK_LINE=" + line, "COLLINE_CAPTURE_DIR=" + capture, "COLLINE_KAFKA_BOOTSTRAP="},
		"-Drunner.splitCapture=true", "e2e/testdata/analyze/hive_setup.sql", "e2e/testdata/analyze/hive_jobs.sql"); err != nil {
		t.Fatal(err)
	}
	t.Logf("spark %s with Hive: setup and jobs ran in %.1fs", line, time.Since(start).Seconds())
	want := runLineage(t, filepath.Join(capture, "hive_jobs"))
	if len(want) != 4 {
		t.Fatalf("the run of hive_jobs.sql left %d events with lineage, want 4", len(want))
	}

	warehouse := filepath.Join(work, "warehouse")
	before := tree(t, warehouse)
	bin := stack.TestColline(ctx, t, s.Root)
	out := t.TempDir()
	// inference on (the default): a table the script creates (hv.created) is described by its
	// CREATE TABLE, kept for the later statements and never written to the metastore
	cmd := exec.CommandContext(ctx, bin, "analyze", "--spark-line", line, "--metastore", work, "--out", out, "--format", "json",
		filepath.Join(s.Root, "e2e/testdata/analyze/hive_jobs.sql"), filepath.Join(s.Root, "e2e/testdata/analyze/hive_nothing_written.sql"))
	cmd.Dir = filepath.Join(s.Root, "e2e")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start = time.Now()
	err = cmd.Run()
	t.Logf("colline analyze --metastore (its own analyzer) in %.1fs:\n%s", time.Since(start).Seconds(), stderr.String())
	if code := exitCode(err); code != 0 {
		t.Fatalf("colline analyze exit %d (%v), want 0", code, err)
	}
	for _, no := range []string{"analysis error", "table-level lineage only", ": inferred ", "nobody described"} {
		if strings.Contains(stderr.String(), no) {
			t.Errorf("%q in colline analyze's output: the script's own CREATE TABLE describes hv.created", no)
		}
	}

	byFile := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		it, err := process.Step{}.Item(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !it.Event.Markers.Analyzed {
			t.Errorf("%s: not marked analyzed", f)
		}
		name := strings.SplitN(filepath.Base(f), "-", 3)[1]
		byFile[name] = append(byFile[name], lineageText(it.Lineage))
	}
	got := byFile["hive_jobs"]
	if d := lineageDiff(strings.Join(want, "==\n"), strings.Join(got, "==\n")); d != "" {
		t.Errorf("hive_jobs.sql analyzed differs from its run (- run, + analyzed):\n%s", d)
	} else {
		t.Logf("hive_jobs.sql: %d events, the lineage of the run's %d, exactly", len(got), len(want))
	}
	// INSERT OVERWRITE, TRUNCATE, RENAME, CTAS, DROP VIEW, DROP TABLE, the insert into the table the
	// script created and the two inserts into tables it did not drop or rename give events; CREATE
	// TABLE and CREATE DATABASE have no lineage
	if n := len(byFile["hive_nothing_written"]); n != 9 {
		t.Errorf("hive_nothing_written.sql gave %d events, want 9", n)
	}
	created := false
	for _, l := range byFile["hive_nothing_written"] {
		created = created || strings.Contains(l, "write table spark_catalog/hv.created append (a:int)")
	}
	if !created {
		t.Errorf("no event writes hv.created (its column a, as its CREATE TABLE declares):\n%s", strings.Join(byFile["hive_nothing_written"], "==\n"))
	}
	after := tree(t, warehouse)
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("the warehouse changed:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	} else {
		t.Logf("warehouse %s: %d files and directories, unchanged (path, size, modification time)", warehouse, len(after))
	}
}

// tree lists every file and directory below dir with its size and modification time.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d %s", rel, info.Size(), info.ModTime().Format(time.RFC3339Nano)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// jsonField reads one field of a JSON document for the tests' checks.
func jsonField(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colline/colline/events"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const skeleton = "../plan/testdata/spark-3.5/skeleton"

// degraded is a captured event the listener degraded (markers.truncated, level 2: dev/capture
// --degraded): a join of two tables whose column lineage the event no longer carries.
const degraded = "../plan/testdata/degraded/spark-3.5/join_inner"

// TestExplainGolden pins every format's output for the captured skeleton run and for a degraded
// event, where every format says that column lineage is missing for the write.
func TestExplainGolden(t *testing.T) {
	for name, dir := range map[string]string{"skeleton": skeleton, "degraded": degraded} {
		for _, format := range Formats {
			t.Run(name+"/"+format, func(t *testing.T) {
				var out, errOut bytes.Buffer
				code := Main(context.Background(), "test", []string{"explain", dir, "--format", format}, &out, &errOut)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut.String())
				}
				golden(t, filepath.Join("testdata", name+"."+format), out.Bytes())
				if name == "degraded" && !bytes.Contains(out.Bytes(), []byte("column lineage missing")) {
					t.Errorf("%s output does not say that column lineage is missing:\n%s", format, out.Bytes())
				}
			})
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./cli -update rewrites it):\n%s", path, got)
	}
}

// TestExplainAllFixtures runs explain over every captured fixture of every Spark line.
func TestExplainAllFixtures(t *testing.T) {
	dirs, _ := filepath.Glob("../plan/testdata/spark-*")
	if len(dirs) == 0 {
		t.Fatal("no fixtures under ../plan/testdata")
	}
	for _, format := range Formats {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), "test", append([]string{"explain", "--format=" + format}, dirs...), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut.String())
		}
		if out.Len() == 0 {
			t.Errorf("%s: no output", format)
		}
	}
	evs, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	edges := 0
	for _, ev := range evs {
		edges += len(ev.Lineage.Edges)
		if err := record.Check(&record.Item{Event: ev.Env, Lineage: ev.Lineage}); err != nil {
			t.Errorf("%s: %v", ev.Source, err)
		}
	}
	if edges == 0 {
		t.Error("no column edges in any fixture")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(skeleton, "0004-8-InsertIntoHadoopFsRelationCommand.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	future := strings.Replace(string(good), `"schemaVersion": "1.`, `"schemaVersion": "9.`, 1)
	if future == string(good) {
		t.Fatal("fixture has no schemaVersion 1.x")
	}
	tests := []struct {
		name    string
		file    string
		want    []string // substrings of the error
		is      error
		loaded  int
		sources []string
	}{
		{name: "not JSON", file: write("bad.json", `{"schemaVersion": "1.0",`),
			want: []string{"bad.json: byte 24: ", "not JSON", "cut short"}, is: events.ErrInvalidJSON},
		{name: "syntax error", file: write("syntax.json", `{"schemaVersion": x}`),
			want: []string{"syntax.json: byte 19: ", "invalid character 'x'"}, is: events.ErrInvalidJSON},
		{name: "empty", file: write("empty.json", "  \n"), want: []string{"empty.json", "empty input"}, is: events.ErrInvalidJSON},
		{name: "future major version", file: write("future.json", future),
			want: []string{"future.json: unsupported schema version"}, is: events.ErrUnsupportedVersion},
		{name: "not an event", file: write("other.json", `{"schemaVersion": "1.0", "hello": 1}`),
			want: []string{"other.json: invalid event"}, is: events.ErrInvalid},
		{name: "missing file", file: filepath.Join(dir, "nope.json"), want: []string{"nope.json", "no such file"}, is: os.ErrNotExist},
		{name: "empty directory", file: t.TempDir(), want: []string{"no *.json or *.jsonl files"}},
		{name: "second of two events is bad", file: write("two.jsonl", string(good)+"\n"+`{"schemaVersion": "1.0"}`),
			want: []string{"two.jsonl#2: invalid event"}, is: events.ErrInvalid, loaded: 1, sources: []string{"two.jsonl#1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := Load([]string{tc.file})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if len(evs) != tc.loaded {
				t.Fatalf("loaded %d events, want %d", len(evs), tc.loaded)
			}
			for i, s := range tc.sources {
				if !strings.HasSuffix(evs[i].Source, s) {
					t.Errorf("source %q, want suffix %q", evs[i].Source, s)
				}
			}
		})
	}
}

// TestExplainReportsEveryBadFile: the good files are printed, each bad one is named, exit 1.
func TestExplainReportsEveryBadFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("nope"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	code := Main(context.Background(), "test", []string{"explain", filepath.Join(skeleton, "0004-8-InsertIntoHadoopFsRelationCommand.json"), dir}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "spark_catalog/shop.top_countries#revenue") {
		t.Errorf("the good file's lineage is missing:\n%s", out.String())
	}
	for _, name := range []string{"a.json: byte 2: invalid event: not JSON", "b.json: byte 2"} {
		if !strings.Contains(errOut.String(), name) {
			t.Errorf("stderr does not name %s:\n%s", name, errOut.String())
		}
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"explain"}, 2, "explain: no input files"},
		{[]string{"explain", "--format", "svg", skeleton}, 2, `unknown format "svg"`},
		{[]string{"explain", "--nope", skeleton}, 2, "flag provided but not defined: -nope"},
		{[]string{"replay"}, 2, "replay: no input files"},
		{[]string{"replay", "--batch", "0", skeleton}, 2, "--batch 0"},
		{[]string{"replay", "--neo4j", "http://x", skeleton}, 1, "neo4j driver for http://x"},
		{[]string{"replay", "--password-file", "/nonexistent/pw", skeleton}, 1, "--password-file: open /nonexistent/pw"},
		{[]string{"replay", "--ca-file", "/nonexistent/ca.pem", skeleton}, 1, "--ca-file: open /nonexistent/ca.pem"},
		{[]string{"version"}, 0, "colline test"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), "test", tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := out.String() + errOut.String(); !strings.Contains(got, tc.want) {
				t.Errorf("output does not contain %q:\n%s", tc.want, got)
			}
		})
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := fs.String("format", "table", "")
	files, err := parse(fs, []string{"a", "--format", "dot", "b", "--", "--format"})
	if err != nil {
		t.Fatal(err)
	}
	if *f != "dot" || strings.Join(files, ",") != "a,b,--format" {
		t.Errorf("format %q files %q", *f, files)
	}
}

// fakeStore records what Replay writes.
type fakeStore struct {
	bootstrapped bool
	batches      [][]record.Item
	err          error
}

func (s *fakeStore) Bootstrap(context.Context) error { s.bootstrapped = true; return nil }
func (s *fakeStore) Write(_ context.Context, items []record.Item) error {
	s.batches = append(s.batches, items)
	return s.err
}

func TestReplayBatches(t *testing.T) {
	evs, err := Load([]string{skeleton})
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeStore{}
	if err := Replay(context.Background(), s, evs, 3); err != nil {
		t.Fatal(err)
	}
	if !s.bootstrapped || len(s.batches) != 2 || len(s.batches[0]) != 3 || len(s.batches[1]) != 1 {
		t.Errorf("bootstrapped %v, batches %d", s.bootstrapped, len(s.batches))
	}
	s = &fakeStore{err: errors.New("boom")}
	err = Replay(context.Background(), s, evs[:1], 10)
	if err == nil || !strings.Contains(err.Error(), "0001-3-InsertIntoHadoopFsRelationCommand.json: boom") {
		t.Errorf("error %v does not name the file", err)
	}
	bad := evs[0]
	env := *bad.Env
	env.App.Name = ""
	bad.Env = &env
	s = &fakeStore{}
	err = Replay(context.Background(), s, []Event{evs[1], bad}, 10)
	if !errors.Is(err, record.ErrInvalidItem) || !strings.Contains(err.Error(), "0001-3") || len(s.batches) != 0 {
		t.Errorf("invalid item: error %v, %d batches written", err, len(s.batches))
	}
}

// A column playing several roles shows every one in every format: orders.status is the value of
// value_and_condition.status and the condition of its CASE (plan/testdata/scenarios/roles_several.sql).
func TestExplainShowsEveryRole(t *testing.T) {
	file := "../plan/testdata/spark-4.1/roles_several/0001-InsertIntoHadoopFsRelationCommand.json"
	for format, want := range map[string][]string{
		"table": {
			"orders#status value_and_condition#status DIRECT TRANSFORMATION",
			"orders#status value_and_condition#status INDIRECT CONDITIONAL",
			"orders#customer value_and_condition (rows) INDIRECT JOIN",
		},
		"dot":     {`label="TRANSFORMATION, CONDITIONAL"`, `label="JOIN", style=dotted`},
		"mermaid": {`-->|TRANSFORMATION, CONDITIONAL|`, `-.->|rows: JOIN|`},
		"json":    {`"subtype": "TRANSFORMATION"`, `"subtype": "CONDITIONAL"`, `"inputFields"`, `"dataset": [`},
	} {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), "test", []string{"explain", "--format", format, file}, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut.String())
		}
		got := out.String()
		if format == "table" { // columns aligned by spaces, keys without their catalog and database
			got = strings.Join(strings.Fields(strings.ReplaceAll(got, "spark_catalog/roles_several.", "")), " ")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s output lacks %q:\n%s", format, w, out.String())
			}
		}
	}
	// JSON: the facet's shape, every transformation of orders.status under the status field
	var out, errOut bytes.Buffer
	Main(context.Background(), "test", []string{"explain", "--format", "json", file}, &out, &errOut)
	var evs []struct {
		Writes []struct {
			ColumnLineage struct {
				Fields map[string]struct {
					InputFields []struct {
						Namespace, Name, Field string
						Transformations        []struct{ Type, Subtype string }
					}
				}
				Dataset []struct{ Field string }
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &evs); err != nil {
		t.Fatal(err)
	}
	in := evs[0].Writes[0].ColumnLineage.Fields["status"].InputFields
	if len(in) != 1 || in[0].Name != "roles_several.orders" || in[0].Field != "status" || len(in[0].Transformations) != 2 {
		t.Errorf("fields.status.inputFields = %+v, want orders.status with two transformations", in)
	}
	if len(evs[0].Writes[0].ColumnLineage.Dataset) != 2 {
		t.Errorf("dataset = %+v, want the two join keys", evs[0].Writes[0].ColumnLineage.Dataset)
	}
}

// explain --format openlineage prints one RunEvent per event, each valid against the spec.
func TestExplainOpenLineageValidates(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), "test", []string{"explain", "--format", "openlineage", skeleton}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want one per event of the skeleton (4)", len(lines))
	}
	for i, l := range lines {
		if _, err := v.Validate([]byte(l)); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
	}
}

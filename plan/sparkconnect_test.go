package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// The Spark Connect corpus: testdata/connect/spark-<line>/<name>/ holds the events of a scenario
// sent through a real Spark Connect server with the listener by pyspark's Connect client
// (dev/capture-connect); testdata/spark-<line>/<name>/ the same scenario's classic run
// (dev/capture: the same SQL; for a DataFrame scenario, <name>.java is the twin of <name>.py).
// TestSparkConnectGoldens holds them together, event by event:
//   - the same number of events, in the same order;
//   - each pair equal as events once what differs between two runs is taken out: ids, times, the
//     application id, the Connect operation, and every exprId renumbered in order of appearance;
//     a read action's funcName is the client API's (collectAsList in Java, collectArrow through
//     Connect): it is compared as "a read action" (connectReadActions);
//   - each pair's lineage equal (as the goldens render it), the read action's result dataset
//     keyed by the classic funcName;
//   - every Connect event names its operation (query.connect: the capture's user, a session, an
//     operation, the client type), and no classic event has one.
func TestSparkConnectGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/connect/spark-*/*")
	if len(dirs) == 0 {
		t.Fatal("no testdata/connect/spark-*/* (dev/capture-connect)")
	}
	for _, dir := range dirs {
		line, name := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		t.Run(line+"/"+name, func(t *testing.T) {
			connect, classic := eventFiles(t, dir), eventFiles(t, filepath.Join("testdata", line, name))
			if len(connect) == 0 || len(connect) != len(classic) {
				t.Fatalf("%d events through Spark Connect, %d in the classic run (testdata/%s/%s): want the same, at least one",
					len(connect), len(classic), line, name)
			}
			for i := range connect {
				c, k := decodeEventFile(t, connect[i]), decodeEventFile(t, classic[i])
				what := fmt.Sprintf("event %d (%s vs %s)", i+1, filepath.Base(connect[i]), filepath.Base(classic[i]))
				op := c.Query.Connect
				if op == nil || op.UserID != "colline-capture" || op.SessionID == "" || op.OperationID == "" || !strings.HasPrefix(op.ClientType, "_SPARK_CONNECT_PYTHON") {
					t.Errorf("%s: query.connect = %+v, want the capture's user colline-capture, a session, an operation and pyspark's client type", what, op)
				}
				if k.Query.Connect != nil {
					t.Errorf("%s: the classic event names a Connect operation: %+v", what, k.Query.Connect)
				}
				if c.Query.FuncName != k.Query.FuncName {
					if !connectReadActions[[2]string{k.Query.FuncName, c.Query.FuncName}] {
						t.Errorf("%s: funcName %q through Connect, %q classic", what, c.Query.FuncName, k.Query.FuncName)
						continue
					}
					t.Logf("%s: read action %q through Connect, %q classic", what, c.Query.FuncName, k.Query.FuncName)
				}
				if d := eventDiff(t, connect[i], classic[i]); d != "" {
					t.Errorf("%s: the events differ beyond ids and times: %s", what, d)
				}
				c.Query.FuncName = k.Query.FuncName
				if got, want := renderOne(t, c), renderOne(t, k); got != want {
					t.Errorf("%s: lineage differs:\n%s", what, diff(want, got))
				}
			}
			if !t.Failed() {
				t.Logf("%s: %d events through Spark Connect equal the classic run's", name, len(connect))
			}
		})
	}
}

// connectReadActions pairs the funcName of a classic read action (dev/spark/SparkSqlRunner.java
// collects with collectAsList) with the one Spark reports for the same action through Spark
// Connect (the server collects as Arrow batches).
var connectReadActions = map[[2]string]bool{{"collectAsList", "collectArrow"}: true}

func eventFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	return files
}

func decodeEventFile(t *testing.T, f string) *events.Envelope {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	env, err := events.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return env
}

func renderOne(t *testing.T, env *events.Envelope) string {
	t.Helper()
	lin, err := Extract(env)
	if err != nil {
		t.Fatal(err)
	}
	return render(env, lin)
}

// eventDiff compares two captured events as JSON, without what differs between any two runs of
// the same statement (eventDiff's normalize), and returns the first difference ("" when none).
func eventDiff(t *testing.T, a, b string) string {
	t.Helper()
	na, nb := normalizeEvent(t, a), normalizeEvent(t, b)
	return firstDiff("", na, nb)
}

// normalizeEvent reads an event as a JSON tree and takes out eventId, emittedAt, jvmId, app.id,
// query's executionId, durationMs, endedAt, funcName and connect, and parent; every exprId is
// renumbered in the order it first appears.
func normalizeEvent(t *testing.T, f string) any {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"eventId", "emittedAt", "jvmId", "parent"} {
		delete(v, k)
	}
	if app, ok := v["app"].(map[string]any); ok {
		delete(app, "id")
	}
	if q, ok := v["query"].(map[string]any); ok {
		for _, k := range []string{"executionId", "durationMs", "endedAt", "funcName", "connect"} {
			delete(q, k)
		}
	}
	ids := map[float64]float64{}
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // encoding/json lost the order; any fixed order renumbers both events alike
			for _, k := range keys {
				if id, ok := x[k].(float64); ok && k == "exprId" {
					if _, seen := ids[id]; !seen {
						ids[id] = float64(len(ids))
					}
					x[k] = ids[id]
					continue
				}
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v["nodes"])
	return v
}

// firstDiff is the path and the two values of the first difference between a and b.
func firstDiff(path string, a, b any) string {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDiff(path+"."+k, a[k], bm[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			break
		}
		for i := range a {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), a[i], bs[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return fmt.Sprintf("%s: %.300s through Connect, %.300s classic", strings.TrimPrefix(path, "."), ja, jb)
}

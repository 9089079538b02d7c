//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// schedulerRuns are a task's run and its DAG run, as Airflow's OpenLineage provider passes them
// to Spark: ids of this test run's own (a graph shared with earlier runs keeps their runs).
func schedulerRuns() (task, dag string) {
	n := time.Now().UnixNano() % 1e11
	return fmt.Sprintf("0199a1f2-1111-7000-8000-1%011d", n), fmt.Sprintf("0199a1f2-1111-7000-8000-0%011d", n)
}

// schedulerConf are the settings that name them, with the task's job namespace/name.
func schedulerConf(taskRun, dagRun, job string) []string {
	ns, name, _ := strings.Cut(job, "/")
	return []string{
		"spark.openlineage.parentJobNamespace=" + ns, "spark.openlineage.parentJobName=" + name,
		"spark.openlineage.parentRunId=" + taskRun, "spark.openlineage.rootParentJobNamespace=" + ns,
		"spark.openlineage.rootParentJobName=" + strings.SplitN(name, ".", 2)[0], "spark.openlineage.rootParentRunId=" + dagRun,
	}
}

// TestSparkConnectEndToEnd runs a Spark Connect server of Spark 4.1 (dev/spark-connect: the
// server jar from PyPI's pyspark 4.1.1, dev/connect/fetch) with the listener publishing to
// Kafka, and two of pyspark's Connect clients at once, as two users: alice sends the SQL jobs
// of connect_sql (writes, a CTAS over a temporary view, a read-only job) in a session whose
// settings name a scheduler's run, bob the DataFrame jobs of connect_frames. The consumer
// writes them to Neo4j. Then:
//   - the lineage in Neo4j is the lineage of the same jobs' classic run (the events dev/capture
//     captured in plan/testdata/spark-4.1), relationship by relationship;
//   - every run names its Connect user, session and client (alice's six, bob's five, two
//     sessions), and only alice's runs are CHILD_OF the scheduler's run, itself CHILD_OF its root;
//   - graph.Reader.Runs and `colline lineage` answer by the application id and by the parent run.
func TestSparkConnectEndToEnd(t *testing.T) {
	const line = "4.1_2.13"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s, driver, app, topic := jobStack(t, ctx, "colline-e2e-connect", "spark_catalog/connect_", 1)
	job := "default/" + app
	taskRun, dagRun := schedulerRuns()
	out := t.TempDir() // connect_frames' path write
	start := time.Now()
	srv, err := s.StartConnect(ctx, line, t.TempDir(), topic, "-Dspark.app.name="+app, "-Dspark.colline.publishReads=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Spark Connect %s server ready on %d in %.1fs", line, srv.Port, time.Since(start).Seconds())
	start = time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		errs[0] = s.ConnectClient(ctx, line, srv, "alice", schedulerConf(taskRun, dagRun, "airflow/nightly.load"), nil,
			"plan/testdata/scenarios/connect_sql.sql")
	}()
	go func() {
		defer wg.Done()
		errs[1] = s.ConnectClient(ctx, line, srv, "bob", nil, []string{"COLLINE_SCENARIO_OUT=" + out}, "plan/testdata/scenarios/connect_frames.py")
	}()
	wg.Wait()
	t.Logf("two clients: %.1fs", time.Since(start).Seconds())
	if err := srv.Stop(); err != nil {
		t.Logf("server stop: %v", err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, bin, topic, topic+".g"); err != nil {
		t.Fatal(err)
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Fatalf("dead letters: %d (%v), want 0", dead, err)
	}

	// 1. The lineage equals the classic run's (the captured events of the same jobs).
	want := classicEdges(t, app, out, "connect_sql", "connect_frames")
	reader := graph.NewReader(driver, "")
	rows, err := reader.Edges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rows {
		if e.Job == job {
			got = append(got, e.String())
		}
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lineage through Spark Connect in Neo4j:\n%s\n\nthe classic run's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("lineage: %d relationships, equal to the classic run's", len(got))

	// 2. Who ran what, by the application id.
	var appID string
	{
		all, err := reader.Job(ctx, job, 100)
		if err != nil || len(all.Runs) == 0 {
			t.Fatalf("job %s: %v, %d runs", job, err, len(all.Runs))
		}
		appID = all.Runs[0].AppID
	}
	set, err := reader.Runs(ctx, graph.RunQuery{App: appID})
	if err != nil {
		t.Fatal(err)
	}
	users, sessions := map[string]int{}, map[string]string{}
	for _, r := range set.Runs {
		c := r.Connect
		if c == nil || c.SessionID == "" || c.OperationID == "" || !strings.HasPrefix(c.ClientType, "_SPARK_CONNECT_PYTHON spark/4.1.1") {
			t.Fatalf("run %s (%v): connect = %+v, want a user, session, operation and pyspark's client type", r.Key, r.Writes, c)
		}
		users[c.UserID]++
		if old, ok := sessions[c.UserID]; ok && old != c.SessionID {
			t.Errorf("user %s ran in two sessions %s and %s, want one", c.UserID, old, c.SessionID)
		}
		sessions[c.UserID] = c.SessionID
		wantParent := c.UserID == "alice"
		if (r.Parent != nil) != wantParent || (wantParent && (r.Parent.Key != taskRun || r.Parent.Job != "airflow/nightly.load")) {
			t.Errorf("run %s of %s: parent %+v; want %v", r.Key, c.UserID, r.Parent, wantParent)
		}
	}
	if users["alice"] != 6 || users["bob"] != 5 || len(users) != 2 || sessions["alice"] == sessions["bob"] {
		t.Fatalf("runs of application %s per Connect user: %v in sessions %v; want alice 6, bob 5, two sessions", appID, users, sessions)
	}
	if len(set.Edges) != len(want) {
		t.Errorf("runs of %s: %d lineage relationships, want the job's %d", appID, len(set.Edges), len(want))
	}

	// 3. By the scheduler's run: alice's runs, under the task's run and under the DAG run.
	for _, q := range []graph.RunQuery{{Parent: taskRun, ParentJob: "airflow/nightly.load"}, {Parent: dagRun}} {
		under, err := reader.Runs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range under.Runs {
			if r.Connect != nil && r.Connect.UserID == "alice" {
				n++
			}
		}
		wantRuns := 6
		if q.ParentJob == "" {
			wantRuns = 7 // the task's run is CHILD_OF the DAG run too
		}
		if n != 6 || len(under.Runs) != wantRuns {
			t.Errorf("runs under %s: %d, of alice %d; want %d and 6", q.Parent, len(under.Runs), n, wantRuns)
		}
		for _, e := range under.Edges { // alice's: into connect_sql's tables and her read's result, none of bob's
			if !strings.HasPrefix(e.Source, "spark_catalog/connect_sql.") {
				t.Errorf("runs under %s: edge %s -> %s is not alice's lineage", q.Parent, e.Source, e.Target)
			}
		}
	}

	// 4. The CLI answers the same.
	colline := stack.TestColline(ctx, t, s.Root)
	for _, args := range [][]string{{"--app", appID}, {"--parent", "airflow/nightly.load/" + taskRun}} {
		cmd := exec.CommandContext(ctx, colline, append([]string{"lineage", "--format", "json", "--neo4j", s.Neo4jURI}, args...)...)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("colline lineage %v: %v", args, err)
		}
		var cli graph.RunSet
		if err := json.Unmarshal(b, &cli); err != nil {
			t.Fatal(err)
		}
		if wantN := map[string]int{"--app": 11, "--parent": 6}[args[0]]; len(cli.Runs) != wantN {
			t.Errorf("colline lineage %v: %d runs, want %d", args, len(cli.Runs), wantN)
		}
	}
	t.Logf("application %s: 11 runs (alice 6, bob 5, two sessions); 6 under %s", appID, taskRun)
}

// classicEdges is the lineage the consumer writes for the classic run of scenarios (their events
// in plan/testdata/spark-4.1), as if that run had been application app with the path writes
// under out and read actions collected through Spark Connect (collectArrow): graph.Preview's
// relationships of job default/<app>, rendered as EdgeRow.String.
func classicEdges(t *testing.T, app, out string, scenarios ...string) []string {
	t.Helper()
	var items []record.Item
	for _, sc := range scenarios {
		files, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "spark-4.1", sc, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no captured events of %s in plan/testdata/spark-4.1", sc)
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			env, err := events.Decode(bytes.ReplaceAll(data, []byte("/tmp/colline-capture/out"), []byte(out)))
			if err != nil {
				t.Fatal(err)
			}
			env.App.Name = app
			if env.Query.FuncName == "collectAsList" {
				env.Query.FuncName = "collectArrow"
			}
			lin, err := plan.Extract(env)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, record.Item{Event: env, Lineage: lin})
		}
	}
	_, rows, err := graph.Preview(items)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, r.String())
	}
	sort.Strings(lines)
	return lines
}

// TestSchedulerParentEndToEnd runs a classic Spark job (3.5) started with the settings Airflow's
// OpenLineage provider passes (spark.openlineage.parentJobNamespace, parentJobName, parentRunId
// and the rootParent* of the DAG run) through Kafka, the consumer and Neo4j: both runs of the job
// (an INSERT and a CTAS of plan/testdata/scenarios/scheduler_parent.sql) are CHILD_OF the task's
// run, CHILD_OF the DAG run, and the graph and `colline lineage` answer by the parent run and by
// the application id with those runs and their lineage.
func TestSchedulerParentEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, driver, app, topic := jobStack(t, ctx, "colline-e2e-parent", "spark_catalog/scheduler_parent.", 1)
	taskRun, dagRun := schedulerRuns()
	args := []string{"-Dspark.app.name=" + app}
	for _, kv := range schedulerConf(taskRun, dagRun, "airflow/nightly.load_orders") {
		args = append(args, "-D"+kv)
	}
	if err := s.Spark(ctx, t.TempDir(), topic, []string{"SPARK_LINE=3.5_2.12"}, append(args, "plan/testdata/scenarios/scheduler_parent.sql")...); err != nil {
		t.Fatal(err)
	}
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, bin, topic, topic+".g"); err != nil {
		t.Fatal(err)
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Fatalf("dead letters: %d (%v), want 0", dead, err)
	}
	reader := graph.NewReader(driver, "")
	const orders, paid = "spark_catalog/scheduler_parent.orders", "spark_catalog/scheduler_parent.paid"
	wantEdges := []string{
		orders + "#amount -FEEDS-> " + paid + "#amount [default/" + app + "] DIRECT/IDENTITY",
		orders + "#order_id -FEEDS-> " + paid + "#order_id [default/" + app + "] DIRECT/IDENTITY",
		orders + "#status -DECIDES_ROWS-> " + paid + " [default/" + app + "] INDIRECT/FILTER",
	}
	var appID string
	for _, q := range []graph.RunQuery{{Parent: taskRun, ParentJob: "airflow/nightly.load_orders"}, {Parent: dagRun}} {
		set, err := reader.Runs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var sparkRuns []string
		for _, r := range set.Runs {
			if r.AppID != "" {
				appID = r.AppID
				sparkRuns = append(sparkRuns, strings.Join(r.Writes, " "))
				if r.Parent == nil || r.Parent.Key != taskRun || r.Parent.Job != "airflow/nightly.load_orders" {
					t.Errorf("run %s: parent %+v, want %s of airflow/nightly.load_orders", r.Key, r.Parent, taskRun)
				}
			} else if r.Key != taskRun || r.Parent == nil || r.Parent.Key != dagRun || r.Parent.Job != "airflow/nightly" {
				t.Errorf("run %s (no application): parent %+v, want the task's run %s under the DAG run %s", r.Key, r.Parent, taskRun, dagRun)
			}
		}
		sort.Strings(sparkRuns)
		if strings.Join(sparkRuns, "|") != orders+"|"+paid {
			t.Errorf("Spark runs under %s: writes %v, want the INSERT into orders and the CTAS of paid", q.Parent, sparkRuns)
		}
		var got []string
		for _, e := range set.Edges {
			roles := make([]string, len(e.Roles))
			for i, r := range e.Roles {
				roles[i] = r.Type + "/" + r.Subtype
			}
			got = append(got, e.Source+" -"+e.Kind+"-> "+e.Target+" ["+e.Job+"] "+strings.Join(roles, ", "))
		}
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(wantEdges, "\n") {
			t.Errorf("lineage under %s:\n%s\nwant:\n%s", q.Parent, strings.Join(got, "\n"), strings.Join(wantEdges, "\n"))
		}
	}
	byApp, err := reader.Runs(ctx, graph.RunQuery{App: appID})
	if err != nil || len(byApp.Runs) != 2 || len(byApp.Edges) != len(wantEdges) {
		t.Fatalf("runs of application %s: %v; want 2 runs and %d relationships", appID, err, len(wantEdges))
	}
	colline := stack.TestColline(ctx, t, s.Root)
	cmd := exec.CommandContext(ctx, colline, "lineage", "--neo4j", s.Neo4jURI, "--parent", "airflow/nightly.load_orders/"+taskRun)
	cmd.Stderr = os.Stderr
	text, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runs under " + taskRun + " (job airflow/nightly.load_orders): 2", "wrote (2): " + orders + " " + paid,
		orders + "#status => " + paid + " INDIRECT/FILTER"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("colline lineage --parent: no %q in:\n%s", want, text)
		}
	}
	t.Logf("job %s: 2 runs under the task's run %s and the DAG run %s, %d relationships; colline lineage --parent:\n%s",
		app, taskRun, dagRun, len(wantEdges), text)
}

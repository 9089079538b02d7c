//go:build e2e

package e2e

// Listener breadth (issue 4): Structured Streaming queries published once per run, through real
// Spark and the real broker. Services: dev/services start.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
)

func TestStreamingFilesAndForeachBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("colline.e2e.stream-%d", time.Now().UnixNano())
	if err := s.CreateTopics(ctx, 1, topic); err != nil {
		t.Fatalf("Kafka is not usable at %s (start it with dev/services start): %v", s.Brokers, err)
	}
	dir, capture := t.TempDir(), t.TempDir()
	out, wall, err := runSparkSQL(ctx, s, []string{"COLLINE_KAFKA_BOOTSTRAP=" + s.Brokers, "COLLINE_KAFKA_TOPIC=" + topic,
		"COLLINE_CAPTURE_DIR=" + capture},
		"--work", filepath.Join(dir, "work"), "-Dstream.dir="+dir,
		// the documented registration; the QueryExecutionListener registers one as well: one event per run either way
		"-Dspark.sql.streaming.streamingQueryListeners=io.colline.listener.CollineStreamingListener",
		filepath.Join(s.Root, "e2e/testdata/streaming/StreamFiles.java"))
	if err != nil || !strings.Contains(out, "STREAM_FILES_OK") {
		t.Fatalf("the streaming job failed: %v", err)
	}
	t.Logf("spark job: %.1fs, listener %v", wall.Seconds(), listenerStats(t, out))

	in, outDir, fbOut := "file:"+filepath.Join(dir, "in"), "file:"+filepath.Join(dir, "out"), "file:"+filepath.Join(dir, "fb_out")
	streams := map[string]map[string]any{} // query name -> event
	batchWrites := 0
	for _, m := range readTopic(ctx, t, s.Brokers, topic) {
		var ev map[string]any
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatal(err)
		}
		q := ev["query"].(map[string]any)
		if q["funcName"] != "stream" {
			// foreachBatch writes are ordinary batch writes over an RDD of the micro-batch
			for _, n := range ev["nodes"].([]any) {
				if w, ok := n.(map[string]any)["write"].(map[string]any); ok {
					if p, _ := w["dataset"].(map[string]any)["paths"].([]any); len(p) == 1 && p[0] == fbOut {
						batchWrites++
					}
				}
			}
			continue
		}
		st := q["stream"].(map[string]any)
		name, _ := st["name"].(string)
		if _, dup := streams[name]; dup {
			t.Errorf("stream %s published twice", name)
		}
		streams[name] = ev
	}
	if len(streams) != 2 {
		t.Fatalf("stream events: %d (%v), want 2", len(streams), keys(streams))
	}

	check := func(name, wantKind, wantTarget string, foreachBatch bool) {
		ev := streams[name]
		if ev == nil {
			t.Errorf("no event for stream %s", name)
			return
		}
		nodes := ev["nodes"].([]any)
		root := nodes[0].(map[string]any)
		if !strings.HasSuffix(root["class"].(string), ".WriteToStream") {
			t.Errorf("%s: root %v, want WriteToStream", name, root["class"])
		}
		w := root["write"].(map[string]any)
		d := w["dataset"].(map[string]any)
		if w["mode"] != "stream" || d["kind"] != wantKind {
			t.Errorf("%s: write %v", name, w)
		}
		switch wantKind {
		case "path":
			if p := d["paths"].([]any); len(p) != 1 || p[0] != wantTarget || d["format"] != "parquet" {
				t.Errorf("%s: sink %v, want parquet %s", name, d, wantTarget)
			}
		case "other":
			if d["description"] != wantTarget {
				t.Errorf("%s: sink %v, want %s", name, d, wantTarget)
			}
		}
		if args := root["args"].(map[string]any); args["foreachBatch"] != foreachBatch || args["outputMode"] != "Append" {
			t.Errorf("%s: args %v", name, args)
		}
		var sources []map[string]any
		for _, n := range nodes {
			if ds, ok := n.(map[string]any)["dataset"].(map[string]any); ok {
				sources = append(sources, ds)
			}
		}
		if len(sources) != 1 || sources[0]["kind"] != "path" || sources[0]["format"] != "json" ||
			fmt.Sprint(sources[0]["paths"]) != "["+in+"]" {
			t.Errorf("%s: sources %v, want the json files at %s", name, sources, in)
		}
	}
	check("files_to_files", "path", outDir, false)
	check("files_foreach_batch", "other", "foreachBatch", true)
	if batchWrites == 0 {
		t.Errorf("no batch write to %s from foreachBatch", fbOut)
	}

	// The consumer's extractor (colline explain) takes column lineage from a stream event as from
	// a batch write: the json source's name feeds the parquet sink's name_u.
	files, _ := filepath.Glob(filepath.Join(capture, "*-WriteToStream.json"))
	if len(files) != 2 {
		t.Fatalf("captured stream events: %v, want 2", files)
	}
	cmd := exec.CommandContext(ctx, stack.TestColline(ctx, t, s.Root), append([]string{"explain"}, files...)...)
	explained, err := cmd.CombinedOutput()
	t.Logf("colline explain:\n%s", explained)
	if err != nil {
		t.Fatalf("colline explain: %v", err)
	}
	var edge bool
	for _, line := range strings.Split(string(explained), "\n") {
		if strings.Contains(line, "in#name") && strings.Contains(line, "out#name_u") {
			edge = true
		}
	}
	if !edge {
		t.Errorf("no column edge in#name -> out#name_u in the explained stream event")
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestConnectorIdentities runs e2e/testdata/connectors/Connectors.java on Spark 3.5 with the Kafka
// connector, Iceberg and Delta Lake on the classpath, and checks the identities the listener
// resolved: Kafka batch write and read (servers, topic), a Kafka -> Kafka stream, Iceberg catalog
// tables (v2 append and CTAS), Delta Lake by path, and a DataSourceV2 JDBC catalog whose URL holds
// a password (which must not be sent).
func TestConnectorIdentities(t *testing.T) {
	if line := os.Getenv("SPARK_LINE"); line != "" && line != "3.5_2.12" {
		t.Skipf("the connector jars of e2e/testdata/connectors are for Spark 3.5 / Scala 2.12, not %s", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	id := time.Now().UnixNano()
	topic, in, out := fmt.Sprintf("colline.e2e.conn-%d", id), fmt.Sprintf("e2e.people-%d", id), fmt.Sprintf("e2e.people-upper-%d", id)
	if err := s.CreateTopics(ctx, 1, topic, in, out); err != nil {
		t.Fatalf("Kafka is not usable at %s (start it with dev/services start): %v", s.Brokers, err)
	}
	dir := t.TempDir()
	const v2Secret = "UrlPw-93c0de11"
	derby := "jdbc:derby:" + filepath.Join(dir, "derbyv2") + ";create=true"
	outText, err := runSparkWithJars(ctx, t, s, "connectors-3.5_2.12", "e2e/testdata/connectors/pom.xml",
		[]string{"COLLINE_KAFKA_BOOTSTRAP=" + s.Brokers, "COLLINE_KAFKA_TOPIC=" + topic},
		"-Dconn.kafka="+s.Brokers, "-Dconn.in="+in, "-Dconn.out="+out, "-Dconn.dir="+dir,
		"-Dspark.sql.catalog.ice=org.apache.iceberg.spark.SparkCatalog",
		"-Dspark.sql.catalog.ice.type=hadoop",
		"-Dspark.sql.catalog.ice.warehouse="+filepath.Join(dir, "ice"),
		"-Dspark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
		"-Dspark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
		"-Dspark.sql.catalog.derbycat=org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog",
		"-Dspark.sql.catalog.derbycat.url="+derby+";user=app;password="+v2Secret,
		"-Dspark.sql.catalog.derbycat.driver=org.apache.derby.jdbc.EmbeddedDriver",
		filepath.Join(s.Root, "e2e/testdata/connectors/Connectors.java"))
	if err != nil || !strings.Contains(outText, "CONNECTORS_OK") {
		t.Fatalf("the connectors job failed: %v", err)
	}
	t.Logf("listener %v", listenerStats(t, outText))

	type seen struct{ writes, sources []string }
	var all seen
	var stream map[string]any
	for _, m := range readTopic(ctx, t, s.Brokers, topic) {
		if strings.Contains(string(m.Value), v2Secret) || strings.Contains(string(m.Value), "93c0de11") {
			t.Errorf("an event contains the JDBC catalog's password")
		}
		var ev map[string]any
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["query"].(map[string]any)["funcName"] == "stream" {
			stream = ev
		}
		for _, n := range ev["nodes"].([]any) {
			node := n.(map[string]any)
			if w, ok := node["write"].(map[string]any); ok {
				all.writes = append(all.writes, identity(w["dataset"].(map[string]any)))
			}
			if d, ok := node["dataset"].(map[string]any); ok {
				all.sources = append(all.sources, identity(d))
			}
		}
	}
	t.Logf("write targets: %v", all.writes)
	t.Logf("sources: %v", all.sources)
	has := func(list []string, want string) bool {
		for _, x := range list {
			if x == want {
				return true
			}
		}
		return false
	}
	kafkaIn := "kafka " + s.Brokers + " [" + in + "]"
	for _, w := range []string{
		kafkaIn,                         // Kafka batch write
		"table ice [db] people",         // Iceberg v2 append
		"table ice [db] people_upper",   // Iceberg v2 CTAS
		"table derbycat [APP] V2PEOPLE", // v2 JDBC catalog append
	} {
		if !has(all.writes, w) {
			t.Errorf("no write target %q", w)
		}
	}
	// Delta by path: a SaveIntoDataSourceCommand whose `path` option is sent as given (not qualified;
	// the consumer keys a scheme-less absolute path as file:)
	deltaPath := filepath.Join(dir, "delta/people")
	if !has(all.writes, "path delta ["+deltaPath+"]") && !has(all.writes, "path delta [file:"+deltaPath+"]") {
		t.Errorf("no Delta write target %s", deltaPath)
	}
	if !has(all.sources, "path parquet [file:"+deltaPath+"]") && !has(all.sources, "path delta [file:"+deltaPath+"]") {
		t.Errorf("no Delta source %s", deltaPath)
	}
	for _, src := range []string{
		kafkaIn,                         // Kafka batch read
		"table ice [db] people",         // Iceberg read
		"table derbycat [APP] V2PEOPLE", // v2 JDBC catalog read
	} {
		if !has(all.sources, src) {
			t.Errorf("no source %q", src)
		}
	}
	if stream == nil {
		t.Fatalf("no stream event")
	}
	root := stream["nodes"].([]any)[0].(map[string]any)
	if got := identity(root["write"].(map[string]any)["dataset"].(map[string]any)); got != "kafka "+s.Brokers+" ["+out+"]" {
		t.Errorf("stream sink %s, want topic %s", got, out)
	}
	var streamSources []string
	for _, n := range stream["nodes"].([]any) {
		if d, ok := n.(map[string]any)["dataset"].(map[string]any); ok {
			streamSources = append(streamSources, identity(d))
		}
	}
	if len(streamSources) != 1 || streamSources[0] != kafkaIn {
		t.Errorf("stream sources %v, want [%s]", streamSources, kafkaIn)
	}
}

// identity renders a dataset as "kind ..." for comparisons.
func identity(d map[string]any) string {
	switch d["kind"] {
	case "table", "view":
		return fmt.Sprintf("%v %v %v %v", d["kind"], d["catalog"], d["namespace"], d["name"])
	case "path":
		return fmt.Sprintf("path %v %v", d["format"], d["paths"])
	case "kafka":
		if p, ok := d["pattern"]; ok {
			return fmt.Sprintf("kafka %v pattern %v", d["servers"], p)
		}
		return fmt.Sprintf("kafka %v %v", d["servers"], d["topics"])
	case "jdbc":
		return fmt.Sprintf("jdbc %v %v%v", d["url"], d["table"], d["query"])
	default:
		return fmt.Sprintf("%v %v", d["kind"], d["description"])
	}
}

// sparkLines are the Spark lines the end-to-end test runs on: COLLINE_E2E_SPARK_LINES, default
// the lines flagged "ci" in dev/spark/lines (`make lines` runs the others).
func sparkLines(t *testing.T) []string {
	t.Helper()
	if v := os.Getenv("COLLINE_E2E_SPARK_LINES"); v != "" {
		return strings.Fields(v)
	}
	out, err := exec.Command(filepath.Join("..", "dev", "spark-lines"), "ci").Output()
	if err != nil {
		t.Fatalf("dev/spark-lines ci: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		t.Fatal("dev/spark/lines flags no line ci")
	}
	return lines
}

// runSparkWithJars runs dev/spark/SparkSqlRunner.java like dev/spark-sql does, with the jars of a
// connectors POM added to the classpath (fetched once into .cache/jars/<name>).
func runSparkWithJars(ctx context.Context, t *testing.T, s *stack.Stack, name, pom string, env []string, args ...string) (string, error) {
	t.Helper()
	sparkJars := filepath.Join(s.Root, ".cache", "jars", "spark-3.5_2.12")
	listener := filepath.Join(s.Root, "listener", "target", "colline-listener-spark3.5_2.12-0.1.0.jar")
	// dev/spark-sql fetches the Spark jars and (re)builds the listener jar: let it, on an empty script
	work := t.TempDir()
	noop := filepath.Join(work, "noop.sql")
	if err := os.WriteFile(noop, []byte("SET spark.sql.shuffle.partitions=2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runSparkSQL(ctx, s, []string{"COLLINE_ENABLED=false"}, "-Drunner.hive=false", noop); err != nil {
		return "", fmt.Errorf("dev/spark-sql (to fetch jars and build the listener): %w", err)
	}
	extra := filepath.Join(s.Root, ".cache", "jars", name)
	fetch := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "fetch-jars"), filepath.Join(s.Root, pom), extra)
	fetch.Stdout, fetch.Stderr = s.Log, s.Log
	if err := fetch.Run(); err != nil {
		return "", fmt.Errorf("dev/fetch-jars %s: %w", pom, err)
	}
	jar := filepath.Join(work, "colline-listener.jar")
	b, err := os.ReadFile(listener)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(jar, b, 0o644); err != nil {
		return "", err
	}
	var programs, props, files []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-D"):
			props = append(props, a)
		case strings.HasSuffix(a, ".java"):
			programs = append(programs, a)
			files = append(files, a)
		default:
			files = append(files, a)
		}
	}
	cp := jar + ":" + sparkJars + "/*:" + extra + "/*"
	if len(programs) > 0 {
		classes := filepath.Join(work, "programs")
		javac := exec.CommandContext(ctx, "javac", append([]string{"-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", classes}, programs...)...)
		javac.Stdout, javac.Stderr = s.Log, s.Log
		if err := javac.Run(); err != nil {
			return "", fmt.Errorf("javac: %w", err)
		}
		cp += ":" + classes
	}
	jvm := []string{"-XX:+IgnoreUnrecognizedVMOptions",
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
		"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
		"--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
		"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
		"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
		"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
		"--add-opens=java.base/sun.security.action=ALL-UNNAMED", "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
		"-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true",
		"-Xms256m", "-Xmx2g", "-XX:+UseG1GC", "-Drunner.hive=false",
		"-Dlog4j2.configurationFile=" + filepath.Join(s.Root, "dev", "spark", "log4j2.properties")}
	jvm = append(jvm, props...)
	jvm = append(jvm, "-cp", cp, filepath.Join(s.Root, "dev", "spark", "SparkSqlRunner.java"), filepath.Join(work, "run"))
	jvm = append(jvm, files...)
	cmd := exec.CommandContext(ctx, "java", jvm...)
	cmd.Env = append(os.Environ(), "SPARK_LOCAL_IP=127.0.0.1")
	cmd.Env = append(cmd.Env, env...)
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(&buf, s.Log)
	cmd.Stderr = s.Log
	err = cmd.Run()
	return buf.String(), err
}

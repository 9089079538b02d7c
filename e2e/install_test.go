//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
)

// docs/install.md, run (make install-test, a step of make test). The page's fenced blocks each
// follow a `<!-- check: NAME -->` comment; every block is run here, with the release version,
// the Maven repository URL and the brokers replaced by the test's (make maven-repo wrote the
// layout into COLLINE_DIST, for COLLINE_DIST_VERSION), except the Helm commands, which need a
// cluster: they are rendered with helm template instead (and helm uninstall is not run).

// docBlock is one fenced block of docs/install.md.
type docBlock struct{ check, text string }

func installDoc(t *testing.T) map[string]docBlock {
	t.Helper()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks := map[string]docBlock{}
	check, in := "", false
	var text strings.Builder
	checkRe := regexp.MustCompile(`^<!-- check: ([a-z0-9-]+)`)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case in && l == "```":
			blocks[check] = docBlock{check, text.String()}
			in, check = false, ""
			text.Reset()
		case in:
			text.WriteString(l + "\n")
		case strings.HasPrefix(l, "```"):
			if check == "" {
				t.Errorf("docs/install.md:%d: a fenced block without a <!-- check: NAME --> comment: no test runs it", n)
			}
			in = true
		case checkRe.MatchString(l):
			check = checkRe.FindStringSubmatch(l)[1]
		}
	}
	return blocks
}

// installEnv is what make install-test provides.
func installEnv(t *testing.T) (dist, version string) {
	t.Helper()
	dist, version = os.Getenv("COLLINE_DIST"), os.Getenv("COLLINE_DIST_VERSION")
	if dist == "" || version == "" {
		t.Skip("COLLINE_DIST and COLLINE_DIST_VERSION are not set (make install-test)")
	}
	return dist, version
}

// docReplacer puts the test's values in place of the page's placeholders.
func docReplacer(version, repository, brokers, topic string) *strings.Replacer {
	return strings.NewReplacer("0.1.0", version, "https://maven.example.com/releases", repository,
		"kafka-1:9092", brokers, "colline.plans", topic)
}

// TestInstallSpark: Spark takes the listener from the Maven repository layout, three ways, as the
// page says: spark-defaults.conf (spark.jars.packages and spark.jars.repositories, a file: URL of
// the layout), spark-submit --packages/--repositories, and spark.jars naming the jar's URL (the
// page's s3a:// URL served over http here). Each run's events reach Kafka, published by the
// listener of the release's version, which only the layout holds (make maven-repo installs
// nothing in ~/.m2), in a fresh Ivy cache.
func TestInstallSpark(t *testing.T) {
	dist, version := installEnv(t)
	blocks := installDoc(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(dist, "maven")
	repoURL := (&url.URL{Scheme: "file", Path: layout}).String()
	jar := fmt.Sprintf("io/colline/colline-listener-spark3.5_2.12/%[1]s/colline-listener-spark3.5_2.12-%[1]s.jar", version)
	if _, err := os.Stat(filepath.Join(layout, jar)); err != nil {
		t.Fatalf("make maven-repo wrote no %s: %v", jar, err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(layout)))
	defer srv.Close()
	runner := runnerJar(t, ctx, s.Root)

	for _, tc := range []struct {
		check string
		args  func(text, app string) []string
	}{
		{"spark-defaults", func(text, app string) []string {
			conf := filepath.Join(t.TempDir(), "spark-defaults.conf")
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"--properties-file", conf}
		}},
		{"spark-submit", func(text, app string) []string {
			w := strings.Fields(strings.ReplaceAll(text, "\\\n", " "))
			if w[0] != "spark-submit" || !strings.Contains(text, "--class org.example.NightlyJob nightly-job.jar") {
				t.Fatalf("the spark-submit block changed: %q", text)
			}
			return w[1 : len(w)-3] // without spark-submit and the job
		}},
		{"spark-jars-url", func(text, app string) []string {
			conf := filepath.Join(t.TempDir(), "spark-defaults.conf")
			text = strings.ReplaceAll(text, "s3a://example-bucket/jars/", srv.URL+"/"+filepath.Dir(jar)+"/")
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"--properties-file", conf}
		}},
	} {
		t.Run(tc.check, func(t *testing.T) {
			b, ok := blocks[tc.check]
			if !ok {
				t.Fatalf("docs/install.md has no block checked as %s", tc.check)
			}
			app := fmt.Sprintf("colline-install-%s-%d", tc.check, time.Now().UnixNano())
			topic := "colline.e2e." + app
			if err := s.CreateTopics(ctx, 1, topic); err != nil {
				t.Fatal(err)
			}
			text := docReplacer(version, repoURL, s.Brokers, topic).Replace(b.text)
			args := append(tc.args(text, app),
				"--conf", "spark.jars.ivy="+t.TempDir(), // a fresh Ivy cache
				"--conf", "spark.app.name="+app, "--conf", "spark.ui.enabled=false",
				"--conf", "spark.colline.kafka.topic="+topic, // where the page's block sets no topic
				"--class", "SparkSqlRunner", runner, t.TempDir(), filepath.Join(s.Root, "e2e/testdata/install.sql"))
			start := time.Now()
			cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "spark-submit"), args...)
			cmd.Env = append(stack.Environ(), "SPARK_LINE=3.5_2.12")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("dev/spark-submit %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if tc.check != "spark-jars-url" {
				// repo-1: the first of spark.jars.repositories / --repositories, the layout
				found := "found io.colline#colline-listener-spark3.5_2.12;" + version + " in repo-1"
				if !strings.Contains(string(out), found) {
					t.Errorf("Spark's Ivy output does not say %q:\n%s", found, out)
				}
				for _, l := range strings.Split(string(out), "\n") {
					if strings.Contains(l, "found io.colline#") {
						t.Logf("Ivy: %s", strings.TrimSpace(l))
					}
				}
			}
			versions := listenerVersions(t, ctx, s.Brokers, topic)
			if len(versions) == 0 {
				t.Fatalf("no event in %s after the job; Spark's output:\n%s", topic, out)
			}
			for _, v := range versions {
				if v != version {
					t.Fatalf("an event of listener %s, want %s (the layout's)", v, version)
				}
			}
			t.Logf("%s: Spark ran the job in %.1fs, %d events in Kafka from listener %s", tc.check, time.Since(start).Seconds(), len(versions), version)
		})
	}
}

// runnerJar builds dev/spark/SparkSqlRunner.java into a jar: the job spark-submit runs.
func runnerJar(t *testing.T, ctx context.Context, root string) string {
	t.Helper()
	dir := t.TempDir()
	jars := filepath.Join(root, ".cache", "jars", "spark-3.5_2.12")
	fetch := exec.CommandContext(ctx, filepath.Join(root, "dev", "fetch-jars"), filepath.Join(root, "dev/spark/pom.xml"), jars, "-Pspark35-2.12")
	if out, err := fetch.CombinedOutput(); err != nil {
		t.Fatalf("dev/fetch-jars: %v\n%s", err, out)
	}
	for _, c := range [][]string{
		{"javac", "-nowarn", "-cp", jars + "/*", "-d", filepath.Join(dir, "classes"), filepath.Join(root, "dev/spark/SparkSqlRunner.java")},
		{"jar", "cf", filepath.Join(dir, "runner.jar"), "-C", filepath.Join(dir, "classes"), "."},
	} {
		if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	return filepath.Join(dir, "runner.jar")
}

// listenerVersions reads a topic from the start for a few seconds and returns the
// producer.version of each event.
func listenerVersions(t *testing.T, ctx context.Context, brokers, topic string) []string {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: strings.Split(brokers, ","), Topic: topic, Partition: 0, MaxWait: time.Second})
	defer r.Close()
	var out []string
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		m, err := r.ReadMessage(rctx)
		cancel()
		if err != nil {
			return out
		}
		var ev struct {
			Producer struct{ Version string }
		}
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatalf("event at offset %d: %v", m.Offset, err)
		}
		out = append(out, ev.Producer.Version)
	}
}

// TestInstallHive: the page's commands fetch the Hive hook from the repository (served over http
// here) and check its .sha1; the jar is the layout's.
func TestInstallHive(t *testing.T) {
	dist, version := installEnv(t)
	b, ok := installDoc(t)["hive-fetch"]
	if !ok {
		t.Fatal("docs/install.md has no block checked as hive-fetch")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dist, "maven"))))
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", docReplacer(version, srv.URL, "", "").Replace(b.text))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the hive-fetch block: %v\n%s", err, out)
	}
	name := "colline-hive-" + version + ".jar"
	if !strings.Contains(string(out), name+": OK") {
		t.Fatalf("sha1sum -c did not say %s: OK:\n%s", name, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, name))
	want, _ := os.ReadFile(filepath.Join(dist, "maven/io/colline/colline-hive", version, name))
	if len(got) == 0 || string(got) != string(want) {
		t.Fatalf("the fetched %s (%d bytes) is not the layout's (%d bytes)", name, len(got), len(want))
	}
	t.Logf("hive-fetch: %s (%d bytes) fetched, sha1 checked", name, len(got))
}

// TestInstallChecks: the page's "checking that lineage arrives" commands, against a consumer
// that ingested events of the captured skeleton run, and its Helm commands, rendered.
func TestInstallChecks(t *testing.T) {
	_, version := installEnv(t)
	blocks := installDoc(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, driver, app, topic := jobStack(t, ctx, "colline-install", "spark_catalog/shop.", 1)
	_ = driver
	files, _ := filepath.Glob(filepath.Join(s.Root, "plan/testdata/spark-3.5/skeleton/*.json"))
	w := &kafka.Writer{Addr: kafka.TCP(strings.Split(s.Brokers, ",")...), Topic: topic, RequiredAcks: kafka.RequireAll}
	for _, f := range files {
		v, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(app), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	bin, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := stack.StartConsumer(t, bin, filepath.Join(t.TempDir(), "consumer.log"), "COLLINE_KAFKA_BROKERS="+s.Brokers,
		"COLLINE_KAFKA_TOPIC="+topic, "COLLINE_KAFKA_DLQ_TOPIC="+topic+".dlq", "COLLINE_KAFKA_GROUP="+topic, "COLLINE_NEO4J_URI="+s.Neo4jURI)
	neo4jHTTP := stack.Getenv("COLLINE_TEST_NEO4J_HTTP", "127.0.0.1:"+stack.Getenv("COLLINE_NEO4J_HTTP_PORT", "17474"))
	bash := func(check string) (string, error) {
		t.Helper()
		b, ok := blocks[check]
		if !ok {
			t.Fatalf("docs/install.md has no block checked as %s", check)
		}
		text := strings.NewReplacer("localhost:9090", c.Addr, "localhost:7474", neo4jHTTP).Replace(b.text)
		out, err := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", text).CombinedOutput()
		return string(out), err
	}
	// until the consumer is ready (/readyz: 200) and has written the 4 events
	const ok4 = `colline_ingest_messages_total{result="ok"} 4`
	var metrics string
	err = nil
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if metrics, err = bash("check-metrics"); err == nil && strings.Contains(metrics, ok4) {
			break
		}
	}
	if err != nil || !strings.Contains(metrics, ok4) {
		t.Fatalf("the check-metrics block: %v, printed no %s:\n%s", err, ok4, metrics)
	}
	out, err := bash("check-neo4j")
	if err != nil {
		t.Fatalf("the check-neo4j block: %v\n%s", err, out)
	}
	var resp struct {
		Results []struct{ Data []any }
		Errors  []any
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Errors) != 0 || len(resp.Results) != 1 || len(resp.Results[0].Data) == 0 {
		t.Fatalf("check-neo4j: %v, want rows and no errors:\n%s", err, out)
	}
	t.Logf("check-metrics and check-neo4j: 4 events ingested, %d FEEDS rows from Neo4j's HTTP API", len(resp.Results[0].Data))

	// Helm: the chart packaged as make dist packages it, the page's values and commands rendered.
	helm := filepath.Join(s.Root, ".cache", "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm: %v (make chart-tools)", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(helm, "package", filepath.Join(s.Root, "deploy/helm/colline"), "--version", version,
		"--app-version", version, "--destination", dir).CombinedOutput(); err != nil {
		t.Fatalf("helm package: %v\n%s", err, out)
	}
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, []byte(blocks["helm-values"].text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, check := range []string{"helm-install", "helm-upgrade"} {
		w := strings.Fields(docReplacer(version, "", "", "").Replace(blocks[check].text))
		if len(w) < 4 || w[0] != "helm" {
			t.Fatalf("the %s block is not a helm command: %q", check, blocks[check].text)
		}
		args := []string{"template"}
		for _, a := range w[2:] {
			if a != "--create-namespace" {
				args = append(args, a)
			}
		}
		cmd := exec.Command(helm, append(args, "--kube-version", "1.37.0")...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s as helm %s: %v\n%s", check, strings.Join(args, " "), err, out)
		}
		image := "image: ghcr.io/colline/colline-consumer:" + version
		if !strings.Contains(string(out), image) || !strings.Contains(string(out), "neo4j://neo4j.lineage.svc:7687") {
			t.Fatalf("%s renders no %q with the page's values:\n%s", check, image, out)
		}
		t.Logf("%s: rendered (helm %s), %s", check, strings.Join(args, " "), image)
	}
	if _, ok := blocks["helm-uninstall"]; !ok {
		t.Error("docs/install.md has no helm-uninstall block")
	}
}

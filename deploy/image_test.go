package deploy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
)

// The image: deploy/image/build makes it with podman FROM scratch (no registry); the Dockerfile
// at the repository root makes the same tree for machines with registries. TestImageLayout checks
// what needs no container engine; TestImageRun (make image-test, a step of make test) runs the
// image that the build just made, as the Helm chart renders it, against the real Kafka and Neo4j.

// finalStage returns the instructions of a Containerfile's last stage, comments and blank lines
// left out, continuation lines joined.
func finalStage(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, file))
	if err != nil {
		t.Fatal(err)
	}
	var stage []string
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if strings.HasPrefix(l, "FROM ") {
			stage = nil
		}
		if l != "" && !strings.HasPrefix(l, "#") {
			stage = append(stage, l)
		}
	}
	return stage
}

// TestImageLayout: the Dockerfile and deploy/image/Containerfile build the same image. Their final
// stages are the same instructions but for where the tree comes from, and the Dockerfile's tree is
// made by the same script (deploy/image/rootfs); the Helm chart names the image the build tags.
func TestImageLayout(t *testing.T) {
	podman := finalStage(t, "deploy/image/Containerfile")
	docker := finalStage(t, "Dockerfile")
	const podmanCopy, dockerCopy = "COPY rootfs/ /", "COPY --from=rootfs /rootfs/ /"
	if !slices.Contains(podman, podmanCopy) || !slices.Contains(docker, dockerCopy) {
		t.Fatalf("want %q in deploy/image/Containerfile and %q in the Dockerfile's final stage:\n%s\n\n%s",
			podmanCopy, dockerCopy, strings.Join(podman, "\n"), strings.Join(docker, "\n"))
	}
	same := func(stage []string, copyLine string) string {
		return strings.ReplaceAll(strings.Join(stage, "\n"), copyLine, "COPY <tree> /")
	}
	if p, d := same(podman, podmanCopy), same(docker, dockerCopy); p != d {
		t.Errorf("final stages differ:\ndeploy/image/Containerfile:\n%s\n\nDockerfile:\n%s", p, d)
	}
	b, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^COPY deploy/image/rootfs /usr/local/bin/colline-rootfs$`).Match(b) ||
		!regexp.MustCompile(`(?m)^RUN .*colline-rootfs /rootfs `).Match(b) {
		t.Errorf("the Dockerfile's rootfs stage does not run deploy/image/rootfs (as colline-rootfs /rootfs ...)")
	}

	// The chart's default image is the build's: its repository, and the chart's appVersion as the
	// tag, which `make dist` sets to the build's version (helm package --app-version).
	build, err := os.ReadFile(filepath.Join(repo, "deploy/image/build"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`IMAGE=\$\{COLLINE_IMAGE_REPOSITORY:-([^}]+)\}`).FindSubmatch(build)
	if m == nil {
		t.Fatal("no IMAGE=${COLLINE_IMAGE_REPOSITORY:-...} in deploy/image/build")
	}
	manifest, err := render(t, kubeVersions[0], "--set", "config.kafka.brokers={k:9092}", "--set", "config.neo4j.uri=bolt://n:7687",
		"--set", "config.neo4j.user=")
	if err != nil {
		t.Fatal(err)
	}
	dep := find(split(t, manifest), "Deployment")
	chartYAML, _ := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	app := regexp.MustCompile(`(?m)^appVersion: "?([^"\n]+)"?$`).FindSubmatch(chartYAML)
	if dep == nil || app == nil {
		t.Fatal("no Deployment rendered or no appVersion in Chart.yaml")
	}
	want := string(m[1]) + ":" + string(app[1])
	if got := get(dep.Doc, "spec", "template", "spec", "containers", 0, "image"); got != want {
		t.Errorf("the chart's default image is %v, want %s (deploy/image/build's repository, tagged with the appVersion)", got, want)
	}
}

// TestImageRun runs the image named by COLLINE_IMAGE (make image-test builds it) with podman:
//   - the image: nonroot, no shell, the labels of its version and commit, the CA bundle, zoneinfo,
//     the CLI with the explorer's page, within the 40 MB budget;
//   - the chart, packaged with that version as its appVersion, names exactly that image;
//   - the consumer runs with the environment and the security context the chart renders
//     (read-only root file system, user 65532, no capabilities, no privilege escalation) on the
//     host's network, against the Kafka and Neo4j of dev/services;
//   - it ingests the captured skeleton run (plan/testdata/spark-3.5/skeleton, produced to its
//     topic): the 10 relationships its SQL yields (e2e's skeletonEdges) are in Neo4j;
//   - /readyz answers 200 and /metrics counts the 4 messages;
//   - SIGTERM drains it: exit code 0;
//   - `colline ui` from the same image serves the explorer's page, not the placeholder.
func TestImageRun(t *testing.T) {
	image := os.Getenv("COLLINE_IMAGE")
	if image == "" {
		t.Skip("COLLINE_IMAGE is not set (make image-test builds the image and sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	version := image[strings.LastIndex(image, ":")+1:]

	var images []struct {
		Size   int64
		Config struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		}
	}
	inspect := podman(t, "image", "inspect", image)
	if err := json.Unmarshal([]byte(inspect), &images); err != nil || len(images) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, inspect)
	}
	cfg := images[0]
	head, _ := run(t, nil, "git", "-C", repo, "rev-parse", "HEAD")
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": strings.TrimSpace(head),
		"org.opencontainers.image.source":   "https://github.com/colline/colline",
	} {
		if got := cfg.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/colline-consumer"}) {
		t.Errorf("user %q, entrypoint %q: want 65532:65532 and /colline-consumer", cfg.Config.User, cfg.Config.Entrypoint)
	}
	if cfg.Size > 40<<20 {
		t.Errorf("image size %d bytes, over the 40 MiB budget", cfg.Size)
	}
	files := imageFiles(t, image)
	for _, f := range []string{"colline-consumer", "colline", "etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt",
		"usr/share/zoneinfo/UTC", "usr/share/zoneinfo/Europe/Paris", "tmp/"} {
		if !files[f] {
			t.Errorf("the image has no /%s", f)
		}
	}
	for f := range files {
		if strings.HasPrefix(f, "bin/") || strings.HasPrefix(f, "usr/bin/") || strings.HasPrefix(f, "sbin/") || strings.HasSuffix(f, "/sh") {
			t.Errorf("the image holds /%s: it should have no shell and no programs but colline's", f)
		}
	}
	t.Logf("image %s: %d bytes, %d files, user %s, labels version %s revision %s", image, cfg.Size, len(files),
		cfg.Config.User, cfg.Config.Labels["org.opencontainers.image.version"], cfg.Config.Labels["org.opencontainers.image.revision"])

	// The chart as `make dist` packages it, rendered with this test's Kafka, Neo4j and topic.
	brokers := getenv("COLLINE_TEST_KAFKA_BROKERS", "127.0.0.1:19092")
	neo4jURI := getenv("COLLINE_TEST_NEO4J_URI", "bolt://127.0.0.1:17687")
	topic := fmt.Sprintf("colline.image.%d", time.Now().UnixNano())
	port := freePort(t)
	pkgDir := t.TempDir()
	if out, err := run(t, nil, tool(t, "helm"), "package", chart, "--app-version", version, "--destination", pkgDir); err != nil {
		t.Fatalf("helm package: %v\n%s", err, out)
	}
	pkgs, _ := filepath.Glob(filepath.Join(pkgDir, "colline-*.tgz"))
	if len(pkgs) != 1 {
		t.Fatalf("helm package wrote %v", pkgs)
	}
	manifest, err := run(t, nil, tool(t, "helm"), "template", "colline", pkgs[0], "--namespace", "lineage", "--kube-version", kubeVersions[1],
		"--set", "config.kafka.brokers={"+brokers+"}", "--set", "config.kafka.topic="+topic,
		"--set", "config.kafka.dlqTopic="+topic+".dlq", "--set", "config.kafka.group="+topic,
		"--set", "config.neo4j.uri="+neo4jURI, "--set", "config.neo4j.user=",
		"--set", fmt.Sprintf("metrics.port=%d", port), "--set", "config.batchWait=50ms")
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs := split(t, manifest)
	dep := find(objs, "Deployment")
	if dep == nil {
		t.Fatal("no Deployment rendered")
	}
	container := get(dep.Doc, "spec", "template", "spec", "containers", 0)
	if got := get(container, "image"); got != image {
		t.Fatalf("the packaged chart's default image is %v, the build made %s", got, image)
	}
	args := podmanRunArgs(t, objs, get(dep.Doc, "spec", "template", "spec", "securityContext"), get(container, "securityContext"))

	if err := createTopics(ctx, brokers, topic, topic+".dlq"); err != nil {
		t.Fatalf("Kafka at %s (make services): %v", brokers, err)
	}
	driver, err := neo4j.NewDriverWithContext(neo4jURI, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(ctx)
	if _, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (n) WHERE n.key STARTS WITH 'spark_catalog/shop.' OR n.key = 'spark_catalog/colline-spark-sql' DETACH DELETE n`,
		nil, neo4j.EagerResultTransformer); err != nil {
		t.Fatalf("Neo4j at %s (make services): %v", neo4jURI, err)
	}

	name := "colline-image-test-" + strings.ReplaceAll(topic, ".", "-")
	t.Logf("podman run %s", strings.Join(args, " "))
	podman(t, append([]string{"run", "-d", "--name", name, "--network", "host"}, append(args, image)...)...)
	defer func() {
		if t.Failed() {
			logs, _ := run(t, nil, podmanCmd, "podman", "logs", name)
			t.Logf("consumer log:\n%s", logs)
		}
		run(t, nil, podmanCmd, "podman", "rm", "-f", name)
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+"/readyz", 90*time.Second)

	events, _ := filepath.Glob(filepath.Join(repo, "plan/testdata/spark-3.5/skeleton/*.json"))
	if len(events) != 4 {
		t.Fatalf("want the 4 events of the captured skeleton run, found %v", events)
	}
	produce(t, ctx, brokers, topic, events)
	want := []string{ // e2e/e2e_test.go's skeletonEdges, as Neo4j holds them
		"shop.country_revenue#revenue DECIDES_ROWS shop.top_countries",
		"shop.country_revenue#country FEEDS shop.top_countries#country",
		"shop.country_revenue#revenue FEEDS shop.top_countries#revenue",
		"shop.customers#country DECIDES_ROWS shop.country_revenue",
		"shop.customers#country FEEDS shop.country_revenue#country",
		"shop.customers#customer_id DECIDES_ROWS shop.country_revenue",
		"shop.orders#amount FEEDS shop.country_revenue#revenue",
		"shop.orders#customer_id DECIDES_ROWS shop.country_revenue",
		"shop.orders#order_id FEEDS shop.country_revenue#orders",
		"shop.orders#status DECIDES_ROWS shop.country_revenue",
	}
	sort.Strings(want)
	var got []string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if got = edges(t, ctx, driver); len(got) >= len(want) {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lineage in Neo4j:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("the container ingested the skeleton: %d relationships as expected", len(got))

	if code, _ := httpGet(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d, want 200", code)
	}
	// the messages are counted once their offsets are committed, just after the graph write
	var (
		code    int
		metrics string
		m       []string
	)
	okCount := regexp.MustCompile(`(?m)^colline_ingest_messages_total\{[^}]*result="ok"[^}]*\} (\d+)`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, metrics = httpGet(t, base+"/metrics")
		if m = okCount.FindStringSubmatch(metrics); (code == 200 && m != nil && m[1] == "4") || time.Now().After(deadline) {
			break
		}
	}
	if code != 200 || m == nil || m[1] != "4" {
		t.Errorf("/metrics: %d, colline_ingest_messages_total{result=\"ok\"} %v, want 200 and 4:\n%s", code, m, grepLines(metrics, "colline_ingest_messages_total"))
	}

	start := time.Now()
	podman(t, "kill", "--signal", "TERM", name)
	exit := strings.TrimSpace(podman(t, "wait", name))
	if exit != "0" {
		t.Fatalf("after SIGTERM the consumer exited with %s, want 0", exit)
	}
	t.Logf("SIGTERM: exit 0 in %.1fs", time.Since(start).Seconds())

	// The explorer: the same image's CLI serves the page it embeds.
	uiPort := freePort(t)
	ui := name + "-ui"
	podman(t, append([]string{"run", "-d", "--name", ui, "--network", "host", "--entrypoint", "/colline", "--env",
		"COLLINE_NEO4J_URI=" + neo4jURI}, append(args, image, "ui", "--addr", fmt.Sprintf("127.0.0.1:%d", uiPort))...)...)
	defer run(t, nil, podmanCmd, "podman", "rm", "-f", ui)
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", uiPort), 60*time.Second)
	code, page := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", uiPort))
	if code != 200 || strings.Contains(page, "not built") || !regexp.MustCompile(`src="[^"]*main-[A-Z0-9]+\.js"`).MatchString(page) {
		t.Errorf("colline ui in the image: %d, want the built page (main-*.js), got:\n%.400s", code, page)
	}
}

// podmanCmd runs podman through dev/containers (installs it, the project's settings).
var podmanCmd = filepath.Join(repo, "dev", "containers")

func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, nil, podmanCmd, append([]string{"podman"}, args...)...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// imageFiles lists the paths in the image's file system (directories end with /).
func imageFiles(t *testing.T, image string) map[string]bool {
	t.Helper()
	id := strings.TrimSpace(podman(t, "create", image))
	defer run(t, nil, podmanCmd, "podman", "rm", id)
	tarFile := filepath.Join(t.TempDir(), "fs.tar")
	podman(t, "export", "-o", tarFile, id)
	out, err := run(t, nil, "tar", "-tf", tarFile)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, f := range strings.Fields(out) {
		files[strings.TrimPrefix(f, "./")] = true
	}
	return files
}

// podmanRunArgs turns what the chart rendered for the consumer's pod into podman run flags: its
// ConfigMap and Secret as the environment (envFrom), its user, and its security context.
func podmanRunArgs(t *testing.T, objs []object, pod, container any) []string {
	t.Helper()
	var args []string
	env := map[string]string{}
	for _, o := range objs {
		switch o.Kind {
		case "ConfigMap":
			for k, v := range get(o.Doc, "data").(map[string]any) {
				env[k] = fmt.Sprint(v)
			}
		case "Secret":
			if d, ok := get(o.Doc, "data").(map[string]any); ok {
				for k, v := range d {
					b, _ := base64.StdEncoding.DecodeString(fmt.Sprint(v))
					env[k] = string(b)
				}
			}
			if d, ok := get(o.Doc, "stringData").(map[string]any); ok {
				for k, v := range d {
					env[k] = fmt.Sprint(v)
				}
			}
		}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--env", k+"="+env[k])
	}
	uid, gid := get(container, "runAsUser"), get(container, "runAsGroup")
	if uid == nil {
		uid, gid = get(pod, "runAsUser"), get(pod, "runAsGroup")
	}
	if uid == nil || fmt.Sprint(uid) == "0" || get(container, "runAsNonRoot") != true {
		t.Fatalf("the chart renders no non-root user: pod %v, container %v", pod, container)
	}
	args = append(args, "--user", fmt.Sprintf("%v:%v", uid, gid))
	if get(container, "readOnlyRootFilesystem") != true || get(container, "allowPrivilegeEscalation") != false {
		t.Fatalf("the chart's container securityContext is not read-only without privilege escalation: %v", container)
	}
	args = append(args, "--read-only", "--security-opt", "no-new-privileges")
	if drop, _ := get(container, "capabilities", "drop").([]any); slices.Contains(drop, any("ALL")) {
		args = append(args, "--cap-drop", "all")
	} else {
		t.Fatalf("the chart's container keeps capabilities: %v", container)
	}
	return args
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitHTTP(t *testing.T, url string, within time.Duration) {
	t.Helper()
	var code int
	var body string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if code, body = httpGet(t, url); code == 200 {
			return
		}
	}
	t.Fatalf("%s: no 200 within %v (last: %d %s)", url, within, code, body)
}

func createTopics(ctx context.Context, brokers string, topics ...string) error {
	c := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")...), Timeout: 30 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, tp := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: tp, NumPartitions: 1, ReplicationFactor: 1})
	}
	resp, err := c.CreateTopics(ctx, req)
	if err != nil {
		return err
	}
	for tp, err := range resp.Errors {
		if err != nil {
			return fmt.Errorf("topic %s: %w", tp, err)
		}
	}
	return nil
}

// produce writes each file as one message, keyed as the listener keys them (the app id).
func produce(t *testing.T, ctx context.Context, brokers, topic string, files []string) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(strings.Split(brokers, ",")...), Topic: topic, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var msgs []kafka.Message
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Key: []byte("skeleton"), Value: b})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing the skeleton's events to %s: %v", topic, err)
	}
}

// edges renders the lineage relationships into the skeleton's tables, without the catalog prefix.
func edges(t *testing.T, ctx context.Context, driver neo4j.DriverWithContext) []string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, driver, `
MATCH (s)-[r:FEEDS|DECIDES_ROWS]->(d) WHERE d.key STARTS WITH 'spark_catalog/shop.'
RETURN DISTINCT s.key AS s, type(r) AS r, d.key AS d`, nil, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range res.Records {
		s, _ := rec.Get("s")
		r, _ := rec.Get("r")
		d, _ := rec.Get("d")
		out = append(out, strings.NewReplacer("spark_catalog/", "").Replace(fmt.Sprintf("%v %v %v", s, r, d)))
	}
	sort.Strings(out)
	return out
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

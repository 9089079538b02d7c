//go:build e2e

package e2e

// Tags end to end (issue 32, docs/tags.md): a dbt column tag, from the manifest.json of a real dbt
// run, carried through a Spark job (real Spark with the colline listener) into a downstream table,
// and stopped by a sha2; a tag set by a column comment in Spark's catalog, carried and stopped by
// an md5; the consumer counting the arrivals its settings do not allow, and emitting the tags as
// OpenLineage's TagsDatasetFacet.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/tags"
)

func TestTagsSparkDBT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver, err := neo4j.NewDriverWithContext(s.Neo4jURI, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(context.Background()) })
	if err := driver.VerifyConnectivity(ctx); err != nil {
		t.Fatalf("Neo4j is not reachable at %s (start it with dev/services start): %v", s.Neo4jURI, err)
	}
	id := stack.NewID()
	topic, group, olOut := "colline.e2e.tags-"+id, "colline-e2e-tags-"+id, "colline.e2e.tags-"+id+".ol"
	if err := s.CreateTopics(ctx, 1, topic, topic+".dlq", olOut); err != nil {
		t.Fatalf("Kafka is not usable at %s: %v", s.Brokers, err)
	}
	k := s.Kafka()
	defer k.Close()
	defer k.DeleteTopics(context.Background(), topic, topic+".dlq", olOut)
	w := graph.NewWriter(driver, "")
	const fileSource = "file:e2e-tags" // fixed: a leftover of an interrupted run is replaced
	clean := func() {
		for _, p := range []string{"spark_catalog/lake.", "spark_catalog/mart_tags."} {
			stack.WipeKeys(context.Background(), driver, p)
		}
		w.RemoveTags(context.Background(), []string{fileSource, "dbt:shop", "spark|spark_catalog/mart_tags.notes"})
	}
	clean()
	t.Cleanup(clean)

	// 1. Spark (3.5, the listener publishing to topic) writes the lake, then runs the job
	work := t.TempDir()
	app := "colline-e2e-tags-" + id
	start := time.Now()
	if err := s.Spark(ctx, filepath.Join(work, "spark"), topic, []string{"SPARK_LINE=3.5_2.12"}, "-Dspark.app.name="+app,
		"dev/dbt/lake.sql", "e2e/testdata/tags_downstream.sql"); err != nil {
		t.Fatal(err)
	}
	n, _ := s.Messages(ctx, topic)
	t.Logf("spark: %.1fs, %d events", time.Since(start).Seconds(), n)

	// 2. a real dbt run of dev/dbt/shop (DuckDB over the lake's files) writes target/manifest.json
	start = time.Now()
	setup := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "dbt", "setup"))
	setup.Stdout, setup.Stderr = s.Log, s.Log
	if err := setup.Run(); err != nil {
		t.Fatalf("dev/dbt/setup: %v", err)
	}
	venv := filepath.Join(s.Root, ".cache", "dbt-venv", "bin")
	duck := filepath.Join(work, "shop.duckdb")
	lake := filepath.Join(work, "spark", "warehouse", "lake.db")
	dbt := exec.CommandContext(ctx, filepath.Join(venv, "dbt"), "run", "--no-version-check", "--vars", `{"lake": "`+lake+`"}`)
	dbt.Dir = filepath.Join(s.Root, "dev", "dbt", "shop")
	dbt.Env = append(stack.Environ(), "PATH="+venv+":"+os.Getenv("PATH"), "DBT_PROFILES_DIR="+dbt.Dir, "DBT_SEND_ANONYMOUS_USAGE_STATS=false",
		"COLLINE_DBT_DUCKDB="+duck, "DBT_TARGET_PATH="+filepath.Join(work, "target"), "DBT_LOG_PATH="+filepath.Join(work, "logs"))
	dbt.Stdout, dbt.Stderr = s.Log, s.Log
	if err := dbt.Run(); err != nil {
		t.Fatalf("dbt run: %v", err)
	}
	manifest := filepath.Join(work, "target", "manifest.json")
	t.Logf("dbt run: %.1fs", time.Since(start).Seconds())

	// 3. the tags: dbt's (its datasets as dbt-ol names them, the lake joined to Spark's tables by
	// an alias) and a tag file with pii's settings: allowed in the lake only
	tagFile := filepath.Join(work, "tags.yaml")
	if err := os.WriteFile(tagFile, []byte("version: 1\nsource: e2e-tags\ntags:\n  pii:\n    allowed: [spark_catalog/lake.*]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := stack.TestColline(ctx, t, s.Root)
	duckNS := "duckdb://" + duck
	out, err := exec.CommandContext(ctx, bin, "tags", "load", "--neo4j", s.Neo4jURI, "--dbt", manifest, "--dbt-namespace", duckNS,
		"--aliases", duckNS+"/shop.lake.=spark_catalog/lake.", tagFile).CombinedOutput()
	if err != nil {
		t.Fatalf("colline tags load: %v\n%s", err, out)
	}
	t.Logf("colline tags load: %s", strings.TrimSpace(string(out)))

	// 4. the consumer writes the events, checks the policy after each batch and emits OpenLineage
	consumer, err := s.BuildConsumer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "consumer.log")
	c := stack.StartConsumer(t, consumer, logFile, "COLLINE_KAFKA_BROKERS="+s.Brokers, "COLLINE_KAFKA_TOPIC="+topic,
		"COLLINE_KAFKA_DLQ_TOPIC="+topic+".dlq", "COLLINE_KAFKA_GROUP="+group, "COLLINE_NEO4J_URI="+s.Neo4jURI,
		"COLLINE_OPENLINEAGE_EMIT_TOPIC="+olOut)
	backlog := ingest.Backlog{Brokers: strings.Split(s.Brokers, ","), Topics: []string{topic}, Group: group}
	for {
		lag, err := backlog.Lag(ctx)
		if err == nil && lag[ingest.Partition{Topic: topic, ID: 0}] == 0 {
			break
		}
		if ctx.Err() != nil || !c.Running() {
			t.Fatalf("the consumer did not consume the topic (lag %v, %v); log %s", lag, err, logFile)
		}
		time.Sleep(time.Second)
	}

	// a. the tags of the downstream columns, each with its path
	g := graph.NewReader(driver, "").Tags()
	cc, nd := "spark_catalog/mart_tags.customer_contacts", "spark_catalog/mart_tags.note_digest"
	cts, err := tags.Of(ctx, g, []string{cc + "#customer_name", cc + "#name_hash", cc + "#country", "spark_catalog/mart_tags.hash_copy#name_hash",
		nd + "#note", nd + "#note_md5"}, tags.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range cts {
		for _, x := range ct.Tags {
			got = append(got, ct.Column+" "+x.Tag.String()+" "+string(x.Status)+" "+tags.PathString(x.Path))
		}
	}
	job := "default/" + app
	want := []string{
		cc + "#customer_name pii=true (dbt:shop) unmasked spark_catalog/lake.customers#name -> " + cc + "#customer_name [" + job + "] DIRECT/IDENTITY",
		cc + "#customer_name sensitivity=personal (dbt:shop) unmasked spark_catalog/lake.customers#name -> " + cc + "#customer_name [" + job + "] DIRECT/IDENTITY",
		cc + "#name_hash pii=true (dbt:shop) masked spark_catalog/lake.customers#name -> " + cc + "#name_hash [" + job + "] DIRECT/TRANSFORMATION masked",
		cc + "#name_hash sensitivity=personal (dbt:shop) masked spark_catalog/lake.customers#name -> " + cc + "#name_hash [" + job + "] DIRECT/TRANSFORMATION masked",
		nd + "#note pii=note (spark:comment) unmasked spark_catalog/mart_tags.notes#note -> " + nd + "#note [" + job + "] DIRECT/IDENTITY",
		nd + "#note_md5 pii=note (spark:comment) masked spark_catalog/mart_tags.notes#note -> " + nd + "#note_md5 [" + job + "] DIRECT/TRANSFORMATION masked",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tags of the downstream columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("tags of the downstream columns (country and hash_copy.name_hash carry none):\n%s", strings.Join(got, "\n"))

	// b. the reach of pii, as `colline tags reach` prints it
	out, err = exec.CommandContext(ctx, bin, "tags", "reach", "--neo4j", s.Neo4jURI, "pii").CombinedOutput()
	if err != nil {
		t.Fatalf("colline tags reach: %v\n%s", err, out)
	}
	t.Logf("colline tags reach pii:\n%s", out)
	if !bytes.Contains(out, []byte("4 unmasked (2 not allowed), 0 aggregated, 2 masked")) {
		t.Errorf("reach of pii: want the two sources and 2 unmasked copies (not allowed), 2 masked columns")
	}

	// c. the policy after the run: counted by the consumer, and by colline tags check (exit 5)
	_, metrics, err := c.Get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^colline_tags_policy_arrivals_total\{tag="pii"\} (\d+)$`).FindStringSubmatch(metrics); m == nil || m[1] != "2" {
		t.Errorf("colline_tags_policy_arrivals_total{tag=\"pii\"}: %v, want 2 (customer_name and note, both outside the lake)", m)
	}
	check := exec.CommandContext(ctx, bin, "tags", "check", "--neo4j", s.Neo4jURI)
	out, err = check.CombinedOutput()
	if check.ProcessState.ExitCode() != 5 || !bytes.Contains(out, []byte(cc+"#customer_name: pii")) {
		t.Errorf("colline tags check: exit %d (%v), want 5 naming %s#customer_name:\n%s", check.ProcessState.ExitCode(), err, cc, out)
	}

	// d. the OpenLineage event of the job's CTAS carries the tag on customer_name, with its source
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: strings.Split(s.Brokers, ","), Topic: olOut, MaxWait: time.Second})
	defer r.Close()
	found := false
	for !found {
		rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
		m, err := r.ReadMessage(rctx)
		rcancel()
		if err != nil {
			t.Fatalf("no emitted event carries the tags of %s: %v", cc, err)
		}
		ev, err := openlineage.Decode(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ev.Outputs {
			if o.Name != "mart_tags.customer_contacts" {
				continue
			}
			ts, ok, err := o.Tags()
			if err != nil || !ok {
				t.Fatalf("the output %s has no tags facet (%v): %s", o.Name, err, m.Value)
			}
			b, _ := json.Marshal(ts)
			if string(b) != `[{"key":"pii","value":"true","source":"dbt:shop","field":"customer_name"},{"key":"sensitivity","value":"personal","source":"dbt:shop","field":"customer_name"}]` {
				t.Errorf("tags facet of %s: %s", o.Name, b)
			}
			found = true
		}
	}
	if dead, err := s.Messages(ctx, topic+".dlq"); err != nil || dead != 0 {
		t.Errorf("dead letters: %d (%v), want 0", dead, err)
	}

	// e. the policy before a run: a pull request whose SQL copies the name into mart_tags fails
	// colline impact (exit 5, naming the column and the path); the same with the name hashed passes
	analyzer := analyzerProcess(t, "3.5_2.12")
	for _, pr := range []struct {
		file string
		exit int
		says string
	}{
		{"e2e/testdata/tags_pr/leak.sql", 5, "TAG       pii arrives unmasked in spark_catalog/mart_tags.marketing_targets#name, allowed only in spark_catalog/lake.*"},
		{"e2e/testdata/tags_pr/masked.sql", 0, "nothing downstream is affected (exit 0)"},
	} {
		cmd := exec.CommandContext(ctx, bin, "impact", "--server", analyzer.URL, "--token-file", analyzer.TokenFile, "--schema-from-graph", "--neo4j", s.Neo4jURI, "--job", job, pr.file)
		cmd.Dir = s.Root
		out, err := cmd.CombinedOutput()
		t.Logf("colline impact %s: exit %d\n%s", pr.file, cmd.ProcessState.ExitCode(), out)
		if cmd.ProcessState.ExitCode() != pr.exit || !bytes.Contains(out, []byte(pr.says)) {
			t.Errorf("colline impact %s: exit %d (%v), want %d and %q", pr.file, cmd.ProcessState.ExitCode(), err, pr.exit, pr.says)
		}
	}
}

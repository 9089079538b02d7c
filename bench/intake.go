package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/openlineage/intake"
	"github.com/colline/colline/process"
)

// Part intake: the OpenLineage endpoint under a stream of events, one in ten invalid.
//
// The events are real: every COMPLETE RunEvent openlineage-spark and dbt-ol emitted in the
// captured corpus (openlineage/testdata), each copy with a fresh runId, so that each valid event
// is one run of the graph, and every namespace prefixed with bench-intake- (its jobs and datasets
// its own, apart from the scenarios' tables other tests read). One in ten is replaced by a broken one of five kinds (no eventTime, a
// runId that is no UUID, cut short, 10,001 nested arrays, empty), each with the dead-letter
// reason its 400 must give. The consumer binary (its default settings, a keys file with one key)
// serves the endpoint on real Kafka and Neo4j; clients POST the stream over HTTP at once. It
// reports the events accepted per second, the POST latency, the time until every valid event is
// in the graph (each runId a Run: checked), that every invalid one got a 400 with its reason, and
// the consumer's peak RSS. The same-run baseline is the same valid events written straight to
// the OpenLineage topic (openlineage's Kafka transport), read by a fresh consumer: what the HTTP
// door costs on top of the pipeline.
type intakeLoad struct {
	Events  int // events posted (valid and invalid)
	Clients int // concurrent HTTP clients
}

// intakeResult is what one run measured.
type intakeResult struct {
	valid, invalid       int
	posted               time.Duration // first POST to last answer
	landed               time.Duration // first POST to every valid run in the graph
	p50, p99             time.Duration // POST latency
	peakRSS, startRSS    float64       // MiB
	baselineLanded       time.Duration
	wrongAnswers         []string // answers that were not what the event deserved
	refusedByReason      map[string]int
	status               map[int]int
	consumerLog, baseLog string
}

// brokenEvent is one kind of invalid event and the reason its 400 must carry.
type brokenEvent struct {
	name, reason string
	make         func(valid []byte) []byte
}

var brokenEvents = []brokenEvent{
	{"no eventTime", process.ReasonInvalidOpenLineage, func(v []byte) []byte { return bytes.Replace(v, []byte(`"eventTime"`), []byte(`"when"`), 1) }},
	{"a runId that is no UUID", process.ReasonInvalidOpenLineage, func(v []byte) []byte {
		var m map[string]any
		json.Unmarshal(v, &m)
		m["run"].(map[string]any)["runId"] = "run-1"
		b, _ := json.Marshal(m)
		return b
	}},
	{"cut short", process.ReasonInvalidJSON, func(v []byte) []byte { return v[:len(v)/2] }},
	{"10,001 nested arrays", process.ReasonTooDeep, func([]byte) []byte { return bytes.Repeat([]byte("["), process.MaxNesting+1) }},
	{"empty", process.ReasonInvalidJSON, func([]byte) []byte { return nil }},
}

// olCorpus returns the captured COMPLETE RunEvents the endpoint takes, from the repository at root.
func olCorpus(root string) ([][]byte, error) {
	files, _ := filepath.Glob(filepath.Join(root, "openlineage/testdata/spark-3.5/*/openlineage.jsonl"))
	dbt, _ := filepath.Glob(filepath.Join(root, "openlineage/testdata/dbt/*.jsonl"))
	v, err := openlineage.NewValidator()
	if err != nil {
		return nil, err
	}
	step := intake.Step{Validator: v}
	var out [][]byte
	for _, f := range append(files, dbt...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if !bytes.Contains(l, []byte(`"eventType":"COMPLETE"`)) {
				continue
			}
			if _, err := step.Item(l); err != nil {
				continue
			}
			iso, err := isolate(l, "bench-intake-")
			if err != nil {
				return nil, err
			}
			if _, err := step.Item(iso); err == nil { // still valid once isolated
				out = append(out, iso)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("intake: no COMPLETE RunEvent under openlineage/testdata")
	}
	return out, nil
}

// uuid4 returns a random UUID.
func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// withRunID returns ev with runId id.
func withRunID(ev []byte, id string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(ev, &m); err != nil {
		return nil, err
	}
	run, ok := m["run"].(map[string]any)
	if !ok {
		return nil, errors.New("no run")
	}
	run["runId"] = id
	return json.Marshal(m)
}

// isolate returns ev with every namespace (its job's, its datasets', their column lineage's)
// prefixed with ns and its symlinks facets dropped (they name the catalog tables), so that its
// jobs and datasets are its own in the graph: the short variant runs next to other tests on the
// same Neo4j, which read the captured scenarios' tables.
func isolate(ev []byte, ns string) ([]byte, error) {
	var m any
	if err := json.Unmarshal(ev, &m); err != nil {
		return nil, err
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "symlinks")
			for k, y := range x {
				if s, ok := y.(string); ok && k == "namespace" {
					x[k] = ns + s
					continue
				}
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(m)
	return json.Marshal(m)
}

// posting is one event to post and what it must get.
type posting struct {
	body   []byte
	runID  string // a valid event's run; "" for a broken one
	reason string // a broken one's
	kind   string
}

// stream makes n events from the corpus, one in ten broken.
func stream(corpus [][]byte, n int) ([]posting, error) {
	out := make([]posting, 0, n)
	for i := 0; i < n; i++ {
		ev := corpus[i%len(corpus)]
		id := uuid4()
		b, err := withRunID(ev, id)
		if err != nil {
			return nil, err
		}
		if i%10 == 9 {
			k := brokenEvents[(i/10)%len(brokenEvents)]
			out = append(out, posting{body: k.make(b), reason: k.reason, kind: k.name})
			continue
		}
		out = append(out, posting{body: b, runID: id})
	}
	return out, nil
}

// consumerProc is a consumer binary running for the bench.
type consumerProc struct {
	cmd      *exec.Cmd
	log      string // its stderr file
	admin    string
	intake   string
	done     chan struct{}
	startRSS float64
}

// startConsumerBin runs bin with env and waits for its "serving" line (and "serving OpenLineage"
// when wantIntake).
func startConsumerBin(ctx context.Context, bin, logFile string, wantIntake bool, env ...string) (*consumerProc, error) {
	p := &consumerProc{log: logFile, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin)
	p.cmd.Env = append(stack.Environ(), "COLLINE_HTTP_ADDR=127.0.0.1:0", "COLLINE_LOG_FORMAT=json")
	p.cmd.Env = append(p.cmd.Env, env...)
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	addrs := make(chan [2]string, 2)
	go func() {
		defer f.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			f.Write(append(sc.Bytes(), '\n'))
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && (line.Msg == "serving" || line.Msg == "serving OpenLineage") {
				addrs <- [2]string{line.Msg, line.Addr}
			}
		}
		io.Copy(io.Discard, stderr)
		p.cmd.Wait()
		close(p.done)
	}()
	want := 1
	if wantIntake {
		want = 2
	}
	for got := 0; got < want; {
		select {
		case a := <-addrs:
			if a[0] == "serving" {
				p.admin = a[1]
			} else {
				p.intake = a[1]
			}
			got++
		case <-p.done:
			return nil, fmt.Errorf("the consumer exited before serving; log %s", logFile)
		case <-time.After(time.Minute):
			p.stop()
			return nil, fmt.Errorf("the consumer did not serve within a minute; log %s", logFile)
		}
	}
	p.startRSS = float64(vmHWM(p.cmd.Process.Pid)) / 1024
	return p, nil
}

// stop sends SIGTERM and waits up to 30 s, then kills.
func (p *consumerProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// peakMiB is the consumer's peak RSS so far.
func (p *consumerProc) peakMiB() float64 { return float64(vmHWM(p.cmd.Process.Pid)) / 1024 }

// landedRuns counts the runs of ids in the graph.
func landedRuns(ctx context.Context, d neo4j.DriverWithContext, ids []string) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, d, `UNWIND $ids AS id MATCH (r:Run {key: id}) RETURN count(r) AS n`, map[string]any{"ids": ids}, neo4j.EagerResultTransformer)
	if err != nil {
		return 0, err
	}
	n, _ := res.Records[0].Get("n")
	return int(n.(int64)), nil
}

// waitLanded waits until every run of ids is in the graph, up to limit.
func waitLanded(ctx context.Context, d neo4j.DriverWithContext, ids []string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n, err := landedRuns(ctx, d, ids)
		if err != nil {
			return err
		}
		if n == len(ids) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d valid events in the graph after %v", n, len(ids), limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runIntakeLoad builds the consumer, runs the stream over HTTP and the baseline over Kafka.
func runIntakeLoad(ctx context.Context, env *benchEnv, load intakeLoad, logf func(string, ...any)) (*intakeResult, error) {
	root, err := stack.RepoRoot()
	if err != nil {
		return nil, err
	}
	corpus, err := olCorpus(root)
	if err != nil {
		return nil, err
	}
	posts, err := stream(corpus, load.Events)
	if err != nil {
		return nil, err
	}
	res := &intakeResult{refusedByReason: map[string]int{}, status: map[int]int{}}
	var ids []string
	var valid [][]byte
	for _, p := range posts {
		if p.runID != "" {
			ids = append(ids, p.runID)
			valid = append(valid, p.body)
		}
	}
	res.valid, res.invalid = len(ids), len(posts)-len(ids)
	tmp, err := os.MkdirTemp("", "colline-bench-intake")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := stack.BuildConsumer(ctx, root, tmp, "")
	if err != nil {
		return nil, err
	}
	const key = "bench-producer-key-0123456789"
	keys := filepath.Join(tmp, "keys")
	if err := os.WriteFile(keys, []byte("bench "+key+" job=* dataset=*\n"), 0o600); err != nil {
		return nil, err
	}
	// one consumer serving the endpoint, then one reading the baseline's topic
	run := func(name string, http bool, ids []string, publish func(p *consumerProc, olTopic string) error) (*consumerProc, time.Duration, error) {
		topic, dlq, olTopic := topicName("intake-"+name), topicName("intake-"+name+".dlq"), topicName("intake-"+name+".ol")
		if err := env.topics(ctx, topic, dlq); err != nil {
			return nil, 0, err
		}
		if err := env.kafka.CreateTopics(ctx, stack.Topic{Name: olTopic, Partitions: 3}); err != nil {
			return nil, 0, err
		}
		defer env.kafka.DeleteTopics(context.WithoutCancel(ctx), topic, dlq, olTopic)
		vars := []string{"COLLINE_KAFKA_BROKERS=" + strings.Join(env.brokers, ","), "COLLINE_KAFKA_TOPIC=" + topic, "COLLINE_KAFKA_DLQ_TOPIC=" + dlq,
			"COLLINE_KAFKA_GROUP=" + topic + ".group", "COLLINE_NEO4J_URI=" + env.neo4jURI, "COLLINE_OPENLINEAGE_TOPIC=" + olTopic, "COLLINE_LOG_LEVEL=info"}
		if http {
			vars = append(vars, "COLLINE_OPENLINEAGE_HTTP_ADDR=127.0.0.1:0", "COLLINE_OPENLINEAGE_HTTP_KEYS_FILE="+keys)
		}
		p, err := startConsumerBin(ctx, bin, filepath.Join(tmp, name+".log"), http, vars...)
		if err != nil {
			return nil, 0, err
		}
		start := time.Now()
		if err := publish(p, olTopic); err != nil {
			p.stop()
			return nil, 0, err
		}
		if err := waitLanded(ctx, env.driver, ids, 10*time.Minute); err != nil {
			p.stop()
			return nil, 0, err
		}
		return p, time.Since(start), nil
	}
	p, landed, err := run("http", true, ids, func(p *consumerProc, _ string) error { return postAll(ctx, p.intake, key, posts, load.Clients, res) })
	if err != nil {
		return nil, err
	}
	res.landed = landed
	res.peakRSS, res.startRSS = p.peakMiB(), p.startRSS
	p.stop()
	res.consumerLog, _ = readTail(p.log)
	logf("intake: %d events posted by %d clients in %.2fs, every valid run in the graph after %.2fs", len(posts), load.Clients, res.posted.Seconds(), landed.Seconds())

	// the baseline: the same valid events, fresh runIds, straight to the topic
	var base [][]byte
	var baseIDs []string
	for _, v := range valid {
		id := uuid4()
		b, err := withRunID(v, id)
		if err != nil {
			return nil, err
		}
		base, baseIDs = append(base, b), append(baseIDs, id)
	}
	p, landed, err = run("kafka", false, baseIDs, func(_ *consumerProc, olTopic string) error {
		w := newProducer(env.brokers, olTopic, 10*time.Millisecond)
		defer w.Close()
		msgs := make([]kafka.Message, len(base))
		for i, b := range base {
			e, err := openlineage.Decode(b)
			if err != nil {
				return err
			}
			msgs[i] = kafka.Message{Key: []byte(openlineage.MessageKey(e)), Value: b}
		}
		return w.WriteMessages(ctx, msgs...)
	})
	if err != nil {
		return nil, err
	}
	res.baselineLanded = landed
	p.stop()
	logf("intake: baseline, %d valid events written to the topic, every run in the graph after %.2fs", len(base), landed.Seconds())
	return res, nil
}

// postAll posts every event with clients at once and checks each answer: 201 for a valid one,
// 400 with its reason for a broken one.
func postAll(ctx context.Context, addr, key string, posts []posting, clients int, res *intakeResult) error {
	url := "http://" + addr + intake.Path
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	next := make(chan int)
	lat := make([]time.Duration, len(posts))
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := posts[i]
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(p.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				t0 := time.Now()
				resp, err := client.Do(req)
				lat[i] = time.Since(t0)
				var e intake.Error
				code := 0
				if err == nil {
					code = resp.StatusCode
					json.NewDecoder(resp.Body).Decode(&e)
					resp.Body.Close()
				}
				mu.Lock()
				res.status[code]++
				switch {
				case p.runID != "" && code != http.StatusCreated:
					res.wrongAnswers = append(res.wrongAnswers, fmt.Sprintf("a valid event got %d %q (%v)", code, e.Message, err))
				case p.runID == "" && (code != http.StatusBadRequest || e.Reason != p.reason):
					res.wrongAnswers = append(res.wrongAnswers, fmt.Sprintf("%s got %d %q, want 400 %s", p.kind, code, e.Reason, p.reason))
				case p.runID == "":
					res.refusedByReason[e.Reason]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range posts {
		next <- i
	}
	close(next)
	wg.Wait()
	res.posted = time.Since(start)
	slices.Sort(lat)
	res.p50, res.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	return nil
}

func readTail(file string) (string, error) {
	b, err := os.ReadFile(file)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b), err
}

// benchIntake is part intake of make bench.
func benchIntake(ctx context.Context, r *report, env *benchEnv, load intakeLoad) error {
	if err := env.writer.Bootstrap(ctx); err != nil {
		return err
	}
	res, err := runIntakeLoad(ctx, env, load, r.notef)
	if err != nil {
		return err
	}
	if len(res.wrongAnswers) > 0 {
		return fmt.Errorf("intake: %d wrong answers, the first: %s", len(res.wrongAnswers), res.wrongAnswers[0])
	}
	rate := float64(res.valid+res.invalid) / res.posted.Seconds()
	landedRate := float64(res.valid) / res.landed.Seconds()
	baseRate := float64(res.valid) / res.baselineLanded.Seconds()
	r.notef("intake: answers %v; invalid ones refused by reason %v; POST p50 %.1f ms p99 %.1f ms; consumer RSS %.0f MiB at start, peak %.0f MiB",
		res.status, res.refusedByReason, ms(res.p50), ms(res.p99), res.startRSS, res.peakRSS)
	r.add(row{part: "intake", metric: fmt.Sprintf("OpenLineage events over HTTP, %d clients, 1 in 10 invalid (%d events): accepted or refused per second", load.Clients, res.valid+res.invalid),
		value: fmt.Sprintf("%.0f events/s (POST p50 %.1f ms, p99 %.1f ms)", rate, ms(res.p50), ms(res.p99)), baseline: "-", target: "-",
		result: fmt.Sprintf("every valid one 201, every invalid one 400 with its reason (%v)", res.refusedByReason)})
	r.add(row{part: "intake", metric: fmt.Sprintf("the same, until every one of the %d valid events is a run in the graph", res.valid),
		value:    fmt.Sprintf("%.0f events/s (%.1f s)", landedRate, res.landed.Seconds()),
		baseline: fmt.Sprintf("%.0f events/s (%.1f s): the same events written to the topic (Kafka transport)", baseRate, res.baselineLanded.Seconds()), target: "-",
		result: fmt.Sprintf("%.2f× the Kafka transport; all %d landed", landedRate/baseRate, res.valid)})
	r.add(row{part: "intake", metric: "consumer peak RSS serving the stream", value: fmt.Sprintf("%.0f MiB", res.peakRSS),
		baseline: fmt.Sprintf("%.0f MiB at start", res.startRSS), target: "≤ 256 MiB", met: res.peakRSS <= 256, result: fmt.Sprintf("%.1f× start", res.peakRSS/res.startRSS)})
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

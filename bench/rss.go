package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/process"
)

// benchRSS runs the consumer binary (built here, default settings) on a fresh topic holding n
// synthetic events of sizeMB each, and reports its peak RSS (ru_maxrss). The baseline is the same
// binary consuming one small captured TPC-DS event. With logFile set, the consumer's stderr is
// appended there (run with GODEBUG=gctrace=1 to see its heap).
func benchRSS(ctx context.Context, r *report, env *benchEnv, evs []event, sizeMB, n int, logFile, extraEnv string, cgroupMiB int) error {
	tmp, err := os.MkdirTemp("", "colline-bench-rss")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	bin, err := stack.BuildConsumer(ctx, root, tmp, "")
	if err != nil {
		return err
	}
	settings := "defaults"
	if cgroupMiB > 0 { // as in a container with resources.limits.memory: the consumer sets its GOMEMLIMIT from it
		g, err := stack.NewMemoryCgroup(int64(cgroupMiB) << 20)
		if err != nil {
			return err
		}
		defer g.Remove()
		if bin, err = g.Wrap(tmp, bin); err != nil {
			return err
		}
		settings = fmt.Sprintf("defaults in a %d MiB memory cgroup", cgroupMiB)
	}
	if extraEnv != "" {
		settings += " and " + extraEnv
	}

	// The synthetic events.
	var big []message
	for i := 0; i < n; i++ {
		id := newID()
		b, err := synthEvent(sizeMB<<20, id, fmt.Sprintf("wide_%d", i))
		if err != nil {
			return err
		}
		it, err := process.Step{MaxBytes: len(b)}.Item(b)
		if err != nil {
			return fmt.Errorf("synthetic event: %w", err)
		}
		env, lin := it.Event, it.Lineage
		if len(lin.Unknown) > 0 {
			return fmt.Errorf("synthetic event: unknown classes %v", lin.Unknown)
		}
		big = append(big, message{key: []byte("local-synthetic"), value: b, id: id, edges: len(lin.Edges)})
		if i == 0 {
			r.notef("rss: SYNTHETIC event: %.1f MB, %d nodes, %d target columns, %d edges", float64(len(b))/1e6, len(env.Nodes), len(lin.Writes[0].Columns), len(lin.Edges))
		}
	}
	// The baseline: the smallest CTAS event of the corpus.
	small := evs[0]
	for _, e := range evs {
		if !e.nested && len(e.data) < len(small.data) || small.nested {
			small = e
		}
	}
	sv, sid := variant(small.data, 3000)
	smallEdges := 0
	if it, err := (process.Step{}).Item(sv); err == nil {
		smallEdges = len(it.Lineage.Edges)
	}

	run := func(name string, msgs []message) (rssMB float64, secs float64, err error) {
		if _, err := stack.WipeGraph(ctx, env.driver); err != nil {
			return 0, 0, err
		}
		topic, dlqTopic := topicName("rss-"+name), topicName("rss-"+name+".dlq")
		if err := env.topics(ctx, topic, dlqTopic); err != nil {
			return 0, 0, err
		}
		defer env.kafka.DeleteTopics(context.WithoutCancel(ctx), topic, dlqTopic)
		w := newProducer(env.brokers, topic, 20*time.Millisecond)
		for _, m := range msgs {
			if err := w.WriteMessages(ctx, kafka.Message{Key: m.key, Value: m.value}); err != nil {
				w.Close()
				return 0, 0, fmt.Errorf("rss %s: produce: %w", name, err)
			}
		}
		w.Close()

		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(),
			"COLLINE_KAFKA_BROKERS="+strings.Join(env.brokers, ","),
			"COLLINE_KAFKA_TOPIC="+topic,
			"COLLINE_KAFKA_DLQ_TOPIC="+dlqTopic,
			"COLLINE_KAFKA_GROUP="+topic+".group",
			"COLLINE_NEO4J_URI="+env.neo4jURI,
			"COLLINE_HTTP_ADDR=127.0.0.1:0",
			"COLLINE_EXIT_WHEN_IDLE=3s",
			"COLLINE_LOG_LEVEL=warn",
		)
		if cgroupMiB > 0 {
			cmd.Env = append(cmd.Env, "COLLINE_LOG_LEVEL=info") // the start-up line says the limit chosen
		}
		if extraEnv != "" {
			cmd.Env = append(cmd.Env, strings.Split(extraEnv, ",")...)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if logFile != "" {
			f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return 0, 0, err
			}
			defer f.Close()
			fmt.Fprintf(f, "== rss %s\n", name)
			cmd.Stderr = io.MultiWriter(&stderr, f)
		}
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		// Peak RSS is VmHWM of the process, polled until it exits. Not ru_maxrss from wait4: Go
		// starts children with vfork semantics, and Linux then reports the larger of the child's
		// peak and the bench's own RSS at the exec.
		hwm := make(chan int64, 1)
		go func() {
			var peak int64
			for {
				kb := vmHWM(cmd.Process.Pid)
				if kb < 0 {
					hwm <- peak
					return
				}
				peak = max(peak, kb)
				time.Sleep(10 * time.Millisecond)
			}
		}()
		werr := cmd.Wait()
		peakKB := <-hwm
		if err := werr; err != nil {
			return 0, 0, fmt.Errorf("rss %s: consumer: %v\n%s", name, err, stderr.String())
		}
		secs = time.Since(start).Seconds()
		if i := strings.Index(stderr.String(), `"memory_limit":`); i >= 0 {
			r.notef("rss %s: %s", name, strings.SplitN(stderr.String()[i:], "}", 2)[0]+"}")
		}
		if strings.Contains(stderr.String(), "dead-letter") {
			return 0, 0, fmt.Errorf("rss %s: the consumer dead-lettered messages:\n%s", name, stderr.String())
		}
		want := 0
		for _, m := range msgs {
			want += m.edges
		}
		feeds, _ := countFeeds(ctx, env.driver)
		rssMB = float64(peakKB) / 1024
		r.notef("rss %s: %d events, %d edges expected, %d FEEDS in the graph; consumer ran %.1fs (incl. 3s idle exit), peak RSS %.0f MiB",
			name, len(msgs), want, feeds, secs, rssMB)
		return rssMB, secs, nil
	}
	base, _, err := run("small", []message{{key: []byte("local"), value: sv, id: sid, edges: smallEdges}})
	if err != nil {
		return err
	}
	one, _, err := run("wide-1", big[:1])
	if err != nil {
		return err
	}
	peak, _, err := run("wide", big)
	if err != nil {
		return err
	}
	r.add(row{part: "d", metric: fmt.Sprintf("consumer peak RSS, 1 SYNTHETIC %d MB plan, %s", sizeMB, settings),
		value: fmt.Sprintf("%.0f MiB", one), baseline: fmt.Sprintf("%.0f MiB (one %d KB TPC-DS plan)", base, len(small.data)/1024),
		target: "≤ 150 MiB", met: one <= 150})
	r.add(row{part: "d", metric: fmt.Sprintf("consumer peak RSS, %d SYNTHETIC %d MB plans in a row, same settings", n, sizeMB),
		value: fmt.Sprintf("%.0f MiB", peak), baseline: fmt.Sprintf("%.0f MiB (one %d KB TPC-DS plan)", base, len(small.data)/1024),
		target: "≤ 150 MiB (issue 17: at pure defaults)", met: peak <= 150})
	return nil
}

// vmHWM returns the peak resident set size of process pid in KiB, or -1 once it is gone (or a
// zombie, which has no memory left to report).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return -1
}

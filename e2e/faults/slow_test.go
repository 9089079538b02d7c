//go:build e2e

package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go/compress"

	"github.com/colline/colline/record"
)

// testSlowNeo4j: Neo4j answers, but slowly: another transaction holds the locks every batch
// needs (it has created, uncommitted, the job of every event of the stream) for a while. The
// consumer must not pile up what it fetches (at most two batches in memory), must say why it is
// not ready (a slow write, then a timed-out write being retried), must back off rather than
// hammer, and once the lock goes, write everything: nothing lost, nothing doubled.
func testSlowNeo4j(t *testing.T) {
	d := driver(t)
	wipe(t, d)
	n := scaled(1000, 300)
	hold := time.Duration(getenvInt("COLLINE_FAULTS_SLOW_SECONDS", 30)) * time.Second
	msgs, _ := stream(t, "s", n)
	wantCounts, wantEdges := expected(t, msgs)
	topic, dlq, group := topics(t, "slow", 3, topicMax)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	const writeTimeout, slowWrite, batchSize = 8 * time.Second, 3 * time.Second, 100
	c := start(t, "consumer", topic, dlq, group, "COLLINE_NEO4J_WRITE_TIMEOUT="+writeTimeout.String(),
		"COLLINE_NEO4J_SLOW_WRITE="+slowWrite.String(), fmt.Sprintf("COLLINE_BATCH_SIZE=%d", batchSize))
	waitReady(t, c, true, 5*time.Minute) // set-up done (schema, model stamp) before the lock

	// The lock: an open transaction that created every job key of the stream.
	var jobs []string
	for _, m := range msgs {
		if k := record.JobKey(m.item.Event.App); !slices.Contains(jobs, k) {
			jobs = append(jobs, k)
		}
	}
	sess := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(context.Background())
	tx, err := sess.BeginTransaction(ctx, neo4j.WithTxTimeout(hold+5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Run(ctx, `UNWIND $keys AS k MERGE (:Job {key: k})`, map[string]any{"keys": jobs}); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()
	if err := produce(ctx, topic, msgs, compress.Zstd); err != nil {
		t.Fatal(err)
	}

	// While the lock is held: what /readyz says, how far fetching runs ahead of committing, memory.
	var reasons []string
	var ahead, fetched0, peakRSS float64
	fetched0 = c.metric(t, "colline_kafka_reader_messages_total")
	maxWrite := 0.0
	for time.Since(locked) < hold {
		if code, body, err := c.Get("/readyz"); err == nil && code != 200 {
			r := readyReason(body)
			if r != "" && !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		f := c.metric(t, "colline_kafka_reader_messages_total") - fetched0
		ahead = max(ahead, f-float64(committed(ctx, topic, group)))
		peakRSS = max(peakRSS, float64(rss(c.Pid())))
		maxWrite = max(maxWrite, c.metric(t, "colline_ingest_write_in_progress_seconds"))
		time.Sleep(500 * time.Millisecond)
	}
	during := committed(ctx, topic, group)
	retries := c.metric(t, `colline_ingest_retries_total{operation="write"}`)
	timedOut := strings.Count(c.Logs(), fmt.Sprintf("not done within %v", writeTimeout))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	took := waitCommitted(t, topic, group, int64(n), 15*time.Minute)
	ready, _ := waitReady(t, c, true, 5*time.Minute)
	if !c.Running() {
		t.Fatalf("the consumer exited; log %s", c.LogFile)
	}
	if code := c.stop(t, time.Minute); code != 0 {
		t.Errorf("exit code after SIGTERM %d, want 0", code)
	}

	for _, want := range []string{"slow write", "retrying write"} {
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("/readyz never said %q while Neo4j was slow; it said %q", want, reasons)
		}
	}
	if during != 0 {
		t.Errorf("%d records committed while every job was locked, want 0", during)
	}
	// at most the batch in flight, the batch behind it, the reader's queue (1) and the one message
	// each of kafka-go's partition readers holds while the queue is full (3 partitions)
	if limit := float64(2*batchSize + 1 + 3); ahead > limit {
		t.Errorf("fetched up to %.0f messages ahead of the commits while Neo4j was slow, want at most %.0f", ahead, limit)
	}
	if retries == 0 || timedOut == 0 {
		t.Errorf("write retries %v, timed-out writes logged %d; want both > 0", retries, timedOut)
	}
	// the backoff: a retry waits for the timeout, then 0.2 s doubling; far fewer than a busy loop
	if most := hold.Seconds()/writeTimeout.Seconds() + 2; retries > most {
		t.Errorf("%v write retries in %v, want at most %.0f (each waits for the %v timeout)", retries, hold, most, writeTimeout)
	}
	const limitMiB = 512
	if peakRSS/1024 > limitMiB {
		t.Errorf("RSS %.0f MiB while Neo4j was slow, want at most %d MiB", peakRSS/1024, limitMiB)
	}
	dead, account := noDeadLettersAndCompare(t, dlq, d, wantCounts, wantEdges)
	summarize(t, "sent %d events while another transaction held the locks of all %d jobs for %.0fs (write timeout %v, slow-write readiness after %v): /readyz said %q; longest write in progress %.1fs; %v write retries, %d writes timed out; committed while locked %d; fetched at most %.0f messages ahead of the commits (bound %d); RSS at most %.0f MiB; after the release all %d committed in %.1fs, ready %.1fs later, same process, SIGTERM exit 0; dead letters %d; %s",
		n, len(jobs), hold.Seconds(), writeTimeout, slowWrite, reasons, maxWrite, retries, timedOut, during, ahead, 2*batchSize+1+3,
		peakRSS/1024, n, took.Seconds(), ready.Seconds(), dead, account)
}

// readyReason is the consumer's line of a /readyz body, up to its first colon after the check name
// and operation ("consumer: slow write", "consumer: retrying write").
func readyReason(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, "consumer: "); ok {
			if i := strings.Index(rest, ":"); i > 0 {
				rest = rest[:i]
			}
			return "consumer: " + rest
		}
	}
	return ""
}

// rss is the resident set size of pid in KiB (VmRSS), 0 when unknown.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

//go:build e2e

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// Where a kill landed, from the consumer's own log (its debug lines around each batch's delivery)
// and the group's state read just before the signal. The first that applies wins.
const (
	inWrite     = "in a Neo4j write transaction" // "writing batch" logged, "batch written" not yet
	afterWrite  = "between write and commit"     // "batch written" logged, "batch committed" not yet
	inRebalance = "during a rebalance"           // group PreparingRebalance or CompletingRebalance
	elsewhere   = "elsewhere"                    // fetching, decoding, batching, idle, starting
)

var landings = []string{inWrite, afterWrite, inRebalance, elsewhere}

// anyTime is the aim of a kill at a random instant of the run's first seconds, wherever it lands.
const anyTime = "any time"

// testKill9: the consumer is killed with SIGKILL at random instants, each aimed at one kind of
// moment — inside a Neo4j write transaction, between a batch's write and its commit, during a
// consumer-group rebalance, just after one (fetching, decoding), or any time — restarted,
// many times; then a final run consumes the rest. The final graph equals the graph of the events
// sent: no edge lost, none unexpected, none doubled. Kills are triggered by what the consumer is
// doing (its log, the group's state), never by how much it has committed.
func testKill9(t *testing.T) {
	d := driver(t)
	wipe(t, d)
	n := env.events
	kills := getenvInt("COLLINE_FAULTS_KILLS", 5)
	msgs, copies := stream(t, "k", n)
	wantCounts, wantEdges := expected(t, msgs)
	topic, dlq, group := topics(t, "kill9", 3, topicMax)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()

	// The stream goes out in kills+1 parts, one before each run, so every run has a backlog.
	part := func(i int) []message { return msgs[n*i/(kills+1) : n*(i+1)/(kills+1)] }
	// the aims evenly, in a random order: with 5 kills or more every aim is taken; with 3 (CI),
	// the first three
	aims := []string{inWrite, afterWrite, inRebalance, elsewhere, anyTime}
	order := env.rand.Perm(kills)
	landed := map[string]int{}
	var at []string
	for i := range kills {
		if err := produce(ctx, topic, part(i), compress.Zstd); err != nil {
			t.Fatal(err)
		}
		aim := aims[order[i]%len(aims)]
		c := start(t, fmt.Sprintf("run%02d", i+1), topic, dlq, group, "COLLINE_LOG_LEVEL=debug")
		state := aimAt(t, c, aim, group)
		c.kill()
		where := landing(t, c.LogFile, state)
		landed[where]++
		at = append(at, fmt.Sprintf("#%d aimed %s, landed %s (group %s, %d committed)", i+1, aim, where, state, committed(ctx, topic, group)))
	}
	if err := produce(ctx, topic, part(kills), compress.Zstd); err != nil {
		t.Fatal(err)
	}
	startFinal := time.Now()
	before := committed(ctx, topic, group)
	c := start(t, "final", topic, dlq, group, "COLLINE_EXIT_WHEN_IDLE=5s")
	if code := c.Wait(t, 20*time.Minute); code != 0 {
		t.Fatalf("final run exit code %d; log %s", code, c.LogFile)
	}
	final := time.Since(startFinal)
	if l, err := lag(ctx, topic, group); err != nil || l != 0 {
		t.Fatalf("lag after the final run = %d (%v), want 0", l, err)
	}
	// The long variant (make kills) must have hit every kind of moment.
	if kills >= 20 {
		for _, k := range landings {
			if landed[k] == 0 {
				t.Errorf("no kill landed %s in %d kills: %v", k, kills, landed)
			}
		}
	}
	dead, account := noDeadLettersAndCompare(t, dlq, d, wantCounts, wantEdges)
	var tally []string
	for _, k := range landings {
		tally = append(tally, fmt.Sprintf("%s %d", k, landed[k]))
	}
	t.Logf("kills: %s", strings.Join(at, "; "))
	summarize(t, "sent %d events (%d copies of %d captured fixtures) in %d parts; killed -9 %d times at random instants, landed: %s; final run consumed the remaining %d in %.1fs, exit 0; dead letters %d; %s",
		n, copies, len(env.corpus), kills+1, kills, strings.Join(tally, ", "), int64(n)-before, final.Seconds(), dead, account)
}

// aimAt waits for a random instant of the kind aim (bounded: if the consumer never gets there, the
// kill happens anyway after a while and landing says where it was) and returns the group's state
// read just before the kill.
func aimAt(t *testing.T, c *consumer, aim, group string) string {
	t.Helper()
	giveUp := time.Now().Add(90 * time.Second)
	waitFor := func(cond func() bool) {
		for !cond() && time.Now().Before(giveUp) && c.Running() {
			time.Sleep(500 * time.Microsecond)
		}
	}
	switch aim {
	case inWrite:
		// a write in progress, then a random part of a typical write (tens of milliseconds)
		waitFor(func() bool { return c.Seen("writing batch") > c.Seen("batch written") })
		time.Sleep(time.Duration(env.rand.IntN(40)) * time.Millisecond)
	case afterWrite:
		waitFor(func() bool { return c.Seen("batch written") > c.Seen("batch committed") })
	case inRebalance:
		waitFor(func() bool { return rebalancing(groupState(group)) })
		time.Sleep(time.Duration(env.rand.IntN(300)) * time.Millisecond)
	case elsewhere:
		// just after a rebalance: the group Stable again, the consumer fetching and decoding its
		// first batch (a window of about 100 ms; between two batches there is none, the next
		// batch is decoded while the last one is written). Not "any time": every restart begins
		// with a rebalance (the killed member stays in the group until its session expires), so
		// a kill in the first seconds lands there.
		seen := false
		waitFor(func() bool {
			st := groupState(group)
			seen = seen || rebalancing(st)
			return seen && st == "Stable"
		})
		time.Sleep(time.Duration(env.rand.IntN(20)) * time.Millisecond)
	default:
		time.Sleep(time.Duration(env.rand.IntN(4000)) * time.Millisecond)
	}
	return groupState(group)
}

func rebalancing(state string) bool {
	return state == "PreparingRebalance" || state == "CompletingRebalance"
}

// groupState is the consumer group's state as the coordinator reports it ("" when unknown).
func groupState(group string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := env.kafka.Client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(res.Groups) != 1 || res.Groups[0].Error != nil {
		return ""
	}
	return res.Groups[0].GroupState
}

// landing classifies a kill from the killed run's log and the group's state at the kill.
func landing(t *testing.T, logFile, state string) string {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, l := range strings.Split(string(b), "\n") {
		var line struct{ Msg string }
		if json.Unmarshal([]byte(l), &line) != nil {
			continue
		}
		switch line.Msg {
		case "writing batch", "batch written", "batch committed":
			last = line.Msg
		}
	}
	switch {
	case last == "writing batch":
		return inWrite
	case last == "batch written":
		return afterWrite
	case rebalancing(state):
		return inRebalance
	}
	return elsewhere
}

package graph

import (
	"context"
	"testing"
	"time"
)

// TestPruneWaitsForWrite: a prune step of a Writer does not start while one of its writes is in
// flight (Writer.turns), and starts when the write ends. No Neo4j: the prune step's context ends
// after 1 s, so a step that ran would have failed by then; the write holds its turn for 2 s.
func TestPruneWaitsForWrite(t *testing.T) {
	d, err := NewDriver("bolt://127.0.0.1:1", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	w := NewWriter(d, "")
	w.turns.RLock() // a write in flight
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	go func() {
		_, err := w.PruneRuns(ctx, time.Now(), 10)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the prune step ran beside a write: %v", err)
	case <-time.After(2 * time.Second):
	}
	w.turns.RUnlock()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the prune step succeeded against a closed port")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prune step did not run after the write ended")
	}
}

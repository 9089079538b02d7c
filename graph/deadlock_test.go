package graph

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// driverBackoff is the least the driver waits before it runs a failed transaction again: its
// first pause is 1 s doubled, less 20 % jitter (retry.Throttler). A write that waited less did
// not go through the driver's back-off.
const driverBackoff = 1600 * time.Millisecond

// A transaction that loses a real deadlock starts again at once and commits: here it takes node
// a, another transaction takes b and waits for a, then the first asks for b and closes the
// cycle, so Neo4j aborts it.
func TestDeadlockRetriedAtOnce(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	p := testPrefix(t)
	keys := map[string]any{"a": p + "a", "b": p + "b"}
	if _, err := neo4j.ExecuteQuery(ctx, d, `CREATE (:Job {key: $a}), (:Job {key: $b})`, keys, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		neo4j.ExecuteQuery(context.Background(), d, `MATCH (j:Job) WHERE j.key IN [$a, $b] DELETE j`, keys, neo4j.EagerResultTransformer)
	})
	other := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
	defer other.Close(ctx)
	otherTx, err := other.BeginTransaction(ctx, neo4j.WithTxMetadata(map[string]any{"test": p}))
	if err != nil {
		t.Fatal(err)
	}
	defer otherTx.Close(ctx)
	lock := func(tx neo4j.ManagedTransaction, key string) error {
		res, err := tx.Run(ctx, `MATCH (j:Job {key: $k}) SET j.locked = true RETURN j`, map[string]any{"k": keys[key]})
		if err == nil {
			_, err = res.Consume(ctx)
		}
		return err
	}

	attempts := 0
	var errs []error
	otherDone := make(chan error, 1)
	start := time.Now()
	_, err = NewWriter(d, "").executeWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		attempts++
		if err := lock(tx, "a"); err != nil {
			errs = append(errs, err)
			return nil, err
		}
		if attempts == 1 {
			if _, err := otherTx.Run(ctx, `MATCH (j:Job {key: $k}) SET j.locked = true`, map[string]any{"k": keys["b"]}); err != nil {
				return nil, err
			}
			go func() { // waits for a until this transaction is aborted, then commits
				_, err := otherTx.Run(ctx, `MATCH (j:Job {key: $k}) SET j.locked = true`, map[string]any{"k": keys["a"]})
				otherDone <- errors.Join(err, otherTx.Commit(ctx))
			}()
			if err := waitBlocked(ctx, d, p); err != nil {
				return nil, err
			}
		}
		if err := lock(tx, "b"); err != nil {
			errs = append(errs, err)
			return nil, err
		}
		return nil, nil
	})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("executeWrite = %v, want nil after the deadlock", err)
	}
	if err := <-otherDone; err != nil {
		t.Fatalf("the other transaction: %v", err)
	}
	if attempts != 2 || len(errs) != 1 || !isDeadlock(errs[0]) {
		t.Fatalf("attempts %d, errors %v; want 2 attempts, the first ended by a deadlock", attempts, errs)
	}
	if took >= driverBackoff {
		t.Errorf("the write took %v: it waited for the driver's back-off", took)
	}
	t.Logf("deadlocked once, committed after %v: %v", took.Round(time.Millisecond), errs[0])
}

// waitBlocked waits until the transaction with metadata test = p waits for a lock.
func waitBlocked(ctx context.Context, d neo4j.DriverWithContext, p string) error {
	for range 200 {
		res, err := neo4j.ExecuteQuery(ctx, d, `SHOW TRANSACTIONS YIELD metaData, status
WHERE metaData.test = $p AND status STARTS WITH 'Blocked' RETURN count(*) AS n`, map[string]any{"p": p}, neo4j.EagerResultTransformer)
		if err != nil {
			return err
		}
		if n, _ := res.Records[0].Get("n"); n.(int64) > 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the other transaction never waited for the lock")
}

// A transaction that loses a deadlock more often than maxDeadlockRetries is not given up: after
// the quick retries the driver retries it with its back-off, as it did before deadlock.go.
func TestDeadlockRetriesThenDriver(t *testing.T) {
	d := testDriver(t)
	ctx := context.Background()
	attempts := 0
	start := time.Now()
	_, err := NewWriter(d, "").executeWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		if attempts++; attempts <= maxDeadlockRetries+1 {
			return nil, &neo4j.Neo4jError{Code: deadlockCode, Msg: "a deadlock (test)"}
		}
		return nil, nil
	})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("executeWrite = %v, want nil: the driver's retry commits", err)
	}
	if attempts != maxDeadlockRetries+2 {
		t.Errorf("attempts = %d, want %d", attempts, maxDeadlockRetries+2)
	}
	if took < driverBackoff {
		t.Errorf("the write took %v: the last retry should have waited for the driver's back-off", took)
	}
}

package graph

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// A deadlock between two write transactions ends with Neo4j aborting one of them, the victim. The
// other goes on as soon as the victim's locks are released, so the victim can start again at once.
// The driver's managed transactions retry it too, but only after their back-off, whose first pause
// is 1.6–2.4 s (it is made for leader changes and lost connections). One deadlock then held a
// batch that takes 0.1 s for 2 s, and halved the rate of two writers on shared datasets
// (docs/benchmarks.md). So the writer's transactions retry a deadlock themselves, after a short
// random pause; every other failure keeps the driver's handling.

// deadlockCode is Neo4j's status code of a transaction aborted to break a deadlock.
const deadlockCode = "Neo.TransientError.Transaction.DeadlockDetected"

// maxDeadlockRetries bounds the quick retries of one write. After them the driver's own retry
// takes over (its back-off, within its MaxTransactionRetryTime), as before deadlock.go: under heavy
// contention (four writers on the same two jobs, TestVersionsConcurrentWriters) every quick
// attempt can lose, and a write must not give up sooner than the driver would.
const maxDeadlockRetries = 8

// deadlocked carries a deadlock out of a transaction function past the driver: it does not
// unwrap, so the driver takes it for the function's own error, ends the transaction and returns it.
type deadlocked struct{ err error }

func (d *deadlocked) Error() string { return d.err.Error() }

func isDeadlock(err error) bool {
	var dbErr *neo4j.Neo4jError
	return errors.As(err, &dbErr) && dbErr.Code == deadlockCode
}

// executeWrite runs work in a managed write transaction on w's database, as the driver's
// ExecuteWrite does, except that a transaction that lost a deadlock starts again after a pause of
// up to 10 ms × 2^attempt, maxDeadlockRetries times while ctx lasts; then the driver retries it.
// Every write of a Writer goes through it.
func (w *Writer) executeWrite(ctx context.Context, work neo4j.ManagedTransactionWork, configurers ...func(*neo4j.TransactionConfig)) (any, error) {
	sess := w.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: w.database, AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(context.WithoutCancel(ctx))
	for attempt := 0; ; attempt++ {
		quick := attempt < maxDeadlockRetries
		v, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			v, err := work(tx)
			if quick && isDeadlock(err) {
				return nil, &deadlocked{err}
			}
			return v, err
		}, configurers...)
		var d *deadlocked
		if !errors.As(err, &d) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return nil, d.err
		case <-time.After(rand.N(10 * time.Millisecond << attempt)):
		}
	}
}

package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/record"
)

// maxRows caps the rows of one UNWIND; longer row lists are sent in chunks inside the same
// transaction, so a batch stays atomic.
var maxRows = 5000

// DefaultWriteTimeout is the default of Writer.Timeout.
const DefaultWriteTimeout = 2 * time.Minute

// Writer writes batches of items to Neo4j. It is safe for concurrent use, though one writer
// goroutine per consumer keeps lock contention low.
type Writer struct {
	// ModelKey is the key of the graph's model stamp (GraphModel); empty means DefaultModelKey.
	// Only tests that must not touch the shared stamp set another.
	ModelKey string
	// Timeout bounds one Write, the driver's own retries included: the transaction is given this
	// timeout on the server (which ends it, releasing its locks) and the call this deadline, so a
	// write blocked behind a lock or on a server that stopped answering fails with a transient
	// error instead of waiting for ever. Default: DefaultWriteTimeout.
	Timeout time.Duration

	driver   neo4j.DriverWithContext
	database string
	// turns keeps a prune step (retention.go) and this writer's writes apart: writes share it,
	// a prune step takes it alone. Beside a write, a prune step deadlocked in Neo4j (measured on
	// the 10M graph: the write lost, and the driver's retry held it 2–6 s, before deadlock.go);
	// apart, a write waits for one prune step at most.
	turns sync.RWMutex
	// retries counts the attempts of Write run again (deadlocks: deadlock.go; lost connections),
	// for Retries.
	retries atomic.Int64
}

// Retries returns how many times a Write's transaction has run again after a transient failure
// (a deadlock, a lost connection) since the writer was made.
func (w *Writer) Retries() int64 { return w.retries.Load() }

// NewWriter returns a Writer on database (empty: the server's default database).
func NewWriter(driver neo4j.DriverWithContext, database string) *Writer {
	return &Writer{driver: driver, database: database, Timeout: DefaultWriteTimeout}
}

func (w *Writer) timeout() time.Duration {
	if w.Timeout <= 0 {
		return DefaultWriteTimeout
	}
	return w.Timeout
}

// Write stores items in one managed write transaction: either the whole batch is in the graph
// afterwards or none of it. Items are checked first (record.Check, which does not run again on an
// item a processing step checked; errors wrap record.ErrInvalidItem and nothing is written).
// Writing the same items again changes nothing; see the package comment for how repeated and
// out-of-order events merge.
//
// A transaction that loses a deadlock starts again at once (deadlock.go); the driver retries the
// other transient failures (leader changes, lost connections) for up to its
// MaxTransactionRetryTime; what is left is returned, and IsTransient tells whether a later
// attempt may succeed. Write has no other side effects, so the caller may retry it freely.
func (w *Writer) Write(ctx context.Context, items []record.Item) error {
	p, err := Prepare(items)
	if err != nil {
		return err
	}
	return w.WritePrepared(ctx, p)
}

// Prepared is a batch made ready for Write: its items checked, merged and sorted by key, and the
// tags they carry. It is everything of a write that needs no graph.
type Prepared struct {
	items []record.Item
	r     *rows
	tags  []TagSet
}

// Items returns the items of the batch.
func (p *Prepared) Items() []record.Item { return p.items }

// Prepare does the part of Write that needs no graph, with Write's errors, so that a caller can
// do it while the batch before is being written (the consumer does); WritePrepared then writes it.
func Prepare(items []record.Item) (*Prepared, error) {
	r, err := buildRows(items)
	if err != nil {
		return nil, err
	}
	return &Prepared{items: items, r: r, tags: EventTagSets(items)}, nil
}

// WritePrepared is Write of a prepared batch. A batch may be written again after a failure (what
// it read of the graph is read again), but not by two calls at once.
func (w *Writer) WritePrepared(ctx context.Context, p *Prepared) error {
	if len(p.items) == 0 {
		return nil
	}
	timeout := w.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	w.turns.RLock()
	defer w.turns.RUnlock()
	var failed string
	attempts := 0
	_, err := w.executeWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		if attempts++; attempts > 1 {
			w.retries.Add(1)
		}
		if err := writeRows(ctx, tx, p.r, &failed, "", nil); err != nil {
			return nil, err
		}
		failed = "tags" // the tags the events carry, where they were set (tags.go)
		return nil, writeTagSets(ctx, tx, p.tags)
	}, neo4j.WithTxTimeout(timeout))
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Errorf("graph write of %d items (statement %s): not done within %v: %w", len(p.items), failed, timeout, err)
		}
		return fmt.Errorf("graph write of %d items (statement %s): %w", len(p.items), failed, err)
	}
	return nil
}

// runner runs a statement: a managed or an explicit transaction.
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// writeRows runs the statements of r in tx, in the order of elements, reading on the way what
// the statements after a read need to know; failed names the statement running. prefix goes
// before each statement (the profile test's "PROFILE "), and observe, when set, gets each
// statement's summary.
func writeRows(ctx context.Context, tx runner, r *rows, failed *string, prefix string, observe observer) error {
	for _, e := range elements {
		*failed = e.name
		if e.read != nil {
			// Driver errors go back unwrapped: the driver classifies them for its retries.
			if err := e.read(ctx, tx, r, prefix, observe); err != nil {
				return err
			}
			continue
		}
		for chunk := range slices.Chunk(e.rows(r), maxRows) {
			recs, err := collect(ctx, tx, e.name, prefix+keepPlan+e.query, map[string]any{"rows": chunk}, len(chunk), observe)
			if err != nil {
				return err
			}
			var n any
			if len(recs) == 1 {
				n, _ = recs[0].Get("n")
			}
			if got, ok := n.(int64); !ok || got != int64(len(chunk)) {
				return fmt.Errorf("%w: statement %s handled %v of %d rows", errRowCount, e.name, n, len(chunk))
			}
		}
	}
	return nil
}

// collect runs a statement in tx and returns its records; observe, when set, gets its summary.
func collect(ctx context.Context, tx runner, name, query string, params map[string]any, rows int, observe observer) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	if observe != nil {
		sum, err := res.Consume(ctx)
		if err != nil {
			return nil, err
		}
		observe(name, rows, sum)
	}
	return recs, nil
}

// keepPlan tells Neo4j to keep a statement's first plan. By default Neo4j replans a statement
// when the statistics have drifted, at most every 10 s (dbms.cypher.min_replan_interval), and a
// growing graph drifts: the replan of the write statements held writes up for 100–400 ms, most
// of the freshness p99 (docs/benchmarks.md). Their plans do not depend on the statistics
// (TestWritePlansIgnoreStatistics), so replanning buys nothing; a schema change still replans.
const keepPlan = "CYPHER replan=skip "

// errRowCount means a statement matched fewer nodes than it had rows: a bug in this package.
var errRowCount = errors.New("row count mismatch")

// Bootstrap creates the constraints and indexes the writer relies on, if they do not exist, waits
// until they are online, and checks the graph's model (ErrModelVersion: see ModelVersion). It is
// idempotent; run it at start-up. A server whose TLS certificate does not verify fails it at once
// (ErrUntrusted), where the driver would retry the first statement for its MaxTransactionRetryTime:
// no retry makes a certificate trusted.
func (w *Writer) Bootstrap(ctx context.Context) error {
	if err := w.driver.VerifyConnectivity(ctx); err != nil && untrusted(err) {
		return fmt.Errorf("graph bootstrap: %w: %w", ErrUntrusted, err)
	}
	if err := w.schema(ctx); err != nil {
		return err
	}
	return w.checkModel(ctx)
}

func (w *Writer) schema(ctx context.Context) error {
	for _, q := range schema {
		if _, err := neo4j.ExecuteQuery(ctx, w.driver, q, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithWritersRouting()); err != nil && !createdMeanwhile(err) {
			return fmt.Errorf("graph bootstrap %q: %w", q, err)
		}
	}
	if _, err := neo4j.ExecuteQuery(ctx, w.driver, `CALL db.awaitIndexes($seconds)`, map[string]any{"seconds": 300},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(w.database)); err != nil {
		return fmt.Errorf("graph bootstrap: await indexes: %w", err)
	}
	return nil
}

// createdMeanwhile reports the error of an `IF NOT EXISTS` schema statement that lost a race with
// the same statement from another writer (consumers or tests starting together on a fresh graph):
// the very rule it asked for now exists. A different rule under the same name is still an error.
func createdMeanwhile(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && ne.Code == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
}

// Ping checks that Neo4j can be reached.
func (w *Writer) Ping(ctx context.Context) error {
	if err := w.driver.VerifyConnectivity(ctx); err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	return nil
}

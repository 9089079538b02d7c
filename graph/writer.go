package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
}

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
// The driver retries transient failures (deadlocks, leader changes, lost connections) for up to
// its MaxTransactionRetryTime; what is left is returned, and IsTransient tells whether a later
// attempt may succeed. Write has no other side effects, so the caller may retry it freely.
func (w *Writer) Write(ctx context.Context, items []record.Item) error {
	if len(items) == 0 {
		return nil
	}
	r, err := buildRows(items)
	if err != nil {
		return err
	}

	timeout := w.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sess := w.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: w.database, AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(context.WithoutCancel(ctx))

	var failed string
	_, err = sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return nil, writeRows(ctx, tx, r, &failed, "", nil)
	}, neo4j.WithTxTimeout(timeout))
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Errorf("graph write of %d items (statement %s): not done within %v: %w", len(items), failed, timeout, err)
		}
		return fmt.Errorf("graph write of %d items (statement %s): %w", len(items), failed, err)
	}
	return nil
}

// runner runs a statement: a managed or an explicit transaction.
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// writeRows runs the statements of r in tx, in the order of elements, deciding the lineage rows
// from the LINEAGEs it reads on the way; failed names the statement running. prefix goes before
// each statement (the profile test's "PROFILE "), and observe, when set, gets each statement's
// summary.
func writeRows(ctx context.Context, tx runner, r *rows, failed *string, prefix string, observe func(name string, rows int, sum neo4j.ResultSummary)) error {
	for _, e := range elements {
		*failed = e.name
		if e.name == lineageState.name {
			// Driver errors go back unwrapped: the driver classifies them for its retries.
			states, err := readStates(ctx, tx, r, prefix, observe)
			if err != nil {
				return err
			}
			r.decide(states)
			continue
		}
		for chunk := range slices.Chunk(e.rows(r), maxRows) {
			res, err := tx.Run(ctx, prefix+keepPlan+e.query, map[string]any{"rows": chunk})
			if err != nil {
				return err
			}
			rec, err := res.Single(ctx)
			if err != nil {
				return err
			}
			n, _ := rec.Get("n")
			if got, ok := n.(int64); !ok || got != int64(len(chunk)) {
				return fmt.Errorf("%w: statement %s handled %v of %d rows", errRowCount, e.name, n, len(chunk))
			}
			if observe != nil {
				sum, err := res.Consume(ctx)
				if err != nil {
					return err
				}
				observe(e.name, len(chunk), sum)
			}
		}
	}
	return nil
}

// readStates runs lineageState in tx: the stored LINEAGE of each of r's versions.
func readStates(ctx context.Context, tx runner, r *rows, prefix string, observe func(name string, rows int, sum neo4j.ResultSummary)) (map[[2]string]versionState, error) {
	states := make(map[[2]string]versionState, len(r.versions))
	for chunk := range slices.Chunk(lineageState.rows(r), maxRows) {
		res, err := tx.Run(ctx, prefix+keepPlan+lineageState.query, map[string]any{"rows": chunk})
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
			observe(lineageState.name, len(chunk), sum)
		}
		if len(recs) != len(chunk) {
			return nil, fmt.Errorf("%w: statement %s returned %d of %d rows", errRowCount, lineageState.name, len(recs), len(chunk))
		}
		for _, rec := range recs {
			i, _ := get[int64](rec, "i")
			if i < 0 || int(i) >= len(r.versions) {
				return nil, fmt.Errorf("%w: statement %s returned row %d of %d", errRowCount, lineageState.name, i, len(r.versions))
			}
			v := r.versions[i]
			st := versionState{}
			st.exists, _ = get[bool](rec, "exists")
			st.fingerprint, _ = get[string](rec, "fingerprint")
			st.lastRun, _ = get[string](rec, "lastRun")
			st.stale, _ = get[bool](rec, "stale")
			for k, t := range map[string]*time.Time{"since": &st.since, "firstSeen": &st.firstSeen, "lastSeen": &st.lastSeen} {
				if x, ok := get[time.Time](rec, k); ok {
					*t = x.UTC()
				}
			}
			states[[2]string{v.job, v.dataset}] = st
		}
	}
	return states, nil
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
// idempotent; run it at start-up.
func (w *Writer) Bootstrap(ctx context.Context) error {
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

package graph

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/plan"
)

// A second writer of a node waits for the node itself, holding none of its locks, so the first
// one can go on to create relationships to the node and commit. Without the lock taken first
// (element.go, "Lock order"), the second one's SET took the node's relationship-group lock and
// then waited for the node, while the first one waited for that group lock to create its
// relationship: Neo4j aborted one of the two with DeadlockDetected.
func TestWriterLocksNodeFirst(t *testing.T) {
	d := testDriver(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := testPrefix(t)
	t.Cleanup(func() {
		neo4j.ExecuteQuery(context.Background(), d, `MATCH (n) WHERE n.key STARTS WITH $p DETACH DELETE n`, map[string]any{"p": p}, neo4j.EagerResultTransformer)
	})
	if err := NewWriter(d, "").Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	// the same runs again, with a new column in a: its columns are written again (columns)
	items := fixture(p, t0.Add(time.Hour), "")
	a := &items[0].Lineage.Reads[0]
	a.Columns = append(a.Columns, plan.Column{Key: a.Key + "#extra", Name: "extra", Type: "string"})
	r, err := buildRows(items)
	if err != nil {
		t.Fatal(err)
	}
	// what the graph holds, as the writer reads it: the runs and columns are old, so runs and
	// columns have rows
	read := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead})
	defer read.Close(ctx)
	if _, err := read.ExecuteRead(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return nil, existing.read(ctx, tx, r, "", nil)
	}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		e           element
		label, link string // link creates a relationship to node x
	}{
		{jobs, "Job", `CREATE (x)-[:HAS_RUN]->(:Run {key: $probe})`},
		{datasets, "Dataset", `CREATE (:Run {key: $probe})-[:READ]->(x)`},
		{columns, "Column", `CREATE (x)-[:FEEDS]->(:Column {key: $probe})`},
		{runs, "Run", `CREATE (:Run {key: $probe})-[:CHILD_OF]->(x)`},
	} {
		t.Run(c.e.name, func(t *testing.T) {
			rows := c.e.rows(r)
			if len(rows) == 0 {
				t.Fatalf("statement %s has no rows", c.e.name)
			}
			params := map[string]any{"rows": rows}
			key := rows[0]["key"] // the node both transactions write first
			tag := p + c.e.name
			open := func(meta map[string]any) (neo4j.SessionWithContext, neo4j.ExplicitTransaction) {
				s := d.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite})
				tx, err := s.BeginTransaction(ctx, neo4j.WithTxMetadata(meta))
				if err != nil {
					t.Fatal(err)
				}
				return s, tx
			}
			run := func(tx neo4j.ExplicitTransaction, q string, params map[string]any) error {
				res, err := tx.Run(ctx, q, params)
				if err == nil {
					_, err = res.Consume(ctx)
				}
				return err
			}

			s1, first := open(nil)
			defer s1.Close(ctx)
			defer first.Close(ctx)
			if err := run(first, c.e.query, params); err != nil {
				t.Fatal(err)
			}
			s2, second := open(map[string]any{"test": tag})
			defer s2.Close(ctx)
			defer second.Close(ctx)
			secondDone := make(chan error, 1)
			go func() { // waits for the first transaction's node until it commits
				err := run(second, c.e.query, params)
				if err == nil {
					err = second.Commit(ctx)
				}
				secondDone <- err
			}()
			if err := waitBlocked(ctx, d, tag); err != nil {
				t.Fatal(err)
			}
			err := run(first, `MATCH (x:`+c.label+` {key: $key}) `+c.link, map[string]any{"key": key, "probe": tag + "/probe"})
			if err == nil {
				err = first.Commit(ctx)
			}
			err = errors.Join(err, <-secondDone)
			if err != nil {
				t.Fatalf("statement %s, then a relationship to %v, beside a second writer of it: %v", c.e.name, key, err)
			}
		})
	}
}

package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// ModelVersion is the version of the graph model this package writes and reads: 4 keeps each
// dataset's schema as a version too, whose schemaSeen is its current columns' lastSeen
// (schema.go); 3 keeps each job's current lineage into a dataset as a LINEAGE with its
// fingerprint, whose lastSeen and lastRun are its current edges' (version.go). Model 2 stored
// them on every FEEDS and DECIDES_ROWS; model 1 had one type/subtype per FEEDS and copied
// row-level dependencies onto every written column.
//
//	(:GraphModel {key, version})
//
// Bootstrap stamps an empty, model-3 or model-4 graph and refuses a graph of another model. A
// model-3 graph is a model-4 graph whose datasets have no schema yet (every column's lastSeen is
// its own), so it is stamped 4 in place; a colline of model 3 then refuses it, as it would read
// the current columns' lastSeen from the columns alone.
const ModelVersion = 4

// inPlace are the models Bootstrap stamps ModelVersion on without changing the graph.
var inPlace = []int64{3}

// DefaultModelKey is the key of the stamp node.
const DefaultModelKey = "colline"

// ErrModelVersion means the graph holds another model than ModelVersion. It needs an operator:
// `colline upgrade` re-derives the graph from the topic.
var ErrModelVersion = errors.New("graph model mismatch")

// checkModel stamps the graph with ModelVersion, or fails if it holds another model: a stamp with
// another version, or no stamp and FEEDS relationships without roles (model 1 had no stamp).
func (w *Writer) checkModel(ctx context.Context) error {
	res, err := neo4j.ExecuteQuery(ctx, w.driver, `OPTIONAL MATCH (m:GraphModel {key: $key})
RETURN m.version AS version,
       m IS NULL AND EXISTS { MATCH ()-[f:FEEDS]->() WHERE f.roles IS NULL } AS model1`,
		map[string]any{"key": w.modelKey()}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return fmt.Errorf("graph model check: %w", err)
	}
	rec := res.Records[0]
	if v1, _ := get[bool](rec, "model1"); v1 {
		return fmt.Errorf("%w: the graph holds lineage model 1 (FEEDS without roles) and this colline writes model %d: run `colline upgrade` to re-derive it from the topic", ErrModelVersion, ModelVersion)
	}
	if v, ok := get[int64](rec, "version"); ok {
		if slices.Contains(inPlace, v) {
			return w.stamp(ctx)
		}
		if v != ModelVersion {
			return fmt.Errorf("%w: the graph holds lineage model %d and this colline writes model %d: run `colline upgrade` of the colline that writes model %d", ErrModelVersion, v, ModelVersion, max(v, ModelVersion))
		}
		return nil
	}
	return w.stamp(ctx)
}

// stamp records that the graph holds ModelVersion.
func (w *Writer) stamp(ctx context.Context) error {
	_, err := neo4j.ExecuteQuery(ctx, w.driver, `MERGE (m:GraphModel {key: $key}) SET m.version = $version`,
		map[string]any{"key": w.modelKey(), "version": ModelVersion}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithWritersRouting())
	if err != nil {
		return fmt.Errorf("graph model stamp: %w", err)
	}
	return nil
}

func (w *Writer) modelKey() string {
	if w.ModelKey == "" {
		return DefaultModelKey
	}
	return w.ModelKey
}

// Upgrade prepares a graph of an older model for re-derivation: it creates the schema, deletes
// the model-1 FEEDS relationships (those without roles; everything else model 1 has is the same
// in model 2), and returns how many it deleted. The caller then writes every event again (the
// writes are idempotent) and calls FinishUpgrade, which stamps the graph. A model-2 graph needs
// nothing deleted: its edges, each with its own lastSeen, are superseded edges of model 3 until
// the replay makes each job's newest ones current under a LINEAGE.
func (w *Writer) Upgrade(ctx context.Context) (int64, error) {
	if err := w.schema(ctx); err != nil {
		return 0, err
	}
	// A LINEAGE of a job with model-1 FEEDS would confirm a replayed run's lineage without
	// writing the edges deleted below: those jobs' LINEAGEs go first, and the replay writes their
	// edges again under new ones.
	if _, err := neo4j.ExecuteQuery(ctx, w.driver, `MATCH ()-[f:FEEDS]->() WHERE f.roles IS NULL
WITH DISTINCT f.job AS job
MATCH (:Job {key: job})-[l:LINEAGE]->()
DELETE l`, nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithWritersRouting()); err != nil {
		return 0, fmt.Errorf("graph upgrade: delete the LINEAGEs of model-1 FEEDS: %w", err)
	}
	var deleted int64
	for {
		res, err := neo4j.ExecuteQuery(ctx, w.driver, `MATCH ()-[f:FEEDS]->() WHERE f.roles IS NULL
WITH f LIMIT 10000 DELETE f RETURN count(*) AS n`, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithWritersRouting())
		if err != nil {
			return deleted, fmt.Errorf("graph upgrade: delete model-1 FEEDS: %w", err)
		}
		n, _ := get[int64](res.Records[0], "n")
		deleted += n
		if n == 0 {
			return deleted, nil
		}
	}
}

// FinishUpgrade stamps the graph with ModelVersion after Upgrade and the re-derivation.
func (w *Writer) FinishUpgrade(ctx context.Context) error { return w.stamp(ctx) }

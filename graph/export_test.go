package graph

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/record"
)

// Statement is a write statement with its rows, for the external tests (tpcds_test.go).
type Statement = statement

// Statements returns the statements Write runs for items, in order, with what the graph holds
// made up so that every kind of statement has rows: every other listener run and column exists,
// and half the (job, dataset)s (two in four) have a LINEAGE of another version, last seen in 1970 (the others
// have none: their edges are created); of the datasets that list their columns, one in three has
// another schema (its columns are written), one in three the batch's (confirmed), one none.
func Statements(items []record.Item) ([]Statement, error) {
	r, err := buildRows(items)
	if err != nil {
		return nil, err
	}
	r.oldRuns, r.oldColumns = map[string]bool{}, map[string]bool{}
	for i, x := range r.runs {
		r.oldRuns[x.key] = i%2 == 0
	}
	for i, c := range r.columns {
		r.oldColumns[c.key] = i%2 == 0
	}
	states := map[[2]string]versionState{}
	for i, v := range r.versions {
		at := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
		if i%4 < 2 {
			states[[2]string{v.job, v.dataset}] = versionState{exists: true, fingerprint: "another", since: at, firstSeen: at, lastSeen: at, lastRun: "old"}
		}
	}
	r.decide(states)
	schemas := map[string]schemaState{}
	for i, d := range r.datasets {
		at := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
		switch {
		case len(d.listings) == 0:
		case i%3 == 0:
			schemas[d.key] = schemaState{fingerprint: "another", since: at, seen: at}
		case i%3 == 1:
			schemas[d.key] = schemaState{fingerprint: d.listings[0].fingerprint, since: at, seen: at}
		}
	}
	r.decideSchemas(schemas)
	return r.statements(), nil
}

// Params returns the parameters Write sends with the statement (one chunk).
func (s Statement) Params() map[string]any { return map[string]any{"rows": s.rows} }

// Name and Query expose a statement's parts to the external tests.
func (s Statement) Name() string           { return s.name }
func (s Statement) Query() string          { return s.query }
func (s Statement) Rows() []map[string]any { return s.rows }

// WriteIn runs Write's statements for items in tx (the lineage decided from what tx reads), each
// after prefix ("PROFILE " or ""), and gives observe each statement's summary: the profile test
// measures the real write with it.
func WriteIn(ctx context.Context, tx neo4j.ExplicitTransaction, items []record.Item, prefix string, observe func(name string, rows int, sum neo4j.ResultSummary)) error {
	r, err := buildRows(items)
	if err != nil {
		return err
	}
	var failed string
	return writeRows(ctx, tx, r, &failed, prefix, observe)
}

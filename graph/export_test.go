package graph

import "github.com/colline/colline/record"

// Statement is a write statement with its rows, for the external tests (tpcds_test.go).
type Statement = statement

// Statements returns the statements Write runs for items, in order.
func Statements(items []record.Item) ([]Statement, error) {
	r, err := buildRows(items)
	if err != nil {
		return nil, err
	}
	return r.statements(), nil
}

// Params returns the parameters Write sends with the statement (one chunk).
func (s Statement) Params() map[string]any { return map[string]any{"rows": s.rows} }

// Name and Query expose a statement's parts to the external tests.
func (s Statement) Name() string           { return s.name }
func (s Statement) Query() string          { return s.query }
func (s Statement) Rows() []map[string]any { return s.rows }

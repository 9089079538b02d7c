// Package plan turns a decoded event's plan into column lineage: it resolves every output column
// through exprIds down to the source columns it comes from, with a transformation type. It is pure:
// no I/O, no globals, deterministic output.
//
// The files of a Spark plan's extraction, in the order of its phases; a file uses those below it,
// and two recursions come back up, to resolve.go (a node's outputs and rows) from the rules of
// node classes and from expressions:
//
//	extract.go   Extract: the budgets, then the phases below, then the Lineage
//	sinks.go     what the plan writes (sinks) and its DDL changes
//	degraded.go  a degraded event: the datasets and columns, no column lineage
//	feed.go      per sink, the sources of each written column and what decides its rows
//	command.go   a connector's own row-level command (Delta Lake's MERGE / UPDATE / DELETE)
//	resolve.go   a node's outputs (its scope) and the columns that decide its rows, memoized
//	rules.go     the rules of node classes
//	expr.go      what an expression reads (struct fields too)
//	nested.go    struct fields: narrowing, field keys, fields as columns
//	resolver.go  the resolver's state, budgets and small helpers
//	collect.go   what is collected: datasets, columns, edges, the edges budget (Hive's too)
//	deps.go      the ways a source reaches an attribute, and their merge
//
// hive.go and hiveexpr.go map a Hive event's own column lineage onto the same Lineage; keys.go
// names datasets and columns, lineage.go holds the result's types, budget.go the budgets, tags.go
// the column tags Spark's catalog gives a table (comments and properties, docs/tags.md).
package plan

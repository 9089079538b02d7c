package graph

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/plan"
)

// element is one kind of graph element: its UNWIND statement, how a batch's rows of that kind
// become the statement's parameters, and what Preview counts for it. Each kind lives in its own
// file with its row type.
type element struct {
	name          string   // for errors: "statement feeds handled ..."
	nodes         []string // labels Preview counts, one node per row
	relationships []string // types Preview counts, one relationship per row
	query         string
	rows          func(*rows) []map[string]any
	edges         func(*rows) []EdgeRow // lineage relationships, for Preview; nil for other kinds
	// read, when set, makes the element a read of what the graph holds, run by the writer in its
	// transaction instead of query: it sets what the statements after it need to know (which
	// runs and columns exist, the stored LINEAGEs).
	read func(ctx context.Context, tx runner, r *rows, prefix string, observe observer) error
}

// observer gets each statement's summary (the profile test); nil: none.
type observer func(name string, rows int, sum neo4j.ResultSummary)

// elements is the write order. Node MERGEs come first; the relationship statements only MATCH
// nodes written earlier in the same transaction, so no statement MERGEs and MATCHes the same
// label in one pipeline. Every statement returns the number of rows it handled, so that a MATCH
// that found nothing is an error rather than a silently dropped row.
//
// Property rules, shared with rows.go: a row is newer when its time is at least the stored
// lastSeen. Node strings take the row's value when it is not empty and the row is newer or nothing
// is stored yet; relationship properties take the row's values when the row is newer; firstSeen
// only moves back and lastSeen only forward. The "newer" test is written out in each SET item
// rather than computed once in a WITH: a projection reading lastSeen before the SET that writes
// it makes the planner add an Eager operator (TestNoEager guards this). SET evaluates all its
// items before assigning any, and lastSeen is assigned last anyway. The planner does not know
// that row is a map, so row.x counts as a read of property x: a row field read before a SET must
// not share its name with a property the SET writes (columns MATCHes by row.dataset and sets
// c.datasetKey from it; TestNoEagerTPCDS guards this on real batches, with the executed plans).
//
// Two elements are reads, once the batch's jobs and datasets are written and so locked by this
// transaction (version.go says why that keeps what they read true until the commit): existing
// finds the batch's listener runs and columns that the graph holds, lineageState the stored
// LINEAGEs, from which the writer decides the lineage rows (version.go). What is new is created
// with CREATE, every relationship of it included, without the MERGE's checks (newColumns,
// newRuns, newReads, newWrote, newFeeds, newDecides, newLineages); what exists is merged, or
// found by the element id that the read returned (lineages).
//
// Lock order. A SET whose value reads a property it writes (SET d.lastSeen = CASE … d.lastSeen …)
// makes Cypher lock the node itself, and Neo4j then takes the node's relationship-group lock
// before the node's lock and hands the group lock back after the SET; creating a relationship to
// a node takes its group lock shared. So a transaction that set node X and goes on to create a
// relationship to it waited for the group lock of X, which a second writer's SET of X had taken
// while it waited for X: a deadlock, about one in every 150 re-runs of two writers whose batches
// read the same datasets (docs/benchmarks.md). The first statement that writes a job, dataset,
// column or run therefore takes the node's lock with a write that reads nothing: the key, or a
// column's dataset key, set to the value it has. A second writer then waits for the node itself,
// holding none of its locks (TestWriterLocksNodeFirst).
var elements = []element{jobs, datasets, existing, lineageState, schemaSupersede, newColumns, columns, fields, fieldLinks, schemas,
	newRuns, runs, runJobs, parents, newReads, reads, newWrote, wrote,
	supersedeFeeds, supersedeDecides, newFeeds, feeds, newDecides, decides, newLineages, lineages, marks, columnMarks, renames, changed}

// Lineage relationship types, as EdgeRow.Kind.
const (
	Feeds       = "FEEDS"
	DecidesRows = "DECIDES_ROWS"
)

// EdgeRow is one lineage relationship: a FEEDS between two columns, or a DECIDES_ROWS from a
// column to a dataset.
type EdgeRow struct {
	Kind    string   // Feeds or DecidesRows
	Source  string   // source Column key
	Target  string   // target Column key (FEEDS) or Dataset key (DECIDES_ROWS)
	Job     string   // Job key
	Roles   []string // every role, "TYPE/SUBTYPE", with " masked" appended when it masks
	Type    string   // the strongest role's type (plan.Strongest)
	Subtype string   // the strongest role's subtype
}

func newEdgeRow(kind, source, target, job string, ts []plan.Transformation) EdgeRow {
	sum := plan.Strongest(ts)
	e := EdgeRow{Kind: kind, Source: source, Target: target, Job: job, Type: sum.Type, Subtype: sum.Subtype}
	for _, t := range ts {
		e.Roles = append(e.Roles, t.String())
	}
	return e
}

// lineageRow is a lineage relationship in a batch: a FEEDS (feeds.go), or a DECIDES_ROWS
// (decides.go) whose target is a dataset key; one per (source, target, job), with the roles and
// run of its newest observation. current says that it is an edge of the version the batch makes
// current (version.go): it then keeps no lastSeen and lastRun of its own; slotSeen is the stored
// LINEAGE's lastSeen, the lastSeen of the edges that are current before the batch (zero: none).
// fresh says that its job has no lineage into the target's dataset in the graph (no LINEAGE, no
// edge): it is created, not merged.
type lineageRow struct {
	seen
	source, target, job, lastRun string
	ts                           []plan.Transformation
	current, fresh               bool
	slotSeen                     time.Time
}

// lineageRows returns the rows of list that are fresh (true) or not (false).
func lineageRows(list []lineageRow, fresh bool) []lineageRow {
	return slices.DeleteFunc(slices.Clone(list), func(x lineageRow) bool { return x.fresh != fresh })
}

// ownSeen and ownRun are a created edge's own lastSeen and lastRun: none for a current edge.
func (x lineageRow) ownSeen() any {
	if x.current {
		return nil
	}
	return x.last
}

func (x lineageRow) ownRun() any {
	if x.current {
		return nil
	}
	return x.lastRun
}

// mergeEdge merges edge e of job, in run, observed at ts, into rows (the batch's feeds or
// decides): the newest observation's roles win.
func mergeEdge(rows set[[3]string, lineageRow], e plan.Edge, job, run string, ts time.Time) *lineageRow {
	x := rows.get([3]string{e.Source, e.Target, job}, func() *lineageRow { return &lineageRow{source: e.Source, target: e.Target, job: job} })
	if x.observe(ts) {
		x.ts, x.lastRun = e.Transformations, run
	}
	return x
}

func (a *lineageRow) compare(b *lineageRow) int {
	return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.target, b.target), cmp.Compare(a.job, b.job))
}

// edgeRows are the lineage relationships of kind (Feeds, DecidesRows) that rows make.
func edgeRows(kind string, rows []lineageRow) []EdgeRow {
	out := make([]EdgeRow, len(rows))
	for i, x := range rows {
		out[i] = newEdgeRow(kind, x.source, x.target, x.job, x.ts)
	}
	return out
}

// String renders an edge row on one line, for test failures and tools.
func (e EdgeRow) String() string {
	return e.Source + " -" + e.Kind + "-> " + e.Target + " [" + e.Job + "] " + strings.Join(e.Roles, ", ")
}

// statement is one UNWIND statement with its rows as flat maps of scalars and lists.
type statement struct {
	name  string
	query string
	rows  []map[string]any
}

// statements turns rows into the ordered statement list of one transaction, with the lineage
// rows as decided last (buildRows: as for an empty graph).
func (r *rows) statements() []statement {
	st := make([]statement, 0, len(elements))
	for _, e := range elements {
		st = append(st, statement{name: e.name, query: e.query, rows: e.rows(r)})
	}
	return st
}

package graph

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"
)

// What a walk answers (Subgraph) and the other reads share: datasets, columns and lineage
// relationships as the API returns them, read from Neo4j's nodes and relationships.

// Subgraph is the part of the graph a walk met.
type Subgraph struct {
	Datasets  []DatasetInfo // sorted by key
	Columns   []ColumnInfo  // sorted by distance, then key
	Edges     []Edge        // sorted by kind, source, target, job
	Steps     int           // the steps that found something
	Truncated bool          // a bound stopped the walk before Steps or before the graph ended
	Complete  bool          // the walk ended because nothing more was reachable
}

// DatasetInfo describes a dataset.
type DatasetInfo struct {
	Key       string     `json:"key"`
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Kind      string     `json:"kind"`
	Location  string     `json:"location,omitempty"`
	FirstSeen *time.Time `json:"firstSeen,omitempty"`
	LastSeen  *time.Time `json:"lastSeen,omitempty"`
	DroppedAt *time.Time `json:"droppedAt,omitempty"`
}

// ColumnInfo describes a column; Distance is in lineage steps from the walk's start.
type ColumnInfo struct {
	Key       string     `json:"key"`
	Name      string     `json:"name"`
	Dataset   string     `json:"dataset"`
	DataType  string     `json:"dataType,omitempty"`
	FirstSeen *time.Time `json:"firstSeen,omitempty"`
	LastSeen  *time.Time `json:"lastSeen,omitempty"`
	Distance  int        `json:"distance"`
}

// Role is one way a source takes part in a target (plan.Transformation as stored).
type Role struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Expr    string `json:"expr,omitempty"`
	Masked  bool   `json:"masked,omitempty"`
	// Rows: a DECIDES_ROWS role that decides only the rows of some UNION branches lists the
	// datasets those rows come from (plan.Transformation.Rows); empty: every row.
	Rows []string `json:"rows,omitempty"`
}

// Edge is one lineage relationship as stored: a FEEDS from a column to a column, or a
// DECIDES_ROWS from a column to a dataset (Target is then a dataset key).
type Edge struct {
	Kind      string     `json:"kind"` // Feeds or DecidesRows
	Source    string     `json:"source"`
	Target    string     `json:"target"`
	Job       string     `json:"job"`
	Roles     []Role     `json:"roles"`
	Type      string     `json:"type,omitempty"` // FEEDS: the strongest role
	Subtype   string     `json:"subtype,omitempty"`
	FirstSeen *time.Time `json:"firstSeen,omitempty"`
	LastSeen  *time.Time `json:"lastSeen,omitempty"`
	LastRun   string     `json:"lastRun,omitempty"`
	Stale     bool       `json:"stale,omitempty"`
}

// SortEdges sorts by kind, source, target and job.
func SortEdges(es []Edge) {
	slices.SortFunc(es, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Job, b.Job))
	})
}

// props reads typed properties of nodes and relationships.
func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func timeProp(p map[string]any, k string) *time.Time {
	t, ok := p[k].(time.Time)
	if !ok {
		return nil
	}
	t = t.UTC()
	return &t
}

// columnInfo is the column of properties c, of the dataset of properties ds, at distance d.
func columnInfo(c, ds map[string]any, d int) ColumnInfo {
	return ColumnInfo{Key: str(c, "key"), Name: str(c, "name"), DataType: str(c, "dataType"),
		FirstSeen: timeProp(c, "firstSeen"), LastSeen: columnLastSeen(c, ds), Distance: d}
}

// datasetInfo is the dataset of properties p.
func datasetInfo(p map[string]any) DatasetInfo {
	return DatasetInfo{Key: str(p, "key"), Namespace: str(p, "namespace"), Name: str(p, "name"),
		Kind: str(p, "kind"), Location: str(p, "location"), FirstSeen: timeProp(p, "firstSeen"),
		LastSeen: timeProp(p, "lastSeen"), DroppedAt: timeProp(p, "droppedAt")}
}

// edgeOf reads a record of kind, source, target and rel.
func edgeOf(rec *neo4j.Record) *Edge {
	kind, _ := get[string](rec, "kind")
	source, _ := get[string](rec, "source")
	target, _ := get[string](rec, "target")
	rel, _ := get[dbtype.Relationship](rec, "rel")
	return edgeFrom(kind, source, target, rel.Props)
}

// edgeFrom is the edge of kind from source to target whose relationship has properties p.
func edgeFrom(kind, source, target string, p map[string]any) *Edge {
	e := &Edge{Kind: kind, Source: source, Target: target, Job: str(p, "job"), Type: str(p, "type"), Subtype: str(p, "subtype"),
		FirstSeen: timeProp(p, "firstSeen"), LastSeen: timeProp(p, "lastSeen"), LastRun: str(p, "lastRun")}
	roles, _ := p["roles"].([]any)
	exprs, _ := p["exprs"].([]any)
	masked, _ := p["masked"].([]any)
	rows, _ := p["rows"].([]any)
	for k, x := range roles {
		s, _ := x.(string)
		ro := Role{}
		ro.Type, ro.Subtype, _ = strings.Cut(s, "/")
		if k < len(exprs) {
			ro.Expr, _ = exprs[k].(string)
		}
		if k < len(masked) {
			ro.Masked, _ = masked[k].(bool)
		}
		if k < len(rows) {
			if s, _ := rows[k].(string); s != "" {
				ro.Rows = strings.Split(s, "\n")
			}
		}
		e.Roles = append(e.Roles, ro)
	}
	return e
}

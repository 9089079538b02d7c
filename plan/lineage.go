package plan

import (
	"errors"
	"strings"
)

// ErrUnsupported is returned for plans whose lineage cannot be extracted. It is permanent.
var ErrUnsupported = errors.New("unsupported plan")

// Lineage is what one event says about data flow, in the shape of OpenLineage's column lineage
// facet: the datasets it read and wrote; per written column, its input columns, each with every
// transformation it takes part in (Edges); per written dataset, the columns that decide which
// rows reach it (RowDeps: filters, joins, grouping, sorting), once. Both are sorted by target,
// then source, one edge per pair.
type Lineage struct {
	Reads  []Dataset
	Writes []Write
	Edges  []Edge
	// RowDeps are dataset-level dependencies: Source is a column, Target a written Dataset.Key,
	// the transformations INDIRECT FILTER, JOIN, GROUP_BY or SORT.
	RowDeps []Edge
	// Changes are identity changes made by DDL commands (drop, rename, truncate, load), in plan order.
	Changes []Change
	// Unknown counts plan nodes, by class, that no specific rule knew and the generic rule handled.
	Unknown map[string]int
	// Tags are the column tags the event's datasets carry (tags.go): Spark catalog comments and
	// properties, an OpenLineage TagsDatasetFacet. One set per dataset whose source says.
	Tags []DatasetTags
	// Degraded is true for a degraded event (markers.truncated: the listener cut it to fit its
	// size cap, dropping expressions and maybe outputs). Its lineage is table-level only: Reads,
	// Writes with their columns and Changes are complete, and Edges and RowDeps are empty because
	// the event does not say how columns connect, not because they do not. Column lineage is
	// missing for every write.
	Degraded bool
	// OverBudget, when set, names the extraction budget the plan was over (and the figure): its
	// lineage is table-level only, as a degraded event's (ExtractWithin).
	OverBudget *TooComplexError
}

// TableLevel reports whether the lineage is table-level only (a degraded event, or a plan over
// budget): the writes' column lineage is missing, not empty.
func (l *Lineage) TableLevel() bool { return l.Degraded || l.OverBudget != nil }

// Size is the figure the edges budget counts (Budget.Edges): every lineage pair, column edge or
// row-level dependency, plus each of its roles.
func (l *Lineage) Size() int {
	n := 0
	for _, list := range [][]Edge{l.Edges, l.RowDeps} {
		for _, e := range list {
			n += 1 + len(e.Transformations)
		}
	}
	return n
}

// Dataset is a source or target, identified by Key (see Key in keys.go).
type Dataset struct {
	Key       string // namespace + "/" + name, the graph's unique key
	Namespace string // OpenLineage-style namespace, e.g. "spark_catalog", "file", "kafka://host:9092"
	Name      string // e.g. "sales.orders", "/data/in/orders", "orders-topic"
	Kind      string // table, view, path, jdbc, kafka, local, rdd, other
	Location  string // storage location when known
	Columns   []Column
	// Inferred: colline analyze inferred the table's schema from the statements that read it
	// (nobody described it): its columns and their types are the statements', not the table's.
	Inferred bool
}

// Column is a column of a dataset.
type Column struct {
	Key  string // Dataset.Key + "#" + lower-cased name; a struct field: its parent's key + "." + lower-cased field name
	Name string // a struct field: its parent's name + "." + the field's name (address.city)
	Type string
	// Parent is the key of the column (or field) this is a struct field of; "" for a column.
	Parent string
}

// Write is a dataset written by the event, with its mode.
type Write struct {
	Dataset
	Mode string
}

// Change is what a DDL command did to a dataset. A dropped dataset keeps its lineage (the graph
// marks it); a renamed one is reachable from its old key; a truncated one lost its rows but not
// its lineage; a load fills Dataset from the path From, without a column mapping (LOAD DATA copies
// files), so it also appears in Reads and Writes; an alter (the metastore listener's column
// changes) lists the columns Dataset has now, and those it dropped.
type Change struct {
	Action  string   // ChangeDrop, ChangeRename, ChangeTruncate, ChangeLoad, ChangeAlter
	Dataset Dataset  // the dataset changed (a rename's old identity); ChangeAlter: with its columns
	To      *Dataset // ChangeRename: the new identity
	From    *Dataset // ChangeLoad: the path loaded
	Mode    string   // ChangeLoad: append or overwrite
	Dropped []Column // ChangeAlter: the columns no longer in the dataset
}

// Change actions.
const (
	ChangeDrop     = "drop"
	ChangeRename   = "rename"
	ChangeTruncate = "truncate"
	ChangeLoad     = "load"
	ChangeAlter    = "alter"
)

// String renders a change for logs and goldens: "rename spark_catalog/db.a -> spark_catalog/db.b".
func (c Change) String() string {
	s := c.Action + " " + c.Dataset.Kind + " " + c.Dataset.Key
	if c.To != nil {
		s += " -> " + c.To.Key
	}
	if c.From != nil {
		s += " from " + c.From.Key
	}
	if c.Mode != "" {
		s += " " + c.Mode
	}
	if c.Action == ChangeAlter {
		names := make([]string, len(c.Dataset.Columns))
		for k, col := range c.Dataset.Columns {
			names[k] = col.Name
		}
		s += " columns [" + strings.Join(names, ", ") + "]"
		if len(c.Dropped) > 0 {
			dropped := make([]string, len(c.Dropped))
			for k, col := range c.Dropped {
				dropped[k] = col.Name
			}
			s += " dropped [" + strings.Join(dropped, ", ") + "]"
		}
	}
	return s
}

// Edge says that Source feeds Target, in every way listed (at least one).
type Edge struct {
	Source          string // Column.Key
	Target          string // Column.Key, or for a row-level dependency Dataset.Key
	Transformations []Transformation
}

// Transformation is one way a source takes part in a target: the facet's transformation object.
type Transformation struct {
	Type    string // DIRECT or INDIRECT
	Subtype string // IDENTITY, TRANSFORMATION, AGGREGATION; FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL
	Masking bool   // the value passes through a hash, count or masking function
	Expr    string // the expression that produced it, truncated
	// Rows scopes a row-level dependency (Lineage.RowDeps) to some of the written rows: those
	// that come from the datasets whose keys it lists, sorted, one a line (InlineRows for inline
	// data): the sources of the UNION branches whose rows it decides. "": it decides every row
	// of the write. RowSources splits it.
	Rows string
}

// RowSources returns the dataset keys of Rows (nil: every row).
func (t Transformation) RowSources() []string {
	if t.Rows == "" {
		return nil
	}
	return strings.Split(t.Rows, "\n")
}

// InlineRows stands in Transformation.Rows for the rows of a UNION branch that reads no dataset.
const InlineRows = inlineRows

// String renders a transformation as TYPE/SUBTYPE, with " masked" when it masks and
// " rows from k1, k2" when it decides some rows only.
func (t Transformation) String() string {
	s := t.Type + "/" + t.Subtype
	if t.Masking {
		s += " masked"
	}
	if t.Rows != "" {
		s += " rows from " + strings.Join(t.RowSources(), ", ")
	}
	return s
}

// Summary is the strongest of an edge's transformations, for display where one label must do
// (a graph edge's colour): direct beats indirect, aggregation beats transformation beats
// identity, and indirect subtypes rank CONDITIONAL, WINDOW, JOIN, FILTER, GROUP_BY, SORT, then
// unknown ones. It is derived: the transformations are the facts.
func (e Edge) Summary() Transformation { return Strongest(e.Transformations) }

// Strongest returns the strongest transformation of ts (see Edge.Summary); the zero value if none.
func Strongest(ts []Transformation) Transformation {
	var best Transformation
	for k, t := range ts {
		if k == 0 || strength(t) > strength(best) {
			best = t
		}
	}
	return best
}

// strength orders transformations for Strongest.
func strength(t Transformation) int {
	if t.Type == Direct {
		switch t.Subtype {
		case Identity:
			return 100
		case TransformationSub:
			return 101
		case Aggregation:
			return 102
		}
		return 99
	}
	return indirectRank[t.Subtype]
}

// indirectRank orders indirect subtypes by how much they say about a target's values.
var indirectRank = map[string]int{Conditional: 6, WindowSub: 5, JoinSub: 4, FilterSub: 3, GroupBy: 2, SortSub: 1}

// Transformation types and subtypes, after OpenLineage's column lineage facet.
const (
	Direct   = "DIRECT"
	Indirect = "INDIRECT"

	Identity          = "IDENTITY"
	TransformationSub = "TRANSFORMATION"
	Aggregation       = "AGGREGATION"

	FilterSub   = "FILTER"
	JoinSub     = "JOIN"
	GroupBy     = "GROUP_BY"
	SortSub     = "SORT"
	WindowSub   = "WINDOW"
	Conditional = "CONDITIONAL"
)

// Direct reports whether any of the edge's transformations is DIRECT: the source is part of the
// target's value.
func (e Edge) Direct() bool {
	for _, t := range e.Transformations {
		if t.Type == Direct {
			return true
		}
	}
	return false
}

// maxExpr bounds the expression text kept on an edge.
const maxExpr = 240

// Truncate cuts an expression's text to the length kept on an edge (240 bytes), at a UTF-8
// boundary, marking the cut with "…".
func Truncate(s string) string {
	if len(s) <= maxExpr {
		return s
	}
	cut := maxExpr
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

package plan

// Lineage is what one event says about data flow: the datasets it read and wrote and the
// column-to-column edges between them. Edges are sorted and free of duplicates.
type Lineage struct {
	Reads  []Dataset
	Writes []Write
	Edges  []Edge
	// Changes are identity changes made by DDL commands (drop, rename, truncate, load), in plan order.
	Changes []Change
	// Unknown counts plan nodes, by class, that no specific rule knew and the generic rule handled.
	Unknown map[string]int
}

// Dataset is a source or target, identified by Key (see Key in keys.go).
type Dataset struct {
	Key       string // namespace + "/" + name, the graph's unique key
	Namespace string // OpenLineage-style namespace, e.g. "spark_catalog", "file", "kafka://host:9092"
	Name      string // e.g. "sales.orders", "/data/in/orders", "orders-topic"
	Kind      string // table, view, path, jdbc, kafka, local, rdd, other
	Location  string // storage location when known
	Columns   []Column
}

// Column is a column of a dataset.
type Column struct {
	Key  string // Dataset.Key + "#" + lower-cased name
	Name string
	Type string
}

// Write is a dataset written by the event, with its mode.
type Write struct {
	Dataset
	Mode string
}

// Change is what a DDL command did to a dataset. A dropped dataset keeps its lineage (the graph
// marks it); a renamed one is reachable from its old key; a truncated one lost its rows but not
// its lineage; a load fills Dataset from the path From, without a column mapping (LOAD DATA copies
// files), so it also appears in Reads and Writes.
type Change struct {
	Action  string   // ChangeDrop, ChangeRename, ChangeTruncate, ChangeLoad
	Dataset Dataset  // the dataset changed (a rename's old identity)
	To      *Dataset // ChangeRename: the new identity
	From    *Dataset // ChangeLoad: the path loaded
	Mode    string   // ChangeLoad: append or overwrite
}

// Change actions.
const (
	ChangeDrop     = "drop"
	ChangeRename   = "rename"
	ChangeTruncate = "truncate"
	ChangeLoad     = "load"
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
	return s
}

// Edge says that Source feeds Target, and how.
type Edge struct {
	Source  string // Column.Key
	Target  string // Column.Key
	Type    string // DIRECT or INDIRECT
	Subtype string // IDENTITY, TRANSFORMATION, AGGREGATION; FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL
	Masking bool   // the value passes through a hash, count or masking function
	Expr    string // the expression that produced it, truncated
}

// Transformation types and subtypes, after OpenLineage's column lineage facet.
const (
	Direct   = "DIRECT"
	Indirect = "INDIRECT"

	Identity       = "IDENTITY"
	Transformation = "TRANSFORMATION"
	Aggregation    = "AGGREGATION"

	FilterSub   = "FILTER"
	JoinSub     = "JOIN"
	GroupBy     = "GROUP_BY"
	SortSub     = "SORT"
	WindowSub   = "WINDOW"
	Conditional = "CONDITIONAL"
)

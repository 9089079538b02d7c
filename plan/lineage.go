package plan

// Lineage is what one event says about data flow: the datasets it read and wrote and the
// column-to-column edges between them. Edges are sorted and free of duplicates.
type Lineage struct {
	Reads  []Dataset
	Writes []Write
	Edges  []Edge
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

package events

// Envelope is one event published by the listener: a reported query execution with its plan.
// Decode shares equal string slices within an event ([]string fields): they are read only.
type Envelope struct {
	SchemaVersion string   `json:"schemaVersion"`
	EventID       string   `json:"eventId"`
	EmittedAt     string   `json:"emittedAt"`
	Producer      Producer `json:"producer"`
	App           App      `json:"app"`
	Query         Query    `json:"query"`
	JVMID         string   `json:"jvmId"`
	Markers       Markers  `json:"markers"`
	// Parent is the scheduler's run that launched the application or session (since 1.5): the
	// listener reads it from OpenLineage's and colline's parent settings. Nil when none was set.
	Parent *Parent `json:"parent,omitempty"`
	Root   int     `json:"root"`
	Nodes  []Node  `json:"nodes"`
	// Hive is the body of a Hive event (since 1.4): Hive's own column lineage of one query, from
	// colline's Hive hook or a replayed LineageLogger record. A Hive event has no nodes.
	Hive *Hive `json:"hive,omitempty"`
}

// Producer names the listener build and the Spark it ran in.
type Producer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Spark   string `json:"spark"`
	Scala   string `json:"scala"`
	Hive    string `json:"hive"` // since 1.4: the Hive version of the hook or metastore listener
}

// App identifies the Spark application.
type App struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	User      string `json:"user"`
	Namespace string `json:"namespace"`
}

// Query describes the reported execution.
type Query struct {
	ExecutionID int64  `json:"executionId"`
	FuncName    string `json:"funcName"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	DurationMs  int64  `json:"durationMs"`
	EndedAt     string `json:"endedAt"`
	// Stream is the streaming query run of the event: the run itself for a stream event (since
	// 1.2, funcName stream), the run whose foreachBatch micro-batch the execution ran in for a
	// write (since 1.5); nil otherwise.
	Stream *Stream `json:"stream,omitempty"`
	// Connect is the Spark Connect operation that ran the execution (since 1.5); nil for an
	// execution that did not come through Spark Connect.
	Connect *Connect `json:"connect,omitempty"`
}

// Stream names a Structured Streaming query run (Query.Stream).
type Stream struct {
	ID    string `json:"id"`    // the query id, the same for every run of the query
	RunID string `json:"runId"` // the run id; a stream event's eventId (since 1.5)
	Name  string `json:"name"`  // the query name, when it has one
	// BatchID is the micro-batch a write ran in (since 1.5; nil for a stream event).
	BatchID *int64 `json:"batchId,omitempty"`
}

// Connect is who ran an execution through Spark Connect, as the client said it (Spark Connect
// does not authenticate the user id): the user id and name, the session and operation ids, and
// the client's description of itself (its client_type, e.g. "_SPARK_CONNECT_PYTHON spark/4.1.1").
type Connect struct {
	UserID      string `json:"userId"`
	UserName    string `json:"userName,omitempty"`
	SessionID   string `json:"sessionId"`
	OperationID string `json:"operationId"`
	ClientType  string `json:"clientType,omitempty"`
}

// Parent is a scheduler's run: its job's namespace and name, its run id, and the root run above
// it when the scheduler gave one (an Airflow DAG run above its task's run).
type Parent struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	RunID     string  `json:"runId"`
	Root      *Parent `json:"root,omitempty"`
}

// Markers flag events that need special handling.
type Markers struct {
	NestedWrite bool `json:"nestedWrite"`
	Truncated   bool `json:"truncated"`
	// Analyzed marks an event of `colline analyze` (since 1.4): the plan Spark's analyzer made of
	// SQL that was not run; query.status says the analysis succeeded, durationMs is null.
	Analyzed bool `json:"analyzed,omitempty"`
}

// Node is one logical plan node. References to other nodes are indexes into Envelope.Nodes.
type Node struct {
	ID       int               `json:"id"`
	Class    string            `json:"class"`
	Children []int             `json:"children"`
	Output   []Attribute       `json:"output"`
	Exprs    map[string][]Expr `json:"exprs"`
	Plans    map[string]int    `json:"plans"`
	Args     map[string]any    `json:"args"`
	Dataset  *Dataset          `json:"dataset"`
	Write    *Write            `json:"write"`
	DDL      *DDL              `json:"ddl"` // since 1.1
}

// Attribute is one output column of a node. Attributes of an event with equal qualifiers share
// one Qualifier slice (Decode): read only.
type Attribute struct {
	ExprID    int64    `json:"exprId"`
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Nullable  bool     `json:"nullable"`
	Qualifier []string `json:"qualifier"`
	// MetadataCol marks a metadata column of a relation (`_file`, `_pos`, `_metadata`, …; since
	// 1.3): not a data column of the dataset.
	MetadataCol bool `json:"metadataCol,omitempty"`
}

// Expr is an expression tree. ExprID is set for named expressions; Plan (an index into
// Envelope.Nodes) for subquery expressions.
type Expr struct {
	Class  string `json:"class"`
	ExprID *int64 `json:"exprId"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	SQL    string `json:"sql"`
	Plan   *int   `json:"plan"`
	// Fields are the field names of a struct-building expression (CreateNamedStruct), in the
	// order of its values (since 1.4). Equal lists of an event are one slice (Decode): read only.
	Fields []string `json:"fields,omitempty"`
	// CommonID ties a CommonExpressionRef to its CommonExpressionDef (since 1.5: Spark 4.x's
	// common expressions, the With that NULLIF and BETWEEN are rewritten into).
	CommonID *int64 `json:"commonId,omitempty"`
	Children []Expr `json:"children"`
}

// Dataset is the resolved identity of a source or a write target.
type Dataset struct {
	Kind      string   `json:"kind"`
	Catalog   string   `json:"catalog,omitempty"`
	Namespace []string `json:"namespace,omitempty"`
	Name      string   `json:"name,omitempty"`
	Provider  string   `json:"provider,omitempty"`
	Location  string   `json:"location,omitempty"`
	TableType string   `json:"tableType,omitempty"`
	Format    string   `json:"format,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	URL       string   `json:"url,omitempty"`
	Table     string   `json:"table,omitempty"`
	SQL       string   `json:"query,omitempty"`
	Servers   string   `json:"servers,omitempty"`
	Topics    []string `json:"topics,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	// Cluster names the Kafka cluster of Servers (since 1.5, optional): a topic is keyed by it
	// rather than by the first server. colline's consumer sets it from COLLINE_KAFKA_CLUSTERS
	// where the event has none.
	Cluster     string `json:"cluster,omitempty"`
	Temporary   bool   `json:"temporary,omitempty"`
	Description string `json:"description,omitempty"`
	// ColumnComments are a catalog table's column comments that hold a tag (#key or #key=value),
	// by column name; TagProperties its table properties colline.tags.<column>. Since 1.5 the
	// listener sends both, possibly empty, for every catalog table: nil means an older listener,
	// which said nothing of tags (docs/tags.md).
	ColumnComments map[string]string `json:"columnComments,omitempty"`
	TagProperties  map[string]string `json:"tagProperties,omitempty"`
	// Inferred (since 1.5, analyzed events only): the table's schema was inferred by colline
	// analyze from the statements that read it (its columns are those they reference, its types
	// those Spark's analysis asked of them), as nobody described the table.
	Inferred bool `json:"inferred,omitempty"`
}

// Write is the target of a write command: column i is written from output i of Nodes[Query].
type Write struct {
	Dataset          Dataset  `json:"dataset"`
	Mode             string   `json:"mode"`
	Columns          []string `json:"columns"`
	PartitionColumns []string `json:"partitionColumns"`
	Query            *int     `json:"query"`
	// ColumnTypes are the types of Columns, in the same order (since 1.4: Hive outputs).
	ColumnTypes []string `json:"columnTypes"`
}

// Arg returns a string argument of the node, or "".
func (n *Node) Arg(key string) string {
	s, _ := n.Args[key].(string)
	return s
}

// DDL is what a DDL command does to a dataset's identity (schema 1.1): Action is drop, rename,
// truncate, load or (since 1.4) alter; To is the new identity of a rename, Source the path a LOAD
// DATA reads; Columns the columns after an alter, Dropped those it removed.
type DDL struct {
	Action    string         `json:"action"`
	Dataset   Dataset        `json:"dataset"`
	To        *Dataset       `json:"to"`
	Source    *Dataset       `json:"source"`
	Overwrite bool           `json:"overwrite"`
	Columns   []ColumnSchema `json:"columns"` // since 1.4
	Dropped   []string       `json:"dropped"` // since 1.4
}

// ColumnSchema is a column's name and type.
type ColumnSchema struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Hive is Hive's own column lineage of one query (schema 1.4), in the shape of Hive's
// LineageLogger: Edges between Vertices, plus the tables the query read and wrote.
type Hive struct {
	QueryID   string       `json:"queryId"`
	Operation string       `json:"operation"` // Hive's operation: QUERY, CREATETABLE_AS_SELECT, CREATEVIEW, ALTERVIEW_AS
	Engine    string       `json:"engine"`    // hive.execution.engine: mr, tez
	Database  string       `json:"database"`  // the session's current database
	Hash      string       `json:"hash"`      // LineageLogger's hash: MD5 of the query text
	QueryText string       `json:"queryText"` // redacted, literals masked
	Inputs    []Dataset    `json:"inputs"`    // tables and views read directly
	Outputs   []Write      `json:"outputs"`   // tables and directories written (no query)
	Edges     []HiveEdge   `json:"edges"`
	Vertices  []HiveVertex `json:"vertices"`
}

// HiveEdge says that the target vertices depend on the source vertices: PROJECTION (their
// values) or PREDICATE (which rows they hold), through Expression (absent: the source as it is).
type HiveEdge struct {
	Sources    []int  `json:"sources"`
	Targets    []int  `json:"targets"`
	Expression string `json:"expression"`
	EdgeType   string `json:"edgeType"`
}

// HiveVertex is a column (VertexID "db.table.column", or a result column's name) or a table
// ("db.table") of a Hive lineage graph; ID is its index in Vertices.
type HiveVertex struct {
	ID         int    `json:"id"`
	VertexType string `json:"vertexType"`
	VertexID   string `json:"vertexId"`
}

// Hive edge and vertex types.
const (
	HiveProjection = "PROJECTION"
	HivePredicate  = "PREDICATE"
	HiveColumn     = "COLUMN"
	HiveTable      = "TABLE"
)

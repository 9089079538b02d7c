package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

// Part is a named SQL text: a file to analyze, or schema statements to register first.
type Part struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// Request is one analysis, in a session of its own: Tables and the definitions of the Schema
// parts' statements are registered in the analyzer's own catalog for this request only, then
// every statement of Files is analyzed. App and Namespace name the job of the events (its key is
// Namespace/App); Reads also turns plain queries into events (as the listener's publishReads);
// Conf is set on the session first (runtime Spark SQL settings only: docs/analyze.md); Infer
// gives the tables that nothing describes the schemas their statements need (docs/analyze.md,
// "Tables nobody described").
type Request struct {
	App       string            `json:"app,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Reads     bool              `json:"reads,omitempty"`
	Infer     bool              `json:"infer,omitempty"`
	Conf      map[string]string `json:"conf,omitempty"`
	Tables    []Table           `json:"tables,omitempty"`
	Schema    []Part            `json:"schema,omitempty"`
	Files     []Part            `json:"files,omitempty"`
}

// Table is a table's schema given as data, never as SQL text: the analyzer parses each column's
// type on its own as one Spark SQL type and refuses the table, naming the column, when it is not.
type Table struct {
	Name             string   `json:"name"` // db.table, as Spark reads a name (Quote each part)
	Columns          []Column `json:"columns"`
	PartitionColumns []string `json:"partitionColumns,omitempty"`
	Provider         string   `json:"provider,omitempty"` // a file format (parquet, orc, csv, json, text, avro); default parquet
	Source           string   `json:"source,omitempty"`   // where the schema comes from: graph, ddl, metastore or inferred
}

// Column is a column of a Table: Type is one Spark SQL type, e.g. decimal(10,2) or array<string>.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// Sources of a Table's schema.
const (
	SourceGraph     = "graph"
	SourceDDL       = "ddl"
	SourceMetastore = "metastore"
	SourceInferred  = "inferred"
)

// Response is the analyzer's answer: the tables, the schema parts and the files, statement by statement.
type Response struct {
	Tables []TableResult `json:"tables"`
	Schema []File        `json:"schema"`
	Files  []File        `json:"files"`
}

// TableResult is what became of a Table: Outcome is applied (Note says what differs from the
// request, if anything) or refused (Reason says why, naming the column at fault).
type TableResult struct {
	Name    string `json:"name"`
	Source  string `json:"source"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Note    string `json:"note,omitempty"`
}

// File is the statements of one part, in order.
type File struct {
	Name       string      `json:"name"`
	Statements []Statement `json:"statements"`
}

// Outcomes of a statement.
const (
	OutcomeEvent   = "event"   // Events holds the events the listener would publish (one per execution Spark would run: usually one)
	OutcomeSkipped = "skipped" // no event; Reason says why (noLineage, query, oversize, ...)
	OutcomeApplied = "applied" // a schema statement (or a Table), registered
	OutcomeError   = "error"   // Error holds Spark's message
	OutcomeRefused = "refused" // not analyzed (or a Table not registered): Reason says why (ADD JAR, a read of files by path, ...)
	// OutcomeTableLevel: a table nobody described could not be inferred for the statement (a
	// `*` over it, an unqualified column two such tables could hold, ...): CannotInfer says
	// what and why, Reads and Writes are its table-level lineage; it is not analyzed.
	OutcomeTableLevel = "tableLevel"
)

// Statement is what became of one statement. Line and Column (1-based) are where it starts in
// its file.
type Statement struct {
	Index         int               `json:"index"`
	Line          int               `json:"line"`
	Column        int               `json:"column"`
	Text          string            `json:"text"` // its beginning, on one line
	Outcome       string            `json:"outcome"`
	Reason        string            `json:"reason,omitempty"`
	Applied       *bool             `json:"applied,omitempty"`          // what it defines was registered in the session or the analyzer's catalog
	NotApplied    string            `json:"notApplied,omitempty"`       // why a defining statement was not registered
	Note          string            `json:"note,omitempty"`             // how the registration differs from running it (a LOCATION not used, ...)
	Degraded      int               `json:"degraded,omitempty"`         // the event's degradation level (size cap)
	AnalyzeMicros int64             `json:"analyzeMicros,omitempty"`    // parse and analysis, wall time
	AnalyzeCPU    int64             `json:"analyzeCpuMicros,omitempty"` // the same, CPU time of the analyzing thread
	EventMicros   int64             `json:"eventMicros,omitempty"`      // serialization into the event (EventBuilder, Seal)
	Events        []json.RawMessage `json:"events,omitempty"`
	Error         *Error            `json:"error,omitempty"`
	Tables        []TableSource     `json:"tables,omitempty"`      // the tables it names, each with where its schema came from
	Inferred      []InferredTable   `json:"inferred,omitempty"`    // the tables inferred for it, with their columns as defined now
	InferRounds   int               `json:"inferRounds,omitempty"` // analyses the inference took
	CannotInfer   []string          `json:"cannotInfer,omitempty"` // OutcomeTableLevel: each name that cannot be inferred, and why
	Reads         []TableName       `json:"reads,omitempty"`       // OutcomeTableLevel: the tables it reads
	Writes        []TableName       `json:"writes,omitempty"`      // OutcomeTableLevel: the tables it writes or creates
}

// TableName is a table of the session catalog.
type TableName struct {
	Database string `json:"database"`
	Table    string `json:"table"`
}

// Key is the table's dataset key in the graph (plan.Identify's).
func (n TableName) Key() string {
	ds := plan.Identify(&events.Dataset{Kind: "table", Catalog: SessionCatalog, Namespace: []string{n.Database}, Name: n.Table})
	if len(ds) == 0 {
		return ""
	}
	return ds[0].Key
}

func (n TableName) String() string { return n.Database + "." + n.Table }

// Schema sources (TableSource.Source): where a table's schema came from.
const (
	SourceScript  = "script"  // an earlier statement of the files (CREATE TABLE, a CTAS, a view)
	SourceView    = "view"    // a temporary view of the session
	SourceUnknown = "unknown" // nothing defines it
)

// TableSource is a table a statement names and where its schema came from: ddl, metastore,
// graph, script, inferred, view (a temporary view, Database empty) or unknown.
type TableSource struct {
	TableName
	Source string `json:"source"`
}

// InferredTable is a table whose schema was inferred from the statements that read it: the
// columns they reference, with the types Spark's analysis asked of them.
type InferredTable struct {
	TableName
	Columns []Column `json:"columns"`
}

// Error is Spark's error for a statement: Stage is parse, analysis or event; Line and Column are
// in the file.
type Error struct {
	Stage      string `json:"stage"`
	Message    string `json:"message"`
	ErrorClass string `json:"errorClass"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
}

// Health is the analyzer's /healthz answer.
type Health struct {
	Status   string `json:"status"`
	Spark    string `json:"spark"`
	Scala    string `json:"scala"`
	Listener string `json:"listener"`
	Catalog  string `json:"catalog"` // memory, hive or metastore
}

// Client calls an analyzer's HTTP API.
type Client struct {
	URL   string       // e.g. http://127.0.0.1:18990
	Token string       // sent as a bearer token when not empty
	HTTP  *http.Client // default: http.DefaultClient
}

// Analyze sends one request and returns the analyzer's answer.
func (c *Client) Analyze(ctx context.Context, req Request) (*Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out Response
	if err := c.call(ctx, http.MethodPost, "/v1/analyze", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Names asks the analyzer which tables the request's SQL names that nothing defines for it (not
// its Tables or Schema, not the analyzer's catalog, not an earlier statement, not a CTE): what a
// caller may give as Tables from colline's graph. The analyzer only parses the SQL.
func (c *Client) Names(ctx context.Context, req Request) ([]TableName, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out struct {
		Names []TableName `json:"names"`
	}
	if err := c.call(ctx, http.MethodPost, "/v1/names", body, &out); err != nil {
		return nil, err
	}
	return out.Names, nil
}

// Health asks the analyzer whether it is up, and what it runs.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.call(ctx, http.MethodGet, "/healthz", nil, &h)
	return h, err
}

func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("analyzer %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("analyzer %s%s: reading the answer after %s: %w", c.URL, path, time.Since(start).Round(time.Millisecond), err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("analyzer %s%s: %s: %s", c.URL, path, resp.Status, e.Error)
		}
		return fmt.Errorf("analyzer %s%s: %s", c.URL, path, resp.Status)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("analyzer %s%s: the answer is not what colline expects: %w", c.URL, path, err)
	}
	return nil
}

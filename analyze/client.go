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
// Conf is set on the session first (runtime Spark SQL settings only: docs/analyze.md).
type Request struct {
	App       string            `json:"app,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Reads     bool              `json:"reads,omitempty"`
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

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

// Part is a named SQL text: a file to analyze, or schema statements to apply first.
type Part struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// Request is one analysis: Schema parts are applied to the analyzer's own catalog for this
// request only, then every statement of Files is analyzed, in one session of its own. App and
// Namespace name the job of the events (its key is Namespace/App); Reads also turns plain queries
// into events (as the listener's publishReads); Conf is set on the session first.
type Request struct {
	App       string            `json:"app,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Reads     bool              `json:"reads,omitempty"`
	Conf      map[string]string `json:"conf,omitempty"`
	Schema    []Part            `json:"schema,omitempty"`
	Files     []Part            `json:"files,omitempty"`
}

// Response is the analyzer's answer: the schema parts and the files, statement by statement.
type Response struct {
	Schema []File `json:"schema"`
	Files  []File `json:"files"`
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
	OutcomeApplied = "applied" // a schema statement, applied
	OutcomeError   = "error"   // Error holds Spark's message
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
	Applied       *bool             `json:"applied,omitempty"`          // it changed the session or the analyzer's catalog
	NotApplied    string            `json:"notApplied,omitempty"`       // why a defining statement was not applied
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

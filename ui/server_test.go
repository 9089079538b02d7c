package ui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/graph"
)

// fakeReader is a unit-test stand-in for *graph.Reader (the edge cases of the HTTP layer: auth,
// limits, errors). The real reads are tested in package graph and by the browser tests.
type fakeReader struct {
	walk    func(w graph.Walk) (*graph.Subgraph, error)
	block   chan struct{}
	mu      sync.Mutex
	walks   []graph.Walk
	pingErr error
	ctxErr  error // the context error a blocked Search returned
}

func (f *fakeReader) Ping(context.Context) error { return f.pingErr }
func (f *fakeReader) Search(ctx context.Context, q string, limit int) ([]graph.Hit, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			f.mu.Lock()
			f.ctxErr = ctx.Err()
			f.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	return []graph.Hit{{Kind: "column", Key: "k#" + q, Name: q, Match: "exact"}}, nil
}
func (f *fakeReader) Walk(_ context.Context, w graph.Walk) (*graph.Subgraph, error) {
	f.mu.Lock()
	f.walks = append(f.walks, w)
	f.mu.Unlock()
	if f.walk != nil {
		return f.walk(w)
	}
	return &graph.Subgraph{Complete: true}, nil
}
func (f *fakeReader) Dataset(_ context.Context, key string) (*graph.DatasetDetail, error) {
	if key == "none" {
		return nil, graph.ErrNotFound
	}
	return &graph.DatasetDetail{DatasetInfo: graph.DatasetInfo{Key: key}, Columns: []graph.ColumnInfo{{Key: key + "#a"}, {Key: key + "#b"}}}, nil
}
func (f *fakeReader) Column(context.Context, string) (*graph.ColumnDetail, error) {
	return nil, errors.New("Neo.TransientError.Database.DatabaseUnavailable: the secret internals")
}
func (f *fakeReader) Job(context.Context, string, int) (*graph.JobDetail, error) {
	return &graph.JobDetail{}, nil
}
func (f *fakeReader) Run(context.Context, string) (*graph.RunInfo, error) {
	return &graph.RunInfo{}, nil
}
func (f *fakeReader) Runs(_ context.Context, q graph.RunQuery) (*graph.RunSet, error) {
	if q.App == "none" || q.Parent == "none" {
		return nil, graph.ErrNotFound
	}
	return &graph.RunSet{App: q.App, Runs: []graph.RunInfo{{Key: "r1", Job: "ns/app", AppID: q.App, Reads: []string{}, Writes: []string{}}},
		Reads: []string{}, Writes: []string{}, Edges: []graph.Edge{}}, nil
}
func (f *fakeReader) Known(context.Context, []string, []string) (map[string]bool, error) {
	return map[string]bool{}, nil
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			r.Host = hdr[i+1]
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestAuth(t *testing.T) {
	basic := "Basic " + "b3BzOnBhc3N3b3Jk" // ops:password
	token := "0123456789abcdef0123"
	h := New(&fakeReader{}, Params{Auth: Auth{BasicUser: "ops", BasicPassword: "password", Token: token,
		ProxyUserHeader: "X-Forwarded-User", ProxyTrusted: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}})
	for _, tc := range []struct {
		name string
		path string
		hdr  []string
		code int
	}{
		{"no credentials", "/api/search?q=x", nil, 401},
		{"basic", "/api/search?q=x", []string{"Authorization", basic}, 200},
		{"wrong basic", "/api/search?q=x", []string{"Authorization", "Basic b3BzOm5vcGU="}, 401},
		{"bearer", "/api/search?q=x", []string{"Authorization", "Bearer " + token}, 200},
		{"wrong bearer", "/api/search?q=x", []string{"Authorization", "Bearer " + token + "x"}, 401},
		{"token cookie", "/api/search?q=x", []string{"Cookie", tokenCookie + "=" + token}, 200},
		// httptest requests come from 192.0.2.1, inside the trusted network
		{"proxy header from a trusted address", "/api/search?q=x", []string{"X-Forwarded-User", "alice"}, 200},
		{"the page needs it too", "/", nil, 401},
		{"health is open", "/healthz", nil, 200},
		{"the Browser style is open", "/neo4j/colline.grass", nil, 200},
		{"the Browser guide is open", "/neo4j/guide.html", nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w := get(t, h, tc.path, tc.hdr...); w.Code != tc.code {
				t.Errorf("%s: %d %s, want %d", tc.path, w.Code, w.Body, tc.code)
			}
		})
	}
	// a proxy header from outside the trusted networks counts for nothing
	r := httptest.NewRequest(http.MethodGet, "/api/search?q=x", nil)
	r.RemoteAddr = "203.0.113.9:5000"
	r.Header.Set("X-Forwarded-User", "mallory")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"), "Basic") {
		t.Errorf("proxy header from an untrusted address: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// ?token= sets the cookie and drops itself from the address
	w = get(t, h, "/?token="+token+"&x=1")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/?x=1" || !strings.Contains(w.Header().Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("token login: %d %v", w.Code, w.Header())
	}
	if u := get(t, h, "/api/config", "X-Forwarded-User", "alice").Body.String(); !strings.Contains(u, `"user":"alice"`) {
		t.Errorf("config of a proxied user: %s", u)
	}
}

func TestHeadersAndErrors(t *testing.T) {
	f := &fakeReader{}
	h := New(f, Params{})
	w := get(t, h, "/")
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'self'", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
	} {
		if !strings.Contains(w.Header().Get(k), want) {
			t.Errorf("%s = %q, want %q", k, w.Header().Get(k), want)
		}
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/api/lineage", 400, "parameter column or dataset is required"},
		{"/api/lineage?column=a%23b&steps=99", 400, "is not a number in 1..10"},
		{"/api/lineage?column=a%23b&dir=sideways", 400, "is neither up nor down"},
		{"/api/lineage?column=a%23b&asOf=yesterday", 400, "neither a date"},
		{"/api/lineage?dataset=none", 404, "not found"},
		{"/api/search?q=" + strings.Repeat("x", 201), 400, "at most 200"},
		{"/api/column?key=k", 502, "the graph query failed; the explorer's log has the cause"},
		{"/api/runs", 400, "give one of the parameters app"},
		{"/api/runs?app=a&parent=p", 400, "give one of the parameters app"},
		{"/api/runs?app=local-1&limit=0", 400, "is not a number in 1..500"},
		{"/api/runs?parent=airflow/dag.task/", 400, "has no run id after its last slash"},
		{"/api/runs?app=none", 404, "not found"},
		{"/api/runs?app=local-1", 200, `"appId":"local-1"`},
		{"/api/nope", 404, "no API GET /api/nope"},
	} {
		w := get(t, h, tc.path)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s: %d %s, want %d %q", tc.path, w.Code, w.Body, tc.code, tc.body)
		}
		if strings.Contains(w.Body.String(), "secret internals") {
			t.Errorf("%s: the answer shows the database's error: %s", tc.path, w.Body)
		}
	}
	// a table starts a walk from its columns, with the bounds of Params
	get(t, h, "/api/lineage?dataset=ds&dir=down&steps=2&asOf=2026-11-30")
	got := f.walks[len(f.walks)-1]
	if len(got.From) != 2 || got.Direction != graph.Downstream || got.Steps != 2 || got.MaxColumns != DefaultMaxColumns ||
		got.AsOf != time.Date(2026, 11, 30, 23, 59, 59, 999999999, time.UTC) {
		t.Errorf("walk %+v", got)
	}
	if w := httptest.NewRecorder(); true {
		h.ServeHTTP(w, httptest.NewRequest(http.MethodDelete, "/", nil))
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("DELETE /: %d", w.Code)
		}
	}
	f.pingErr = errors.New("dial tcp 10.1.2.3:7687: connection refused")
	if w := get(t, h, "/readyz"); w.Code != 503 || !strings.Contains(w.Body.String(), "neo4j: unreachable") || strings.Contains(w.Body.String(), "10.1.2.3") {
		t.Errorf("readyz with Neo4j down: %d %s; want 503 without the error (an internal address)", w.Code, w.Body)
	}
}

func TestLimits(t *testing.T) {
	f := &fakeReader{block: make(chan struct{})}
	h := New(f, Params{MaxConcurrent: 1, QueryTimeout: 300 * time.Millisecond, MaxBodyBytes: 2048})
	// one request holds the only slot until its query times out; one more waits, then gets 503
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- get(t, h, "/api/search?q=a") }()
	time.Sleep(50 * time.Millisecond)
	if w := get(t, h, "/api/search?q=b"); w.Code != 503 && w.Code != 504 {
		t.Errorf("a request over MaxConcurrent: %d %s", w.Code, w.Body)
	}
	if w := <-done; w.Code != http.StatusGatewayTimeout || !strings.Contains(w.Body.String(), "COLLINE_UI_QUERY_TIMEOUT") {
		t.Errorf("a request over QueryTimeout: %d %s", w.Code, w.Body)
	}
	close(f.block)
	r := httptest.NewRequest(http.MethodPost, "/api/preview", strings.NewReader(strings.Repeat(" ", 4096)))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "COLLINE_UI_MAX_BODY_BYTES") {
		t.Errorf("a body over MaxBodyBytes: %d %s", w.Code, w.Body)
	}
}

func TestImpactCSV(t *testing.T) {
	f := &fakeReader{walk: func(graph.Walk) (*graph.Subgraph, error) {
		return &graph.Subgraph{
			Columns: []graph.ColumnInfo{{Key: "a#x", Dataset: "a", Name: "x"}, {Key: "=cmd|'/c calc'!A1#y", Dataset: "=cmd|'/c calc'!A1", Name: "@y", Distance: 1}},
			Edges:   []graph.Edge{{Kind: graph.Feeds, Source: "a#x", Target: "=cmd|'/c calc'!A1#y", Job: "+job"}},
		}, nil
	}}
	w := get(t, New(f, Params{}), "/api/impact?column=a%23x&format=csv")
	want := "dataset,column,key,distance,jobs\n'=cmd|'/c calc'!A1,'@y,'=cmd|'/c calc'!A1#y,1,'+job\n"
	if w.Code != 200 || w.Body.String() != want || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Errorf("CSV %d %q\nwant %q", w.Code, w.Body, want)
	}
}

// TestPreview: plan events pasted into the SQL panel go through process.Step; a bad one is
// named with the consumer's reason; a skeleton event is drawn with its edges and row deps.
func TestPreview(t *testing.T) {
	h := New(&fakeReader{}, Params{})
	post := func(path, body string) (int, map[string]any) {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out map[string]any
		json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	ev, err := os.ReadFile("../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	code, out := post("/api/preview", string(ev)+"\n{\"schemaVersion\": \"9.0\"}")
	if code != 200 {
		t.Fatalf("preview: %d %v", code, out)
	}
	evs := out["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["job"] != "spark_catalog/colline-spark-sql" || evs[1].(map[string]any)["reason"] == "" {
		t.Errorf("events %v", evs)
	}
	lin := out["lineage"].(map[string]any)
	if n := len(lin["edges"].([]any)); n != 7 {
		t.Errorf("%d edges, want the event's 3 FEEDS and 4 DECIDES_ROWS", n)
	}
	if code, out := post("/api/preview", "not json"); code != 400 || !strings.Contains(out["error"].(string), "not JSON") {
		t.Errorf("not JSON: %d %v", code, out)
	}
	if code, out := post("/api/sql", `{"sql": "SELECT 1"}`); code != http.StatusNotImplemented || !strings.Contains(out["error"].(string), "COLLINE_UI_ANALYZER_URL") {
		t.Errorf("SQL without an analyzer: %d %v", code, out)
	}
}

// TestAnalyzerClient: the SQL panel speaks the analyzer's API (POST /v1/analyze, docs/analyze.md)
// against a stand-in answering as the real one does (e2e TestUISQLPanel runs the real one).
func TestAnalyzerClient(t *testing.T) {
	ev, _ := os.ReadFile("../plan/testdata/spark-3.5/skeleton/0004-8-InsertIntoHadoopFsRelationCommand.json")
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req analyze.Request
		json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/v1/analyze" || r.Method != http.MethodPost || len(req.Files) != 1 {
			http.Error(w, `{"error": "bad request"}`, 400)
			return
		}
		st := analyze.Statement{Index: 1, Line: 1, Column: 1, Outcome: analyze.OutcomeEvent, Events: []json.RawMessage{ev}}
		if strings.Contains(req.Files[0].SQL, "SELEC ") {
			st = analyze.Statement{Index: 1, Line: 1, Column: 1, Outcome: analyze.OutcomeError,
				Error: &analyze.Error{Stage: "parse", Message: "[PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'", Line: 1, Column: 0}}
		}
		json.NewEncoder(w).Encode(analyze.Response{Files: []analyze.File{{Name: req.Files[0].Name, Statements: []analyze.Statement{st}}}})
	}))
	defer svc.Close()
	a := ServiceAnalyzer{Client: &analyze.Client{URL: svc.URL}}
	got, err := a.Analyze(context.Background(), "INSERT INTO t SELECT 1", "spark")
	if err != nil || !strings.HasSuffix(string(got.Events), "}\n") || !strings.Contains(string(got.Events), "top_countries") ||
		len(got.Statements) != 1 || got.Statements[0].Outcome != analyze.OutcomeEvent {
		t.Errorf("Analyze = %+v, %v; want the event and a newline, and the statement", got, err)
	}
	var se *SQLError
	if _, err := a.Analyze(context.Background(), "SELEC 1", "spark"); !errors.As(err, &se) || se.Line != 1 || se.Column != 0 ||
		!strings.Contains(err.Error(), "line 1, column 0: (parse) [PARSE_SYNTAX_ERROR]") {
		t.Errorf("a parse error: %v", err)
	}
	h := New(&fakeReader{}, Params{Analyzer: a})
	r := httptest.NewRequest(http.MethodPost, "/api/sql", strings.NewReader(`{"sql": "INSERT INTO t SELECT 1"}`))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "spark_catalog/shop.top_countries#revenue") {
		t.Errorf("/api/sql through the analyzer: %d %s", w.Code, w.Body)
	}
}

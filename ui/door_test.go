package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colline/colline/guard"
	"github.com/colline/colline/guard/probe"
)

// Issue 29's findings on the explorer, each first reproduced as a request that got data or was
// taken, now refused: the answers below are what the explorer gives today.

// TestDNSRebinding: a web page that points its own name at 127.0.0.1 makes the browser send
// "Host: attacker.example"; the explorer on loopback (Hosts: guard.Loopback, as `colline ui`
// sets them there) refuses every such request before it reads anything, and serves its own names.
func TestDNSRebinding(t *testing.T) {
	h := New(&fakeReader{}, Params{Hosts: guard.Loopback})
	for _, path := range []string{"/api/config", "/api/search?q=orders", "/api/tags/reach?tag=pii", "/api/tags/columns?column=a%23x", "/", "/neo4j/guide.html"} {
		w := get(t, h, path, "Host", "attacker.example:7480")
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `does not answer to the name \"attacker.example:7480\"`) || strings.Contains(w.Body.String(), "orders") {
			t.Errorf("%s with Host attacker.example: %d %s, want 403", path, w.Code, w.Body)
		}
	}
	for _, host := range []string{"127.0.0.1:7480", "localhost:7480", "[::1]:7480"} {
		if w := get(t, h, "/api/search?q=orders", "Host", host); w.Code != 200 {
			t.Errorf("Host %s: %d %s", host, w.Code, w.Body)
		}
	}
	if w := get(t, h, "/healthz", "Host", "10.0.0.5:7480"); w.Code != 200 {
		t.Errorf("a probe by address: %d", w.Code)
	}
}

// TestCrossSiteRequests: a page of another origin can neither post to the API with the browser's
// credentials (a form's text/plain or urlencoded body, or a fetch) nor read it; the explorer's own
// page can.
func TestCrossSiteRequests(t *testing.T) {
	a := &stubAnalyzer{}
	h := New(&fakeReader{}, Params{Analyzer: a, Auth: Auth{BasicUser: "ops", BasicPassword: "password"}})
	basic := "Basic b3BzOnBhc3N3b3Jk" // ops:password
	do := func(method, path, ctype, body string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1:7480"+path, strings.NewReader(body))
		r.Header.Set("Authorization", basic) // the browser sends cached basic credentials along
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	sql := `{"sql": "SELECT 1"}`
	for _, tc := range []struct {
		name         string
		method, path string
		ctype        string
		hdr          []string
		code         int
	}{
		{"a cross-site form post, text/plain (the issue's finding)", "POST", "/api/sql", "text/plain", []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}, 403},
		{"a form post, text/plain, same origin", "POST", "/api/sql", "text/plain", []string{"Sec-Fetch-Site", "same-origin"}, 415},
		{"a form post without browser headers, text/plain", "POST", "/api/sql", "text/plain", nil, 415},
		{"a form post, urlencoded", "POST", "/api/sql", "application/x-www-form-urlencoded", nil, 415},
		{"no Content-Type", "POST", "/api/preview", "", nil, 415},
		{"a cross-site fetch with JSON", "POST", "/api/sql", "application/json", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"an old browser's cross-origin fetch (Origin only)", "POST", "/api/sql", "application/json", []string{"Origin", "https://attacker.example"}, 403},
		{"a cross-site read", "GET", "/api/search?q=x", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"a cross-site read of a tag's reach", "GET", "/api/tags/reach?tag=pii", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"a cross-origin read of a column's tags (Origin only)", "GET", "/api/tags/columns?column=a%23x", "", []string{"Origin", "https://attacker.example"}, 403},
		{"the page's own post", "POST", "/api/sql", "application/json", []string{"Sec-Fetch-Site", "same-origin", "Origin", "http://127.0.0.1:7480"}, 200},
		{"the page's own read", "GET", "/api/search?q=x", "", []string{"Sec-Fetch-Site", "same-origin"}, 200},
		{"a script (no browser headers)", "POST", "/api/sql", "application/json", nil, 200},
		{"a link to the page from another site", "GET", "/", "", []string{"Sec-Fetch-Site", "cross-site"}, 200},
	} {
		w := do(tc.method, tc.path, tc.ctype, sql, tc.hdr...)
		if w.Code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.code)
		}
	}
	if a.calls != 2 {
		t.Errorf("the analyzer was called %d times, want 2 (the allowed posts only)", a.calls)
	}
}

type stubAnalyzer struct {
	mu    sync.Mutex
	calls int
	block bool
	ended chan error
}

func (a *stubAnalyzer) Analyze(ctx context.Context, sql, dialect string) (*Analysis, error) {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	if a.block {
		<-ctx.Done()
		a.ended <- ctx.Err()
		return nil, ctx.Err()
	}
	ev, err := os.ReadFile("../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	return &Analysis{Events: ev}, err
}

// TestLoginThrottle: ten wrong passwords from one address, then that address is refused (429
// with Retry-After) even with the right one; another address is not.
func TestLoginThrottle(t *testing.T) {
	h := New(&fakeReader{}, Params{Auth: Auth{BasicUser: "ops", BasicPassword: "password", Token: "0123456789abcdef0123"}})
	from := func(addr, auth string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/api/config", nil)
		r.RemoteAddr = addr
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for k := range 20 { // first visits without credentials are no guesses
		if w := from("203.0.113.5:1000", ""); w.Code != 401 {
			t.Fatalf("visit %d without credentials: %d", k, w.Code)
		}
	}
	for k := range guard.DefaultFailures {
		if w := from("203.0.113.5:1000", "Basic b3BzOmd1ZXNz"); w.Code != 401 { // ops:guess
			t.Fatalf("guess %d: %d", k, w.Code)
		}
	}
	w := from("203.0.113.5:1000", "Basic b3BzOnBhc3N3b3Jk") // the right one, too late
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "too many failed logins") {
		t.Errorf("after %d failures: %d %v %s, want 429", guard.DefaultFailures, w.Code, w.Header(), w.Body)
	}
	if w := from("203.0.113.6:1000", "Bearer 0123456789abcdef0123"); w.Code != 200 {
		t.Errorf("another address: %d", w.Code)
	}
}

// serve runs the explorer's own server (Params.Server, over real TCP) with short timeouts.
func serve(t *testing.T, r Reader, p Params) string {
	t.Helper()
	p.Timeouts = guard.Timeouts{Header: 300 * time.Millisecond, Read: 800 * time.Millisecond, Handle: 2 * time.Second, MaxHeaderBytes: 8 << 10}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p.Server(ln.Addr().String(), New(r, p))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestNoClientHoldsTheExplorer: clients dripping their headers or bodies, more of them than the
// explorer serves at once, idle connections by the hundred, oversized headers and bodies, deep
// JSON and a request that keeps Neo4j busy: each gets an answer (or its connection closed) in
// bounded time, and meanwhile and afterwards an ordinary request is served at once.
func TestNoClientHoldsTheExplorer(t *testing.T) {
	f := &fakeReader{}
	a := &stubAnalyzer{}
	const maxConc = 2
	addr := serve(t, f, Params{MaxConcurrent: maxConc, MaxBodyBytes: 4096, QueryTimeout: 300 * time.Millisecond, Analyzer: a})
	ordinary := func(what string) {
		t.Helper()
		start := time.Now()
		resp, err := http.Get("http://" + addr + "/api/search?q=orders")
		if err != nil {
			t.Fatalf("%s: an ordinary request: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 200 || took > 500*time.Millisecond {
			t.Errorf("%s: an ordinary request got %d after %v, want 200 at once", what, resp.StatusCode, took)
		}
	}
	json := "Content-Type: application/json\r\n"
	var wg sync.WaitGroup
	results := make(chan string, 64)
	attack := func(name string, limit time.Duration, f func() probe.Result) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f()
			if r.Held > limit {
				results <- fmt.Sprintf("%s: %v, want an end within %v", name, r, limit)
			}
		}()
	}
	for k := range 2 * maxConc {
		attack(fmt.Sprintf("headers dripped in #%d", k), 2*time.Second, func() probe.Result {
			return probe.DripHeaders(addr, "/api/search?q=x", 50*time.Millisecond, 10*time.Second)
		})
		attack(fmt.Sprintf("a body dripped in #%d", k), 2*time.Second, func() probe.Result {
			return probe.DripBody(addr, "POST", "/api/preview", json, 2000, 50*time.Millisecond, 10*time.Second)
		})
	}
	closeIdle := probe.Idle(addr, 200)
	time.Sleep(200 * time.Millisecond)
	ordinary("while 4 clients drip headers, 4 drip bodies and 200 connections idle")
	// a body beyond the places to read one: refused at once
	if code, took := probe.Send(addr, "POST /api/preview HTTP/1.1\r\nHost: x\r\n"+json+"Content-Length: 2\r\n\r\n[]", 5*time.Second); code != 503 || took > time.Second {
		t.Errorf("a fifth body while four drip: %d after %v, want 503 at once", code, took)
	}
	wg.Wait()
	closeIdle()
	close(results)
	for r := range results {
		t.Error(r)
	}
	ordinary("after the slow clients")

	for _, tc := range []struct {
		name string
		raw  string
		code int
	}{
		{"oversized headers", "GET /api/config HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"an oversized body", "POST /api/preview HTTP/1.1\r\nHost: x\r\n" + json + "Content-Length: 5000\r\n\r\n" + strings.Repeat(" ", 5000), http.StatusRequestEntityTooLarge},
		{"deep JSON to /api/preview", "POST /api/preview HTTP/1.1\r\nHost: x\r\n" + json + "Content-Length: 4000\r\n\r\n" + strings.Repeat("[", 4000), http.StatusBadRequest},
		{"deep JSON to /api/sql", "POST /api/sql HTTP/1.1\r\nHost: x\r\n" + json + "Content-Length: 4000\r\n\r\n{\"sql\":" + strings.Repeat("[", 3993), http.StatusBadRequest},
	} {
		if code, took := probe.Send(addr, tc.raw, 5*time.Second); code != tc.code || took > time.Second {
			t.Errorf("%s: %d after %v, want %d at once", tc.name, code, took, tc.code)
		}
	}
	ordinary("after oversized and deep requests")

	// work that would run long, in Neo4j and in the analyzer: the request's deadline ends it
	f.block = make(chan struct{})
	start := time.Now()
	resp, err := http.Get("http://" + addr + "/api/search?q=slow")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout || took > time.Second {
		t.Errorf("a search Neo4j works on for long: %d after %v, want 504 after the query timeout (300ms)", resp.StatusCode, took)
	}
	if err := f.lastCtxErr(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the graph read's context ended with %v, want DeadlineExceeded (the Neo4j transaction gets the same deadline)", err)
	}
	close(f.block)
	f.block = nil
	a.block, a.ended = true, make(chan error, 1)
	start = time.Now()
	resp, err = http.Post("http://"+addr+"/api/sql", "application/json", strings.NewReader(`{"sql": "SELECT 1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode >= 200 && resp.StatusCode < 300 || took > time.Second {
		t.Errorf("SQL the analyzer works on for long: %d after %v, want an error after the query timeout", resp.StatusCode, took)
	}
	if err := <-a.ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the analyzer call's context ended with %v, want DeadlineExceeded", err)
	}
	ordinary("after long work")
}

// the context error the blocked Search saw last
func (f *fakeReader) lastCtxErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctxErr
}

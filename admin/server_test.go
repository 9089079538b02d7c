package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/colline/colline/guard/probe"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHandler(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	RegisterBuildInfo(reg, "1.2.3")
	var neo4jErr error
	var logs bytes.Buffer
	h := Handler(reg, slog.New(slog.NewTextHandler(&logs, nil)),
		Check{Name: "loop", Fn: func(context.Context) error { return nil }},
		Check{Name: "neo4j", Fn: func(context.Context) error { return neo4jErr }},
	)

	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	time.Sleep(readyFor) // the answer is reused for readyFor
	// issue 29: /readyz printed "neo4j: dial tcp 10.1.2.3:7687: connection refused" to whoever asked
	neo4jErr = errors.New("dial tcp 10.1.2.3:7687: connection refused")
	if code, body := get(t, h, "/readyz"); code != 503 || body != "neo4j: not ready\n(the consumer's log has the errors)\n" {
		t.Errorf("/readyz = %d %q, want 503 naming the failing check, without its error", code, body)
	}
	time.Sleep(readyFor)
	neo4jErr = stateErr{"slow write", "slow write: a batch of 3 events has been writing to Neo4j at 10.1.2.3 for 42s"}
	if code, body := get(t, h, "/readyz"); code != 503 || body != "neo4j: slow write\n(the consumer's log has the errors)\n" {
		t.Errorf("/readyz = %d %q, want 503 with the check's state", code, body)
	}
	if !strings.Contains(logs.String(), "dial tcp 10.1.2.3:7687: connection refused") {
		t.Errorf("the log lacks the check's error: %s", logs.String())
	}
	code, body := get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, `colline_build_info{goversion="go`) || !strings.Contains(body, `version="1.2.3"} 1`) {
		t.Errorf("/metrics = %d\n%s", code, body)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestNoClientHoldsTheAdminServer: over real TCP, with the admin server's own timeouts (5 s for
// headers), clients dripping headers are cut off, 200 idle connections and oversized headers change
// nothing, and 50 clients asking /readyz at once while a dependency does not answer cost one round
// of checks (one Kafka dial, not 50), answered within the checks' timeout, while /metrics is served.
func TestNoClientHoldsTheAdminServer(t *testing.T) {
	var rounds atomic.Int32
	slow := Check{Name: "kafka", Fn: func(ctx context.Context) error {
		rounds.Add(1)
		select { // a dependency that does not answer: the check's own deadline ends it
		case <-time.After(time.Minute):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	reg := prometheus.NewPedanticRegistry()
	RegisterBuildInfo(reg, "1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", Handler(reg, nil, slow), nil)
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	if code, took := probe.Send(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 32<<10)+"\r\n\r\n", 5*time.Second); code != 431 || took > time.Second {
		t.Errorf("oversized headers: %d after %v, want 431", code, took)
	}
	closeIdle := probe.Idle(addr, 200)
	defer closeIdle()
	var wg sync.WaitGroup
	drips := make(chan probe.Result, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drips <- probe.DripHeaders(addr, "/metrics", 100*time.Millisecond, 20*time.Second)
		}()
	}
	codes := make(chan string, 50)
	start := time.Now()
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				codes <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codes <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		}()
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/metrics while 50 ask /readyz: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	wg.Wait()
	close(codes)
	close(drips)
	answers := map[string]int{}
	for c := range codes {
		answers[c]++
	}
	if took := time.Since(start); took > 2*checkTimeout+time.Second || rounds.Load() > 2 {
		t.Errorf("50 /readyz: %v in %v with %d rounds of checks; want bounded answers from one round", answers, took, rounds.Load())
	}
	for a := range answers {
		if !strings.HasPrefix(a, "503 kafka: not ready") {
			t.Errorf("a /readyz answer %q", a)
		}
	}
	for r := range drips {
		if r.Status != 0 && r.Status != 400 || r.Held > 6*time.Second {
			t.Errorf("headers dripped in: %v, want the connection ended after 5 s", r)
		}
	}
}

// stateErr is an error with a state safe to show (as ingest's Ready errors).
type stateErr struct{ status, text string }

func (e stateErr) Error() string  { return e.text }
func (e stateErr) Status() string { return e.status }

package intake

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/guard"
	"github.com/colline/colline/guard/probe"
)

// slowPublisher waits for its context when hold is set (Kafka that does not acknowledge).
type slowPublisher struct {
	fakePublisher
	mu    sync.Mutex
	hold  bool
	ended error
}

func (p *slowPublisher) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	p.mu.Lock()
	hold := p.hold
	p.mu.Unlock()
	if hold {
		<-ctx.Done()
		p.mu.Lock()
		p.ended = ctx.Err()
		p.mu.Unlock()
		return ctx.Err()
	}
	return p.fakePublisher.WriteMessages(ctx, msgs...)
}

// TestNoClientHoldsTheIntake: producers dripping headers or bodies, more of them than the endpoint
// handles at once, idle connections by the hundred, oversized headers and bodies, deep JSON, and
// Kafka that does not acknowledge: each gets an answer (or its connection closed) in bounded
// time, and an ordinary producer is served meanwhile and afterwards. A client without a key is
// refused before its body is read.
func TestNoClientHoldsTheIntake(t *testing.T) {
	pub := &slowPublisher{}
	key := "producer-key-0123456789"
	const maxConc = 2
	h := &Handler{Step: step(t), Publisher: pub, APIKey: key, MaxBytes: 64 << 10, MaxConcurrent: maxConc, PublishTimeout: 300 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.Server(ln.Addr().String(), guard.Timeouts{Header: 300 * time.Millisecond, Read: 800 * time.Millisecond, Handle: 2 * time.Second, MaxHeaderBytes: 8 << 10}, nil)
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	ev := captured(t)
	auth := "Authorization: Bearer " + key + "\r\nContent-Type: application/json\r\n"
	ordinary := func(what string) {
		t.Helper()
		start := time.Now()
		req, _ := http.NewRequest("POST", "http://"+addr+Path, bytes.NewReader(ev))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: an ordinary event: %v", what, err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 201 || took > 500*time.Millisecond {
			t.Errorf("%s: an ordinary event got %d after %v, want 201 at once", what, resp.StatusCode, took)
		}
	}
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	attack := func(name string, limit time.Duration, f func() probe.Result) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := f(); r.Held > limit {
				bad <- fmt.Sprintf("%s: %v, want an end within %v", name, r, limit)
			}
		}()
	}
	drip := func(k int) {
		attack(fmt.Sprintf("a body dripped in #%d", k), 2*time.Second, func() probe.Result {
			return probe.DripBody(addr, "POST", Path, auth, 2000, 50*time.Millisecond, 10*time.Second)
		})
	}
	for k := range 2 * maxConc {
		attack(fmt.Sprintf("headers dripped in #%d", k), 2*time.Second, func() probe.Result {
			return probe.DripHeaders(addr, Path, 50*time.Millisecond, 10*time.Second)
		})
	}
	for k := range 2*maxConc - 1 {
		drip(k)
	}
	closeIdle := probe.Idle(addr, 200)
	time.Sleep(200 * time.Millisecond)
	ordinary("while 4 producers drip headers, 3 drip bodies (more than MaxConcurrent) and 200 connections idle")
	// every place to read a body in taken (2×MaxConcurrent): the next producer is told at once to
	// come back (503, Retry-After), until the slow bodies are cut off (BodyGrace, the read timeout)
	drip(2*maxConc - 1)
	time.Sleep(100 * time.Millisecond)
	if code, took := probe.Send(addr, "POST "+Path+" HTTP/1.1\r\nHost: x\r\n"+auth+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(ev))+string(ev), 5*time.Second); code != 503 || took > 300*time.Millisecond {
		t.Errorf("a body while 4 drip: %d after %v, want 503 at once", code, took)
	}
	// without a key, a body is never read: 401 at once, however slowly it would come
	if r := probe.DripBody(addr, "POST", Path, "Content-Type: application/json\r\n", 2000, 50*time.Millisecond, 10*time.Second); r.Status != 401 || r.Held > 300*time.Millisecond {
		t.Errorf("a body without a key: %v, want 401 at once", r)
	}
	wg.Wait()
	closeIdle()
	close(bad)
	for b := range bad {
		t.Error(b)
	}
	ordinary("after the slow clients")
	for _, tc := range []struct {
		name string
		raw  string
		code int
	}{
		{"oversized headers", "POST " + Path + " HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"an oversized body", "POST " + Path + " HTTP/1.1\r\nHost: x\r\n" + auth + fmt.Sprintf("Content-Length: %d\r\n\r\n", 70<<10) + strings.Repeat(" ", 70<<10), http.StatusRequestEntityTooLarge},
		{"deep JSON", "POST " + Path + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 20000\r\n\r\n" + strings.Repeat("[", 20000), http.StatusBadRequest},
	} {
		if code, took := probe.Send(addr, tc.raw, 5*time.Second); code != tc.code || took > time.Second {
			t.Errorf("%s: %d after %v, want %d at once", tc.name, code, took, tc.code)
		}
	}
	ordinary("after oversized and deep requests")
	// Kafka that does not acknowledge: 503 with Retry-After after PublishTimeout, the publish ended
	pub.mu.Lock()
	pub.hold = true
	pub.mu.Unlock()
	start := time.Now()
	req, _ := http.NewRequest("POST", "http://"+addr+Path, bytes.NewReader(ev))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || took > time.Second {
		t.Errorf("Kafka not acknowledging: %d after %v, want 503 with Retry-After after 300ms", resp.StatusCode, took)
	}
	pub.mu.Lock()
	pub.hold = false
	ended := pub.ended
	pub.mu.Unlock()
	if ended != context.DeadlineExceeded {
		t.Errorf("the publish's context ended with %v, want its deadline", ended)
	}
	ordinary("after Kafka came back")
}

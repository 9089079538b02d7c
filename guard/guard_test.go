package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colline/colline/guard/probe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"s3cret-token", "s3cret-token", true}, {"s3cret-token", "s3cret-tokeN", false}, {"", "x", false}, {"x", "xx", false}, {"", "", true}} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestHosts(t *testing.T) {
	hs := Hosts(append(append([]string{}, Loopback...), "lineage.example.com"))
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:7480", true}, {"localhost:7480", true}, {"LOCALHOST", true}, {"[::1]:7480", true}, {"::1", true},
		{"lineage.example.com", true}, {"lineage.example.com.:443", true},
		{"attacker.example", false}, {"attacker.example:7480", false}, {"127.0.0.2:7480", false}, {"", false},
		{"localhost.attacker.example", false}, {"[::2]:7480", false},
	} {
		if got := hs.Allow(tc.host); got != tc.want {
			t.Errorf("Allow(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
	if !Hosts(nil).Allow("anything:1") {
		t.Error("no hosts configured must allow any")
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "attacker.example:7480"
	if err := hs.Check(r); err == nil || !strings.Contains(err.Error(), `"attacker.example:7480"`) {
		t.Errorf("Check = %v", err)
	}
}

func TestCrossOrigin(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		hdr          map[string]string
		ok           bool
	}{
		{"no browser headers (curl)", "GET", nil, true},
		{"same origin read", "GET", map[string]string{"Sec-Fetch-Site": "same-origin"}, true},
		{"typed in the address bar", "GET", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"cross-site read", "GET", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"same-site read (a sibling subdomain)", "GET", map[string]string{"Sec-Fetch-Site": "same-site"}, false},
		{"cross-site form post", "POST", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"}, false},
		{"an old browser's cross-origin post (Origin only)", "POST", map[string]string{"Origin": "https://attacker.example"}, false},
		{"an old browser's same-origin post", "POST", map[string]string{"Origin": "http://example.com"}, true},
		{"an old browser's cross-origin read", "GET", map[string]string{"Origin": "http://attacker.example"}, false},
	} {
		r := httptest.NewRequest(tc.method, "http://example.com/api/x", nil)
		for k, v := range tc.hdr {
			r.Header.Set(k, v)
		}
		if err := CrossOrigin(r); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
		if r.Method != tc.method {
			t.Errorf("%s: the request's method changed to %s", tc.name, r.Method)
		}
	}
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

// TestLimiter: Max requests run at once; one more waits, then gets 503 with Retry-After; a body
// is read before a slot is taken, and a body over MaxBytes reaches the handler as a
// MaxBytesError.
func TestLimiter(t *testing.T) {
	release := make(chan struct{})
	var running sync.WaitGroup
	h := NewLimiter(Limit{Max: 2, Wait: 100 * time.Millisecond, MaxBytes: 16, Setting: "X_MAX", Refuse: refuse}).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			w.WriteHeader(413)
			return
		case string(b) == "hold":
			running.Done()
			<-release
		}
		w.Write(b)
	}))
	do := func(body string) *httptest.ResponseRecorder {
		var r *http.Request
		if body == "" {
			r = httptest.NewRequest("GET", "/", nil)
		} else {
			r = httptest.NewRequest("POST", "/", strings.NewReader(body))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	running.Add(2)
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- do("hold").Code }()
	}
	running.Wait()
	w := do("")
	if w.Code != 503 || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "busy: 2 requests in progress (X_MAX); retry") {
		t.Errorf("a third request: %d %v %s", w.Code, w.Header(), w.Body)
	}
	close(release)
	for range 2 {
		if c := <-done; c != 200 {
			t.Errorf("a held request ended with %d", c)
		}
	}
	if w := do("echo"); w.Code != 200 || w.Body.String() != "echo" {
		t.Errorf("after: %d %q", w.Code, w.Body)
	}
	if w := do(strings.Repeat("x", 17)); w.Code != 413 {
		t.Errorf("a body over MaxBytes: %d", w.Code)
	}
}

// TestLimiterBodiesHoldNoSlot: requests whose bodies have not arrived take no slot (a GET is
// served while they wait), and once 2×Max bodies are being read, one more gets 503 at once.
func TestLimiterBodiesHoldNoSlot(t *testing.T) {
	h := NewLimiter(Limit{Max: 1, Wait: 50 * time.Millisecond, MaxBytes: 1 << 20, Refuse: refuse}).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	var writers []*io.PipeWriter
	done := make(chan int, 2)
	for range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		go func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/", pr))
			done <- w.Code
		}()
	}
	time.Sleep(50 * time.Millisecond) // both are reading their bodies now
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 {
		t.Errorf("a GET while 2 bodies drip in: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", bytes.NewReader([]byte("x"))))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "2 request bodies being read") {
		t.Errorf("a third body: %d %s", w.Code, w.Body)
	}
	for _, pw := range writers {
		pw.Write([]byte("done"))
		pw.Close()
	}
	for range 2 {
		if c := <-done; c != 200 {
			t.Errorf("a dripped body ended with %d", c)
		}
	}
	// a body that stops arriving (the server's read timeout) gets 408
	pr, pw := io.Pipe()
	pw.CloseWithError(errors.New("i/o timeout"))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", pr))
	if w.Code != 408 {
		t.Errorf("a body cut off: %d %s", w.Code, w.Body)
	}
}

func TestThrottle(t *testing.T) {
	now := time.Unix(1000, 0)
	th := &Throttle{Failures: 3, Per: 30 * time.Second, now: func() time.Time { return now }}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "198.51.100.7:4000"
	other := httptest.NewRequest("GET", "/", nil)
	other.RemoteAddr = "198.51.100.8:4000"
	v6a, v6b := httptest.NewRequest("GET", "/", nil), httptest.NewRequest("GET", "/", nil)
	v6a.RemoteAddr, v6b.RemoteAddr = "[2001:db8:1:2::1]:1", "[2001:db8:1:2::ffff]:1"
	for range 3 {
		if th.Wait(r) != 0 {
			t.Fatal("throttled before 3 failures")
		}
		th.Fail(r)
	}
	if w := th.Wait(r); w != 10*time.Second {
		t.Errorf("after 3 failures: wait %v, want 10s (one try per 30s/3)", w)
	}
	if th.Wait(other) != 0 {
		t.Error("another address is throttled too")
	}
	rec := httptest.NewRecorder()
	if !th.Refused(rec, r, refuse) || rec.Code != 429 || rec.Header().Get("Retry-After") != "10" {
		t.Errorf("Refused: %d %v", rec.Code, rec.Header())
	}
	now = now.Add(10 * time.Second)
	if th.Wait(r) != 0 {
		t.Error("still throttled after the refill time")
	}
	for range 3 {
		th.Fail(v6a)
	}
	if th.Wait(v6b) == 0 {
		t.Error("an address of the same IPv6 /64 is not throttled with it")
	}
}

// TestBodyMinRate: over real TCP, with a read timeout of 10 s, a body dripped in at 20 bytes a
// second is cut off after BodyGrace (408), while a body sent whole is served; the server answers
// a refusal made before the body is read at once (Refusing).
func TestBodyMinRate(t *testing.T) {
	lm := NewLimiter(Limit{Max: 1, MaxBytes: 1 << 20, Read: 10 * time.Second, Refuse: refuse})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			Refusing(w, r)
			refuse(w, 401, "no")
			return
		}
		lm.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) })).ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server("", h, Timeouts{Read: 10 * time.Second}, nil)
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	r := probe.DripBody(addr, "POST", "/", "", 1000, 50*time.Millisecond, 10*time.Second)
	if r.Status != 408 || r.Held < BodyGrace || r.Held > BodyGrace+time.Second {
		t.Errorf("a body dripped in: %v, want 408 after about %v", r, BodyGrace)
	}
	if code, took := probe.Send(addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 5*time.Second); code != 200 || took > time.Second {
		t.Errorf("a body sent whole: %d after %v", code, took)
	}
	r = probe.DripBody(addr, "POST", "/refuse", "", 1000, 50*time.Millisecond, 10*time.Second)
	if r.Status != 401 || r.Held > 500*time.Millisecond {
		t.Errorf("refused before the body: %v, want 401 at once", r)
	}
}

package intake

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/guard"
	"github.com/colline/colline/ingest"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/process"
)

// fakePublisher records messages, or fails (a fake for the edge cases; the real path is below).
type fakePublisher struct {
	mu   sync.Mutex
	msgs []kafka.Message
	err  error
}

func (f *fakePublisher) WriteMessages(_ context.Context, msgs ...kafka.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.msgs = append(f.msgs, msgs...)
	return nil
}

// step is the step of the tests: the spec's validator, the default limits.
func step(t *testing.T) Step {
	t.Helper()
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return Step{Validator: v}
}

// captured is a COMPLETE event dbt-ol emitted (openlineage/testdata/dbt), with a parent facet.
func captured(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../testdata/dbt/dbt-openlineage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(data, []byte("\n"))[6]
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestHandler(t *testing.T) {
	ev := captured(t)
	for _, tc := range []struct {
		name     string
		method   string
		header   map[string]string
		body     []byte
		fail     error
		code     int
		reason   string // of a 400
		message  string // prefix of the error message
		result   string
		accepted bool
	}{
		{name: "accepted", body: ev, header: map[string]string{"Authorization": "Bearer k3y"}, code: 201, result: ResultAccepted, accepted: true},
		{name: "gzip", body: gz(ev), header: map[string]string{"Authorization": "Bearer k3y", "Content-Encoding": "gzip"}, code: 201, result: ResultAccepted, accepted: true},
		{name: "no key", body: ev, code: 401, result: ResultUnauthorized, message: "a valid Authorization: Bearer"},
		{name: "wrong key", body: ev, header: map[string]string{"Authorization": "Bearer nope"}, code: 401, result: ResultUnauthorized, message: "a valid Authorization"},
		{name: "GET", method: "GET", code: 405, result: ResultMethod, message: "only POST"},
		{name: "not JSON content", body: ev, header: map[string]string{"Authorization": "Bearer k3y", "Content-Type": "text/plain"}, code: 415, result: ResultMediaType, message: `Content-Type "text/plain"`},
		// a browser's form can post without Content-Type (issue 29: it was taken)
		{name: "no Content-Type", body: ev, header: map[string]string{"Authorization": "Bearer k3y", "Content-Type": ""}, code: 415, result: ResultMediaType, message: `Content-Type "": want application/json`},
		{name: "a web page's cross-site post", body: ev, header: map[string]string{"Authorization": "Bearer k3y", "Sec-Fetch-Site": "cross-site"}, code: 403, result: ResultForbidden, message: "a cross-origin request"},
		{name: "invalid event", body: bytes.Replace(ev, []byte(`"eventTime"`), []byte(`"when"`), 1), header: map[string]string{"Authorization": "Bearer k3y"},
			code: 400, reason: process.ReasonInvalidOpenLineage, result: ResultInvalid, message: "openlineage: invalid RunEvent: /: missing property 'eventTime'"},
		{name: "not JSON", body: []byte("{"), header: map[string]string{"Authorization": "Bearer k3y"}, code: 400, reason: process.ReasonInvalidJSON, result: ResultInvalid, message: "openlineage: not JSON"},
		{name: "too large", body: append(append([]byte{}, ev...), bytes.Repeat([]byte(" "), 64<<10)...), header: map[string]string{"Authorization": "Bearer k3y"},
			code: 413, reason: process.ReasonTooLarge, result: ResultTooLarge, message: "the event is larger than 65536 bytes"},
		{name: "gzip bomb", body: gz(bytes.Repeat([]byte(" "), 1<<20)), header: map[string]string{"Authorization": "Bearer k3y", "Content-Encoding": "gzip"},
			code: 413, reason: process.ReasonTooLarge, result: ResultTooLarge, message: "the event is larger than"},
		{name: "Kafka down", body: ev, header: map[string]string{"Authorization": "Bearer k3y"}, fail: errors.New("dial tcp: connection refused"),
			code: 503, result: ResultUnavailable, message: "the event could not be stored now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub := &fakePublisher{err: tc.fail}
			m := NewMetrics(nil)
			h := &Handler{Step: step(t), Publisher: pub, APIKey: "k3y", MaxBytes: 64 << 10, Metrics: m}
			method := tc.method
			if method == "" {
				method = "POST"
			}
			req := httptest.NewRequest(method, Path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				if v == "" {
					req.Header.Del(k)
					continue
				}
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Fatalf("code %d (%s), want %d", rec.Code, rec.Body, tc.code)
			}
			if got := testutil.ToFloat64(m.requests.WithLabelValues(tc.result)); got != 1 {
				t.Errorf("requests{result=%s} = %v, want 1", tc.result, got)
			}
			if tc.accepted {
				if rec.Body.Len() != 0 || len(pub.msgs) != 1 || !bytes.Equal(pub.msgs[0].Value, ev) ||
					string(pub.msgs[0].Key) != "run:colline-dev/dbt-run-shop" {
					t.Errorf("body %q, published %d: %+v", rec.Body, len(pub.msgs), pub.msgs)
				}
				return
			}
			var e Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code != tc.code || e.Reason != tc.reason || !strings.HasPrefix(e.Message, tc.message) {
				t.Errorf("answer %s (%v), want code %d reason %q message %q...", rec.Body, err, tc.code, tc.reason, tc.message)
			}
			if len(pub.msgs) != 0 {
				t.Errorf("published %d messages, want none", len(pub.msgs))
			}
			if tc.code == 503 && rec.Header().Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
		})
	}
}

// The real path: the endpoint on a real HTTP server publishes to a real topic, where the bytes
// posted are, keyed by job.
func TestHandlerPublishesToKafka(t *testing.T) {
	k := stack.TestKafka(t)
	topic, _, _ := k.TestTopics(t, "intake", 1, 0)
	pub := ingest.NewProducer(k.Brokers, topic, 0, nil)
	defer pub.Close()
	srv := httptest.NewServer((&Handler{Step: step(t), Publisher: pub}).Server("", guard.Timeouts{}, nil).Handler)
	defer srv.Close()
	ev := captured(t)
	resp, err := http.Post(srv.URL+Path, "application/json", bytes.NewReader(ev))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: k.Brokers, Topic: topic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	m, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Value, ev) || string(m.Key) != "run:colline-dev/dbt-run-shop" {
		t.Errorf("message key %q value %d bytes, want the posted event", m.Key, len(m.Value))
	}
}

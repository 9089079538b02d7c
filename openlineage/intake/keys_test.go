package intake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestParseKeys(t *testing.T) {
	sum := sha256.Sum256([]byte("team-b-secret-key-0123"))
	ks, err := ParseKeys(strings.NewReader(`# producers
team-a   team-a-secret-key-0123   job=team-a/*  dataset=s3://lake/team-a/*  dataset=file/out   # a comment
team-b   sha256:` + hex.EncodeToString(sum[:]) + `  job=*  dataset=*

`))
	if err != nil || len(ks) != 2 || ks[0].Name != "team-a" || len(ks[0].Datasets) != 2 || ks[1].Jobs[0] != "*" {
		t.Fatalf("ParseKeys = %+v, %v", ks, err)
	}
	if k := ks.find("team-b-secret-key-0123"); k == nil || k.Name != "team-b" {
		t.Errorf("find of a key given by its hash: %v", k)
	}
	if k := ks.find("team-a-secret-key-0123"); k == nil || k.Name != "team-a" {
		t.Errorf("find of a key given in clear: %v", k)
	}
	if k := ks.find("team-a-secret-key-012"); k != nil {
		t.Errorf("find of a wrong key: %v", k)
	}
	for _, tc := range []struct{ name, file, err string }{
		{"empty", "# nothing\n", "no key: an empty keys file would refuse every producer"},
		{"too few fields", "a 0123456789abcdef0 job=*\n", "line 1: want a name, a key, and job= and dataset= patterns"},
		{"short key", "a short job=* dataset=*\n", "line 1: a: the key has 5 characters; use at least 16"},
		{"bad hash", "a sha256:abc job=* dataset=*\n", "line 1: a: sha256: must be followed by 64 hex digits"},
		{"no dataset", "a 0123456789abcdef0 job=* job=x\n", "line 1: a: needs at least one job= and one dataset= pattern"},
		{"unknown pattern", "a 0123456789abcdef0 job=* table=x\n", `line 1: a: "table=x": want job=PATTERN or dataset=PATTERN`},
		{"empty pattern", "a 0123456789abcdef0 job= dataset=*\n", `line 1: a: "job=": want job=PATTERN`},
		{"bad name", "a/b 0123456789abcdef0 job=* dataset=*\n", `line 1: name "a/b": use 1 to 64 of`},
		{"same name", "a 0123456789abcdef0 job=* dataset=*\na 0123456789abcdef1 job=* dataset=*\n", `line 2: name "a" is already the name of line 1`},
		{"same key", "a 0123456789abcdef0 job=* dataset=*\nb 0123456789abcdef0 job=* dataset=*\n", "line 2: b: the same key as line 1"},
	} {
		_, err := ParseKeys(strings.NewReader(tc.file))
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%s: the error shows a key: %v", tc.name, err)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything/at/all", true}, {"team-a/*", "team-a/nightly", true}, {"team-a/*", "team-ab/nightly", false},
		{"s3://lake/team-a/*", "s3://lake/team-a/sales/orders", true}, {"s3://lake/team-a/*", "s3://lake/team-b/x", false},
		{"exact", "exact", true}, {"exact", "exactly", false}, {"*.orders", "spark_catalog/sales.orders", true},
		{"a*b*c", "aXbYc", true}, {"a*b*c", "aXcYb", false}, {"ab*ba", "aba", false}, {"a*", "a", true},
	} {
		if got := match(tc.pattern, tc.s); got != tc.want {
			t.Errorf("match(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

// A minimal valid event (a hand-written unit-test input): job ns/name writes outputs.
func keyedEvent(kind, jobNS, jobName, outputs string) []byte {
	return []byte(fmt.Sprintf(`{"eventTime":"2026-12-01T10:00:00Z","producer":"https://example/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/%s",
"eventType":"COMPLETE","run":{"runId":"0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},"job":{"namespace":%q,"name":%q},
"inputs":[{"namespace":"s3://lake","name":"team-b/shared"}],"outputs":[%s]}`, kind, jobNS, jobName, outputs))
}

func dataset(ns, name, lifecycle string) string {
	facets := ""
	if lifecycle != "" {
		facets = fmt.Sprintf(`,"facets":{"lifecycleStateChange":{"_producer":"https://example/p","_schemaURL":"https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json#/$defs/LifecycleStateChangeDatasetFacet","lifecycleStateChange":%q}}`, lifecycle)
	}
	return fmt.Sprintf(`{"namespace":%q,"name":%q%s}`, ns, name, facets)
}

// TestKeysBindNamespaces: issue 29's finding, "any producer can post a lifecycleStateChange DROP
// for any team's dataset, or lineage in any job's name": with a keys file, team A's key writes
// team A's jobs and datasets, reads anyone's, and is refused (403, counted, nothing published)
// another team's job, an output in another team's space, and a DROP of another team's dataset.
func TestKeysBindNamespaces(t *testing.T) {
	ks, err := ParseKeys(strings.NewReader(`team-a team-a-secret-key-0123 job=team-a/* dataset=s3://lake/team-a/*
ops    ops-secret-key-0123456    job=*        dataset=*
`))
	if err != nil {
		t.Fatal(err)
	}
	pub := &fakePublisher{}
	m := NewMetrics(nil)
	h := &Handler{Step: step(t), Publisher: pub, Keys: ks, Metrics: m}
	post := func(key string, body []byte) (int, string) {
		r := httptest.NewRequest("POST", Path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var e Error
		json.Unmarshal(w.Body.Bytes(), &e)
		return w.Code, e.Message
	}
	a, ops := "team-a-secret-key-0123", "ops-secret-key-0123456"
	for _, tc := range []struct {
		name, key string
		body      []byte
		code      int
		message   string
	}{
		{"its own job and dataset, reading another team's", a, keyedEvent("RunEvent", "team-a", "nightly", dataset("s3://lake", "team-a/orders", "")), 201, ""},
		{"another team's job", a, keyedEvent("RunEvent", "team-b", "nightly", dataset("s3://lake", "team-a/orders", "")), 403,
			`API key "team-a" may not write job "team-b/nightly"`},
		{"an output in another team's space", a, keyedEvent("RunEvent", "team-a", "nightly", dataset("s3://lake", "team-b/orders", "")), 403,
			`API key "team-a" may not write dataset "s3://lake/team-b/orders"`},
		{"a DROP of another team's dataset", a, keyedEvent("RunEvent", "team-a", "cleanup", dataset("s3://lake", "team-b/orders", "DROP")), 403,
			`API key "team-a" may not write dataset "s3://lake/team-b/orders"`},
		{"a DROP of its own dataset", a, keyedEvent("RunEvent", "team-a", "cleanup", dataset("s3://lake", "team-a/old", "DROP")), 201, ""},
		{"ops may write anything", ops, keyedEvent("RunEvent", "team-b", "nightly", dataset("s3://lake", "team-b/orders", "DROP")), 201, ""},
		{"no key", "", keyedEvent("RunEvent", "team-a", "nightly", dataset("s3://lake", "team-a/orders", "")), 401, ""},
	} {
		code, body := post(tc.key, tc.body)
		if code != tc.code || !strings.Contains(body, tc.message) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, code, body, tc.code, tc.message)
		}
	}
	if len(pub.msgs) != 3 {
		t.Errorf("published %d events, want the 3 allowed", len(pub.msgs))
	}
	if j, d := testutil.ToFloat64(m.forbidden.WithLabelValues("team-a", "job")), testutil.ToFloat64(m.forbidden.WithLabelValues("team-a", "dataset")); j != 1 || d != 2 {
		t.Errorf("colline_openlineage_http_forbidden_total: job %v, dataset %v; want 1 and 2", j, d)
	}
	if n := testutil.ToFloat64(m.requests.WithLabelValues(ResultForbidden)); n != 3 {
		t.Errorf("requests{result=forbidden} = %v, want 3", n)
	}
	// failed logins are throttled per address: after 10 wrong keys even the right one waits
	for range 10 {
		post("wrong-key-0123456789", keyedEvent("RunEvent", "team-a", "nightly", "")) // 401
	}
	if code, body := post(a, keyedEvent("RunEvent", "team-a", "nightly", dataset("s3://lake", "team-a/orders", ""))); code != http.StatusTooManyRequests {
		t.Errorf("after 10 wrong keys: %d %s, want 429", code, body)
	}
}

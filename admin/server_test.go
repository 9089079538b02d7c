package admin

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
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
	h := Handler(reg,
		Check{Name: "loop", Fn: func(context.Context) error { return nil }},
		Check{Name: "neo4j", Fn: func(context.Context) error { return neo4jErr }},
	)

	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	neo4jErr = errors.New("connection refused")
	if code, body := get(t, h, "/readyz"); code != 503 || body != "neo4j: connection refused\n" {
		t.Errorf("/readyz = %d %q, want 503 naming the failing check", code, body)
	}
	code, body := get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, `colline_build_info{goversion="go`) || !strings.Contains(body, `version="1.2.3"} 1`) {
		t.Errorf("/metrics = %d\n%s", code, body)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

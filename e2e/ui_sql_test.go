//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ui"
)

// TestUISQLPanel: the explorer's SQL panel through the real analyzer (the package's Spark 4.1
// analyzer, docs/analyze.md) and the real graph: SQL that never runs comes back drawn as the
// lineage the listener would publish, and a statement Spark refuses is named with its line.
func TestUISQLPanel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver := s.Neo4j(ctx, t)
	h := ui.New(graph.NewReader(driver, ""), ui.Params{Analyzer: ui.ServiceAnalyzer{Client: analyzerFor(t, "4.1_2.13")}})
	post := func(sql string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{"sql": sql})
		r := httptest.NewRequest(http.MethodPost, "/api/sql", strings.NewReader(string(body))).WithContext(ctx)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("/api/sql: %d %s", w.Code, w.Body)
		}
		return w.Code, out
	}

	code, out := post(`CREATE TABLE ui_panel_src (id BIGINT, amount DOUBLE, country STRING) USING parquet;
CREATE TABLE ui_panel_dst USING parquet AS
SELECT country, sum(amount) AS revenue FROM ui_panel_src WHERE id > 0 GROUP BY country`)
	if code != http.StatusOK {
		t.Fatalf("/api/sql = %d %v", code, out)
	}
	var edges []string
	for _, e := range out["lineage"].(map[string]any)["edges"].([]any) {
		m := e.(map[string]any)
		edges = append(edges, m["source"].(string)+" "+m["kind"].(string)+" "+m["target"].(string))
	}
	got := strings.Join(edges, "\n")
	for _, want := range []string{
		"spark_catalog/default.ui_panel_src#amount FEEDS spark_catalog/default.ui_panel_dst#revenue",
		"spark_catalog/default.ui_panel_src#country FEEDS spark_catalog/default.ui_panel_dst#country",
		"spark_catalog/default.ui_panel_src#id DECIDES_ROWS spark_catalog/default.ui_panel_dst",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the panel's lineage lacks %q; it drew:\n%s", want, got)
		}
	}

	code, out = post("SELECT 1;\nINSERT INTO ui_panel_dst SELEC country FROM ui_panel_src")
	if msg, _ := out["error"].(string); code != http.StatusUnprocessableEntity || !strings.Contains(msg, "line 2") {
		t.Errorf("a parse error = %d %v; want 422 naming line 2", code, out)
	}
	t.Logf("SQL panel through the analyzer: %d edges drawn; a parse error: %v", len(edges), out["error"])
}

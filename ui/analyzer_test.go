package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/colline/colline/analyze"
)

// TestServiceAnalyzerDoor: the SQL panel's analyzer client passes the analyzer's door (its bearer
// token and the JSON content type, which the real service requires before it reads a body), and a
// statement the analyzer refused to analyze is the panel's error, with its reason.
func TestServiceAnalyzerDoor(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer t0ken":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"missing or wrong bearer token"}`))
			return
		case r.Header.Get("Content-Type") != "application/json":
			w.WriteHeader(http.StatusUnsupportedMediaType)
			_, _ = w.Write([]byte(`{"error":"want application/json"}`))
			return
		}
		st := analyze.Statement{Index: 1, Line: 1, Column: 1, Outcome: analyze.OutcomeRefused,
			Reason: "ADD JAR loads a jar: the analyzer loads no code"}
		_ = json.NewEncoder(w).Encode(analyze.Response{Files: []analyze.File{{Name: "panel.sql", Statements: []analyze.Statement{st}}}})
	}))
	defer svc.Close()
	ctx := context.Background()
	if _, err := (ServiceAnalyzer{Client: &analyze.Client{URL: svc.URL}}).Analyze(ctx, "ADD JAR x", "spark"); err == nil ||
		!strings.Contains(err.Error(), "401") {
		t.Errorf("without the token: %v", err)
	}
	_, err := (ServiceAnalyzer{Client: &analyze.Client{URL: svc.URL, Token: "t0ken"}}).Analyze(ctx, "ADD JAR x", "spark")
	if err == nil || !strings.Contains(err.Error(), "statement 1, line 1, column 1: refused: ADD JAR loads a jar") {
		t.Errorf("a refused statement: %v", err)
	}
}

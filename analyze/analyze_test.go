package analyze

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan"
)

func TestGraphTables(t *testing.T) {
	col := func(name, typ string) plan.Column { return plan.Column{Name: name, Type: typ} }
	hostile := "int) USING parquet; CREATE DATABASE p LOCATION '/home/ci'; CREATE TABLE p.z (a int"
	tables, skipped := GraphTables([]plan.Dataset{
		{Key: "spark_catalog/shop.orders", Namespace: "spark_catalog", Name: "shop.orders", Kind: "table",
			Columns: []plan.Column{col("order_id", "bigint"), col("amount", "decimal(10,2)"), col("odd `name`", "array<struct<a:int>>")}},
		{Key: "spark_catalog/shop.v", Namespace: "spark_catalog", Name: "shop.v", Kind: "view", Columns: []plan.Column{col("x", "")}},
		{Key: "spark_catalog/crm.people", Namespace: "spark_catalog", Name: "crm.people", Kind: "table", Columns: []plan.Column{col("id", hostile)}},
		{Key: "file/data/in", Namespace: "file", Name: "/data/in", Kind: "path", Columns: []plan.Column{col("id", "int")}},
		{Key: "ice/db.t", Namespace: "ice", Name: "db.t", Kind: "table", Columns: []plan.Column{col("id", "int")}},
		{Key: "spark_catalog/shop.empty", Namespace: "spark_catalog", Name: "shop.empty", Kind: "table"},
		{Key: "spark_catalog/nodb", Namespace: "spark_catalog", Name: "nodb", Kind: "table", Columns: []plan.Column{col("id", "int")}},
	})
	want := []Table{
		// a type is data: passed as it is, for the analyzer to parse alone (and refuse)
		{Name: "`crm`.`people`", Source: SourceGraph, Columns: []Column{{Name: "id", Type: hostile, Nullable: true}}},
		{Name: "`shop`.`orders`", Source: SourceGraph, Columns: []Column{{Name: "order_id", Type: "bigint", Nullable: true},
			{Name: "amount", Type: "decimal(10,2)", Nullable: true}, {Name: "odd `name`", Type: "array<struct<a:int>>", Nullable: true}}},
		{Name: "`shop`.`v`", Source: SourceGraph, Columns: []Column{{Name: "x", Type: "string", Nullable: true}}},
	}
	if !reflect.DeepEqual(tables, want) {
		t.Errorf("GraphTables:\n%+v\nwant\n%+v", tables, want)
	}
	wantSkipped := []string{
		"file/data/in: a path, not a table of spark_catalog",
		"ice/db.t: a table, not a table of spark_catalog",
		"spark_catalog/nodb: not <database>.<table>",
		"spark_catalog/shop.empty: no columns known",
	}
	if strings.Join(skipped, "\n") != strings.Join(wantSkipped, "\n") {
		t.Errorf("skipped:\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
	// on the wire: the type is a JSON string, never SQL text
	b, _ := json.Marshal(Request{Tables: tables[:1]})
	if got := string(b); got != `{"tables":[{"name":"`+"`crm`.`people`"+`","columns":[{"name":"id","type":"int) USING parquet; CREATE DATABASE p LOCATION '/home/ci'; CREATE TABLE p.z (a int","nullable":true}],"source":"graph"}]}` {
		t.Errorf("request JSON %s", got)
	}
}

// fakeLauncher writes a launcher script: a stand-in for dev/spark-analyze that serves nothing
// but prints what the real one prints, for the process's life-cycle edge cases (the real
// analyzer is tested end to end in e2e).
func fakeLauncher(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "launcher")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStart(t *testing.T) {
	ctx := context.Background()
	t.Run("ready, then stops when its stdin closes", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "args")
		l := fakeLauncher(t, `echo "$@" > `+marker+`; echo starting >&2; echo "COLLINE_ANALYZE_READY http://127.0.0.1:1234 spark=3.5.9 startupMs=2500"; cat >/dev/null; echo stopped >&2`)
		p, err := Start(ctx, Options{Launcher: l, Catalog: "hive", Args: []string{"-Dspark.sql.ansi.enabled=false"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.URL != "http://127.0.0.1:1234" || p.Spark != "3.5.9" || p.Startup != 2500*time.Millisecond {
			t.Errorf("ready line read as %q %q %s", p.URL, p.Spark, p.Startup)
		}
		st, err := os.Stat(p.TokenFile)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the generated token file %s: %v %v, want mode 0600", p.TokenFile, st.Mode(), err)
		}
		if c := p.Client(); len(c.Token) != 64 {
			t.Errorf("the client's token %q: want 64 hex digits", c.Token)
		}
		start := time.Now()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Close took %s: the launcher did not stop when its stdin closed", d)
		}
		args, _ := os.ReadFile(marker)
		if got, want := strings.TrimSpace(string(args)), "--port 0 --parent-stdin --catalog hive --token-file "+p.TokenFile+" -Dspark.sql.ansi.enabled=false"; got != want {
			t.Errorf("launcher arguments %q, want %q", got, want)
		}
		if _, err := os.Stat(p.TokenFile); err == nil {
			t.Errorf("Close left the generated token file %s", p.TokenFile)
		}
		if !strings.Contains(p.Output(), "stopped") {
			t.Errorf("output %q", p.Output())
		}
	})
	t.Run("exits before it is ready", func(t *testing.T) {
		l := fakeLauncher(t, `echo "dev/spark-analyze: Maven could not fetch the jars" >&2; exit 1`)
		_, err := Start(ctx, Options{Launcher: l})
		if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "Maven could not fetch") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not ready in time: stopped by SIGTERM", func(t *testing.T) {
		l := fakeLauncher(t, `exec sleep 60`)
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := Start(c, Options{Launcher: l})
		if err == nil || !strings.Contains(err.Error(), "was not ready") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no launcher", func(t *testing.T) {
		_, err := Start(ctx, Options{Launcher: filepath.Join(t.TempDir(), "missing")})
		if err == nil || !strings.Contains(err.Error(), "starting the analyzer") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestClientErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			_, _ = w.Write([]byte(`{"error":"want application/json"}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"missing or wrong bearer token"}`))
			return
		}
		_, _ = w.Write([]byte(`{"files":[{"name":"a.sql","statements":[{"index":1,"line":2,"column":3,"outcome":"error",` +
			`"error":{"stage":"parse","message":"[PARSE_SYNTAX_ERROR] …","errorClass":"PARSE_SYNTAX_ERROR","line":2,"column":3}}]}]}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	_, err := (&Client{URL: srv.URL}).Analyze(ctx, Request{})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: missing or wrong bearer token") {
		t.Errorf("without the token: %v", err)
	}
	resp, err := (&Client{URL: srv.URL, Token: "s3cret"}).Analyze(ctx, Request{Files: []Part{{Name: "a.sql", SQL: "SELEC"}}})
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.Files[0].Statements[0]; st.Outcome != OutcomeError || st.Error.ErrorClass != "PARSE_SYNTAX_ERROR" || st.Error.Line != 2 {
		t.Errorf("statement %+v", st)
	}
}

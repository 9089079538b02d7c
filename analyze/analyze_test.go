package analyze

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan"
)

func TestDDL(t *testing.T) {
	col := func(name, typ string) plan.Column { return plan.Column{Name: name, Type: typ} }
	sql, skipped := DDL([]plan.Dataset{
		{Key: "spark_catalog/shop.orders", Namespace: "spark_catalog", Name: "shop.orders", Kind: "table",
			Columns: []plan.Column{col("order_id", "bigint"), col("amount", "decimal(10,2)"), col("odd `name`", "array<struct<a:int>>")}},
		{Key: "spark_catalog/shop.v", Namespace: "spark_catalog", Name: "shop.v", Kind: "view", Columns: []plan.Column{col("x", "")}},
		{Key: "spark_catalog/crm.people", Namespace: "spark_catalog", Name: "crm.people", Kind: "table", Columns: []plan.Column{col("id", "int")}},
		{Key: "file/data/in", Namespace: "file", Name: "/data/in", Kind: "path", Columns: []plan.Column{col("id", "int")}},
		{Key: "ice/db.t", Namespace: "ice", Name: "db.t", Kind: "table", Columns: []plan.Column{col("id", "int")}},
		{Key: "spark_catalog/shop.empty", Namespace: "spark_catalog", Name: "shop.empty", Kind: "table"},
		{Key: "spark_catalog/nodb", Namespace: "spark_catalog", Name: "nodb", Kind: "table", Columns: []plan.Column{col("id", "int")}},
	})
	want := "CREATE DATABASE IF NOT EXISTS `crm`;\n" +
		"CREATE TABLE IF NOT EXISTS `crm`.`people` (`id` int) USING parquet;\n" +
		"CREATE DATABASE IF NOT EXISTS `shop`;\n" +
		"CREATE TABLE IF NOT EXISTS `shop`.`orders` (`order_id` bigint, `amount` decimal(10,2), `odd ``name``` array<struct<a:int>>) USING parquet;\n" +
		"CREATE TABLE IF NOT EXISTS `shop`.`v` (`x` string) USING parquet;\n"
	if sql != want {
		t.Errorf("DDL:\n%s\nwant\n%s", sql, want)
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
		start := time.Now()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Close took %s: the launcher did not stop when its stdin closed", d)
		}
		args, _ := os.ReadFile(marker)
		if got := strings.TrimSpace(string(args)); got != "--port 0 --parent-stdin --catalog hive -Dspark.sql.ansi.enabled=false" {
			t.Errorf("launcher arguments %q", got)
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

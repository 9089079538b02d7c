package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/guard"
	"github.com/colline/colline/ui"
)

func TestUIDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load[UI]()
	if err != nil {
		t.Fatalf("Load[UI] with no variables = %v", err)
	}
	want := UI{
		Neo4jURI: "bolt://127.0.0.1:17687", Neo4jDatabase: "neo4j", LogLevel: slog.LevelInfo, LogFormat: "json", MemoryLimitRatio: DefaultMemoryLimitRatio,
		UiServer: UiServer{UiAddr: "127.0.0.1:7480", UiMaxSteps: 10, UiMaxColumns: 2000, UiMaxEdges: 10000,
			UiQueryTimeout: 15 * time.Second, UiMaxBodyBytes: 1 << 20, UiMaxConcurrent: 8},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if c.Open() {
		t.Error("the default (loopback, no auth) counts as open to other hosts")
	}
}

// TestUISharesVariables: a variable both the consumer and the explorer read has one type, default
// and description in both.
func TestUISharesVariables(t *testing.T) {
	consumer := fields(reflect.TypeFor[Config]())
	shared := 0
	for name, f := range fields(reflect.TypeFor[UI]()) {
		g, ok := consumer[name]
		if !ok {
			if !strings.HasPrefix(name, "Ui") {
				t.Errorf("UI.%s is neither COLLINE_UI_* nor a variable the consumer reads", name)
			}
			continue
		}
		shared++
		if f.Type != g.Type || f.Tag != g.Tag {
			t.Errorf("%s: the explorer reads it as %v `%s`, the consumer as %v `%s`", name, f.Type, f.Tag, g.Type, g.Tag)
		}
	}
	if shared != 9 {
		t.Errorf("%d variables shared with the consumer, want the 6 COLLINE_NEO4J_*, 2 COLLINE_LOG_* and COLLINE_MEMORY_LIMIT_RATIO", shared)
	}
}

// fields returns the fields of a struct type, embedded structs flattened (as envconfig reads them).
func fields(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range fields(f.Type) {
				out[k] = v
			}
			continue
		}
		out[f.Name] = f
	}
	return out
}

func TestUIVariables(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("basic-secret\n"), 0o600)
	at := filepath.Join(dir, "analyzer-token")
	os.WriteFile(at, []byte("analyzer-secret\n"), 0o600)
	for k, v := range map[string]string{
		"COLLINE_UI_ADDR": ":8080", "COLLINE_UI_BASIC_USER": "ops", "COLLINE_UI_BASIC_PASSWORD_FILE": pw,
		"COLLINE_UI_TOKEN": "0123456789abcdef0123", "COLLINE_UI_PROXY_USER_HEADER": "X-Forwarded-User",
		"COLLINE_UI_PROXY_TRUSTED_NETS": "10.0.0.0/8,::1/128", "COLLINE_UI_MAX_STEPS": "20", "COLLINE_UI_MAX_COLUMNS": "50",
		"COLLINE_UI_MAX_EDGES": "60", "COLLINE_UI_QUERY_TIMEOUT": "2s", "COLLINE_UI_MAX_BODY_BYTES": "4096",
		"COLLINE_UI_MAX_CONCURRENT": "2", "COLLINE_UI_ANALYZER_URL": "http://colline:url-secret@analyze:8091/?token=query-secret", "COLLINE_NEO4J_URI": "neo4j://db:7687",
		"COLLINE_UI_ANALYZER_TOKEN_FILE": at, "COLLINE_UI_HOSTS": "lineage.example.com,lineage",
	} {
		t.Setenv(k, v)
	}
	c, err := Load[UI]()
	if err != nil {
		t.Fatal(err)
	}
	want := UiServer{UiAddr: ":8080", UiHosts: []string{"lineage.example.com", "lineage"}, UiBasicUser: "ops", UiBasicPassword: "basic-secret", UiBasicPasswordFile: pw,
		UiToken: "0123456789abcdef0123", UiProxyUserHeader: "X-Forwarded-User", UiProxyTrustedNets: []string{"10.0.0.0/8", "::1/128"},
		UiMaxSteps: 20, UiMaxColumns: 50, UiMaxEdges: 60, UiQueryTimeout: 2 * time.Second, UiMaxBodyBytes: 4096, UiMaxConcurrent: 2,
		UiAnalyzerURL: "http://colline:url-secret@analyze:8091/?token=query-secret", UiAnalyzerToken: "analyzer-secret", UiAnalyzerTokenFile: at}
	if !reflect.DeepEqual(c.UiServer, want) || c.Neo4jURI != "neo4j://db:7687" {
		t.Errorf("got %+v\nwant %+v", c.UiServer, want)
	}
	var buf bytes.Buffer
	c.NewLogger(&buf).Info("starting", "config", c)
	// the analyzer URL's password and query were logged as they were (issue 29)
	for _, secret := range []string{"basic-secret", "0123456789abcdef0123", "analyzer-secret", "url-secret", "query-secret"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("the start-up line shows a secret: %s", buf.String())
		}
	}
	if !strings.Contains(buf.String(), `"ui_token":"(set)"`) {
		t.Errorf("the start-up line does not say the token is set: %s", buf.String())
	}
	if !strings.Contains(buf.String(), `"ui_analyzer_url":"http://colline:xxxxx@analyze:8091/?token=xxxxx"`) {
		t.Errorf("the start-up line does not show the analyzer URL redacted: %s", buf.String())
	}
	c.UiBasicUser, c.UiToken, c.UiProxyUserHeader = "", "", ""
	if !c.Open() {
		t.Error(":8080 without authentication does not count as open")
	}
}

func TestBadUIConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"addr", map[string]string{"COLLINE_UI_ADDR": "7480"}, []string{`COLLINE_UI_ADDR: "7480"`}},
		{"neo4j uri", map[string]string{"COLLINE_NEO4J_URI": "http://db:7474"}, []string{`COLLINE_NEO4J_URI: scheme "http" is not one of`}},
		{"tls cert without key", map[string]string{"COLLINE_UI_TLS_CERT_FILE": "cert.pem"}, []string{"COLLINE_UI_TLS_CERT_FILE: COLLINE_UI_TLS_CERT_FILE and COLLINE_UI_TLS_KEY_FILE go together"}},
		{"tls bad pair", map[string]string{"COLLINE_UI_TLS_CERT_FILE": "ui.go", "COLLINE_UI_TLS_KEY_FILE": "ui.go"}, []string{"COLLINE_UI_TLS_CERT_FILE: with COLLINE_UI_TLS_KEY_FILE:"}},
		{"basic user without password", map[string]string{"COLLINE_UI_BASIC_USER": "ops"}, []string{"COLLINE_UI_BASIC_USER: COLLINE_UI_BASIC_USER and COLLINE_UI_BASIC_PASSWORD go together"}},
		{"basic password without user", map[string]string{"COLLINE_UI_BASIC_PASSWORD": "secret"}, []string{"COLLINE_UI_BASIC_USER: COLLINE_UI_BASIC_USER and COLLINE_UI_BASIC_PASSWORD go together"}},
		{"basic user with a colon", map[string]string{"COLLINE_UI_BASIC_USER": "a:b", "COLLINE_UI_BASIC_PASSWORD": "secret"}, []string{"COLLINE_UI_BASIC_USER: must not contain ':'"}},
		{"short token", map[string]string{"COLLINE_UI_TOKEN": "secret"}, []string{"COLLINE_UI_TOKEN: is 6 characters; use at least 16"}},
		{"token twice", map[string]string{"COLLINE_UI_TOKEN": "secret", "COLLINE_UI_TOKEN_FILE": "ui.go"}, []string{"COLLINE_UI_TOKEN and COLLINE_UI_TOKEN_FILE are both set"}},
		{"missing password file", map[string]string{"COLLINE_UI_BASIC_USER": "ops", "COLLINE_UI_BASIC_PASSWORD_FILE": "/nonexistent/pw"}, []string{"COLLINE_UI_BASIC_PASSWORD_FILE: open /nonexistent/pw"}},
		{"proxy header without networks", map[string]string{"COLLINE_UI_PROXY_USER_HEADER": "X-Forwarded-User"}, []string{"COLLINE_UI_PROXY_TRUSTED_NETS: is required with COLLINE_UI_PROXY_USER_HEADER"}},
		{"networks without header", map[string]string{"COLLINE_UI_PROXY_TRUSTED_NETS": "10.0.0.0/8"}, []string{"COLLINE_UI_PROXY_USER_HEADER: is empty but COLLINE_UI_PROXY_TRUSTED_NETS is set"}},
		{"bad network", map[string]string{"COLLINE_UI_PROXY_USER_HEADER": "X-User", "COLLINE_UI_PROXY_TRUSTED_NETS": "10.0.0.1"}, []string{`COLLINE_UI_PROXY_TRUSTED_NETS: "10.0.0.1" is not a network in CIDR notation`}},
		{"authorization as the proxy header", map[string]string{"COLLINE_UI_PROXY_USER_HEADER": "authorization", "COLLINE_UI_PROXY_TRUSTED_NETS": "10.0.0.0/8"}, []string{`COLLINE_UI_PROXY_USER_HEADER: "authorization" is the Authorization header`}},
		{"steps", map[string]string{"COLLINE_UI_MAX_STEPS": "21"}, []string{"COLLINE_UI_MAX_STEPS: 21 is outside 1..20"}},
		{"columns", map[string]string{"COLLINE_UI_MAX_COLUMNS": "0"}, []string{"COLLINE_UI_MAX_COLUMNS: 0 is below 1"}},
		{"edges", map[string]string{"COLLINE_UI_MAX_EDGES": "-1"}, []string{"COLLINE_UI_MAX_EDGES: -1 is below 1"}},
		{"concurrent", map[string]string{"COLLINE_UI_MAX_CONCURRENT": "0"}, []string{"COLLINE_UI_MAX_CONCURRENT: 0 is below 1"}},
		{"body", map[string]string{"COLLINE_UI_MAX_BODY_BYTES": "10"}, []string{"COLLINE_UI_MAX_BODY_BYTES: 10 is below 1024"}},
		{"timeout", map[string]string{"COLLINE_UI_QUERY_TIMEOUT": "1ms"}, []string{"COLLINE_UI_QUERY_TIMEOUT: 1ms is below 100ms"}},
		{"analyzer", map[string]string{"COLLINE_UI_ANALYZER_URL": "analyze:8091"}, []string{`COLLINE_UI_ANALYZER_URL: "analyze:8091" is not an http:// or https:// URL`}},
		{"analyzer token without analyzer", map[string]string{"COLLINE_UI_ANALYZER_TOKEN": "secret"}, []string{"COLLINE_UI_ANALYZER_TOKEN: is set but COLLINE_UI_ANALYZER_URL is empty"}},
		{"analyzer token twice", map[string]string{"COLLINE_UI_ANALYZER_URL": "http://a:1", "COLLINE_UI_ANALYZER_TOKEN": "secret", "COLLINE_UI_ANALYZER_TOKEN_FILE": "ui.go"}, []string{"COLLINE_UI_ANALYZER_TOKEN and COLLINE_UI_ANALYZER_TOKEN_FILE are both set"}},
		{"unparseable", map[string]string{"COLLINE_UI_MAX_STEPS": "many"}, []string{"COLLINE_UI_MAX_STEPS"}},
		{"log format", map[string]string{"COLLINE_LOG_FORMAT": "xml"}, []string{`COLLINE_LOG_FORMAT: "xml" is neither json nor text`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failsWith(t, func() error { _, err := Load[UI](); return err }, tc.env, tc.want)
		})
	}
}

// The explorer's defaults have their home in package ui.
var uiHomes = map[string]any{
	"COLLINE_UI_MAX_STEPS":      ui.DefaultMaxSteps,
	"COLLINE_UI_MAX_COLUMNS":    ui.DefaultMaxColumns,
	"COLLINE_UI_MAX_EDGES":      ui.DefaultMaxEdges,
	"COLLINE_UI_QUERY_TIMEOUT":  ui.DefaultQueryTimeout,
	"COLLINE_UI_MAX_BODY_BYTES": ui.DefaultMaxBodyBytes,
	"COLLINE_UI_MAX_CONCURRENT": ui.DefaultMaxConcurrent,
}

// TestAllowedHosts: on loopback the explorer answers to this machine's names and COLLINE_UI_HOSTS
// (against DNS rebinding), elsewhere to COLLINE_UI_HOSTS, or any name without it; the loopback
// names are guard's.
func TestAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		hosts []string
		want  []string
	}{
		{"127.0.0.1:7480", nil, []string{"localhost", "127.0.0.1", "::1"}},
		{"localhost:7480", []string{"colline.local"}, []string{"localhost", "127.0.0.1", "::1", "colline.local"}},
		{"[::1]:7480", nil, []string{"localhost", "127.0.0.1", "::1"}},
		{":7480", nil, nil},
		{"0.0.0.0:7480", []string{"lineage.example.com"}, []string{"lineage.example.com"}},
	} {
		c := UI{UiServer: UiServer{UiAddr: tc.addr, UiHosts: tc.hosts}}
		if got := c.AllowedHosts(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.addr, tc.hosts, got, tc.want)
		}
	}
	if !reflect.DeepEqual(guardLoopback, guard.Loopback) {
		t.Errorf("config's loopback names %v are not guard.Loopback %v", guardLoopback, guard.Loopback)
	}
}

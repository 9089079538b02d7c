package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// UI is the configuration of `colline ui`, the lineage explorer. It reads the consumer's Neo4j
// and logging variables (the same names, types and defaults: TestUISharesVariables) and its own
// COLLINE_UI_* variables. Fields named Ui... map to COLLINE_UI_... (split_words reads "UI" as the
// start of a longer word).
type UI struct {
	Neo4jURI          string `split_words:"true" default:"bolt://127.0.0.1:17687" desc:"Neo4j URI: bolt://, neo4j:// (routing), with +s or +ssc for TLS"`
	Neo4jUser         string `split_words:"true" desc:"Neo4j user; empty: no authentication"`
	Neo4jPassword     Secret `split_words:"true" desc:"Neo4j password (never logged)"`
	Neo4jPasswordFile string `split_words:"true" desc:"file holding the Neo4j password (a mounted secret), instead of COLLINE_NEO4J_PASSWORD; one trailing newline is ignored"`
	Neo4jDatabase     string `split_words:"true" default:"neo4j" desc:"Neo4j database"`
	Neo4jTLSCaFile    string `split_words:"true" desc:"PEM file of the CAs that sign Neo4j's certificate, for bolt+s:// and neo4j+s://; empty: the system roots"`

	UiServer

	MemoryLimitRatio float64 `split_words:"true" default:"0.9" desc:"share of the container's memory limit (cgroup, e.g. Kubernetes resources.limits.memory) given to the Go runtime as its soft limit; GOMEMLIMIT, if set, wins; 0 turns it off (in the consumer, also the tighter limit while a message of COLLINE_BATCH_MAX_BYTES or more is in hand: docs/operations.md, Memory)"`

	LogLevel  slog.Level `split_words:"true" default:"info" desc:"debug, info, warn or error"`
	LogFormat string     `split_words:"true" default:"json" desc:"json or text"`
}

// UiServer holds the explorer's own variables, COLLINE_UI_*.
type UiServer struct {
	UiAddr        string   `split_words:"true" default:"127.0.0.1:7480" desc:"listen address of the explorer, host:port; the default serves this machine only"`
	UiHosts       []string `split_words:"true" desc:"comma-separated names the explorer answers to in the Host header (any port), the names its users reach it by; besides them, localhost, 127.0.0.1 and ::1 when COLLINE_UI_ADDR is a loopback address; empty on another address: any name (docs/security.md, DNS rebinding)"`
	UiTLSCertFile string   `split_words:"true" desc:"PEM certificate (chain) to serve HTTPS with, with COLLINE_UI_TLS_KEY_FILE; empty: plain HTTP"`
	UiTLSKeyFile  string   `split_words:"true" desc:"PEM private key of COLLINE_UI_TLS_CERT_FILE"`

	UiBasicUser         string   `split_words:"true" desc:"user of HTTP basic authentication, with COLLINE_UI_BASIC_PASSWORD; empty: no basic authentication"`
	UiBasicPassword     Secret   `split_words:"true" desc:"password of COLLINE_UI_BASIC_USER (never logged)"`
	UiBasicPasswordFile string   `split_words:"true" desc:"file holding COLLINE_UI_BASIC_PASSWORD (a mounted secret); one trailing newline is ignored"`
	UiToken             Secret   `split_words:"true" desc:"bearer token a request may present (Authorization: Bearer ...), at least 16 characters (never logged)"`
	UiTokenFile         string   `split_words:"true" desc:"file holding COLLINE_UI_TOKEN (a mounted secret)"`
	UiProxyUserHeader   string   `split_words:"true" desc:"header carrying the user an authenticating proxy vouches for (e.g. X-Forwarded-User); trusted only from COLLINE_UI_PROXY_TRUSTED_NETS"`
	UiProxyTrustedNets  []string `split_words:"true" desc:"comma-separated networks (CIDR) whose requests may authenticate with COLLINE_UI_PROXY_USER_HEADER"`

	UiMaxSteps      int           `split_words:"true" default:"10" desc:"most lineage steps one request may walk (at most 20)"`
	UiMaxColumns    int           `split_words:"true" default:"2000" desc:"most columns one lineage answer holds; a walk stops before the step that would pass it and says so"`
	UiMaxEdges      int           `split_words:"true" default:"10000" desc:"most lineage relationships one answer holds; likewise"`
	UiQueryTimeout  time.Duration `split_words:"true" default:"15s" desc:"time one request may take in Neo4j (also its transaction timeout)"`
	UiMaxBodyBytes  int           `split_words:"true" default:"1048576" desc:"largest request body (a SQL statement or plan events pasted in the SQL panel)"`
	UiMaxConcurrent int           `split_words:"true" default:"8" desc:"requests served at once; more wait briefly, then get 503"`
	UiAnalyzerURL   string        `split_words:"true" desc:"base URL of a colline analyze service for the SQL panel; empty: the panel takes plan events only (a password in it is never logged)"`

	UiAnalyzerToken     Secret `split_words:"true" desc:"bearer token the SQL panel sends to COLLINE_UI_ANALYZER_URL (an analyzer started with --token-file; never logged)"`
	UiAnalyzerTokenFile string `split_words:"true" desc:"file holding COLLINE_UI_ANALYZER_TOKEN (a mounted secret)"`
}

// complete reads the secrets of _FILE variables (Load[UI]).
func (c *UI) complete() error {
	return errors.Join(
		readSecret(&c.Neo4jPassword, "NEO4J_PASSWORD", c.Neo4jPasswordFile),
		readSecret(&c.UiBasicPassword, "UI_BASIC_PASSWORD", c.UiBasicPasswordFile),
		readSecret(&c.UiToken, "UI_TOKEN", c.UiTokenFile),
		readSecret(&c.UiAnalyzerToken, "UI_ANALYZER_TOKEN", c.UiAnalyzerTokenFile),
	)
}

// Validate checks every field and returns all problems, each naming its variable.
func (c UI) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s_%s: %s", Prefix, name, fmt.Sprintf(format, args...)))
	}
	errs = append(errs, validateNeo4j(c.Neo4jURI, c.Neo4jUser, c.Neo4jPassword, c.Neo4jTLSCaFile)...)
	if err := hostPort(c.UiAddr, false); err != nil {
		bad("UI_ADDR", "%q: %v", c.UiAddr, err)
	}
	switch {
	case (c.UiTLSCertFile == "") != (c.UiTLSKeyFile == ""):
		bad("UI_TLS_CERT_FILE", "COLLINE_UI_TLS_CERT_FILE and COLLINE_UI_TLS_KEY_FILE go together")
	case c.UiTLSCertFile != "":
		if _, err := tls.LoadX509KeyPair(c.UiTLSCertFile, c.UiTLSKeyFile); err != nil {
			bad("UI_TLS_CERT_FILE", "with COLLINE_UI_TLS_KEY_FILE: %v", err)
		}
	}
	if (c.UiBasicUser == "") != (c.UiBasicPassword == "") {
		bad("UI_BASIC_USER", "COLLINE_UI_BASIC_USER and COLLINE_UI_BASIC_PASSWORD go together")
	}
	if strings.Contains(c.UiBasicUser, ":") {
		bad("UI_BASIC_USER", "must not contain ':'")
	}
	if c.UiToken != "" && len(c.UiToken) < 16 {
		bad("UI_TOKEN", "is %d characters; use at least 16 (e.g. openssl rand -hex 32)", len(c.UiToken))
	}
	if c.UiProxyUserHeader != "" && len(c.UiProxyTrustedNets) == 0 {
		bad("UI_PROXY_TRUSTED_NETS", "is required with COLLINE_UI_PROXY_USER_HEADER: without it anyone could send the header")
	}
	if c.UiProxyUserHeader == "" && len(c.UiProxyTrustedNets) > 0 {
		bad("UI_PROXY_USER_HEADER", "is empty but COLLINE_UI_PROXY_TRUSTED_NETS is set")
	}
	if h := c.UiProxyUserHeader; h != "" && http.CanonicalHeaderKey(h) == "Authorization" {
		bad("UI_PROXY_USER_HEADER", "%q is the Authorization header", h)
	}
	for _, n := range c.UiProxyTrustedNets {
		if _, err := netip.ParsePrefix(n); err != nil {
			bad("UI_PROXY_TRUSTED_NETS", "%q is not a network in CIDR notation (10.0.0.0/8, ::1/128)", n)
		}
	}
	if c.UiMaxSteps < 1 || c.UiMaxSteps > 20 {
		bad("UI_MAX_STEPS", "%d is outside 1..20", c.UiMaxSteps)
	}
	for name, v := range map[string]int{"UI_MAX_COLUMNS": c.UiMaxColumns, "UI_MAX_EDGES": c.UiMaxEdges, "UI_MAX_CONCURRENT": c.UiMaxConcurrent} {
		if v < 1 {
			bad(name, "%d is below 1", v)
		}
	}
	if c.UiMaxBodyBytes < 1024 {
		bad("UI_MAX_BODY_BYTES", "%d is below 1024", c.UiMaxBodyBytes)
	}
	if c.UiQueryTimeout < 100*time.Millisecond {
		bad("UI_QUERY_TIMEOUT", "%v is below 100ms", c.UiQueryTimeout)
	}
	if c.UiAnalyzerURL != "" {
		if u, err := url.Parse(c.UiAnalyzerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("UI_ANALYZER_URL", "%q is not an http:// or https:// URL", c.UiAnalyzerURL)
		}
	}
	if c.UiAnalyzerToken != "" && c.UiAnalyzerURL == "" {
		bad("UI_ANALYZER_TOKEN", "is set but COLLINE_UI_ANALYZER_URL is empty: the token is only sent to the analyzer")
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		bad("LOG_FORMAT", "%q is neither json nor text", c.LogFormat)
	}
	if err := validateMemoryLimitRatio(c.MemoryLimitRatio); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Open reports whether the explorer serves without authentication on an address other hosts
// reach: worth a warning at start.
func (c UI) Open() bool {
	if c.UiBasicUser != "" || c.UiToken != "" || c.UiProxyUserHeader != "" {
		return false
	}
	host, _, err := net.SplitHostPort(c.UiAddr)
	if err != nil {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return host != "localhost" && (err != nil || !ip.IsLoopback())
}

// AllowedHosts are the names the explorer answers to (ui.Params.Hosts): COLLINE_UI_HOSTS, plus this
// machine's names when it listens on the loopback interface (a web page could otherwise point a
// name of its own at 127.0.0.1 and read the explorer); nil (any name) on another address without
// COLLINE_UI_HOSTS.
func (c UI) AllowedHosts() []string {
	if host, _, err := net.SplitHostPort(c.UiAddr); err == nil {
		if ip, err := netip.ParseAddr(host); host == "localhost" || err == nil && ip.IsLoopback() {
			return append(append([]string{}, guardLoopback...), c.UiHosts...)
		}
	}
	if len(c.UiHosts) == 0 {
		return nil
	}
	return append([]string{}, c.UiHosts...)
}

// guardLoopback are the loopback names (guard.Loopback, which config does not import: a test
// ties the two).
var guardLoopback = []string{"localhost", "127.0.0.1", "::1"}

// Neo4jTLSConfig returns the TLS configuration for a +s Neo4j URI with a private CA, or nil.
func (c UI) Neo4jTLSConfig() (*tls.Config, error) {
	return Config{Neo4jTLSCaFile: c.Neo4jTLSCaFile}.Neo4jTLSConfig()
}

// NewLogger returns the slog logger the configuration asks for, writing to w.
func (c UI) NewLogger(w io.Writer) *slog.Logger {
	return Config{LogLevel: c.LogLevel, LogFormat: c.LogFormat}.NewLogger(w)
}

// LogValue logs the configuration without secrets.
func (c UI) LogValue() slog.Value {
	return slog.GroupValue(
		neo4jLog(c.Neo4jURI, c.Neo4jUser, c.Neo4jPassword, c.Neo4jPasswordFile, c.Neo4jDatabase, c.Neo4jTLSCaFile),
		slog.String("ui_addr", c.UiAddr),
		slog.Any("ui_hosts", c.UiHosts),
		slog.String("ui_tls_cert_file", c.UiTLSCertFile),
		slog.String("ui_basic_user", c.UiBasicUser),
		slog.String("ui_basic_password", c.UiBasicPassword.String()),
		slog.String("ui_basic_password_file", c.UiBasicPasswordFile),
		slog.String("ui_token", c.UiToken.String()),
		slog.String("ui_token_file", c.UiTokenFile),
		slog.String("ui_proxy_user_header", c.UiProxyUserHeader),
		slog.Any("ui_proxy_trusted_nets", c.UiProxyTrustedNets),
		slog.Int("ui_max_steps", c.UiMaxSteps),
		slog.Int("ui_max_columns", c.UiMaxColumns),
		slog.Int("ui_max_edges", c.UiMaxEdges),
		slog.Duration("ui_query_timeout", c.UiQueryTimeout),
		slog.Int("ui_max_body_bytes", c.UiMaxBodyBytes),
		slog.Int("ui_max_concurrent", c.UiMaxConcurrent),
		slog.String("ui_analyzer_url", redactURL(c.UiAnalyzerURL)),
		slog.String("ui_analyzer_token", c.UiAnalyzerToken.String()),
		slog.String("ui_analyzer_token_file", c.UiAnalyzerTokenFile),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("log_format", c.LogFormat),
		slog.Float64("memory_limit_ratio", c.MemoryLimitRatio),
	)
}

// MarkdownUI writes the table of the explorer's own variables (COLLINE_UI_*) as Markdown.
func MarkdownUI(w io.Writer) error {
	return envconfig.Usagef(Prefix, &UiServer{}, w, markdownFormat)
}

// UsageUI writes the table of the explorer's variables with their defaults and descriptions.
func UsageUI(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 1, 0, 4, ' ', 0)
	if err := envconfig.Usagef(Prefix, &UI{}, tw, envconfig.DefaultTableFormat); err != nil {
		return err
	}
	return tw.Flush()
}

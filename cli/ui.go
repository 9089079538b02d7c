package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/config"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/ui"
)

// serveUI runs the lineage explorer until ctx ends. Its configuration is COLLINE_UI_* and the
// consumer's COLLINE_NEO4J_* and COLLINE_LOG_* (config.UI); --addr overrides COLLINE_UI_ADDR.
func serveUI(ctx context.Context, version string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("colline ui", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "", "listen address, host:port (env COLLINE_UI_ADDR, default 127.0.0.1:7480)")
	rest, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "usage: colline ui [--addr HOST:PORT]\n\nThe explorer reads these variables (docs/operations.md):")
		return config.UsageUI(stdout)
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(fmt.Sprintf("ui: unexpected argument %q", rest[0]))
	}
	c, err := config.Load[config.UI]()
	if err != nil {
		return err
	}
	if *addr != "" {
		c.UiAddr = *addr
		if err := c.Validate(); err != nil {
			return fmt.Errorf("--addr: %w", err)
		}
	}
	log := c.NewLogger(stderr)
	mem, err := config.SetMemoryLimit(c.MemoryLimitRatio)
	if err != nil {
		log.Warn("no memory limit", "err", err)
	}
	tlsConfig, err := c.Neo4jTLSConfig()
	if err != nil {
		return err
	}
	driver, err := graph.NewDriver(c.Neo4jURI, c.Neo4jUser, c.Neo4jPassword.Reveal(), tlsConfig)
	if err != nil {
		return err
	}
	defer driver.Close(context.WithoutCancel(ctx))
	p := ui.Params{
		MaxSteps: c.UiMaxSteps, MaxColumns: c.UiMaxColumns, MaxEdges: c.UiMaxEdges, QueryTimeout: c.UiQueryTimeout,
		MaxBodyBytes: int64(c.UiMaxBodyBytes), MaxConcurrent: c.UiMaxConcurrent, Log: log, Version: version, Hosts: c.AllowedHosts(),
		Auth: ui.Auth{BasicUser: c.UiBasicUser, BasicPassword: c.UiBasicPassword.Reveal(), Token: c.UiToken.Reveal(),
			ProxyUserHeader: c.UiProxyUserHeader},
	}
	for _, n := range c.UiProxyTrustedNets {
		p.Auth.ProxyTrusted = append(p.Auth.ProxyTrusted, netip.MustParsePrefix(n)) // validated by config.Load
	}
	reader := graph.NewReader(driver, c.Neo4jDatabase)
	if c.UiAnalyzerURL != "" {
		// the tables the SQL names come from the graph the page draws; the others are inferred
		p.Analyzer = ui.ServiceAnalyzer{Client: &analyze.Client{URL: c.UiAnalyzerURL, Token: c.UiAnalyzerToken.Reveal(), HTTP: &http.Client{Timeout: c.UiQueryTimeout}},
			Graph: &analyze.GraphSchemas{Reader: reader}, Infer: true}
	}
	ln, err := net.Listen("tcp", c.UiAddr)
	if err != nil {
		return fmt.Errorf("COLLINE_UI_ADDR %s: %w", c.UiAddr, err)
	}
	p.Tags = reader.Tags()
	srv := p.Server(c.UiAddr, ui.New(reader, p))
	scheme := "http"
	if c.UiTLSCertFile != "" {
		scheme = "https"
	}
	log.Info("colline ui starting", "config", c, "version", version, "bundle", ui.Built(), "memory_limit", mem)
	if c.Open() {
		log.Warn("the explorer serves without authentication on an address other hosts may reach; set COLLINE_UI_BASIC_USER, COLLINE_UI_TOKEN or COLLINE_UI_PROXY_USER_HEADER", "addr", c.UiAddr)
	}
	if !ui.Built() {
		log.Warn("this binary has no page bundle (built without make ui-bundle); the page says how to build it")
	}
	fmt.Fprintf(stdout, "colline ui: serving %s://%s/ (graph %s, database %s)\n", scheme, displayAddr(ln.Addr()), c.Neo4jURI, c.Neo4jDatabase)
	done := make(chan error, 1)
	go func() {
		if c.UiTLSCertFile != "" {
			done <- srv.ServeTLS(ln, c.UiTLSCertFile, c.UiTLSKeyFile)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// displayAddr is a listen address a browser can open: 127.0.0.1 for an unspecified host.
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

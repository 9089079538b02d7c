package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/colline/colline/guard"
)

// RegisterBuildInfo registers colline_build_info{version, goversion}, always 1.
func RegisterBuildInfo(reg prometheus.Registerer, version string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   "colline",
		Name:        "build_info",
		Help:        "Build of the running consumer; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	reg.MustRegister(g)
}

// Check is one readiness condition: Fn returns nil when it holds.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

const (
	// checkTimeout bounds each readiness check; the checks run at once.
	checkTimeout = 3 * time.Second
	// readyFor is how long an answer of /readyz is reused: probes and scrapers asking at once, or
	// a client asking in a loop, cost one round of checks (one Kafka dial) a second at most.
	readyFor = time.Second
	// logEvery is how often a failing check whose error does not change is logged again.
	logEvery = time.Minute
	// maxScrapes is the number of /metrics requests served at once; more get 503.
	maxScrapes = 4
)

// Handler returns the mux of /metrics (from g), /healthz (200 while the process serves HTTP) and
// /readyz (200 when every check passes, else 503 with one line per failing check: its name and
// status, "not ready" or the Status() of its error; the error itself, which may hold internal
// addresses, goes to log, not to whoever asks). The
// checks run at most once per readyFor, whoever asks; /metrics serves maxScrapes at once.
func Handler(g prometheus.Gatherer, log *slog.Logger, checks ...Check) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rd := &readiness{checks: checks, log: log, logged: map[string]logged{}}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{Timeout: checkTimeout, MaxRequestsInFlight: maxScrapes}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		failed := rd.failed(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			for _, f := range failed {
				fmt.Fprintf(w, "%s: %s\n", f.name, f.status)
			}
			fmt.Fprintln(w, "(the consumer's log has the errors)")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// status is what /readyz says of a failing check: the error's Status() when it has one (a state
// such as "slow write", with no address in it), else "not ready".
func status(err error) string {
	var s interface{ Status() string }
	if errors.As(err, &s) && s.Status() != "" {
		return s.Status()
	}
	return "not ready"
}

// readiness runs the checks, at most once per readyFor, for every caller of that second.
type readiness struct {
	checks []Check
	log    *slog.Logger

	mu     sync.Mutex // held while the checks run: callers meanwhile wait for that round
	at     time.Time
	last   []failure
	logged map[string]logged
}

type logged struct {
	err string
	at  time.Time
}

// failure is a check that failed and its status.
type failure struct{ name, status string }

// failed returns the checks that fail, in order.
func (rd *readiness) failed(ctx context.Context) []failure {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if time.Since(rd.at) < readyFor {
		return rd.last
	}
	errs := make([]error, len(rd.checks))
	var wg sync.WaitGroup
	for i, c := range rd.checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
			defer cancel()
			errs[i] = c.Fn(cctx)
		}()
	}
	wg.Wait()
	var failed []failure
	for i, c := range rd.checks {
		if errs[i] == nil {
			delete(rd.logged, c.Name)
			continue
		}
		failed = append(failed, failure{c.Name, status(errs[i])})
		text := errs[i].Error()
		if l := rd.logged[c.Name]; l.err != text || time.Since(l.at) >= logEvery {
			rd.logged[c.Name] = logged{text, time.Now()}
			rd.log.Warn("not ready", "check", c.Name, "err", errs[i])
		}
	}
	rd.at, rd.last = time.Now(), failed
	return failed
}

// NewServer returns an HTTP server for h on addr with conservative timeouts (guard.Server: a
// client gets 5s for its headers and 10s for its request, and 16 KiB of headers).
func NewServer(addr string, h http.Handler, log *slog.Logger) *http.Server {
	return guard.Server(addr, h, guard.Timeouts{Header: 5 * time.Second, Read: 10 * time.Second, Handle: 20 * time.Second,
		Idle: time.Minute, MaxHeaderBytes: 16 << 10}, log)
}

// Markdown writes a Markdown table of the metric families g gathers: name, type, labels, help.
// Label vectors appear only once they have a series, so gather after creating one of each.
func Markdown(w io.Writer, g prometheus.Gatherer) error {
	families, err := g.Gather()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| metric | type | labels | description |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, f := range families {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, "`"+l+"`")
		}
		sort.Strings(names)
		help := strings.ReplaceAll(f.GetHelp(), "|", `\|`)
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", f.GetName(), strings.ToLower(f.GetType().String()), strings.Join(names, ", "), help)
	}
	return nil
}

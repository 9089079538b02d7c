package metrics

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// checkTimeout bounds each readiness check.
const checkTimeout = 3 * time.Second

// Handler returns the mux of /metrics (from g), /healthz (200 while the process serves HTTP) and
// /readyz (200 when every check passes, else 503 with one line per failing check).
func Handler(g prometheus.Gatherer, checks ...Check) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		var failed []string
		for _, c := range checks {
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			err := c.Fn(ctx)
			cancel()
			if err != nil {
				failed = append(failed, c.Name+": "+err.Error())
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, strings.Join(failed, "\n"))
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// NewServer returns an HTTP server for h on addr with conservative timeouts.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
}

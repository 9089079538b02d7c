package ui

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/colline/colline/graph"
)

// Defaults of Params (the one home of each: config's COLLINE_UI_* tags say the same, config's
// TestDefaultsHaveOneHome checks it).
const (
	DefaultMaxSteps      = 10
	DefaultMaxColumns    = 2000
	DefaultMaxEdges      = 10000
	DefaultQueryTimeout  = 15 * time.Second
	DefaultMaxBodyBytes  = 1 << 20
	DefaultMaxConcurrent = 8
)

// queueWait is how long a request waits for one of the MaxConcurrent slots before a 503.
const queueWait = 2 * time.Second

// Reader is what the explorer reads from the graph; *graph.Reader satisfies it. Every method runs
// read transactions with parameters only.
type Reader interface {
	Ping(ctx context.Context) error
	Search(ctx context.Context, q string, limit int) ([]graph.Hit, error)
	Walk(ctx context.Context, w graph.Walk) (*graph.Subgraph, error)
	Dataset(ctx context.Context, key string) (*graph.DatasetDetail, error)
	Column(ctx context.Context, key string) (*graph.ColumnDetail, error)
	Job(ctx context.Context, key string, runs int) (*graph.JobDetail, error)
	Run(ctx context.Context, key string) (*graph.RunInfo, error)
	Known(ctx context.Context, datasets, columns []string) (map[string]bool, error)
}

// Params configures the explorer. Zero numbers take the defaults above.
type Params struct {
	MaxSteps      int           // most lineage steps a request may walk (≤ graph.MaxSteps)
	MaxColumns    int           // most columns in one lineage answer
	MaxEdges      int           // most relationships in one lineage answer
	QueryTimeout  time.Duration // time one request may take in Neo4j
	MaxBodyBytes  int64         // largest request body
	MaxConcurrent int           // requests served at once
	Auth          Auth
	Analyzer      Analyzer  // the SQL panel's analyzer; nil: the panel takes plan events only
	Tags          TagReader // the tag answers (tags.go); nil: they answer 501
	Log           *slog.Logger
	Version       string
}

func (p Params) withDefaults() Params {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.MaxSteps, DefaultMaxSteps)
	def(&p.MaxColumns, DefaultMaxColumns)
	def(&p.MaxEdges, DefaultMaxEdges)
	def(&p.MaxConcurrent, DefaultMaxConcurrent)
	p.MaxSteps = min(p.MaxSteps, graph.MaxSteps)
	if p.QueryTimeout <= 0 {
		p.QueryTimeout = DefaultQueryTimeout
	}
	if p.MaxBodyBytes <= 0 {
		p.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	return p
}

// server is the explorer's HTTP handler.
type server struct {
	r     Reader
	p     Params
	slots chan struct{}
	mux   *http.ServeMux
}

// New returns the explorer's handler: the page and its assets, the JSON API under /api/, the
// Neo4j Browser style and guide under /neo4j/, /healthz and /readyz.
func New(r Reader, p Params) http.Handler {
	s := &server{r: r, p: p.withDefaults(), mux: http.NewServeMux()}
	s.slots = make(chan struct{}, s.p.MaxConcurrent)
	// Open to all: probes, and the two static files Neo4j Browser fetches (from its own origin).
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /neo4j/colline.grass", browserFile(styleFile))
	s.mux.HandleFunc("GET /neo4j/guide.html", browserFile(guideFile))
	s.mux.HandleFunc("OPTIONS /neo4j/", browserPreflight)
	// Everything else needs authentication when it is configured.
	api := http.NewServeMux()
	api.HandleFunc("GET /api/config", s.config)
	api.HandleFunc("GET /api/search", s.search)
	api.HandleFunc("GET /api/lineage", s.lineage)
	api.HandleFunc("GET /api/impact", s.impact)
	api.HandleFunc("GET /api/column", s.column())
	api.HandleFunc("GET /api/dataset", s.dataset())
	api.HandleFunc("GET /api/job", s.job())
	api.HandleFunc("GET /api/run", s.run())
	api.HandleFunc("POST /api/preview", s.preview)
	api.HandleFunc("POST /api/sql", s.sql)
	api.HandleFunc("GET /api/tags", s.tagList)
	api.HandleFunc("GET /api/tags/reach", s.tagReach)
	api.HandleFunc("GET /api/tags/columns", s.tagColumns)
	api.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, fmt.Errorf("no API %s %s", r.Method, r.URL.Path))
	})
	page := bundleHandler()
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(w, http.StatusMethodNotAllowed, fmt.Errorf("%s is not allowed here", r.Method))
			return
		}
		page.ServeHTTP(w, r)
	})
	s.mux.Handle("/", s.p.Auth.middleware(s.limit(api)))
	return headers(s.mux)
}

// headers sets the security headers of every answer: the page loads nothing but its own
// scripts and styles (no CDN, no inline script), is never framed, and sends no referrer.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// limit serves at most MaxConcurrent API requests at once (a request waits up to queueWait for
// a slot, then gets 503), bounds request bodies and gives each API request QueryTimeout.
func (s *server) limit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			h.ServeHTTP(w, r)
			return
		}
		t := time.NewTimer(queueWait)
		defer t.Stop()
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-t.C:
			w.Header().Set("Retry-After", "1")
			fail(w, http.StatusServiceUnavailable, fmt.Errorf("busy: %d requests in progress (COLLINE_UI_MAX_CONCURRENT)", s.p.MaxConcurrent))
			return
		case <-r.Context().Done():
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.p.QueryTimeout)
		defer cancel()
		r.Body = http.MaxBytesReader(w, r.Body, s.p.MaxBodyBytes)
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.r.Ping(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "neo4j: unreachable:", err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// reply writes v as JSON.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

// fail writes {"error": ...} with code.
func fail(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// failGraph maps an error of a graph read to an answer: 404 for an unknown key, 400 for a walk
// out of bounds, 504 when the query timed out, else 502 (Neo4j failed; the cause is logged, the
// client gets a short message).
func (s *server) failGraph(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, graph.ErrNotFound):
		fail(w, http.StatusNotFound, err)
	case errors.Is(err, graph.ErrWalk):
		fail(w, http.StatusBadRequest, err)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(r.Context().Err(), context.DeadlineExceeded):
		fail(w, http.StatusGatewayTimeout, fmt.Errorf("the graph query took longer than %v (COLLINE_UI_QUERY_TIMEOUT); ask for fewer steps", s.p.QueryTimeout))
	case r.Context().Err() != nil:
		// the client went away
	default:
		s.p.Log.Error("graph read failed", "path", r.URL.Path, "err", err)
		fail(w, http.StatusBadGateway, errors.New("the graph query failed; the explorer's log has the cause"))
	}
}

// Server returns an http.Server for h on addr with timeouts that bound slow clients, and TLS
// from certFile and keyFile when they are set (the caller then uses ListenAndServeTLS).
func (p Params) Server(addr string, h http.Handler) *http.Server {
	p = p.withDefaults()
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      p.QueryTimeout + time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		ErrorLog:          slog.NewLogLogger(p.Log.Handler(), slog.LevelWarn),
	}
}

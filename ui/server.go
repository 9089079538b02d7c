package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/guard"
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

// readyLogEvery is how often /readyz logs a failure that does not change (a probe asks every few
// seconds).
const readyLogEvery = time.Minute

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
	Runs(ctx context.Context, q graph.RunQuery) (*graph.RunSet, error)
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
	// Hosts are the names the explorer answers to in the Host header (guard.Hosts; empty: any).
	// On the loopback interface they must be set (config.UI.AllowedHosts), against DNS
	// rebinding. /healthz and /readyz answer to any name (probes use an address).
	Hosts    []string
	Timeouts guard.Timeouts // the server's bounds on slow clients (Server); zero: guard's defaults
	Auth     Auth
	Analyzer Analyzer  // the SQL panel's analyzer; nil: the panel takes plan events only
	Tags     TagReader // the tag answers (tags.go); nil: they answer 501
	Log      *slog.Logger
	Version  string
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
	r        Reader
	p        Params
	limiter  *guard.Limiter
	throttle guard.Throttle // failed logins
	mux      *http.ServeMux

	mu        sync.Mutex // the last /readyz failure logged, and when
	readyErr  string
	readyTime time.Time
}

// New returns the explorer's handler: the page and its assets, the JSON API under /api/, the
// Neo4j Browser style and guide under /neo4j/, /healthz and /readyz.
//
// A request goes through, in order: the Host check (Params.Hosts: a name the explorer does not
// answer to gets 403, so DNS rebinding reads nothing); for the API, the cross-origin check (a web
// page of another origin can neither read the API nor post to it with the browser's credentials:
// 403); authentication (failed logins throttled per address: 429); the limiter (bodies read
// first, then at most MaxConcurrent requests at once: 503 with Retry-After); and QueryTimeout,
// the deadline of the request's Neo4j transactions and analyzer call.
func New(r Reader, p Params) http.Handler {
	s := &server{r: r, p: p.withDefaults(), mux: http.NewServeMux()}
	s.limiter = guard.NewLimiter(guard.Limit{Max: s.p.MaxConcurrent, Wait: queueWait, MaxBytes: s.p.MaxBodyBytes, Read: s.p.Timeouts.Read,
		Setting: "COLLINE_UI_MAX_CONCURRENT", Refuse: func(w http.ResponseWriter, code int, msg string) { fail(w, code, errors.New(msg)) }})
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
	api.HandleFunc("GET /api/runs", s.runs)
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
	s.mux.Handle("/", crossOrigin(s.p.Auth.middleware(s.limit(api), &s.throttle)))
	return headers(s.hosts(s.mux))
}

// hosts refuses a request whose Host header is not one of Params.Hosts (probes aside).
func (s *server) hosts(h http.Handler) http.Handler {
	hs := guard.Hosts(s.p.Hosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			if err := hs.Check(r); err != nil {
				fail(w, http.StatusForbidden, fmt.Errorf("%w; add the name to COLLINE_UI_HOSTS if it is yours", err))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// headers sets the security headers of every answer: the page loads nothing but its own
// scripts and styles (no CDN, no inline script), is never framed, and sends no referrer.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		guard.Refusing(w, r) // until the limiter reads the body: a refusal answers at once
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// limit guards the API (the page passes): a POST must be JSON (415 before its body is read: an
// HTML form can be posted from any page without a preflight, as text/plain,
// application/x-www-form-urlencoded or multipart/form-data, JSON cannot); then the limiter
// (guard.Limiter: bodies read before a slot, at most MaxConcurrent requests at once, 503 with
// Retry-After after queueWait), and QueryTimeout on each request.
func (s *server) limit(h http.Handler) http.Handler {
	limited := s.limiter.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.p.QueryTimeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.Method == http.MethodPost {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				fail(w, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %q: send application/json", r.Header.Get("Content-Type")))
				return
			}
		}
		w.Header().Del("Connection") // the body is read now
		limited.ServeHTTP(w, r)
	})
}

// crossOrigin refuses a browser's cross-origin request to the API, reads included
// (guard.CrossOrigin); it runs before authentication, so such a request never counts as a login.
func crossOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if err := guard.CrossOrigin(r); err != nil {
				fail(w, http.StatusForbidden, err)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// readyz answers 200 when Neo4j answers, else 503 naming the dependency only: the error (which
// holds internal addresses) goes to the log, once a minute while it lasts.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.r.Ping(ctx); err != nil {
		s.mu.Lock()
		if text := err.Error(); text != s.readyErr || time.Since(s.readyTime) >= readyLogEvery {
			s.readyErr, s.readyTime = text, time.Now()
			s.p.Log.Warn("not ready: neo4j does not answer", "err", err)
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "neo4j: unreachable (the explorer's log has the cause)")
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

// Server returns an http.Server for h on addr (guard.Server) with Params.Timeouts, a handler
// time of QueryTimeout and a little more, and TLS 1.2 at least (the caller uses ServeTLS).
func (p Params) Server(addr string, h http.Handler) *http.Server {
	p = p.withDefaults()
	t := p.Timeouts
	if t.Handle <= 0 {
		t.Handle = p.QueryTimeout + queueWait + 5*time.Second
	}
	return guard.Server(addr, h, t, p.Log)
}

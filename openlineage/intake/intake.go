package intake

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/guard"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/process"
)

// Path is where the endpoint is served, as Marquez serves it.
const Path = "/api/v1/lineage"

// DefaultMaxBytes is the default largest request body: 4 MiB, well above the largest event of the
// captured TPC-DS corpus (about 200 KB) and below the topic's max.message.bytes.
const DefaultMaxBytes = 4 << 20

// DefaultPublishTimeout bounds the wait for Kafka's acknowledgement before answering 503.
const DefaultPublishTimeout = 10 * time.Second

// DefaultMaxConcurrent is the default of Handler.MaxConcurrent.
const DefaultMaxConcurrent = 16

// publisher is satisfied by *ingest.Producer on the OpenLineage topic.
type publisher interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Handler serves Path.
type Handler struct {
	Step      Step      // Required: the consumer's step (its Validator, Names, limits).
	Publisher publisher // Required: a producer on the OpenLineage topic.
	// APIKey, when not empty, is a bearer token that may write anything (AnyKey).
	APIKey string
	// Keys are bearer tokens, each bound to the jobs and datasets it may write (LoadKeys). With
	// neither Keys nor APIKey, anyone may post anything: the consumer warns at start.
	Keys           Keys
	MaxBytes       int64         // Largest body, decoded. Default: DefaultMaxBytes.
	MaxConcurrent  int           // Requests handled at once (more wait, then 503). Default: DefaultMaxConcurrent.
	PublishTimeout time.Duration // Default: DefaultPublishTimeout.
	Metrics        *Metrics      // Default: NewMetrics(nil), not registered.
	Logger         *slog.Logger  // Default: discard.

	once     sync.Once
	read     time.Duration // the server's read timeout (Server), for the limiter
	keys     Keys
	limiter  *guard.Limiter
	throttle guard.Throttle // failed logins per address
}

// Open reports whether the endpoint takes events without a key.
func (h *Handler) Open() bool { return h.APIKey == "" && len(h.Keys) == 0 }

func (h *Handler) init() {
	h.once.Do(func() {
		h.keys = append(Keys{}, h.Keys...)
		if h.APIKey != "" {
			h.keys = append(h.keys, AnyKey("api_key", h.APIKey))
		}
		limit := h.MaxBytes
		if limit <= 0 {
			limit = DefaultMaxBytes
		}
		n := h.MaxConcurrent
		if n <= 0 {
			n = DefaultMaxConcurrent
		}
		h.limiter = guard.NewLimiter(guard.Limit{Max: n, MaxBytes: limit, Read: h.read, Setting: "COLLINE_OPENLINEAGE_HTTP_MAX_CONCURRENT",
			Refuse: func(w http.ResponseWriter, code int, msg string) { answer(w, code, msg, "") }})
	})
}

// Results of a request, the result label of colline_openlineage_http_requests_total.
const (
	ResultAccepted     = "accepted"     // 201: published to the topic
	ResultInvalid      = "invalid"      // 400: the event would be dead-lettered
	ResultUnauthorized = "unauthorized" // 401
	ResultForbidden    = "forbidden"    // 403: the key may not write the event's job or a dataset it writes; or a browser's cross-origin request
	ResultMethod       = "method"       // 405
	ResultTimeout      = "timeout"      // 408: the body did not arrive in time
	ResultTooLarge     = "too_large"    // 413
	ResultMediaType    = "media_type"   // 415
	ResultThrottled    = "throttled"    // 429: too many failed logins from the address
	ResultBusy         = "busy"         // 503: MaxConcurrent requests in progress
	ResultUnavailable  = "unavailable"  // 503: Kafka did not take it
)

var results = []string{ResultAccepted, ResultInvalid, ResultUnauthorized, ResultForbidden, ResultMethod, ResultTimeout, ResultTooLarge,
	ResultMediaType, ResultThrottled, ResultBusy, ResultUnavailable}

// Metrics are the endpoint's Prometheus metrics.
type Metrics struct {
	requests  *prometheus.CounterVec
	forbidden *prometheus.CounterVec
	duration  prometheus.Histogram
}

// NewMetrics creates the endpoint's metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "openlineage", Name: "http_requests_total",
			Help: "Requests to POST /api/v1/lineage, by result: accepted (201), invalid (400), unauthorized (401), forbidden (403), method (405), timeout (408), too_large (413), media_type (415), throttled (429), busy (503: requests at once), unavailable (503: Kafka)."},
			[]string{"result"}),
		forbidden: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "openlineage", Name: "http_forbidden_total",
			Help: "Events refused because their API key may not write them (COLLINE_OPENLINEAGE_HTTP_KEYS_FILE), by key name and what it may not write: job or dataset."},
			[]string{"key", "what"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "colline", Subsystem: "openlineage", Name: "http_request_duration_seconds",
			Help:    "Time to answer a request to POST /api/v1/lineage, the Kafka acknowledgement included.",
			Buckets: prometheus.DefBuckets}),
	}
	for _, r := range results {
		m.requests.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.forbidden, m.duration)
	}
	return m
}

// Forbidden counts an event that key (its name) may not write; what is job or dataset.
func (m *Metrics) Forbidden(key, what string) { m.forbidden.WithLabelValues(key, what).Inc() }

// Error is the body of an error answer, in Dropwizard's shape (Marquez's): code and message,
// plus the dead-letter reason for an invalid event.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h.init()
	m := h.Metrics
	if m == nil {
		m = NewMetrics(nil)
	}
	log := h.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	result := h.serve(w, r, m, log)
	m.requests.WithLabelValues(result).Inc()
	m.duration.Observe(time.Since(start).Seconds())
}

// serve checks, in this order and before reading a body: the method, that no web page sent the
// request (CSRF), the key (throttled per address after failures), the Content-Type; then reads
// the body ahead and waits for one of MaxConcurrent slots (guard.Limiter), runs the step, checks
// that the key may write what the event writes, and publishes within PublishTimeout.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, m *Metrics, log *slog.Logger) string {
	guard.Refusing(w, r) // until the body is read below: a refusal answers at once
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, "only POST is served here", "")
		return ResultMethod
	}
	if err := guard.CrossOrigin(r); err != nil {
		answer(w, http.StatusForbidden, err.Error(), "")
		return ResultForbidden
	}
	var key *Key
	if len(h.keys) > 0 {
		if h.throttle.Refused(w, r, func(w http.ResponseWriter, code int, msg string) { answer(w, code, msg, "") }) {
			return ResultThrottled
		}
		if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			key = h.keys.find(strings.TrimSpace(token))
		}
		if key == nil {
			if r.Header.Get("Authorization") != "" {
				h.throttle.Fail(r)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="colline"`)
			answer(w, http.StatusUnauthorized, "a valid Authorization: Bearer <api key> header is required", "")
			return ResultUnauthorized
		}
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		answer(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: want application/json", ct), "")
		return ResultMediaType
	}
	w.Header().Del("Connection")
	release, code := h.limiter.Enter(w, r)
	switch code {
	case 0:
		defer release()
	case http.StatusRequestTimeout:
		return ResultTimeout
	default:
		return ResultBusy // or the client went away while it waited
	}
	limit := h.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the event is larger than %d bytes (COLLINE_OPENLINEAGE_HTTP_MAX_BYTES)", limit), process.ReasonTooLarge)
			return ResultTooLarge
		}
		answer(w, http.StatusBadRequest, "reading the body: "+err.Error(), process.ReasonInvalidJSON)
		return ResultInvalid
	}
	it, err := h.Step.Item(body)
	if err != nil {
		reason := process.Reason(err)
		log.Info("openlineage event refused", "reason", reason, "err", err, "remote", r.RemoteAddr)
		answer(w, http.StatusBadRequest, err.Error(), reason)
		return ResultInvalid
	}
	if key != nil {
		if no := key.allows(it); no != nil {
			m.Forbidden(key.Name, no.What)
			log.Warn("openlineage event refused: its key may not write it", "key", key.Name, "what", no.What, no.What, no.Subject, "remote", r.RemoteAddr)
			answer(w, http.StatusForbidden, fmt.Sprintf("API key %q may not write %s %q (COLLINE_OPENLINEAGE_HTTP_KEYS_FILE)", key.Name, no.What, no.Subject), "")
			return ResultForbidden
		}
	}
	e, err := openlineage.Decode(body) // validated above; for the message key
	if err != nil {
		answer(w, http.StatusBadRequest, err.Error(), process.Reason(err))
		return ResultInvalid
	}
	timeout := h.PublishTimeout
	if timeout <= 0 {
		timeout = DefaultPublishTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	msg := kafka.Message{Key: []byte(openlineage.MessageKey(e)), Value: body}
	if err := h.Publisher.WriteMessages(ctx, msg); err != nil {
		log.Warn("openlineage event not published; the client will retry", "err", err)
		w.Header().Set("Retry-After", "5")
		answer(w, http.StatusServiceUnavailable, "the event could not be stored now; retry", "")
		return ResultUnavailable
	}
	w.WriteHeader(http.StatusCreated)
	return ResultAccepted
}

// readBody reads the request body, gunzipped when it says so, up to limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		// the cap holds for the decoded event too: a small bomb must not fill the memory
		body = io.LimitReader(zr, limit+1)
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if int64(len(b)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		return b, nil
	default:
		return nil, fmt.Errorf("Content-Encoding %q is not gzip", enc)
	}
	return io.ReadAll(body)
}

func answer(w http.ResponseWriter, code int, message, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(Error{Code: code, Message: message, Reason: reason})
}

// Server returns an HTTP server of the endpoint on addr (guard.Server: timeouts against slow
// clients, a header cap; t zero: guard's defaults), logging its own errors to log. Call it before
// the handler serves.
func (h *Handler) Server(addr string, t guard.Timeouts, log *slog.Logger) *http.Server {
	h.read = t.Read
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return guard.Server(addr, mux, t, log)
}
